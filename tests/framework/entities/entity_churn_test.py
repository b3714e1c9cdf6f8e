"""Entities under churn: a client process and five member processes in a
cluster, the members' entity state in one SQLite file (every process on one
host, links through same-host lanes) or in one PostgreSQL database (every
process on a host of its own: network namespaces on a bridge, the database
on one more host, reached over TCP). The client sends every `seq` entity of
`keys` ops 1..5, each op again until acknowledged, while members are killed
with SIGKILL, leave, and join, at seeded times. Per trial the invariants:

- every op acknowledged: the load ends with all of them answered;
- acknowledged saves are durable and nothing is applied twice or out of
  order: every entity holds exactly ops 1..5, in order (an entity applies an
  op equal to its last only once, so a resent op whose answer was lost is
  harmless; any other duplicate or reordering shows);
- single activation: from every process's history of activations (start
  once its state is loaded, end when it stops; a killed process's end at its
  kill), no two activations of a key overlap in time;
- a killed member's keys come back: each shard the killed member held (a
  key of it active there when it died) is active elsewhere (a key of it
  activated in another process) within `stable-after` + 5 s of the kill.

Usage: entity_churn_test.py ENTITY_MEMBER sqlite|postgresql POSTGRES_SERVER
       BRIDGE_HOSTS
Environment: FERRY_CHURN_TRIALS (default 3), FERRY_CHURN_KEYS (default
1000), FERRY_CHURN_SEED (the first trial's seed, default 1). Where this
process cannot make network namespaces (not root) the PostgreSQL case
skips (exit 77), or fails under FERRY_REQUIRE_PRIVILEGED_TESTS=1.
"""

import os
import queue
import random
import shutil
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
MEMBERS = 5
# Events per trial: each a kill, a leave or a join.
EVENTS = 3
STABLE_AFTER_S = 1
SHARDS = 40
PORT = 7402


def free_ports(k):
    sockets = [socket.socket() for _ in range(k)]
    for s in sockets:
        s.bind(("127.0.0.1", 0))
    ports = [s.getsockname()[1] for s in sockets]
    for s in sockets:
        s.close()
    return ports


class Hosts:
    """Where the processes run: `address(i)` and the command prefix that
    runs a program on host i. One host (loopback, a port each) or network
    namespaces made by ferry_bridge_hosts (an address each)."""

    def __init__(self, bridge_binary=None, count=0):
        self.tool = None
        self.namespaces = []
        self.addresses = []
        self.ports = free_ports(count) if bridge_binary is None else []
        if bridge_binary is None:
            return
        self.tool = subprocess.Popen([bridge_binary, str(count)],
                                     stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True)
        for line in self.tool.stdout:
            words = line.split()
            if words[0] == "host":
                self.namespaces.append(words[2])
                self.addresses.append(words[3])
            elif words[0] == "ready":
                break
            else:
                self.close()
                raise Unavailable(line.strip().removeprefix("skip "))
        self.ip = os.environ.get("FERRY_TEST_IP_TOOL") or \
            shutil.which("ip") or "/usr/sbin/ip"

    def address(self, i):
        if self.tool is None:
            return f"127.0.0.1:{self.ports[i]}"
        return f"{self.addresses[i]}:{PORT}"

    def prefix(self, i):
        if self.tool is None:
            return []
        return [self.ip, "netns", "exec", self.namespaces[i]]

    def close(self):
        if self.tool is not None:
            self.tool.stdin.close()
            self.tool.wait(timeout=60)
            self.tool = None


class Unavailable(Exception):
    """This machine does not let the test make its hosts."""


class Process:
    """One ferry_entity_member process speaking its line protocol."""

    def __init__(self, command, name, flags, history):
        env = dict(os.environ, FERRY_TEST_HISTORY=history)
        self.name = name
        self.history = history
        self.killed_ns = None
        self.proc = subprocess.Popen(
            [*command, f"--ferry.node-name={name}", *flags],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
            bufsize=1, env=env)
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


