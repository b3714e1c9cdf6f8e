"""Python values through the two families by their shapes, without a node:
what each family writes for each kind of member, what it refuses when
encoding (so a link can try its next family) and when decoding (hostile
documents), and the shape grammar a C++ node sends in its hello.
"""

import json
import math
import struct
import unittest

import msgpack

from ferry import Error, F32, MapPairs, json_family, msgpack_family
from ferry.shapes import parse

ORDER = parse("@3{id:u64,lines:list<{item:str,qty:i32}>,"
              "discount:opt<f64>,tags:set<str>,by:map<i64,f32>,"
              "pair:pair<i8,bool>,three:tuple<i8,str,bool>,fixed:array<u16,2>,raw:list<u8>}")
VALUE = {"id": 2 ** 64 - 1, "lines": [{"item": "tea", "qty": -3}],
         "discount": 0.25, "tags": ["a", "b"], "by": {-1: F32(0.5)},
         "pair": (-128, True), "three": (1, "x", False), "fixed": [0, 65535], "raw": b"\x00\xff"}


class ShapesTest(unittest.TestCase):
    def test_the_grammar_reads_records_versions_and_containers(self):
        self.assertEqual(ORDER.kind, "record")
        self.assertEqual(ORDER.version, 3)
        self.assertEqual(ORDER.names, ["id", "lines", "discount", "tags",
                                       "by", "pair", "three", "fixed",
                                       "raw"])
        self.assertEqual(ORDER.args[1].args[0].names, ["item", "qty"])
        self.assertEqual(ORDER.args[7].size, 2)
        self.assertTrue(ORDER.args[8].is_bytes)
        self.assertEqual(parse('custom"std::chrono::duration"@2').label,
                         "std::chrono::duration")

    def test_malformed_or_oversized_shapes_are_refused(self):
        for text in ["{x:i32", "list<>", "{:i32}", "nope", "map<i32>",
                     "list<" * 70 + "i32" + ">" * 70, "i32 ", "x" * 70000]:
            with self.assertRaises(Error, msg=text[:40]):
                parse(text)


class MsgpackFamilyTest(unittest.TestCase):
    def test_a_record_is_an_array_that_plain_msgpack_reads(self):
        frames = msgpack_family.encode(ORDER, VALUE)
        plain = msgpack.unpackb(frames[0], raw=False, strict_map_key=False)
        self.assertEqual(plain[0], 2 ** 64 - 1)
        self.assertEqual(plain[1], [["tea", -3]])
        self.assertEqual(plain[5], [-128, True])
        self.assertEqual(plain[8], b"\x00\xff")
        self.assertEqual(msgpack_family.decode(ORDER, frames, "t"), VALUE)

    def test_members_may_come_as_a_list_in_member_order(self):
        point = parse("{x:i32,y:f64}")
        self.assertEqual(msgpack_family.decode(
            point, msgpack_family.encode(point, [1, 2]), "t"),
            {"x": 1, "y": 2.0})

    def test_values_a_member_cannot_hold_are_refused_naming_it(self):
        point = parse("{x:i32,y:f32}")
        for bad, where in [({"x": 2 ** 31, "y": 0.0}, "member x"),
                           ({"x": 1, "y": 0.1}, "member y"),
                           ({"x": "1", "y": 0.0}, "member x"),
                           ({"x": 1}, "")]:
            with self.assertRaises(Error) as caught:
                msgpack_family.encode(point, bad)
            self.assertIn(where, caught.exception.text)

    def test_hostile_documents_are_refused(self):
        point = parse("{x:i32,y:i32}")
        cases = [(msgpack.packb([1]), "member_mismatch"),
                 (msgpack.packb([1, 2, 3]), "member_mismatch"),
                 (msgpack.packb([1, 2 ** 40]), "inexact_value"),
                 (msgpack.packb([1, "2"]), "type_mismatch"),
                 (msgpack.packb([1, 2]) + b"\x00", "trailing_bytes")]
        for data, name in cases:
            with self.assertRaises(Error) as caught:
                msgpack_family.decode(point, [data], "t")
            self.assertEqual(caught.exception.name, name, data.hex())
        dup = parse("map<str,i32>")
        with self.assertRaises(Error) as caught:
            msgpack_family.decode(dup, [b"\x82\xa1a\x01\xa1a\x02"], "t")
        self.assertEqual(caught.exception.name, "duplicate_key")

    def test_maps_with_keys_python_cannot_hash_arrive_as_pairs(self):
        shape = parse("map<{a:i32},i32>")
        value = MapPairs([({"a": 1}, 2)])
        back = msgpack_family.decode(shape, msgpack_family.encode(
            shape, value), "t")
        self.assertEqual(back, value)


