"""What the Python peer's tests share: the C++ node they talk to.

`Service` starts tests/framework/python/peer_service.cpp (a real process,
path in FERRY_PEER_SERVICE) with ferry options, reads the port it listens
on and ends it (closing its standard input) when the test is done; it fails
the test if the process died on its own (a refused message must never take
the node down). `scratch(name)` is a directory for a test's files.
"""

import os
import shutil
import subprocess
import time
import unittest

import ferry


def scratch(name):
    path = os.path.join(os.environ.get("FERRY_TEST_SCRATCH", "/tmp"), name)
    shutil.rmtree(path, ignore_errors=True)
    os.makedirs(path)
    return path


class Service:
    def __init__(self, *options, name="cpp"):
        binary = os.environ.get("FERRY_PEER_SERVICE")
        if not binary:
            raise unittest.SkipTest("FERRY_PEER_SERVICE is not set (run the "
                                    "tests through ctest)")
        self.name = name
        self.proc = subprocess.Popen(
            [binary, "--ferry.node-name=" + name] + list(options),
            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, text=True)
        line = self.proc.stdout.readline()
        if not line.startswith("port "):
            self.proc.kill()
            raise AssertionError("peer_service did not start: %r %s"
                                 % (line, self.proc.stderr.read()))
        self.port = int(line.split()[1])
        self.address = "127.0.0.1:%d" % self.port

    def connect(self, **kw):
        kw.setdefault("name", "py")
        return ferry.connect(self.address, **kw)

    def alive(self):
        return self.proc.poll() is None

    def stop(self):
        """Ends the node; returns what it wrote to standard error."""
        if self.proc.poll() is None:
            self.proc.stdin.close()
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
                raise AssertionError("peer_service did not end on EOF")
        err = self.proc.stderr.read()
        self.proc.stderr.close()
        self.proc.stdout.close()
        return err


class ServiceTest(unittest.TestCase):
    """A test case with one C++ node, `self.service`, started per class."""

    options = ()

    @classmethod
    def setUpClass(cls):
        cls.service = Service(*cls.options)

    @classmethod
    def tearDownClass(cls):
        alive = cls.service.alive()
        log = cls.service.stop()
        if not alive:
            raise AssertionError("the C++ node died: " + log[-2000:])

    def link_report(self, peer):
        """The C++ node's counters of its link to `peer`, asked on a link of
        its own."""
        with self.service.connect(name="py-stats") as n:
            return n.lookup("stats").request({"value": peer}, type="py.text")


def eventually(check, timeout=20.0, what="the condition"):
    """Polls `check()` until it returns a true value; fails after
    `timeout` seconds naming `what`."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError("%s did not hold within %.0f s"
                                 % (what, timeout))
        time.sleep(0.02)
