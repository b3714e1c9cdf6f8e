"""The Python peer's encodings against docs/wire-format.md's examples, byte
for byte, and its readers against hostile bytes: every truncation and
20,000 seeded random mutations of valid bodies either read or raise ferry's
`Error`, never anything else.
"""

import random
import struct
import unittest

import msgpack

from ferry import Error, F32, MapPairs, atom, message, msgpack_codec, wire
from ferry.message import Element, Frame, Message
from ferry.wire import FrameType


def doc_hex(text):
    return bytes.fromhex(text.replace("\n", " "))


class DocExamplesTest(unittest.TestCase):
    def test_categories_are_the_documented_atoms(self):
        self.assertEqual(atom("ferry_fw"), 0x000faeadf7fa5afc)
        self.assertEqual(atom("ferry_ser"), 0x03ebab7dfe978ab7)
        self.assertEqual(atom("ferry_sto"), 0x03ebab7dfe978e74)
        self.assertEqual(atom("exit"), 0x000000000fabdbb9)
        self.assertEqual(atom("system"), 0x000000fe3ee39ab2)

    def test_the_intro_example(self):
        got = wire.frame(FrameType.INTRO, wire.intro(
            0x0123456789abcdef, "alpha", "h", "ferry-1000", True,
            0x1122334455667788))
        self.assertEqual(len(got), 61)
        self.assertEqual(got[:12], doc_hex("31 00 00 00 00 00 00 00 01 00 "
                                           "00 00"))
        self.assertEqual(got[12:16], doc_hex("0f 00 00 00"))
        self.assertEqual(got[-9:], doc_hex("01 88 77 66 55 44 33 22 11"))

    def test_the_hello_example(self):
        got = wire.frame(FrameType.HELLO, wire.hello(
            ["msgpack"], ["msgpack"], ["caf", "msgpack", "raw"], 5,
            268435456, 4096, ["point"], ["{x:i32,y:i32}"], "",
            ["lz4", "zstd"]))
        self.assertEqual(len(got), 152)
        self.assertEqual(got[:12], doc_hex("8c 00 00 00 00 00 00 00 02 00 "
                                           "00 00"))
        self.assertEqual(got[-23:], doc_hex(
            "00 00 00 00 02 00 00 00 03 00 00 00 6c 7a 34 04 00 00 00 7a 73 "
            "74 64"))

    def test_the_message_example(self):
        header = message.encode_header("raw", "blob", [3])
        self.assertEqual(header, doc_hex(
            "46 53 01 03 00 72 61 77 04 00 62 6c 6f 62 00 00 01 00 00 00 "
            "01 00 00 00 03 00 00 00 00 00 00 00"))
        body = message.encode_message(Message(
            42, 7, 0x1000000000000000,
            [Element(header, [Frame(0, 3, data=b"abc")])]))
        got = wire.frame(FrameType.MESSAGE, body)
        self.assertEqual(len(got), 121)
        self.assertEqual(got[:16], doc_hex("6d 00 00 00 00 00 00 00 10 00 "
                                           "00 00 46 00 00 00"))
        self.assertEqual(got[-3:], b"abc")
        back = message.read_message(body)
        self.assertEqual((back.target, back.sender, back.mid), (42, 7,
                                                               1 << 60))
        self.assertEqual(message.wire_size(back), 131)

    def test_the_error_answer_example(self):
        err = Error(8, "ferry_fw", "x")
        body = message.encode_message(Message(7, 42, 0x9000000000000005,
                                              [], err))
        got = wire.frame(FrameType.MESSAGE, body)
        self.assertEqual(got, doc_hex(
            "2f 00 00 00 00 00 00 00 10 00 00 00 1d 00 00 00 "
            "07 00 00 00 00 00 00 00 2a 00 00 00 00 00 00 00 "
            "05 00 00 00 00 00 00 90 01 00 00 00 00 "
            "08 fc 5a fa f7 ad ae 0f 00 01 00 00 00 78"))
        self.assertEqual(message.read_message(body).error, err)
        self.assertEqual(message.wire_size(message.read_message(body)), 64)

    def test_the_refuse_and_chunk_examples(self):
        self.assertEqual(wire.frame(FrameType.REFUSE, wire.refuse(
            Error(18, "ferry_fw", "no"))), doc_hex(
            "0f 00 00 00 00 00 00 00 04 00 00 00 12 fc 5a fa f7 ad ae 0f "
            "00 02 00 00 00 6e 6f"))
        self.assertEqual(wire.frame(FrameType.CHUNK,
                                    wire.le64s(79) + b"xy"),
                         doc_hex("0a 00 00 00 00 00 00 00 29 00 00 00 4f 00 "
                                 "00 00 00 00 00 00 78 79"))

    def test_the_msgpack_payload_example(self):
        frame = msgpack_codec.pack([1, 2.5, "p"])
        self.assertEqual(bytes(frame), doc_hex(
            "93 01 cb 40 04 00 00 00 00 00 00 a1 70"))


