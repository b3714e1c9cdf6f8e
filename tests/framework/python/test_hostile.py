"""A Python peer that claims too much is refused, and the C++ node lives.

Raw connections speak the handshake wrongly (a wrong preface, another
protocol version, no node id or the node's own, a store token that is not
the node's, a hello whose lengths lie,
no family in common, a frame longer than its type takes) and linked peers
send frames that break the rules (a message whose head claims more than its
body holds, a request to an actor that does not exist, a family the link
does not accept, a chunk request for a transfer never made, an answer to
no request, an answer to a request the node sent another peer). Each gets
the refusal docs/wire-format.md gives, and after every one the node still
serves a well-behaved peer.
"""

import socket
import struct
import unittest

import ferry
from ferry import message, wire
from ferry.message import ONE_WAY, RESPONSE_BIT, Element, Frame, Message
from ferry.wire import FrameType, PREFACE
from support import ServiceTest, eventually


class RawPeer:
    """A TCP connection to the node that speaks bytes as the test says."""

    def __init__(self, address):
        host, port = address.rsplit(":", 1)
        self.sock = socket.create_connection((host, int(port)), timeout=10)
        self.buf = b""

    def send(self, data):
        self.sock.sendall(data)

    def read(self, n):
        while len(self.buf) < n:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise EOFError("closed after %d bytes" % len(self.buf))
            self.buf += chunk
        data, self.buf = self.buf[:n], self.buf[n:]
        return data

    def frame(self):
        length, ftype, _ = wire.HEADER.unpack(self.read(12))
        return FrameType(ftype), self.read(length)

    def closed(self):
        """Whether the node closes the connection (reads to its end)."""
        try:
            while self.sock.recv(65536):
                pass
            return True
        except OSError:
            return True

    def intro(self, node_id=12345, name="raw", protocol=wire.PROTOCOL):
        self.send(PREFACE + wire.frame(FrameType.INTRO, wire.intro(
            node_id, name, "raw-host", protocol=protocol)))
        assert self.read(8) == PREFACE
        ftype, body = self.frame()
        assert ftype == FrameType.INTRO, ftype
        return wire.read_intro(body)

    def refusal(self):
        """The node's `refuse` frame (after any hello it sent)."""
        while True:
            ftype, body = self.frame()
            if ftype == FrameType.REFUSE:
                return wire.read_refuse(body)

    def close(self):
        self.sock.close()


def hello(serializers=("msgpack",), **kw):
    return wire.frame(FrameType.HELLO, wire.hello(
        list(serializers), list(kw.get("deserializers", serializers)),
        ["msgpack", "cereal.json"], 0, 1 << 20, 1024))