class JsonFamilyTest(unittest.TestCase):
    def test_the_document_is_cereals(self):
        frames = json_family.encode(ORDER, VALUE)
        doc = json.loads(frames[0])
        v = doc["value0"]
        self.assertEqual(v["value0"], 2 ** 64 - 1)
        self.assertEqual(v["value1"], [{"value0": "tea", "value1": -3}])
        self.assertEqual(v["value2"], {"nullopt": False, "data": 0.25})
        self.assertEqual(v["value4"], [{"key": -1, "value": 0.5}])
        self.assertEqual(v["value5"], {"first": -128, "second": True})
        self.assertEqual(v["value6"], {"tuple_element0": 1,
                                       "tuple_element1": "x",
                                       "tuple_element2": False})
        self.assertEqual(v["value7"], {"value0": 0, "value1": 65535})
        self.assertEqual(v["value8"], [0, 255])
        self.assertEqual(json_family.decode(ORDER, frames, "t"), VALUE)

    def test_numbers_travel_exactly(self):
        shape = parse("{d:f64,f:f32}")
        for d, f in [(-0.0, F32(-0.0)), (5e-324, F32.from_bits(1)),
                     (math.inf, F32(-math.inf)), (0.1, F32(0.1)),
                     (2.0 ** 53, F32(3.4028234663852886e38))]:
            back = json_family.decode(shape, json_family.encode(
                shape, {"d": d, "f": f}), "t")
            self.assertEqual(repr(back["d"]), repr(d))
            self.assertEqual(back["f"].bits, f.bits)

    def test_what_cereal_json_cannot_carry_is_refused_when_encoding(self):
        shape = parse("{d:f64,s:str}")
        nan_payload = struct.unpack("<d",
                                    bytes.fromhex("bc0a000000f8ffff"))[0]
        for bad, name in [({"d": nan_payload, "s": ""}, "inexact_value"),
                          ({"d": 0.0, "s": "a\0b"}, "invalid_text")]:
            with self.assertRaises(Error) as caught:
                json_family.encode(shape, bad)
            self.assertEqual(caught.exception.name, name)

    def test_hostile_documents_are_refused(self):
        point = parse("{x:i32,y:f32}")
        cases = [
            ('{"value0": {"value1": 1, "value0": 2}}', "member_mismatch"),
            ('{"value0": {"value0": 1, "value0": 2}}', "duplicate_key"),
            ('{"value0": {"value0": 1}}', "member_mismatch"),
            ('{"value0": {"value0": 1, "value1": 0.1}}', "inexact_value"),
            ('{"value0": {"value0": 1.5, "value1": 0}}', "inexact_value"),
            ('{"value0": {"value0": 1, "value1": 0}} 1', "malformed_frame"),
            ('{"value0": {"value0": 1, "value1": 1e999}}', "inexact_value"),
        ]
        for text, name in cases:
            with self.assertRaises(Error, msg=text) as caught:
                json_family.decode(point, [text.encode()], "t")
            self.assertEqual(caught.exception.name, name, text)
        text = parse("{s:str}")
        for doc, name in [(b'{"value0": {"value0": "a\\u0000b"}}',
                           "invalid_text"),
                          (b'{"value0": {"value0": "\\udc00"}}',
                           "invalid_text"),
                          (b'{"value0": {"value0": "\xff"}}',
                           "invalid_text"),
                          (b"[" * 100000 + b"]" * 100000,
                           "nesting_too_deep")]:
            with self.assertRaises(Error) as caught:
                json_family.decode(text, [doc], "t")
            self.assertEqual(caught.exception.name, name, doc[:40])


if __name__ == "__main__":
    unittest.main()
