"""The database goes away under load: a client and two member processes on
one host, the members' entity state in a PostgreSQL server that is stopped
for a few seconds while the client sends every `seq` entity of 2,000 keys
ops 1..10 (each op again until acknowledged), then started again. The
server stops once the client reports 2,000 ops acknowledged, so that the
outage always falls inside the load however fast the machine. Then:

- the members kept running (no process ended);
- calls during the outage failed with `state_store_failed` (a typed error
  that names the database's failure), and no error other than that, a
  timeout or `entity_unavailable` was seen;
- nothing acknowledged was lost: once the database is back every op is
  acknowledged, and every entity holds exactly ops 1..5, once, in order.

Usage: entity_database_away_test.py ENTITY_MEMBER postgresql POSTGRES_SERVER
       [BRIDGE_HOSTS]
"""

import os
import sys
import tempfile
import time

from entity_churn_test import Hosts, Process
from entity_processes import postgres

KEYS = 2000
OPS = 10
MARK = 2000
OUTAGE_S = 3
EXPECTED = {"state_store_failed", "entity_unavailable",
            "system_error(request_timeout)"}


def main():
    binary, kind, server_binary = sys.argv[1:4]
    assert kind == "postgresql", "an SQLite file has no server to stop"
    hosts = Hosts(None, 3)
    server, location = postgres(server_binary, "away")
    processes = []
    try:
        with tempfile.TemporaryDirectory() as dir:
            def flags(i, hosting):
                result = ["--ferry.cluster.name=away",
                          f"--ferry.cluster.address={hosts.address(i)}",
                          f'--ferry.cluster.seeds=["{hosts.address(0)}"]',
                          "--ferry.cluster.gossip-interval=100ms",
                          "--ferry.cluster.heartbeat-interval=100ms",
                          "--ferry.cluster.seed-timeout=200ms",
                          "--ferry.cluster.stable-after=2s",
                          "--ferry.entities.shards=20",
                          "--ferry.store.disabled"]
                if hosting:
                    result += [f"--ferry.entities.store={location}",
                               "--ferry.entities.lease=2s"]
                return result

            client = Process([binary], "client", flags(0, False),
                             os.path.join(dir, "history-client"))
            processes.append(client)
            for i in (1, 2):
                processes.append(Process([binary], f"m{i}", flags(i, True),
                                         os.path.join(dir, f"history-m{i}")))
            for _ in range(300):
                if client.command("up", "up") == "up 3":
                    break
                time.sleep(0.1)
            # Act
            client.send(f"load k {KEYS} {OPS} 100 {MARK}")
            client.expect("loading", 60)
            server.stdin.write("stop\n")
            server.stdin.flush()
            assert server.stdout.readline().strip() == "stopped"
            stopped = time.monotonic()
            time.sleep(OUTAGE_S)
            server.stdin.write("start\n")
            server.stdin.flush()
            assert server.stdout.readline().strip() == "started"
            outage = time.monotonic() - stopped
            loaded = client.expect("loaded", 120).split()
            # Assert
            for p in processes:
                assert p.proc.poll() is None, f"{p.name} ended"
            assert int(loaded[1]) == KEYS * OPS, \
                f"{loaded[1]} of {KEYS * OPS} acknowledged ({loaded})"
            errors = dict(x.split("=") for x in loaded[3].split(","))
            assert "state_store_failed" in errors, \
                f"no state_store_failed during the outage: {loaded[3]}"
            assert set(errors) <= EXPECTED, f"unexpected errors: {loaded[3]}"
            checked = client.command(f"check k {KEYS} {OPS}", "checked")
            assert checked.startswith("checked 0 "), checked
            print(f"entity_database_away_test: the database away for "
                  f"{outage:.1f} s under load; calls failed with "
                  f"{loaded[3]}, each sent again; all {KEYS * OPS} ops "
                  f"acknowledged, every entity holds its {OPS} ops once and "
                  f"in order; the members ran throughout", flush=True)
            for p in processes:
                p.close()
    finally:
        for p in processes:
            if p.proc.poll() is None:
                p.proc.kill()
                p.proc.wait()
        server.stdin.close()
        server.wait(timeout=60)
        hosts.close()


if __name__ == "__main__":
    main()