class HandshakeTest(ServiceTest):
    def setUp(self):
        self.peer = RawPeer(self.service.address)

    def tearDown(self):
        self.peer.close()
        # The node lives and serves a peer that follows the rules.
        self.assertTrue(self.service.alive())
        with self.service.connect(name="py-after") as node:
            self.assertEqual(node.lookup("echo").request(
                {"x": 3, "y": 4}, type="py.point"), {"x": 3, "y": 4})

    def test_a_wrong_preface_closes_the_connection(self):
        self.peer.send(b"GET / HTTP/1.1\r\n\r\n")
        self.assertEqual(self.peer.read(8), PREFACE)
        self.assertTrue(self.peer.closed())

    def test_another_protocol_version_is_refused_naming_both(self):
        self.peer.intro(protocol=wire.PROTOCOL - 1)
        reason = self.peer.refusal()
        self.assertEqual(reason.name, "handshake_failed")
        self.assertIn("speaks ferry wire protocol %d, node cpp speaks %d"
                      % (wire.PROTOCOL - 1, wire.PROTOCOL), reason.text)

    def test_an_intro_without_a_node_id_is_refused(self):
        self.peer.intro(node_id=0)
        self.assertIn("without a node id", self.peer.refusal().text)

    def test_an_intro_with_the_nodes_own_id_is_refused(self):
        # The node's id comes in its intro, which it sends at once.
        self.peer.send(PREFACE)
        self.assertEqual(self.peer.read(8), PREFACE)
        ftype, body = self.peer.frame()
        own_id = wire.read_intro(body)[1]
        self.peer.send(wire.frame(FrameType.INTRO, wire.intro(
            own_id, "raw", "raw-host")))
        self.assertIn("connected to itself", self.peer.refusal().text)

    def test_a_hello_whose_lengths_lie_is_refused(self):
        self.peer.intro()
        body = struct.pack("<I", 0x7FFFFFFF) + b"\x00" * 16
        self.peer.send(wire.frame(FrameType.HELLO, body))
        reason = self.peer.refusal()
        self.assertEqual(reason.name, "handshake_failed")
        self.assertIn("cannot read", reason.text)

    def test_no_family_in_common_is_refused_naming_both_lists(self):
        self.peer.intro()
        self.peer.send(hello(serializers=("nope",)))
        reason = self.peer.refusal()
        self.assertEqual(reason.name, "no_common_family")
        self.assertIn("nope", reason.text)

    def test_a_wrong_store_token_gets_no_lane(self):
        # The node's intro names its host, store and store token; a peer
        # that copies the first two and guesses the token does not share
        # the store: the node offers it no lane (and sends no store frames).
        self.peer.send(PREFACE)
        self.assertEqual(self.peer.read(8), PREFACE)
        ftype, body = self.peer.frame()
        _, node_id, _, host, store, has_store, token = wire.read_intro(body)
        self.assertTrue(has_store)
        self.peer.send(wire.frame(FrameType.INTRO, wire.intro(
            node_id + 1 if node_id + 1 < 1 << 64 else 1, "raw", host, store,
            True, token ^ 1)))
        self.peer.send(hello())
        while True:
            ftype, body = self.peer.frame()
            if ftype == FrameType.HELLO:
                break
        self.assertEqual(wire.read_hello(body)["lane"], "")

    def test_a_frame_longer_than_its_type_takes_closes_the_connection(self):
        self.peer.intro()
        self.peer.send(wire.header(FrameType.HELLO, 1 << 60))
        self.assertTrue(self.peer.closed())

    def test_a_link_frame_before_the_link_closes_the_connection(self):
        self.peer.intro()
        self.peer.send(wire.frame(FrameType.PROBE))
        self.assertTrue(self.peer.closed())


