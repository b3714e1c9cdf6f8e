"""A Python peer's link over time: heartbeats both ways keep an idle link
up; a node that stops answering (SIGSTOP) is dropped after the Python
side's connection timeout; a node that shuts down says goodbye, and the
Python side's waiting requests fail with link_down.
"""

import os
import signal
import threading
import time
import unittest

import ferry
from support import Service


def stopped(pid, timeout=10.0):
    """Waits until process `pid` is stopped; returns whether it is."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with open(f"/proc/{pid}/stat") as stat:
            if stat.read().rsplit(")", 1)[1].split()[0] == "T":
                return True
        time.sleep(0.01)
    return False


class LinkTest(unittest.TestCase):
    def setUp(self):
        self.service = Service("--ferry.link.heartbeat-interval=100ms",
                               "--ferry.link.connection-timeout=1s")

    def tearDown(self):
        if self.service.alive():
            os.kill(self.service.proc.pid, signal.SIGCONT)
        self.service.stop()

    def test_heartbeats_both_ways_keep_an_idle_link_up(self):
        with self.service.connect(heartbeat_interval=0.1,
                                  connection_timeout=1.0) as node:
            # Three connection timeouts of both sides without a message:
            # only heartbeats cross.
            deadline = time.monotonic() + 3.0
            while time.monotonic() < deadline:
                self.assertTrue(node.is_up)
                time.sleep(0.1)
            self.assertEqual(node.lookup("echo").request(
                {"x": 1, "y": 1}, type="py.point"), {"x": 1, "y": 1})

    def test_a_node_that_stops_answering_is_dropped_after_the_timeout(self):
        node = self.service.connect(heartbeat_interval=0.1,
                                    connection_timeout=1.0)
        echo = node.lookup("echo")
        os.kill(self.service.proc.pid, signal.SIGSTOP)
        # A signal arrives when it arrives: the request below must find the
        # node stopped, not answer it on its way to stopping.
        self.assertTrue(stopped(self.service.proc.pid))
        failed = {}

        def ask():
            try:
                echo.request({"x": 1, "y": 1}, type="py.point", timeout=30)
            except ferry.Error as e:
                failed["error"] = e
        asker = threading.Thread(target=ask)
        asker.start()
        reason = node.wait_down(10)
        self.assertIsNotNone(reason)
        self.assertEqual(reason.name, "link_down")
        self.assertIn("heard nothing", reason.text)
        asker.join(10)
        self.assertEqual(failed["error"].name, "link_down")
        node.close()

    def test_a_node_that_shuts_down_says_goodbye(self):
        node = self.service.connect()
        # The handshake can end on this side (it sends the welcome) before
        # the node has made its link; a lookup's answer says it has, so the
        # stop below meets a link to say goodbye on.
        node.lookup("echo")
        self.service.proc.stdin.close()  # the node ends in order
        reason = node.wait_down(20)
        self.assertIsNotNone(reason)
        self.assertEqual(reason.name, "link_down")
        self.assertIn("shut down", reason.text)
        with self.assertRaises(ferry.Error) as caught:
            node.lookup("echo")
        self.assertEqual(caught.exception.name, "link_down")
        node.close()


if __name__ == "__main__":
    unittest.main()
