"""The dashboard's JSON API (/api/v1) of real node processes: the shape and
content of every endpoint, the event stream, 404 and 405, and the token
rule of operator actions.

Usage: dashboard_api_test.py METRICS_NODE
"""

import json
import socket
import sys
import time
import urllib.error
import urllib.request

from nodes import Node, free_port, poll, private_store

SECTIONS = ["node", "members", "links", "store", "entities", "rates"]


def request(port, path, method="GET", headers=None):
    """Returns (status, headers, body) of one request."""
    req = urllib.request.Request(f"http://127.0.0.1:{port}{path}",
                                 method=method, headers=headers or {})
    try:
        with urllib.request.urlopen(req, timeout=10) as reply:
            return reply.status, reply.headers, reply.read()
    except urllib.error.HTTPError as e:
        return e.code, e.headers, e.read()


def get_json(port, path):
    status, headers, body = request(port, path)
    assert status == 200, (path, status, body)
    assert headers["Content-Type"] == "application/json", headers
    return json.loads(body)


def error_of(port, path, method, status, headers=None):
    got, hdrs, body = request(port, path, method, headers)
    assert got == status, (method, path, got, body)
    return hdrs, json.loads(body)["error"]


def read_events(port, count, deadline_s=10):
    """Reads `count` events of /api/v1/events; returns (head, events)."""
    with socket.create_connection(("127.0.0.1", port), timeout=deadline_s) \
            as s:
        s.sendall(b"GET /api/v1/events HTTP/1.1\r\nHost: x\r\n\r\n")
        data = b""
        end = time.monotonic() + deadline_s
        while data.count(b"\n\n") < count + 1 and time.monotonic() < end:
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
    head, _, rest = data.partition(b"\r\n\r\n")
    events = []
    for block in rest.decode().split("\n\n")[:count]:
        lines = dict(line.split(": ", 1) for line in block.splitlines())
        events.append((lines["event"], json.loads(lines["data"])))
    return head.decode(), events


def cluster_flags(address, seed):
    return ["--ferry.cluster.name=api", f"--ferry.cluster.address={address}",
            f'--ferry.cluster.seeds=["{seed}"]',
            "--ferry.cluster.gossip-interval=100ms",
            "--ferry.cluster.heartbeat-interval=100ms",
            "--ferry.cluster.seed-timeout=200ms"]


def check_shapes(a, b):
    port = a.metrics_port
    index = get_json(port, "/api/v1")
    assert index["endpoints"] == [
        "/api/v1/node", "/api/v1/members", "/api/v1/links", "/api/v1/store",
        "/api/v1/entities", "/api/v1/rates", "/api/v1/snapshot",
        "/api/v1/events", "/api/v1/members/snapshot?address=HOST:PORT"], index
    node = get_json(port, "/api/v1/node")
    assert set(node) == {"name", "uptime_seconds", "resident_bytes",
                         "actions", "now_ms", "cluster"}, node
    assert node["name"] == "a" and node["cluster"] == "api", node
    assert node["actions"] is True and node["resident_bytes"] > 0, node
    assert abs(node["now_ms"] / 1000 - time.time()) < 60, node
    assert get_json(b.metrics_port, "/api/v1/node")["actions"] is False

    members = get_json(port, "/api/v1/members")
    assert set(members) == {"cluster", "self", "leader", "converged",
                            "convergence_seconds", "members"}, members
    assert [m["name"] for m in members["members"]] != [], members
    for m in members["members"]:
        assert set(m) == {"address", "name", "uid", "status", "reachable",
                          "up_number", "leader", "self", "phi"}, m
        assert m["uid"].isdigit() and m["status"] == "up", m
        assert m["self"] == (m["uid"] == members["self"]), m
        assert m["leader"] == (m["uid"] == members["leader"]), m
    assert sorted(m["name"] for m in members["members"]) == ["a", "b"]
    assert sum(m["self"] for m in members["members"]) == 1
    assert sum(m["leader"] for m in members["members"]) == 1

    links = get_json(port, "/api/v1/links")["links"]
    assert [x["peer"] for x in links] == ["b"], links
    link = links[0]
    assert link["up"] is True and link["kind"] == "lane", link
    assert link["same_host"] is True and link["tls"] is False, link
    assert link["messages_received"] >= 50, link
    assert link["bytes_received"] > 0, link
    assert link["families_in_use"]["received"], link
    assert set(link["per_second"]) == {"messages_sent", "messages_received",
                                       "bytes_sent", "bytes_received"}, link

    store = get_json(port, "/api/v1/store")["store"]
    assert store["capacity"] > 0 and store["processes"] >= 2, store
    assert get_json(port, "/api/v1/entities") == {"entities": None}

    # The load b sent shows in some second of a's history.
    def received_rate():
        samples = get_json(port, "/api/v1/rates")["samples"]
        return max((f["received"] for s in samples
                    for f in s["families"].values()), default=0)
    b.command("send 50 record", "sent")
    poll("a's rate history shows b's requests", received_rate, 10)
    samples = get_json(port, "/api/v1/rates")["samples"]
    for s in samples:
        assert set(s) == {"t", "families", "store"}, s
        for f in s["families"].values():
            assert set(f) == {"sent", "received", "encode_us",
                              "decode_us"}, f
    assert [s["t"] for s in samples] == sorted(s["t"] for s in samples)

    snap = get_json(port, "/api/v1/snapshot")
    assert list(snap) == SECTIONS, list(snap)
    assert sorted(m["name"] for m in snap["members"]["members"]) == \
        ["a", "b"], snap["members"]
    assert set(snap["node"]) == set(node)
    assert len(snap["rates"]["samples"]) == 1

    # Another member's snapshot, asked of it through the cluster.
    b_address = next(m["address"] for m in members["members"]
                     if m["name"] == "b")
    theirs = get_json(port, "/api/v1/members/snapshot?address=" + b_address)
    assert list(theirs) == SECTIONS, list(theirs)
    assert theirs["node"]["name"] == "b", theirs["node"]
    assert [x["peer"] for x in theirs["links"]["links"]] == ["a"], theirs
    mine = get_json(port, "/api/v1/members/snapshot?address=" +
                    next(m["address"] for m in members["members"]
                         if m["self"]))
    assert mine["node"]["name"] == "a", mine["node"]
    _, what = error_of(port, "/api/v1/members/snapshot?address=10.9.9.9%3A1",
                       "GET", 404)
    assert "no member at 10.9.9.9:1" in what, what
    _, what = error_of(port, "/api/v1/members/snapshot", "GET", 400)
    assert "address=HOST:PORT" in what, what

    head, events = read_events(port, 2)
    assert head.startswith("HTTP/1.1 200 OK"), head
    assert "Content-Type: text/event-stream" in head, head
    assert [e for e, _ in events] == ["snapshot", "snapshot"], events
    assert list(events[0][1]) == SECTIONS
    assert events[1][1]["node"]["now_ms"] > events[0][1]["node"]["now_ms"]
    print("dashboard_api_test: every endpoint has its shape and content")


