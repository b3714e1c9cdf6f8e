"""A Python peer and a C++ node call each other's actors.

Both ways, both families (msgpack, cereal.json): the C++ node calls a
Python actor with the exactness tests' corpus (value_gen, 10,000 values of
exact.nested) and checks each answer bit for bit; the Python peer calls the
C++ echo with the values it received and with values it makes itself from
the type's shape, and checks each answer bit for bit. Errors raised on
either side arrive typed; a frame above the pull threshold is pulled in
chunks; names the node does not expose are refused by name; a node whose
links compress sends the Python peer its frames uncompressed.
"""

import math
import os
import random
import struct
import unittest

import ferry
from ferry import F32
from ferry.shapes import INT_RANGES, parse
from support import ServiceTest

CORPUS = int(os.environ.get("FERRY_PYTHON_CORPUS", "10000"))


def make_value(shape, rng, family, depth=0):
    """A random Python value of `shape` that `family` carries exactly."""
    k = shape.kind
    json = family == "cereal.json"
    if k == "record":
        return {n: make_value(s, rng, family, depth + 1)
                for n, s in zip(shape.names, shape.args)}
    if k in INT_RANGES:
        lo, hi = INT_RANGES[k]
        return rng.choice([lo, hi, 0, 1, -1 if lo < 0 else 2,
                           rng.randint(lo, hi)])
    if k == "bool":
        return rng.random() < 0.5
    if k in ("f32", "f64"):
        bits = rng.getrandbits(32 if k == "f32" else 64)
        specials = [0.0, -0.0, math.inf, -math.inf, math.nan, 5e-324,
                    1.5, 2.0 ** 53]
        if k == "f32":
            x = F32.from_bits(bits)
            if json and math.isnan(float(x)):
                x = F32(math.nan)
            return rng.choice([x, F32(rng.choice(specials))])
        x = struct.unpack("<d", struct.pack("<Q", bits))[0]
        if json and math.isnan(x):
            x = math.nan
        return rng.choice([x, rng.choice(specials)])
    if k == "str":
        alphabet = "aZ \"\\/\n\t\x01\x7f\u00e9\u0301\u0800\ud7ff\ue000" \
                   "\ufeff\uffff\U00010000\U0001f600\U0010ffff"
        if not json:
            alphabet += "\0"
        return "".join(rng.choice(alphabet)
                       for _ in range(rng.choice([0, 1, 5, 40])))
    if k in ("list", "set"):
        n = rng.choice([0, 1, 2, 5]) if depth < 4 else 0
        if shape.is_bytes:
            return bytes(rng.getrandbits(8) for _ in range(n * 3))
        items = [make_value(shape.args[0], rng, family, depth + 1)
                 for _ in range(n)]
        if k == "set":  # a set's members, in the order C++ keeps them
            items = sorted({repr(x): x for x in items}.values())
        return items
    if k == "array":
        return [make_value(shape.args[0], rng, family, depth + 1)
                for _ in range(shape.size)]
    if k in ("tuple", "pair"):
        return tuple(make_value(s, rng, family, depth + 1)
                     for s in shape.args)
    if k == "map":
        out = {}
        for _ in range(rng.choice([0, 1, 3])):
            key = make_value(shape.args[0], rng, family, depth + 1)
            if isinstance(key, float) and math.isnan(key):
                continue
            out[key] = make_value(shape.args[1], rng, family, depth + 1)
        return out
    raise AssertionError("no generator for %s" % k)


