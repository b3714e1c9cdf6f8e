"""Three member processes host the `counter` entity type in a cluster, their
state in one SQLite file or one PostgreSQL database (a server of the test's
own); 30 counters get 5 acknowledged increments each
through member a. Then member c is killed with SIGKILL. Every counter must
go on from its last acknowledged save (6 after one more increment, also the
keys c held), and c's keys must answer again within the cluster's detection
time plus `stable-after` plus 5 s of the kill.

Usage: entity_kill_test.py METRICS_NODE sqlite
       entity_kill_test.py METRICS_NODE postgresql POSTGRES_SERVER
"""

import os
import re
import signal
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "metrics"))
from nodes import Node, free_port, poll, private_store  # noqa: E402
from entity_processes import postgres  # noqa: E402

DEADLINE_S = 60
KEYS = [f"k{i}" for i in range(30)]
STABLE_AFTER_S = 1.0
# phi passes the threshold about acceptable-pause plus a few heartbeat
# intervals after the last heartbeat (docs/cluster.md).
DETECTION_S = 2.0


def flags(address, seed, location):
    return ["--ferry.cluster.name=kill", f"--ferry.cluster.address={address}",
            f'--ferry.cluster.seeds=["{seed}"]',
            "--ferry.cluster.gossip-interval=100ms",
            "--ferry.cluster.heartbeat-interval=100ms",
            "--ferry.cluster.acceptable-pause=300ms",
            "--ferry.cluster.seed-timeout=200ms",
            f"--ferry.cluster.stable-after={int(STABLE_AFTER_S * 1000)}ms",
            f"--ferry.entities.store={location}",
            "--ferry.entities.shards=30", "--ferry.entities.lease=1s",
            "--ferry.entities.hand-off-timeout=3s"]


def sample(text, name):
    match = re.search("^" + re.escape(name) + r" (\S+)$", text, re.M)
    return float(match.group(1)) if match else None


def main():
    metrics_node, kind = sys.argv[1], sys.argv[2]
    store = private_store()
    server = None
    with tempfile.TemporaryDirectory() as dir:
        if kind == "postgresql":
            server, location = postgres(sys.argv[3], "entities")
        else:
            location = f"sqlite:{dir}/entities.db"
        addresses = [f"127.0.0.1:{free_port()}" for _ in range(3)]
        nodes = []
        try:
            for name, address in zip("abc", addresses):
                nodes.append(Node(metrics_node, name, store,
                                  flags(address, addresses[0], location)))
            a, b, c = nodes
            for node in nodes:
                poll(f"{node.name} sees three members up",
                     lambda node=node: sample(
                         node.scrape(), 'ferry_cluster_members{state="up"}')
                     == 3, DEADLINE_S)
            poll("the three hold the 30 shards between them",
                 lambda: sum(sample(n.scrape(), "ferry_entities_shards") or 0
                             for n in nodes) == 30, DEADLINE_S)
            for key in KEYS:
                assert a.command(f"count {key} 5", "counted") == \
                    "counted 5", key
            held = sample(c.scrape(), 'ferry_entities_active{type="counter"}')
            assert held and held > 0, f"c runs no counter: {held}"
            # Act: c dies without a word.
            killed = time.monotonic()
            c.proc.send_signal(signal.SIGKILL)
            c.proc.wait()
            # Assert: every counter goes on from its acknowledged saves. A
            # request that left for c before a's entity host heard its link
            # go down is answered link_down (c, dead already, never got
            # it): it is asked again. Once the host has heard, calls for
            # c's shards wait at a until they start elsewhere.
            last_lost = None
            answered = []
            for key in KEYS:
                while True:
                    reply = a.command(f"count {key} 1", "", DEADLINE_S)
                    if not (reply.startswith("error")
                            and "link_down" in reply):
                        break
                    last_lost = time.monotonic() - killed
                    assert last_lost < DEADLINE_S, f"{key}: {reply}"
                assert reply == "counted 6", f"{key}: {reply}"
                answered.append(f"{key} {time.monotonic() - killed:.2f} s")
            took = time.monotonic() - killed
            bound = DETECTION_S + STABLE_AFTER_S + 5
            lost = "no request" if last_lost is None else \
                f"requests until {last_lost:.2f} s"
            print(f"entity_kill_test ({kind}): c ran {held:.0f} of 30 "
                  f"counters; every counter answered again {took:.2f} s "
                  f"after the kill (bound {bound:.1f} s); {lost} met the "
                  f"link going down")
            assert last_lost is None or last_lost < DETECTION_S, \
                f"calls followed c's link {last_lost:.2f} s after the kill"
            assert took <= bound, f"{took:.2f} s: {answered}"
            for node in (a, b):
                text = node.scrape()
                assert sample(text, "ferry_entities_conflicts_total") == 0, \
                    text
            a.close()
            b.close()
        finally:
            for node in nodes:
                if node.proc.poll() is None:
                    node.proc.kill()
                    node.proc.wait()
            if server:
                server.stdin.close()
                server.wait(timeout=60)


if __name__ == "__main__":
    main()
