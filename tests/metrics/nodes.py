"""Starts metrics_node processes and talks to them (the metrics tests' helper).

A node is a child process speaking metrics_node's line protocol on stdin and
stdout (tests/metrics/metrics_node.cpp). Every wait has a deadline: a node
that does not answer in time fails the test instead of hanging it.
"""

import os
import queue
import socket
import subprocess
import threading
import time
import urllib.request


class Node:
    """One metrics_node process; use as a context manager."""

    def __init__(self, binary, name, store, extra=()):
        args = [binary, f"--ferry.node-name={name}",
                f"--ferry.store.name={store}", "--ferry.metrics.port=0",
                *extra]
        self.name = name
        # One command and its answer at a time, whichever thread asks.
        self.lock = threading.Lock()
        self.proc = subprocess.Popen(args, stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True,
                                     bufsize=1)
        self.lines = queue.Queue()
        threading.Thread(target=self._pump, daemon=True).start()
        ready = self.expect("ready", 30)
        fields = dict(x.split("=") for x in ready.split()[1:])
        self.port = int(fields["port"])
        self.metrics_port = int(fields["metrics"])

    def _pump(self):
        for line in self.proc.stdout:
            self.lines.put(line.rstrip("\n"))
        self.lines.put(None)

    def expect(self, prefix, timeout=30):
        """Returns the next line, which must start with `prefix`."""
        try:
            line = self.lines.get(timeout=timeout)
        except queue.Empty:
            raise AssertionError(f"{self.name}: no '{prefix}' line within "
                                 f"{timeout} s") from None
        if line is None or not line.startswith(prefix):
            raise AssertionError(f"{self.name}: expected '{prefix}', got "
                                 f"{line!r}")
        return line

    def command(self, line, prefix, timeout=30):
        with self.lock:
            self.proc.stdin.write(line + "\n")
            self.proc.stdin.flush()
            return self.expect(prefix, timeout)

    def stats(self):
        """Returns {peer: {family: (sent, received)}}."""
        self.proc.stdin.write("stats\n")
        self.proc.stdin.flush()
        result = {}
        while True:
            line = self.expect("", 30)
            if line == "end":
                return result
            fields = line.split()
            families = {}
            for item in fields[2:]:
                family, counts = item.split("=")
                sent, received = counts.split("/")
                families[family] = (int(sent), int(received))
            result[fields[1]] = families

    def scrape(self, timeout=10):
        url = f"http://127.0.0.1:{self.metrics_port}/metrics"
        with urllib.request.urlopen(url, timeout=timeout) as reply:
            assert reply.status == 200, reply.status
            kind = reply.headers["Content-Type"]
            assert kind.startswith("text/plain; version=0.0.4"), kind
            return reply.read().decode()

    def close(self):
        if self.proc.poll() is None:
            self.proc.stdin.close()
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
                raise AssertionError(f"{self.name} did not exit")
        assert self.proc.returncode == 0, \
            f"{self.name} exited with {self.proc.returncode}"

    def __enter__(self):
        return self

    def __exit__(self, kind, value, trace):
        if kind is None:
            self.close()
        else:
            self.proc.kill()
            self.proc.wait()


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def private_store():
    """A store name of this test's own, so other tests don't change it."""
    return f"ferry-metrics-test-{os.getpid()}"


def thread_cpu_ns(pid):
    """Nanoseconds each thread of process `pid` has run so far, by thread
    id, from the scheduler's own count (/proc/<pid>/task/<tid>/schedstat).
    /proc/<pid>/stat's user and system times are samples taken at each
    timer tick on kernels with tick-based accounting
    (CONFIG_TICK_CPU_ACCOUNTING, e.g. at 250 Hz):
    a thread that wakes for a moment in step with the tick is charged
    whole ticks, or none, for many wakes in a row, so a 10 s window of an
    idle node read from them swings between a fraction and several times
    what it ran."""
    result = {}
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/schedstat") as f:
                result[tid] = int(f.read().split()[0])
        except (FileNotFoundError, ProcessLookupError):
            pass  # the thread ended while the directory was read
    return result


def cpu_used(pid, before, after):
    """Seconds of CPU process `pid`'s threads ran between two readings of
    thread_cpu_ns. A thread that ended in between took its time with it: the
    reading would be short, so that fails, naming the thread."""
    ended = sorted(set(before) - set(after))
    if ended:
        raise AssertionError(f"threads {ended} of process {pid} ended while "
                             "its CPU time was measured; their time cannot "
                             "be counted")
    return sum(after[t] - before.get(t, 0) for t in after) / 1e9


def poll(what, check, deadline_s=30, every_s=0.2):
    """Calls `check` until it returns a true value (returned) or fails the
    test after `deadline_s`, naming `what` and the last value seen."""
    end = time.monotonic() + deadline_s
    last = None
    while time.monotonic() < end:
        last = check()
        if last:
            return last
        time.sleep(every_s)
    raise AssertionError(f"{what}: not so within {deadline_s} s "
                         f"(last: {last!r})")
