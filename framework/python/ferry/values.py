"""Python values with the exactness ferry's families keep.

Contract: `F32` is a 32-bit float held by its bits (Python's float is a
double; converting a float's NaN to a double may change its payload), so a
`float` member travels bit for bit; `same(a, b)` compares two values
floating point by its bits, containers element by element. `MapPairs` is a
map as it arrived, a list of (key, value) pairs in wire order (for keys
Python cannot hash). Pure.
"""

import math
import struct


class F32:
    """A 32-bit float, by its bits."""

    __slots__ = ("bits",)

    def __init__(self, value=0.0):
        if isinstance(value, F32):
            self.bits = value.bits
        else:
            packed = struct.pack("<f", value)
            self.bits = struct.unpack("<I", packed)[0]

    @classmethod
    def from_bits(cls, bits):
        x = cls.__new__(cls)
        x.bits = bits & 0xFFFFFFFF
        return x

    @classmethod
    def exact(cls, value):
        """The F32 holding `value` exactly, or None when it cannot."""
        if isinstance(value, F32):
            return value
        if isinstance(value, bool):
            return None
        if isinstance(value, int):
            if abs(value) > (1 << 128):
                return None
            value = float(value)
        try:
            x = cls(value)
        except OverflowError:
            return None
        back = float(x)
        if math.isnan(value):
            return x if math.isnan(back) else None
        if back != value or (value == 0 and math.copysign(1, value)
                             != math.copysign(1, back)):
            return None
        return x

    def __float__(self):
        return struct.unpack("<f", struct.pack("<I", self.bits))[0]

    def __eq__(self, other):
        return isinstance(other, F32) and other.bits == self.bits

    def __hash__(self):
        return hash(("F32", self.bits))

    def __repr__(self):
        return "F32(%r)" % float(self)


class MapPairs(list):
    """A map as (key, value) pairs, in the order they arrived."""


def f64_bits(x):
    return struct.unpack("<Q", struct.pack("<d", x))[0]


def same(a, b, path="value"):
    """None when `a` and `b` are equal (floats by their bits), else the path
    to the first difference and what differs there."""
    if isinstance(a, float) and isinstance(b, float):
        return None if f64_bits(a) == f64_bits(b) else (
            "%s: bits %#x vs %#x" % (path, f64_bits(a), f64_bits(b)))
    if type(a) is not type(b):
        return "%s: %s vs %s" % (path, type(a).__name__, type(b).__name__)
    if isinstance(a, dict):  # a map's order is not its value
        if len(a) != len(b) or any(k not in b for k in a):
            return "%s: keys %r vs %r" % (path, list(a), list(b))
        for k in a:
            d = same(a[k], b[k], "%s[%r]" % (path, k))
            if d:
                return d
        return None
    if isinstance(a, (list, tuple)):
        if len(a) != len(b):
            return "%s: %d vs %d elements" % (path, len(a), len(b))
        for i, (x, y) in enumerate(zip(a, b)):
            d = same(x, y, "%s[%d]" % (path, i))
            if d:
                return d
        return None
    return None if a == b else "%s: %r vs %r" % (path, a, b)
