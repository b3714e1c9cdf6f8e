"""The Python peer's connection on its own, over a socket pair: a sender
waits while more than the connection's queue bound waits to be written and
goes on once the other end reads; the I/O thread's own sends (the answers
and credit it makes while reading) never wait, so a full queue cannot stall
the thread that drains it.
"""

import socket
import threading
import unittest

from ferry import wire
from ferry.connection import Connection
from ferry.wire import FrameType


class ConnectionTest(unittest.TestCase):
    def setUp(self):
        self.here, self.there = socket.socketpair()
        self.frames = []
        self.answered = threading.Event()
        self.conn = Connection(self.here, "the pair", 1 << 30, 4 << 20,
                               max_queued=64 << 10)

    def tearDown(self):
        self.conn.close()
        self.there.close()
        if self.conn.thread is not None:
            self.conn.thread.join(10)

    def on_frame(self, ftype, body):
        self.frames.append(ftype)
        # An answer made on the I/O thread while the queue is full.
        self.conn.send(wire.frame(FrameType.CREDIT, wire.credit(0, 0, 0)))
        self.answered.set()

    def fill(self):
        """Queues far more than the bound while the other end reads
        nothing."""
        self.conn.send(bytes(8 << 20), wait=False)

    def test_the_io_threads_own_sends_never_wait(self):
        self.conn.start(self.on_frame, lambda err: None)
        self.fill()
        self.there.sendall(wire.frame(FrameType.HEARTBEAT))
        self.assertTrue(self.answered.wait(10),
                        "the I/O thread waited on its own queue")
        self.assertEqual(self.frames, [FrameType.HEARTBEAT])

    def test_a_sender_waits_for_room_and_goes_on_when_the_peer_reads(self):
        self.conn.start(self.on_frame, lambda err: None)
        self.fill()
        sent = threading.Event()
        sender = threading.Thread(target=lambda: (
            self.conn.send(wire.frame(FrameType.PROBE)), sent.set()))
        sender.start()
        self.assertFalse(sent.wait(0.3), "a sender did not wait for room")
        received = 0
        self.there.settimeout(10)
        while not sent.is_set():
            received += len(self.there.recv(1 << 20))
        sender.join(10)
        self.assertGreater(received, 0)


if __name__ == "__main__":
    unittest.main()