class LinkTest(ServiceTest):
    def setUp(self):
        self.node = self.service.connect(name="py-hostile",
                                         families=["msgpack"])
        self.echo = self.node.lookup("echo")

    def tearDown(self):
        self.node.close()
        self.assertTrue(self.service.alive())
        with self.service.connect(name="py-after") as node:
            self.assertEqual(node.lookup("echo").request(
                {"x": 5, "y": 6}, type="py.point"), {"x": 5, "y": 6})

    def point(self):
        return self.node.element("py.point", {"x": 1, "y": 2})

    def test_a_message_whose_head_claims_too_much_takes_the_link_down(self):
        body = bytearray(message.encode_message(Message(
            self.echo.id, 0, ONE_WAY, [self.point()])))
        struct.pack_into("<I", body, 4 + 25, 4096)  # the element count
        self.node._send(FrameType.MESSAGE, bytes(body))
        self.assertEqual(self.node.wait_down(10).name, "link_down")

    def test_a_frame_of_unknown_type_takes_the_link_down(self):
        self.node._conn.send(struct.pack("<QHH", 0, 7, 0))
        self.assertEqual(self.node.wait_down(10).name, "link_down")

    def test_a_request_to_no_actor_is_answered_no_such_actor(self):
        ghost = self.node.proxy(987654)
        with self.assertRaises(ferry.Error) as caught:
            ghost.request({"x": 1, "y": 2}, type="py.point")
        self.assertEqual(caught.exception.name, "no_such_actor")

    def test_a_one_way_message_to_no_actor_is_reported_refused(self):
        self.node.proxy(987654).send({"x": 1, "y": 2}, type="py.point")
        eventually(lambda: self.node.stats["refused_by_peer"] == 1,
                   what="the node's refusal")
        self.assertEqual(self.node.stats["last_refusal"].name,
                         "no_such_actor")

    def test_a_family_the_node_does_not_accept_is_refused(self):
        el = self.point()
        el.header = message.encode_header(
            "nope", "py.point", [len(el.frames[0].data)])
        with self.assertRaises(ferry.Error) as caught:
            self.node.request_message(self.echo.id, 0, [el], 10)
        self.assertEqual(caught.exception.name, "family_refused")

    def test_a_payload_that_lies_about_its_frames_is_refused(self):
        el = self.point()
        el.header = message.encode_header("msgpack", "py.point",
                                          [len(el.frames[0].data) + 1])
        with self.assertRaises(ferry.Error) as caught:
            self.node.request_message(self.echo.id, 0, [el], 10)
        self.assertEqual(caught.exception.category_name, "ferry_ser")

    def test_bytes_that_are_not_msgpack_are_refused_naming_the_type(self):
        data = b"\xc1\xc1\xc1"
        el = Element(message.encode_header("msgpack", "py.point", [3]),
                     [Frame(0, 3, data=data)])
        with self.assertRaises(ferry.Error) as caught:
            self.node.request_message(self.echo.id, 0, [el], 10)
        self.assertEqual(caught.exception.category_name, "ferry_ser")
        self.assertIn("py.point", caught.exception.text)

    def test_a_chunk_request_for_no_transfer_fails_transfer_failed(self):
        with self.assertRaises(ferry.Error) as caught:
            self.node.ask(FrameType.CHUNK_REQUEST,
                          lambda rid: wire.le64s(rid, 424242, 0, 4096), 10,
                          "a chunk")
        self.assertEqual(caught.exception.name, "transfer_failed")

    def test_an_answer_to_no_request_is_dropped_and_counted(self):
        self.node._send(FrameType.ACTOR_ID, wire.le64s(777777, 1))
        eventually(lambda: self.link_report("py-hostile")[
            "unasked_answers"] == 1, what="the unasked answer counted")
        self.assertTrue(self.node.is_up)

    def test_an_answer_to_a_request_sent_to_another_peer_is_refused(self):
        # The node's caller asks a Python actor of another link; this link
        # answers in its place, with that request's id and with an id never
        # asked. Both are refused on this link, and the asked actor's own
        # answer is the one the caller gets.
        refusals = []

        def answer(env):
            for mid in (env.mid, env.mid + 1000):
                self.node.send_message(Message(
                    env.sender.id, 0, mid | RESPONSE_BIT,
                    [self.node.element("py.text", {"value": "forged"})]))
            eventually(lambda: self.node.stats["refused_by_peer"] == 2,
                       what="the node's refusals of both answers")
            refusals.append(self.node.stats["last_refusal"])
            return {"value": "honest"}

        with self.service.connect(name="py-asked") as asked:
            me = asked.spawn(answer)
            result = asked.lookup("caller").request(
                {"count": 0, "seed": 0, "family": "", "raise": True},
                type="py.call", sender=me)
        self.assertEqual(result["first_mismatch"], "answered honest")
        self.assertEqual(refusals[0].name, "unasked_response")
        self.assertIn("py-hostile", refusals[0].text)
        self.assertEqual(self.link_report("py-hostile")["refusals"], 2)
        self.assertTrue(self.node.is_up)

    def test_a_spawn_request_of_no_type_fails_by_name(self):
        args = message.encode_message(Message(0, 0, ONE_WAY, []))
        with self.assertRaises(ferry.Error) as caught:
            self.node.ask(FrameType.SPAWN, lambda rid: wire.Writer().le64(
                rid).str("no.such.type").raw(args).bytes(), 10, "a spawn")
        self.assertIn(caught.exception.name,
                      ("no_such_actor", "too_many_actors"))


if __name__ == "__main__":
    unittest.main()