def spans_of(processes):
    """Returns {key: [(start_ns, end_ns, process name)]} from the processes'
    histories; an activation open at a kill ends at the kill."""
    spans = {}
    for p in processes:
        if not os.path.exists(p.history):
            continue
        open_ = {}
        with open(p.history) as f:
            for line in f:
                what, key, ns = line.split()
                if what == "start":
                    open_.setdefault(key, []).append(int(ns))
                elif open_.get(key):
                    spans.setdefault(key, []).append(
                        (open_[key].pop(0), int(ns), p.name))
        for key, starts in open_.items():
            for s in starts:
                end = p.killed_ns if p.killed_ns is not None else float("inf")
                spans.setdefault(key, []).append((s, end, p.name))
    for xs in spans.values():
        xs.sort()
    return spans


def overlap(spans):
    """Returns the first overlap of two activations of one key, or None."""
    for key, xs in spans.items():
        for (s0, e0, p0), (s1, e1, p1) in zip(xs, xs[1:]):
            if s1 < e0:
                return (f"{key}: active in {p0} from {s0} to {e0} and in "
                        f"{p1} from {s1}")
    return None


def shard_of(key, shards=SHARDS, type_name="seq"):
    """The shard of entity (type_name, key), as ferry computes it
    (framework/src/entities/shard_map.cpp: 64-bit FNV-1a over the type, a
    zero byte and the key)."""
    h = 14695981039346656037
    for b in type_name.encode() + b"\0" + key.encode():
        h = ((h ^ b) * 1099511628211) % (1 << 64)
    return h % shards


def comebacks(spans, killed):
    """Returns, per killed process, the seconds from its kill until each
    shard it held (a key of it active there at the kill) was active
    elsewhere: the first activation of any key of that shard in another
    process after the kill (shards asked again)."""
    result = {}
    for p in killed:
        held = set()
        first = {}
        for key, xs in spans.items():
            shard = shard_of(key)
            if any(name == p.name and s < p.killed_ns <= e
                   for s, e, name in xs):
                held.add(shard)
            for s, e, name in xs:
                if name != p.name and s >= p.killed_ns:
                    first[shard] = min(first.get(shard, s), s)
        result[p.name] = [(first[x] - p.killed_ns) / 1e9
                          for x in held if x in first]
    return result


def trial(binary, location, seed, keys, dir, hosts, lanes):
    rng = random.Random(seed)
    seed_address = hosts.address(0)

    def flags(i, hosting):
        result = ["--ferry.cluster.name=churn",
                  f"--ferry.cluster.address={hosts.address(i)}",
                  f'--ferry.cluster.seeds=["{seed_address}"]',
                  "--ferry.cluster.gossip-interval=100ms",
                  "--ferry.cluster.heartbeat-interval=100ms",
                  "--ferry.cluster.acceptable-pause=300ms",
                  "--ferry.cluster.seed-timeout=200ms",
                  f"--ferry.cluster.stable-after={STABLE_AFTER_S}s",
                  f"--ferry.entities.shards={SHARDS}"]
        # Lanes need the host store the processes share.
        result += ([f"--ferry.store.name={lanes}",
                    "--ferry.store.capacity=64MiB"] if lanes
                   else ["--ferry.store.disabled"])
        if hosting:
            result += [f"--ferry.entities.store={location}",
                       "--ferry.entities.lease=1s",
                       "--ferry.entities.hand-off-timeout=3s"]
        return result

    processes = []
    next_host = iter(range(1, MEMBERS + EVENTS + 1))

    def start(name, hosting):
        i = next(next_host)
        p = Process([*hosts.prefix(i), binary], name, flags(i, hosting),
                    os.path.join(dir, f"history-{seed}-{name}"))
        processes.append(p)
        return p

    def await_up(count):
        end = time.monotonic() + DEADLINE_S
        seen = None
        while time.monotonic() < end:
            seen = client.command("up", "up")
            if seen == f"up {count}":
                return
            time.sleep(0.2)
        raise AssertionError(f"trial {seed}: not {count} members up in the "
                             f"client's view ({seen})")

    try:
        client = Process([*hosts.prefix(0), binary], "client",
                         flags(0, False),
                         os.path.join(dir, f"history-{seed}-client"))
        processes.append(client)
        members = [start(f"m{i}", True) for i in range(MEMBERS)]
        await_up(MEMBERS + 1)
        if lanes:
            # Every link of the client goes through a same-host lane.
            used = client.command("lanes", "lanes")
            assert used == f"lanes {MEMBERS} of {MEMBERS}", \
                f"trial {seed}: {used}"
        # Act: the load runs while the seeded events strike.
        client.send(f"load k {keys} {OPS} {WINDOW}")
        events = []
        kills = 0
        joined = MEMBERS
        for _ in range(EVENTS):
            time.sleep(rng.uniform(0.3, 1.2))
            alive = [m for m in members if m.proc.poll() is None
                     and m.killed_ns is None]
            # At most two kills: three dead of the six nodes would be half
            # the cluster, which keep-majority rightly downs.
            kinds = ["join"]
            if len(alive) > 2:
                kinds += ["leave"] + (["kill"] if kills < 2 else [])
            kind = rng.choice(sorted(kinds))
            if kind == "join":
                members.append(start(f"m{joined}", True))
                joined += 1
                events.append(f"m{joined - 1} joins")
                continue
            victim = rng.choice(alive)
            if kind == "kill":
                kills += 1
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
        spans = spans_of(processes)
        found = overlap(spans)
        assert found is None, f"trial {seed} ({events}): {found}"
        back = comebacks(spans, [p for p in processes if p.killed_ns])
        for name, delays in back.items():
            assert all(d <= STABLE_AFTER_S + 5 for d in delays), \
                f"trial {seed}: {name}'s keys came back after " \
                f"{max(delays):.1f} s (bound {STABLE_AFTER_S + 5} s)"
        return events, int(loaded[2]), back
    finally:
        for p in processes:
            if p.proc.poll() is None:
                p.proc.kill()
                p.proc.wait()


