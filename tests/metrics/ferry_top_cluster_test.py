"""Two metrics_node processes form a cluster; their Prometheus endpoints
show the cluster's metrics (members by state, unreachable members, the last
convergence time, one sample per member, phi of the watched member) and
ferry-top shows each node's view of the members.

Usage: ferry_top_cluster_test.py METRICS_NODE FERRY_TOP
"""

import re
import subprocess
import sys

from nodes import Node, free_port, poll, private_store

DEADLINE_S = 60


def cluster_flags(address, seed):
    return ["--ferry.cluster.name=top", f"--ferry.cluster.address={address}",
            f'--ferry.cluster.seeds=["{seed}"]',
            "--ferry.cluster.gossip-interval=100ms",
            "--ferry.cluster.heartbeat-interval=100ms",
            "--ferry.cluster.seed-timeout=200ms"]


def sample(text, name):
    """Returns the value of the sample `name` (with its labels) in `text`."""
    match = re.search("^" + re.escape(name) + r" (\S+)$", text, re.M)
    return float(match.group(1)) if match else None


def main():
    metrics_node, ferry_top = sys.argv[1], sys.argv[2]
    store = private_store()
    a_address = f"127.0.0.1:{free_port()}"
    b_address = f"127.0.0.1:{free_port()}"
    with Node(metrics_node, "a", store, cluster_flags(a_address, a_address)) \
            as a, \
         Node(metrics_node, "b", store, cluster_flags(b_address, a_address)) \
            as b:
        for node in (a, b):
            poll(f"{node.name} sees two members up",
                 lambda node=node: sample(node.scrape(),
                                          'ferry_cluster_members{state="up"}')
                 == 2, DEADLINE_S)
            text = node.scrape()
            assert sample(text, "ferry_cluster_unreachable") == 0, text
            assert sample(text, 'ferry_cluster_members{state="joining"}') \
                == 0, text
            assert sample(text, "ferry_cluster_convergence_seconds") >= 0, \
                text
        # The leader moved b up and waited for b to see it: a measurable
        # convergence.
        assert sample(a.scrape(), "ferry_cluster_convergence_seconds") > 0
        # Each node watches the other (monitored-by 5 > 1 other): a phi.
        poll("a has a phi for b",
             lambda: f'ferry_cluster_phi{{address="{b_address}"}}'
             in a.scrape(), DEADLINE_S)
        top = subprocess.run(
            [ferry_top, "--once", "--interval", "0.3",
             f"127.0.0.1:{a.metrics_port}", f"127.0.0.1:{b.metrics_port}"],
            capture_output=True, text=True, timeout=DEADLINE_S)
        print(top.stdout)
        assert top.returncode == 0, top.stderr
        rows = [line.split() for line in top.stdout.splitlines()]
        header = next(r for r in rows if r[:2] == ["NODE", "MEMBER"])
        assert header[2:6] == ["ADDRESS", "STATE", "REACHABLE", "PHI"], header
        members = {(r[0], r[1]): r for r in rows
                   if len(r) == 8 and r[0] in ("a", "b") and r[1] in ("a", "b")}
        assert len(members) == 4, members
        for (node, member), row in members.items():
            assert row[3] == "up" and row[4] == "yes", row
            if node != member:
                assert float(row[5]) >= 0, row
            else:
                assert row[5] == "-", row
    print("ferry_top_cluster_test: both nodes show both members up")


if __name__ == "__main__":
    main()