class HostileBytesTest(unittest.TestCase):
    def valid_bodies(self):
        el = Element(message.encode_header("msgpack", "t", [4]),
                     [Frame(0, 4, data=b"\x93\x01\x02\x03")])
        one = message.encode_message(Message(1, 2, 1 << 60, [el, el]))
        batch = struct.pack("<I", 2) + one + message.encode_message(
            Message(3, 4, 1 << 60, [], Error(5, "ferry_fw", "why")))
        hello = wire.hello(["msgpack"], ["msgpack"], ["msgpack"], 1, 2, 3,
                           ["a", "b"], ["{x:i32}", "str"], "")
        return [(message.read_message, one), (message.read_batch, batch),
                (wire.read_hello, hello),
                (wire.read_intro, wire.intro(5, "n", "h", "s", True, 9)),
                (message.read_header, el.header)]

    def read(self, reader, data):
        try:
            if reader is message.read_header:
                reader(data, 1 << 30)
            else:
                reader(data)
        except Error:
            pass

    def test_every_truncation_is_refused_with_an_error(self):
        for reader, body in self.valid_bodies():
            for n in range(len(body)):
                with self.assertRaises(Error, msg="%s of %d bytes"
                                       % (reader.__name__, n)):
                    if reader is message.read_header:
                        reader(body[:n], 1 << 30)
                    else:
                        reader(body[:n])

    def test_random_mutations_read_or_raise_ferrys_error(self):
        rng = random.Random(1)
        bodies = self.valid_bodies()
        for i in range(20000):
            reader, body = bodies[i % len(bodies)]
            data = bytearray(body)
            for _ in range(rng.randint(1, 4)):
                pos = rng.randrange(len(data))
                data[pos] = rng.choice([0, 0xFF, 0x7F, 0x80,
                                        rng.getrandbits(8)])
            self.read(reader, bytes(data))

    def test_a_string_claiming_more_than_a_mib_is_refused_before_reading(
            self):
        body = struct.pack("<II", 1, (1 << 20) + 1) + b"x" * 10
        with self.assertRaises(Error) as caught:
            wire.read_hello(body)
        self.assertIn("above the 1048576", caught.exception.text)

    def test_a_flag_that_is_neither_zero_nor_one_is_refused(self):
        body = bytearray(wire.intro(5, "n", "h", "s", True, 9))
        body[-9] = 2
        with self.assertRaises(Error):
            wire.read_intro(bytes(body))

    def test_message_flags_other_than_bit_zero_are_refused(self):
        body = bytearray(message.encode_message(Message(1, 2, 3)))
        body[4 + 24] = 2
        with self.assertRaises(Error) as caught:
            message.read_message(bytes(body))
        self.assertIn("flags", caught.exception.text)


class MsgpackTest(unittest.TestCase):
    def test_pythons_msgpack_reads_what_ferry_writes_and_back(self):
        values = [0, -1, -33, 127, 128, 2 ** 64 - 1, -2 ** 63, 1.5, -0.0,
                  "", "x" * 40, "é" * 40000, b"", b"\x00" * 300, None, True,
                  [1, [2, [3]]], {"a": [1.5]}, list(range(70000))]
        for v in values:
            packed = bytes(msgpack_codec.pack(v))
            self.assertEqual(msgpack.unpackb(packed, raw=False,
                                             strict_map_key=False), v)
            back = msgpack_codec.unpack(msgpack.packb(v, use_bin_type=True))
            if isinstance(v, dict):
                back = dict(back)
            self.assertEqual(back, v)

    def test_floats_keep_their_width_and_bits(self):
        for bits in (0x7FC00123, 0xFF800001, 0x00000001, 0x80000000):
            x = F32.from_bits(bits)
            back = msgpack_codec.unpack(msgpack_codec.pack(x))
            self.assertEqual(back.bits, bits)
        nan = struct.unpack("<d", struct.pack("<Q", 0xFFF8000000000ABC))[0]
        back = msgpack_codec.unpack(msgpack_codec.pack(nan))
        self.assertEqual(struct.pack("<d", back), struct.pack("<d", nan))

    def test_maps_arrive_as_pairs_in_wire_order(self):
        back = msgpack_codec.unpack(b"\x82\x02\xa1b\x01\xa1a")
        self.assertIsInstance(back, MapPairs)
        self.assertEqual(list(back), [(2, "b"), (1, "a")])

    def test_hostile_input_is_refused_by_name(self):
        cases = {
            b"\xdd\xff\xff\xff\xff": "length_out_of_range",
            b"\x91" * 70 + b"\x00": "nesting_too_deep",
            b"\xa2\xff\xfe": "invalid_text",
            b"\xd4\x01\x02": "malformed_frame",
            b"\xc1": "malformed_frame",
            b"\x01\x02": "trailing_bytes",
            b"\xcb\x00": "truncated_frame",
        }
        for data, name in cases.items():
            with self.assertRaises(Error, msg=data.hex()) as caught:
                msgpack_codec.unpack(data)
            self.assertEqual(caught.exception.name, name, data.hex())


if __name__ == "__main__":
    unittest.main()