def main():
    binary, kind, server_binary, bridge_binary = sys.argv[1:5]
    trials = int(os.environ.get("FERRY_CHURN_TRIALS", "3"))
    keys = int(os.environ.get("FERRY_CHURN_KEYS", "1000"))
    first = int(os.environ.get("FERRY_CHURN_SEED", "1"))
    # Hosts: the client, the members (those joining too), the database.
    count = 1 + MEMBERS + EVENTS + 1
    try:
        hosts = Hosts(bridge_binary if kind == "postgresql" else None, count)
    except Unavailable as why:
        if os.environ.get("FERRY_REQUIRE_PRIVILEGED_TESTS") == "1":
            raise AssertionError(f"no network namespaces: {why} (a "
                                 "failure, not a skip: "
                                 "FERRY_REQUIRE_PRIVILEGED_TESTS=1)") from None
        print(f"skipped: no network namespaces here: {why}")
        sys.exit(77)
    try:
        for seed in range(first, first + trials):
            with tempfile.TemporaryDirectory() as dir:
                server = None
                lanes = None
                try:
                    if kind == "postgresql":
                        db = count - 1
                        server, location = postgres(
                            server_binary, "churn", hosts.prefix(db),
                            hosts.addresses[db])
                    else:
                        location = f"sqlite:{dir}/entities.db"
                        lanes = f"ferry-churn-{os.getpid()}-{seed}"
                    began = time.monotonic()
                    events, retries, back = trial(binary, location, seed,
                                                  keys, dir, hosts, lanes)
                    came_back = "; ".join(
                        f"{name}'s {len(d)} shards active elsewhere "
                        f"{min(d):.1f}-{max(d):.1f} s after the kill"
                        for name, d in back.items() if d)
                    print(f"entity_churn_test ({kind}): trial {seed}: "
                          f"{keys} keys x {OPS} ops all acknowledged, in "
                          f"order, once, one activation at a time, through "
                          f"{', '.join(events)}; {retries} ops sent again; "
                          f"{came_back or 'no killed member held keys'}; "
                          f"{time.monotonic() - began:.1f} s", flush=True)
                finally:
                    if server:
                        server.stdin.close()
                        server.wait(timeout=60)
                    if lanes and os.path.exists(f"/dev/shm/{lanes}"):
                        os.remove(f"/dev/shm/{lanes}")
    finally:
        hosts.close()


if __name__ == "__main__":
    main()
