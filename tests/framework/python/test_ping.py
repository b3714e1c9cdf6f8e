"""`python3 -m ferry.ping` against a running node and against nothing."""

import os
import socket
import subprocess
import sys
import unittest

from support import ServiceTest


def ping(*args):
    return subprocess.run([sys.executable, "-m", "ferry.ping"] + list(args),
                          capture_output=True, text=True, timeout=60,
                          env=dict(os.environ))


class PingTest(ServiceTest):
    def test_a_node_that_answers_is_reported_with_its_families(self):
        run = ping(self.service.address, "--lookup", "echo")
        self.assertEqual(run.returncode, 0, run.stderr)
        self.assertIn("node cpp at %s: linked in" % self.service.address,
                      run.stdout)
        self.assertIn("sends ['msgpack', 'cereal.json']", run.stdout)
        self.assertIn("actor 'echo' is", run.stdout)

    def test_a_name_the_node_does_not_expose_fails_naming_it(self):
        run = ping(self.service.address, "--lookup", "nobody")
        self.assertEqual(run.returncode, 1)
        self.assertIn("no_such_actor", run.stderr)
        self.assertIn("nobody", run.stderr)

    def test_an_address_where_nothing_listens_fails_with_the_reason(self):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        run = ping("127.0.0.1:%d" % port)
        self.assertEqual(run.returncode, 1)
        self.assertIn("connect_failed", run.stderr)
        self.assertIn("refused", run.stderr)

    def test_a_malformed_address_is_refused(self):
        run = ping("no-port-here")
        self.assertEqual(run.returncode, 1)
        self.assertIn("no host:port address", run.stderr)


if __name__ == "__main__":
    unittest.main()
