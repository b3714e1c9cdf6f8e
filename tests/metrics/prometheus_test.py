"""A real Prometheus scrapes two ferry nodes that exchange traffic in three
families; its HTTP API must report what the test sent, and each node's
/metrics must parse with prometheus_client's parser with every metric ferry
documents present and well-formed.

Usage: prometheus_test.py METRICS_NODE [PROMETHEUS]
"""

import json
import os
import subprocess
import sys
import tempfile
import urllib.parse
import urllib.request

from prometheus_client.parser import text_string_to_metric_families

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from nodes import Node, free_port, poll, private_store  # noqa: E402

# Messages node b sends node a, by kind, and the family each kind goes in
# with the default serializers (raw for bytes, cereal.binary for a record
# cereal encodes first, caf for a type only CAF's inspect describes).
SENT = {"record": (30, "cereal.binary"), "inspected": (20, "caf"),
        "bytes": (10, "raw")}
PUT_BYTES = 1 << 20

# Every metric docs/monitoring.md promises, by the name prometheus_client
# gives its family (counters without `_total`), with its type.
REQUIRED = {
    "ferry_link_messages_sent": "counter",
    "ferry_link_messages_received": "counter",
    "ferry_link_bytes_sent": "counter",
    "ferry_link_bytes_received": "counter",
    "ferry_encode_seconds": "histogram",
    "ferry_decode_seconds": "histogram",
    "ferry_link_batch_messages": "histogram",
    "ferry_link_credit_waits": "counter",
    "ferry_link_credit_wait_seconds": "counter",
    "ferry_link_refusals": "counter",
    "ferry_link_spilled_bytes": "counter",
    "ferry_link_pulled_bytes": "counter",
    "ferry_links": "gauge",
    "ferry_store_capacity_bytes": "gauge",
    "ferry_store_used_bytes": "gauge",
    "ferry_store_objects": "gauge",
    "ferry_store_spilled_bytes": "gauge",
    "ferry_store_processes": "gauge",
    "process_resident_memory_bytes": "gauge",
}


def check_histogram(family):
    """Buckets ascending and cumulative, +Inf equal to _count, per series."""
    series = {}
    for s in family.samples:
        key = tuple(sorted((k, v) for k, v in s.labels.items() if k != "le"))
        series.setdefault(key, {"buckets": []})
        if s.name.endswith("_bucket"):
            series[key]["buckets"].append((float(s.labels["le"]), s.value))
        else:
            series[key][s.name.rsplit("_", 1)[1]] = s.value
    assert series, f"{family.name}: no series"
    for key, x in series.items():
        bounds = [b for b, _ in x["buckets"]]
        counts = [c for _, c in x["buckets"]]
        assert bounds == sorted(bounds) and bounds[-1] == float("inf"), \
            f"{family.name}{key}: bounds {bounds}"
        assert counts == sorted(counts), f"{family.name}{key}: {counts}"
        assert counts[-1] == x["count"], f"{family.name}{key}: +Inf != count"
        assert x["sum"] >= 0, f"{family.name}{key}: sum {x['sum']}"


def check_exposition(text, peer):
    families = {f.name: f for f in text_string_to_metric_families(text)}
    for name, kind in REQUIRED.items():
        assert name in families, f"{name} missing from /metrics"
        family = families[name]
        assert family.type == kind, f"{name}: type {family.type}, not {kind}"
        assert family.samples, f"{name}: no samples"
        for s in family.samples:
            assert s.value >= 0, f"{name}: {s}"
            if name.startswith("ferry_link_") or name.endswith("code_seconds"):
                assert s.labels.get("peer") == peer, f"{name}: {s}"
        if kind == "histogram":
            check_histogram(family)
    for s in families["ferry_link_refusals"].samples:
        assert "reason" in s.labels, s
    return families


def query(port, promql):
    url = (f"http://127.0.0.1:{port}/api/v1/query?"
           + urllib.parse.urlencode({"query": promql}))
    try:
        with urllib.request.urlopen(url, timeout=5) as reply:
            answer = json.load(reply)
    except OSError:
        return None  # not listening yet
    assert answer["status"] == "success", answer
    return answer["data"]["result"]


