"""Entities under churn: a client process and four member processes (one
host, loopback links) in a cluster, the members' entity state in one SQLite
file or one PostgreSQL database. The client sends every `seq` entity of
`keys` ops 1..5, each op again until acknowledged, while members are killed
with SIGKILL, leave, and join, at seeded times. Per trial the invariants:

- every op acknowledged: the load ends with all of them answered;
- acknowledged saves are durable and nothing is applied twice or out of
  order: every entity holds exactly ops 1..5, in order (an entity applies an
  op equal to its last only once, so a resent op whose answer was lost is
  harmless; any other duplicate or reordering shows);
- single activation: from every process's history of activations (start
  once its state is loaded, end when it stops; a killed process's end at its
  kill), no two activations of a key overlap in time.

Usage: entity_churn_test.py ENTITY_MEMBER sqlite|postgresql POSTGRES_SERVER
Environment: FERRY_CHURN_TRIALS (default 3), FERRY_CHURN_KEYS (default
1000), FERRY_CHURN_SEED (the first trial's seed, default 1).
"""

import os
import queue
import random
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

from entity_processes import postgres

DEADLINE_S = 120
OPS = 5
WINDOW = 200


def free_ports(k):
    sockets = [socket.socket() for _ in range(k)]
    for s in sockets:
        s.bind(("127.0.0.1", 0))
    ports = [s.getsockname()[1] for s in sockets]
    for s in sockets:
        s.close()
    return ports


class Process:
    """One ferry_entity_member process speaking its line protocol."""

    def __init__(self, binary, name, flags, history):
        env = dict(os.environ, FERRY_TEST_HISTORY=history)
        self.name = name
        self.killed_ns = None
        self.proc = subprocess.Popen(
            [binary, f"--ferry.node-name={name}", "--ferry.store.disabled",
             *flags], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            text=True, bufsize=1, env=env)
        self.lines = queue.Queue()
        threading.Thread(target=self._pump, daemon=True).start()
        self.expect("ready")

    def _pump(self):
        for line in self.proc.stdout:
            self.lines.put(line.rstrip("\n"))
        self.lines.put(None)

    def expect(self, prefix, timeout=DEADLINE_S):
        try:
            line = self.lines.get(timeout=timeout)
        except queue.Empty:
            raise AssertionError(f"{self.name}: no '{prefix}' line within "
                                 f"{timeout} s") from None
        if line is None or not line.startswith(prefix):
            raise AssertionError(f"{self.name}: expected '{prefix}', got "
                                 f"{line!r}")
        return line

    def send(self, line):
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()

    def command(self, line, prefix, timeout=DEADLINE_S):
        self.send(line)
        return self.expect(prefix, timeout)

    def kill(self):
        self.killed_ns = time.monotonic_ns()
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait()

    def close(self):
        if self.proc.poll() is None:
            self.proc.stdin.close()
            try:
                self.proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.kill()
                raise AssertionError(f"{self.name} did not exit") from None


def overlaps(histories):
    """Returns the first overlap of two activations of one key, or None.
    `histories`: [(path, killed_ns or None)]."""
    spans = {}
    for path, killed_ns in histories:
        if not os.path.exists(path):
            continue
        open_ = {}
        with open(path) as f:
            for line in f:
                what, key, ns = line.split()
                if what == "start":
                    open_.setdefault(key, []).append(int(ns))
                elif open_.get(key):
                    spans.setdefault(key, []).append(
                        (open_[key].pop(0), int(ns), path))
        for key, starts in open_.items():
            for s in starts:
                end = killed_ns if killed_ns is not None else float("inf")
                spans.setdefault(key, []).append((s, end, path))
    for key, xs in spans.items():
        xs.sort()
        for (s0, e0, p0), (s1, e1, p1) in zip(xs, xs[1:]):
            if s1 < e0:
                return (f"{key}: active in {os.path.basename(p0)} from "
                        f"{s0} to {e0} and in {os.path.basename(p1)} from "
                        f"{s1}")
    return None


