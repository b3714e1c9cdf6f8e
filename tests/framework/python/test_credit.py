"""Credit both ways between a Python peer and a C++ node.

The C++ node holds its sends to its window (here 1 MiB): a Python actor
that stops processing, or a Python peer that stops reading its socket,
makes the C++ sender wait (credit waits counted, bytes in flight within the
window plus one message) instead of growing; once the Python side goes on,
every message arrives, in the order sent. The Python peer returns credit
like a C++ node and holds its own sends to its own window while no credit
comes back.
"""

import threading
import time
import unittest

from support import ServiceTest, eventually

WINDOW = 1 << 20
COUNT = 800
SIZE = 4 << 10  # small enough to travel in batches


class CreditTest(ServiceTest):
    # A batch gap far above the time between two sends, even under a
    # sanitizer: the stream's bursts travel in batches.
    options = ("--ferry.link.window-bytes=%d" % WINDOW,
               "--ferry.link.batch-gap=5ms")

    def stream_while(self, stall, resume, name):
        with self.service.connect(name=name, families=["msgpack"]) as node:
            got = []
            me = node.spawn(lambda env: got.append(env.value["seq"]))
            answer = {}
            streamer = node.lookup("streamer")
            stall(node, me)
            thread = threading.Thread(target=lambda: answer.update(
                streamer.request({"count": COUNT, "size": SIZE},
                                 type="py.stream", sender=me, timeout=120)))
            thread.start()
            report = eventually(
                lambda: (lambda r: r if r["credit_waits"] > 0 else None)(
                    self.link_report(name)),
                what="a credit wait of the C++ sender")
            # The sender waits: what it sent is within its window (plus
            # one message), far below the stream it was asked for.
            self.assertLessEqual(report["peak_in_flight_bytes"],
                                 WINDOW + SIZE + 4096)
            self.assertLess(report["messages_sent"], COUNT // 2)
            time.sleep(0.3)
            again = self.link_report(name)
            self.assertLess(again["messages_sent"], COUNT // 2)
            resume(node)
            thread.join(120)
            self.assertEqual(answer.get("messages_sent"), COUNT)
            eventually(lambda: len(got) == COUNT, what="every message")
            self.assertEqual(got, list(range(COUNT)))
            self.assertGreater(node.stats["batches_received"], 0)

    def test_a_python_actor_that_stops_processing_makes_the_sender_wait(self):
        gate = threading.Event()

        def stall(node, actor):
            handler = actor.handler

            def slow(env):
                gate.wait()
                return handler(env)
            actor.handler = slow
        self.stream_while(stall, lambda node: gate.set(), "py-slow")

    def test_a_python_peer_that_stops_reading_makes_the_sender_wait(self):
        def stall(node, actor):
            node.pause_reading()  # writing goes on: the request goes out
        self.stream_while(stall, lambda node: node.pause_reading(False),
                          "py-deaf")

    def test_the_python_peer_keeps_to_its_window_until_credit_returns(self):
        window = 64 << 10
        with self.service.connect(name="py-window", families=["msgpack"],
                                  window_bytes=window) as node:
            echo = node.lookup("echo")
            # While this side reads nothing, no credit can come back: its
            # sends stop at its window and wait.
            node.pause_reading()
            sender = threading.Thread(target=lambda: [
                echo.send({"x": i, "y": -i}, type="py.point")
                for i in range(2000)])
            sender.start()
            eventually(lambda: node.stats["credit_waits"] > 0,
                       what="a send waiting for credit")
            self.assertTrue(sender.is_alive())
            self.assertLessEqual(node.stats["peak_in_flight_bytes"], window)
            node.pause_reading(False)
            sender.join(60)
            self.assertFalse(sender.is_alive())
            self.assertLessEqual(node.stats["peak_in_flight_bytes"], window)
            # The C++ node returns credit a quarter window at a time: all
            # but less than a quarter comes back.
            eventually(lambda: node._in_flight[0] < window // 4,
                       what="credit for the messages the C++ node took")
            eventually(lambda: self.link_report("py-window")[
                "messages_received"] == 2000, what="all 2000 messages")


if __name__ == "__main__":
    unittest.main()
