"""An idle node costs next to nothing: three metrics_node processes in one
cluster, with their links up and their metrics endpoints on, send no
message for 10 s; each may use at most 1 % of a core meanwhile (the time
its threads ran, as the scheduler counts it: nodes.thread_cpu_ns says why
not /proc/<pid>/stat). The I/O threads' and lane readers' spinning, the
cluster's gossip and heartbeats and the endpoint's sampling are all in the
figure.

Usage: idle_node_test.py METRICS_NODE
"""

import sys
import time

from nodes import (Node, cpu_used, free_port, poll, private_store,
                   thread_cpu_ns)

WINDOW_S = 10
BOUND = 0.01  # of one core


def main():
    binary = sys.argv[1]
    store = private_store()
    addresses = [f"127.0.0.1:{free_port()}" for _ in range(3)]
    nodes = []
    try:
        for i, name in enumerate("abc"):
            nodes.append(Node(binary, name, store, [
                "--ferry.cluster.name=idle",
                f"--ferry.cluster.address={addresses[i]}",
                f'--ferry.cluster.seeds=["{addresses[0]}"]',
                "--ferry.cluster.seed-timeout=300ms"]))
            if i == 0:
                time.sleep(0.5)
        a, b, c = nodes
        # Links up both ways and used once, then left alone.
        b.command(f"connect {a.port}", "connected")
        c.command(f"connect {a.port}", "connected")
        b.command("send 10 record", "sent 10")
        c.command("send 10 record", "sent 10")

        def members_up():
            text = a.scrape()
            return 'ferry_cluster_members{state="up"} 3' in text
        poll("a sees three members up", members_up, 60)
        time.sleep(3)  # the joins' gossip settles
        before = {n.name: thread_cpu_ns(n.proc.pid) for n in nodes}
        time.sleep(WINDOW_S)
        after = {n.name: thread_cpu_ns(n.proc.pid) for n in nodes}
        used = {n.name: cpu_used(n.proc.pid, before[n.name], after[n.name])
                / WINDOW_S for n in nodes}
        for name, share in used.items():
            print(f"idle_node_test: node {name}: {share * 100:.2f} % of a "
                  f"core over {WINDOW_S} s (bound {BOUND * 100:.0f} %)")
        for name, share in used.items():
            assert share <= BOUND, \
                f"idle node {name} used {share * 100:.2f} % of a core"
    finally:
        for n in reversed(nodes):
            n.close()


if __name__ == "__main__":
    main()