def trial(binary, location, seed, keys, dir):
    rng = random.Random(seed)
    ports = free_ports(9)
    seed_address = f"127.0.0.1:{ports[0]}"

    def flags(port, hosting):
        result = ["--ferry.cluster.name=churn",
                  f"--ferry.cluster.address=127.0.0.1:{port}",
                  f'--ferry.cluster.seeds=["{seed_address}"]',
                  "--ferry.cluster.gossip-interval=100ms",
                  "--ferry.cluster.heartbeat-interval=100ms",
                  "--ferry.cluster.acceptable-pause=300ms",
                  "--ferry.cluster.seed-timeout=200ms",
                  "--ferry.cluster.stable-after=1s",
                  "--ferry.entities.shards=40"]
        if hosting:
            result += [f"--ferry.entities.store={location}",
                       "--ferry.entities.lease=1s",
                       "--ferry.entities.hand-off-timeout=3s"]
        return result

    processes = []
    next_port = iter(ports[1:])

    def start(name, hosting):
        p = Process(binary, name, flags(next(next_port), hosting),
                    os.path.join(dir, f"history-{seed}-{name}"))
        processes.append(p)
        return p

    def await_up(count):
        end = time.monotonic() + DEADLINE_S
        while time.monotonic() < end:
            if client.command("up", "up") == f"up {count}":
                return
            time.sleep(0.2)
        raise AssertionError(f"trial {seed}: not {count} members up")

    try:
        client = Process(binary, "client", flags(ports[0], False),
                         os.path.join(dir, f"history-{seed}-client"))
        processes.append(client)
        members = [start(f"m{i}", True) for i in range(4)]
        await_up(5)
        # Act: the load runs while three seeded events strike.
        client.send(f"load k {keys} {OPS} {WINDOW}")
        events = []
        joined = 4
        for _ in range(3):
            time.sleep(rng.uniform(0.3, 1.2))
            alive = [m for m in members if m.proc.poll() is None
                     and m.killed_ns is None]
            kind = rng.choice(["kill", "leave", "join"]
                              if len(alive) > 2 else ["join"])
            if kind == "join":
                members.append(start(f"m{joined}", True))
                joined += 1
                events.append(f"m{joined - 1} joins")
                continue
            victim = rng.choice(alive)
            if kind == "kill":
                victim.kill()
                events.append(f"{victim.name} killed")
            else:
                victim.command("leave", "left")
                victim.close()
                events.append(f"{victim.name} left")
        loaded = client.expect("loaded", DEADLINE_S).split()
        # Assert
        acked = int(loaded[1])
        assert acked == keys * OPS, \
            f"trial {seed} ({events}): {acked} of {keys * OPS} acknowledged"
        survivors = [m for m in members if m.proc.poll() is None]
        await_up(1 + len(survivors))
        checked = client.command(f"check k {keys} {OPS}", "checked")
        assert checked.startswith("checked 0 "), \
            f"trial {seed} ({events}): {checked}"
        client.close()
        for m in survivors:
            m.close()
        overlap = overlaps([(os.path.join(dir, f"history-{seed}-{p.name}"),
                             p.killed_ns) for p in processes])
        assert overlap is None, f"trial {seed} ({events}): {overlap}"
        return events, int(loaded[2])
    finally:
        for p in processes:
            if p.proc.poll() is None:
                p.proc.kill()
                p.proc.wait()


def main():
    binary, kind = sys.argv[1], sys.argv[2]
    trials = int(os.environ.get("FERRY_CHURN_TRIALS", "3"))
    keys = int(os.environ.get("FERRY_CHURN_KEYS", "1000"))
    first = int(os.environ.get("FERRY_CHURN_SEED", "1"))
    for seed in range(first, first + trials):
        with tempfile.TemporaryDirectory() as dir:
            server = None
            try:
                if kind == "postgresql":
                    server, location = postgres(sys.argv[3], "churn")
                else:
                    location = f"sqlite:{dir}/entities.db"
                began = time.monotonic()
                events, retries = trial(binary, location, seed, keys, dir)
                print(f"entity_churn_test ({kind}): trial {seed}: {keys} "
                      f"keys x {OPS} ops all acknowledged, in order, once, "
                      f"one activation at a time, through {', '.join(events)}"
                      f"; {retries} ops sent again; "
                      f"{time.monotonic() - began:.1f} s", flush=True)
            finally:
                if server:
                    server.stdin.close()
                    server.wait(timeout=60)


if __name__ == "__main__":
    main()
