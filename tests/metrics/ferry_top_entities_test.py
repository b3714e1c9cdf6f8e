"""A metrics_node process hosting the `counter` entity type on SQLite: its
Prometheus endpoint shows what its entities do (active per type, shards,
saves, database calls and their time; every family well-formed), and
ferry-top shows a row of them.

Usage: ferry_top_entities_test.py METRICS_NODE FERRY_TOP
"""

import re
import subprocess
import sys
import tempfile

from prometheus_client.parser import text_string_to_metric_families

from nodes import Node, private_store

DEADLINE_S = 60

# Every entity metric docs/monitoring.md promises, by the name
# prometheus_client gives its family (counters without `_total`).
REQUIRED = {
    "ferry_entities_active": "gauge",
    "ferry_entities_shards": "gauge",
    "ferry_entities_buffered": "gauge",
    "ferry_entities_activations": "counter",
    "ferry_entities_passivations": "counter",
    "ferry_entities_hand_offs": "counter",
    "ferry_entities_refused": "counter",
    "ferry_entities_saves": "counter",
    "ferry_entities_conflicts": "counter",
    "ferry_entities_store_failures": "counter",
    "ferry_entities_store_seconds": "summary",
}


def samples(text):
    """Returns {(name, labels tuple): value} and {family: type}."""
    values, kinds = {}, {}
    for family in text_string_to_metric_families(text):
        kinds[family.name] = family.type
        for s in family.samples:
            values[(s.name, tuple(sorted(s.labels.items())))] = s.value
    return values, kinds


def main():
    metrics_node, ferry_top = sys.argv[1], sys.argv[2]
    with tempfile.TemporaryDirectory() as dir:
        flags = [f"--ferry.entities.store=sqlite:{dir}/entities.db"]
        with Node(metrics_node, "holder", private_store(), flags) as node:
            # Two counters: five and three saved requests.
            assert node.command("count alice 5", "counted") == "counted 5"
            assert node.command("count bob 3", "counted") == "counted 3"
            values, kinds = samples(node.scrape())
            for name, kind in REQUIRED.items():
                assert kinds.get(name) == kind, \
                    f"{name}: {kinds.get(name)}, expected {kind}"
            active = values[("ferry_entities_active",
                             (("type", "counter"),))]
            assert active == 2, active
            assert values[("ferry_entities_saves_total", ())] == 8, values
            assert values[("ferry_entities_activations_total", ())] == 2
            assert values[("ferry_entities_conflicts_total", ())] == 0
            assert values[("ferry_entities_shards", ())] >= 1
            # Two loads, eight saves and the leases taken, in some time.
            calls = values[("ferry_entities_store_seconds_count", ())]
            spent = values[("ferry_entities_store_seconds_sum", ())]
            assert calls >= 10, calls
            assert 0 < spent < DEADLINE_S, spent
            target = f"127.0.0.1:{node.metrics_port}"
            top = subprocess.run([ferry_top, "--once", "--interval", "0.3",
                                  target],
                                 capture_output=True, text=True,
                                 timeout=DEADLINE_S)
            print(top.stdout)
            assert top.returncode == 0, top.stderr
            lines = top.stdout.splitlines()
            header = next(i for i, line in enumerate(lines)
                          if line.startswith("NODE") and "ENTITIES" in line)
            row = lines[header + 1].split()
            assert row[:2] == ["holder", "counter=2"], row
            assert re.fullmatch(r"\d+\.\d\d", row[-1]), row
    print("ferry_top_entities_test: the endpoint and ferry-top show the "
          "node's entities")


if __name__ == "__main__":
    main()