class CallsTest(ServiceTest):
    def corpus_both_ways(self, family):
        with self.service.connect(name="py-" + family,
                                  families=[family]) as node:
            received = []

            def answer(env):
                received.append(env.value)
                return env.value
            me = node.spawn(answer)
            result = node.lookup("caller").request(
                {"count": CORPUS, "seed": 42, "family": family,
                 "raise": False}, type="py.call", sender=me, timeout=600)
            self.assertEqual(result["error"], "")
            self.assertEqual(result["first_mismatch"], "")
            self.assertEqual((result["checked"], result["mismatches"]),
                             (CORPUS, 0))
            self.assertEqual(len(received), CORPUS)
            echo = node.lookup("echo")
            for i, value in enumerate(received):
                back = echo.request(value, type="exact.nested")
                diff = ferry.same(value, back)
                self.assertIsNone(diff, "value #%d of the corpus" % i)
            shape = parse(node.shapes["exact.nested"])
            rng = random.Random(7)
            for i in range(1000):
                value = make_value(shape, rng, family)
                back = echo.request(value, type="exact.nested")
                self.assertIsNone(ferry.same(value, back),
                                  "made value #%d: %r" % (i, value))

    def test_the_corpus_travels_bit_for_bit_both_ways_in_msgpack(self):
        self.corpus_both_ways("msgpack")

    def test_the_corpus_travels_bit_for_bit_both_ways_in_cereal_json(self):
        self.corpus_both_ways("cereal.json")

    def test_an_error_of_a_cpp_actor_arrives_typed(self):
        with self.service.connect() as node:
            with self.assertRaises(ferry.Error) as caught:
                node.lookup("fail").request({"value": "out of stock"},
                                            type="py.text")
            e = caught.exception
            self.assertEqual((e.code, e.category_name, e.text),
                             (42, "py_test", "out of stock"))

    def test_an_error_raised_by_a_python_actor_arrives_typed(self):
        with self.service.connect() as node:
            def refuse(env):
                raise ferry.Error(7, "py_err", "no %s here" % env.value)
            me = node.spawn(refuse)
            result = node.lookup("caller").request(
                {"count": 0, "seed": 0, "family": "", "raise": True},
                type="py.call", sender=me)
            self.assertEqual(result["checked"], 1)
            self.assertEqual(result["mismatches"], 0, result)
            # The C++ side renders the error it received: category atom,
            # the code (not one of ferry's, so by number) and the text.
            self.assertIn("py_err", result["error"])
            self.assertIn("no {'value': 'raise'} here", result["error"])

    def test_an_exception_of_a_python_actor_answers_as_a_runtime_error(self):
        with self.service.connect() as node:
            me = node.spawn(lambda env: 1 // 0)
            result = node.lookup("caller").request(
                {"count": 0, "seed": 0, "family": "", "raise": True},
                type="py.call", sender=me)
            self.assertIn("runtime_error", result["error"])
            self.assertIn("ZeroDivisionError", result["error"])

    def test_a_name_the_node_does_not_expose_is_refused_by_name(self):
        with self.service.connect() as node:
            with self.assertRaises(ferry.Error) as caught:
                node.lookup("nobody")
            self.assertEqual(caught.exception.name, "no_such_actor")
            self.assertIn("nobody", caught.exception.text)
            self.assertIn("echo", caught.exception.text)

    def test_a_type_the_node_does_not_know_is_refused_before_sending(self):
        with self.service.connect() as node:
            with self.assertRaises(ferry.Error) as caught:
                node.lookup("echo").request({"a": 1}, type="py.unknown")
            self.assertEqual(caught.exception.name, "unregistered_type")

    def test_a_value_that_does_not_fit_its_type_is_refused_naming_the_member(
            self):
        with self.service.connect(families=["msgpack"]) as node:
            with self.assertRaises(ferry.Error) as caught:
                node.lookup("echo").request({"x": 1, "y": 2 ** 40},
                                            type="py.point")
            self.assertIn("member y", caught.exception.text)

    def test_a_frame_above_the_pull_threshold_is_pulled_in_chunks(self):
        with self.service.connect(families=["msgpack"]) as node:
            data = os.urandom(20 << 20)
            back = node.lookup("echo").request({"seq": 9, "bytes": data},
                                               type="py.blob", timeout=60)
            self.assertEqual(back["seq"], 9)
            self.assertTrue(back["bytes"] == data)
            self.assertGreaterEqual(node.stats["bytes_pulled"], 20 << 20)
            report = self.link_report(node.name)
            self.assertTrue(report["found"])
            self.assertGreaterEqual(report["bytes_pulled_by_peer"], 20 << 20)

    def test_the_node_offers_a_python_peer_neither_store_nor_lane(self):
        with self.service.connect() as node:
            node.lookup("echo").request({"x": 1, "y": 2}, type="py.point")
            report = self.link_report(node.name)
            self.assertEqual((report["same_host"], report["lane"]),
                             (False, False))


class CompressionTest(ServiceTest):
    """A node whose links compress sends a Python peer, which reads no
    compression, its frames uncompressed, and says so once."""

    options = ("--ferry.link.compression=lz4",
               "--ferry.link.compression-threshold=1024")

    def test_frames_to_a_peer_that_reads_no_compression_go_uncompressed(
            self):
        with self.service.connect(name="py-plain") as node:
            data = bytes(200000)  # compresses well
            back = node.lookup("echo").request({"seq": 1, "bytes": data},
                                               type="py.blob")
            self.assertEqual(back["bytes"], data)
        self.assertTrue(self.service.alive())
        log = self.service.stop()
        self.assertIn("node py-plain reads no lz4 frames (it reads: none): "
                      "this node sends it frames uncompressed", log)

    @classmethod
    def tearDownClass(cls):
        pass  # the test stopped the node to read its log


if __name__ == "__main__":
    unittest.main()
