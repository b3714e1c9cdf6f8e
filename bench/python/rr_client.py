"""Round trips from a Python client, for ferry-bench's Python rows.

    rr_client.py ferry HOST PORT [--size N] [--seconds S] [--repeats R]
    rr_client.py socket HOST PORT [...]

`ferry`: links to a ferry-bench ferry peer as a Python peer (msgpack) and
requests its published sink with `bytes` payloads of N bytes, each answered
with a `u64`. `socket`: the same round trip over a plain socket against a
ferry-bench socket peer (a 16-byte header, size and kind 1, then the
payload; the answer is 8 bytes), from Python's own `socket` module. Both run
R rounds of S / R seconds after a warm-up and print one JSON line: the rate
of each round (round trips per second), and p50/p99 of every round trip in
microseconds. The ferry package comes from --ferry-path (or PYTHONPATH).
"""

import argparse
import json
import socket
import struct
import sys
import time


def ferry_round_trip(host, port, size):
    import ferry
    node = ferry.connect("%s:%d" % (host, port), name="bench-python",
                         families=["msgpack"])
    sink = node.default_actor
    payload = bytes(size)

    def once():
        sink.request(payload, type="bytes")
    return once, node.close


def socket_round_trip(host, port, size):
    sock = socket.create_connection((host, port))
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    frame = struct.pack("<QQ", size, 1) + bytes(size)

    def once():
        sock.sendall(frame)
        got = b""
        while len(got) < 8:
            chunk = sock.recv(8 - len(got))
            if not chunk:
                raise EOFError("the socket peer closed the connection")
            got += chunk
    return once, sock.close


def main():
    p = argparse.ArgumentParser()
    p.add_argument("mode", choices=["ferry", "socket"])
    p.add_argument("host")
    p.add_argument("port", type=int)
    p.add_argument("--size", type=int, default=64)
    p.add_argument("--seconds", type=float, default=1.0)
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--ferry-path", default=None,
                   help="directory holding the ferry package")
    args = p.parse_args()
    if args.ferry_path:
        sys.path.insert(0, args.ferry_path)
    make = ferry_round_trip if args.mode == "ferry" else socket_round_trip
    once, close = make(args.host, args.port, args.size)
    warm_until = time.perf_counter() + min(0.3, args.seconds / 4)
    while time.perf_counter() < warm_until:
        once()
    rates, times = [], []
    for _ in range(args.repeats):
        n, start = 0, time.perf_counter()
        end = start + args.seconds / args.repeats
        now = start
        while now < end or n < 10:
            t0 = now
            once()
            now = time.perf_counter()
            times.append(now - t0)
            n += 1
        rates.append(n / (now - start))
    close()
    times.sort()
    print(json.dumps({
        "mode": args.mode, "payload_bytes": args.size,
        "round_msgs_per_s": rates,
        "p50_us": times[len(times) // 2] * 1e6,
        "p99_us": times[min(len(times) - 1, len(times) * 99 // 100)] * 1e6}))


if __name__ == "__main__":
    try:
        main()
    except Exception as e:  # reported to ferry-bench as the row's error
        print(json.dumps({"error": "%s: %s" % (type(e).__name__, e)}))
        sys.exit(1)
