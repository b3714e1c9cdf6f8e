"""Hostile clients at a node's metrics endpoint: a request line of 1 MiB, a
request that never finishes, 1,000 connections at once, methods other than
GET, paths other than /metrics and a request that is not HTTP. Each gets a
clear answer (431, 405, 404, 400) or is closed, while a request round trip
through the node's actors succeeds during the attack, and the endpoint
serves /metrics again afterwards.

Usage: hostile_clients_test.py METRICS_NODE
"""

import os
import socket
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from nodes import Node, private_store  # noqa: E402

# The endpoint closes a connection that sent no whole request in 5 s; the
# test allows three times that before it calls a connection left open.
CLOSE_DEADLINE_S = 15


def connect(port):
    s = socket.create_connection(("127.0.0.1", port), timeout=10)
    return s


def read_answer(s, deadline_s=CLOSE_DEADLINE_S):
    """Returns what the server sent until it closed the connection (b"" when
    it closed, or reset, without a word); fails if it stays open."""
    s.settimeout(deadline_s)
    data = b""
    try:
        while True:
            chunk = s.recv(65536)
            if not chunk:
                return data
            data += chunk
    except ConnectionResetError:
        return data
    except socket.timeout:
        raise AssertionError(f"connection still open after {deadline_s} s "
                             f"(got {data[:80]!r})") from None


def simple(port, request):
    s = connect(port)
    s.sendall(request)
    s.shutdown(socket.SHUT_WR)
    answer = read_answer(s)
    s.close()
    return answer


def status_of(answer):
    return answer.split(b"\r\n", 1)[0]


def huge_request_line(s, result):
    try:
        s.sendall(b"GET /" + b"a" * (1 << 20) + b" HTTP/1.1\r\n"
                  b"Host: x\r\n\r\n")
    except (BrokenPipeError, ConnectionResetError):
        pass  # closed while the client still sent: fine
    try:
        result["huge"] = read_answer(s)
    except AssertionError as e:
        result["huge"] = e
    s.close()


def main():
    binary = sys.argv[1]
    store = private_store()
    with Node(binary, "a", store) as a, Node(binary, "b", store) as b:
        b.command(f"connect {a.port}", "connected")
        port = a.metrics_port
        # Simple hostile requests first: each gets its answer.
        assert status_of(simple(port, b"POST /metrics HTTP/1.1\r\nHost: x\r\n"
                                      b"Content-Length: 0\r\n\r\n")) \
            == b"HTTP/1.1 405 Method Not Allowed"
        assert status_of(simple(port, b"DELETE / HTTP/1.1\r\nHost: x\r\n\r\n")) \
            == b"HTTP/1.1 405 Method Not Allowed"
        assert status_of(simple(port, b"GET /admin HTTP/1.1\r\nHost: x\r\n"
                                      b"\r\n")) == b"HTTP/1.1 404 Not Found"
        assert status_of(simple(port, b"HELLO\x00\x01 nonsense\r\n\r\n")) \
            == b"HTTP/1.1 400 Bad Request"
        # The attack: a never-ending request, 1,000 connections and a 1 MiB
        # request line at once.
        started = time.monotonic()
        result = {}
        huge = threading.Thread(target=huge_request_line,
                                args=(connect(port), result))
        huge.start()
        stalled = connect(port)
        stalled.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n")
        crowd = [connect(port) for _ in range(1000)]
        # Meanwhile a's actors answer b's requests.
        assert b.command("send 20 record", "sent", 30) == "sent 20"
        assert b.command("send 20 bytes", "sent", 30) == "sent 20"
        huge.join(CLOSE_DEADLINE_S + 10)
        assert not huge.is_alive(), "the 1 MiB request got no end"
        answer = result["huge"]
        assert not isinstance(answer, AssertionError), answer
        assert status_of(answer) \
            == b"HTTP/1.1 431 Request Header Fields Too Large", answer[:80]
        assert read_answer(stalled) == b"", "the stalled request got an answer"
        stalled.close()
        assert time.monotonic() - started < CLOSE_DEADLINE_S + 20
        for s in crowd:
            assert read_answer(s) == b""
            s.close()
        # The endpoint serves again.
        text = a.scrape()
        assert "ferry_link_messages_received_total" in text
        print("hostile_clients_test: every hostile client answered or closed; "
              "the actors kept serving")


if __name__ == "__main__":
    main()