def check_errors(a, c):
    port = a.metrics_port
    _, what = error_of(port, "/api/v1/nope", "GET", 404)
    assert "GET /api/v1 lists" in what, what
    status, _, body = request(port, "/nope")
    assert status == 404 and b"the dashboard is at /" in body, body
    hdrs, _ = error_of(port, "/api/v1/node", "POST", 405)
    assert hdrs["Allow"] == "GET", hdrs
    hdrs, _ = error_of(port, "/api/v1/members/down", "GET", 405)
    assert hdrs["Allow"] == "POST", hdrs
    hdrs, _ = error_of(port, "/", "PUT", 405)
    assert hdrs["Allow"] == "GET", hdrs
    status, hdrs, body = request(port, "/")
    assert status == 200 and hdrs["Content-Type"].startswith("text/html")
    assert b'src="dashboard.js"' in body, body[:200]
    status, _, body = request(c.metrics_port, "/chart.js")
    assert status == 404, status
    assert b"ferry.metrics.chart-js" in body and b"libjs-chart.js" in body
    print("dashboard_api_test: 404 and 405 answer as they should")


def check_tokens(a, b, c):
    down = "/api/v1/members/down?address="
    leave = "/api/v1/members/leave?address="
    b_address = next(m["address"] for m in get_json(
        a.metrics_port, "/api/v1/members")["members"] if m["name"] == "b")
    # A node without a token: actions are off, whatever is sent.
    _, what = error_of(b.metrics_port, down + "x", "POST", 403,
                       {"Authorization": "Bearer sekret"})
    assert "operator actions are off" in what and "ferry.metrics.token" in \
        what, what
    # With one: no header, another token, another scheme are refused.
    for headers in ({}, {"Authorization": "Bearer wrong"},
                    {"Authorization": "Bearer sekret2"},
                    {"Authorization": "Basic sekret"}):
        _, what = error_of(a.metrics_port, down + b_address, "POST", 403,
                           headers)
        assert "ferry.metrics.token" in what, what
    good = {"Authorization": "Bearer sekret"}
    _, what = error_of(a.metrics_port, "/api/v1/members/down", "POST", 400,
                       good)
    assert "address=HOST:PORT" in what, what
    _, what = error_of(a.metrics_port, down + "127.0.0.1%3A1", "POST", 404,
                       good)
    assert "no member at 127.0.0.1:1" in what, what
    _, what = error_of(c.metrics_port, down + "x", "POST", 409, good)
    assert "joins no cluster" in what, what
    _, what = error_of(c.metrics_port, "/api/v1/members/snapshot?address=x",
                       "GET", 409)
    assert "joins no cluster" in what, what
    # The right token asks b to leave: b leaves, a sees it go.
    status, _, body = request(a.metrics_port, leave + b_address, "POST", good)
    assert status == 200, body
    assert json.loads(body) == {"ok": True, "action": "leave",
                                "address": b_address}, body
    poll("b is gone from a's view",
         lambda: [m["name"] for m in get_json(
             a.metrics_port, "/api/v1/members")["members"]] == ["a"], 20)
    print("dashboard_api_test: the token rule holds; b left on a's word")


def main():
    binary = sys.argv[1]
    store = private_store()
    a_address = f"127.0.0.1:{free_port()}"
    b_address = f"127.0.0.1:{free_port()}"
    with Node(binary, "a", store, cluster_flags(a_address, a_address) +
              ["--ferry.metrics.token=sekret"]) as a, \
         Node(binary, "b", store, cluster_flags(b_address, a_address)) as b, \
         Node(binary, "c", store, ["--ferry.metrics.token=sekret",
                                   "--ferry.metrics.chart-js=/nonexistent"]) \
            as c:
        poll("a sees two members up",
             lambda: [m["status"] for m in get_json(
                 a.metrics_port, "/api/v1/members")["members"]] == ["up"] * 2,
             30)
        b.command(f"connect {a.port}", "connected")
        b.command("send 50 record", "sent")
        check_shapes(a, b)
        check_errors(a, c)
        check_tokens(a, b, c)


if __name__ == "__main__":
    main()