def by_labels(result, *labels):
    return {tuple(r["metric"].get(k) for k in labels): float(r["value"][1])
            for r in result}


def main():
    node_binary = sys.argv[1]
    prometheus = sys.argv[2] if len(sys.argv) > 2 else "/usr/bin/prometheus"
    store = private_store()
    with Node(node_binary, "a", store) as a, Node(node_binary, "b", store) as b:
        b.command(f"connect {a.port}", "connected")
        for kind, (n, _) in SENT.items():
            assert b.command(f"send {n} {kind}", "sent") == f"sent {n}"
        a.command(f"put {PUT_BYTES}", "put")
        # What b sent, by family, is what the test sent.
        expected_b = {family: n for n, family in SENT.values()}
        sent_b = {f: s for f, (s, _) in b.stats()["a"].items() if s}
        assert sent_b == expected_b, f"b sent {sent_b}, not {expected_b}"
        sent_a = {f: s for f, (s, _) in a.stats()["b"].items() if s}
        assert sum(sent_a.values()) == sum(expected_b.values()), sent_a
        # Every reply went back: no message in flight, the store is still.
        used = int(a.command("store-used", "store-used").split()[1])
        assert used >= PUT_BYTES, used
        for node, peer in ((a, "b"), (b, "a")):
            families = check_exposition(node.scrape(), peer)
            got = {s.labels["family"]: s.value for s in
                   families["ferry_link_messages_sent"].samples}
            want = expected_b if node is b else sent_a
            assert got == want, f"{node.name} /metrics: {got} != {want}"
        with tempfile.TemporaryDirectory() as tmp:
            port = free_port()
            config = os.path.join(tmp, "prometheus.yml")
            with open(config, "w") as f:
                f.write("global:\n  scrape_interval: 1s\n"
                        "  scrape_timeout: 1s\n"
                        "scrape_configs:\n  - job_name: ferry\n"
                        "    static_configs:\n      - targets: ["
                        f"'127.0.0.1:{a.metrics_port}', "
                        f"'127.0.0.1:{b.metrics_port}']\n")
            with open(os.path.join(tmp, "prometheus.log"), "w") as log:
                server = subprocess.Popen(
                    [prometheus, f"--config.file={config}",
                     f"--storage.tsdb.path={os.path.join(tmp, 'data')}",
                     f"--web.listen-address=127.0.0.1:{port}"],
                    stdout=log, stderr=subprocess.STDOUT)
            try:
                instance = {"a": f"127.0.0.1:{a.metrics_port}",
                            "b": f"127.0.0.1:{b.metrics_port}"}
                want = {(instance["b"], "a", f): v
                        for f, v in expected_b.items()}
                want.update({(instance["a"], "b", f): v
                             for f, v in sent_a.items()})

                def sent_seen():
                    result = query(port, "ferry_link_messages_sent_total")
                    if result is None:
                        return None
                    got = by_labels(result, "instance", "peer", "family")
                    return got if got == want else None

                poll("Prometheus reports ferry_link_messages_sent_total as "
                     f"sent: {want}", sent_seen, 40)

                def used_seen():
                    got = by_labels(query(port, "ferry_store_used_bytes"),
                                    "instance", "store")
                    return got if got == {(instance["a"], store): used,
                                          (instance["b"], store): used} \
                        else None

                poll(f"Prometheus reports ferry_store_used_bytes {used}",
                     used_seen, 20)
                up = by_labels(query(port, "up"), "instance")
                assert up == {(instance["a"],): 1, (instance["b"],): 1}, up
            except BaseException:
                with open(os.path.join(tmp, "prometheus.log")) as f:
                    sys.stderr.write(f.read()[-4000:])
                raise
            finally:
                server.terminate()
                try:
                    server.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    server.kill()
                    server.wait()
    print("prometheus_test: Prometheus and the parser agree with what was "
          "sent")


if __name__ == "__main__":
    main()
