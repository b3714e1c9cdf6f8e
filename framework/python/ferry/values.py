"""Python values with the exactness ferry's families keep.

Contract: `F32` is a 32-bit float held by its bits (Python's float is a
double; converting a float's NaN to a double may change its payload), so a
`float` member travels bit for bit; `same(a, b)` compares two values
floating point by its bits, containers element by element. `MapPairs` is a
map as it arrived, a list of (key, value) pairs in wire order (for keys
Python cannot hash). Pure.
"""

from __future__ import annotations

import math
import struct
from typing import Any


class F32:
    """A 32-bit float, by its bits."""

    __slots__ = ("bits",)

    bits: int

    def __init__(self, value: float | F32 = 0.0) -> None:
        if isinstance(value, F32):
            self.bits = value.bits
        else:
            packed = struct.pack("<f", value)
            self.bits = struct.unpack("<I", packed)[0]

    @classmethod
    def from_bits(cls, bits: int) -> F32:
        """The F32 of the 32 bits `bits`."""
        x = cls.__new__(cls)
        x.bits = bits & 0xFFFFFFFF
        return x

    @classmethod
    def exact(cls, value: float | F32) -> F32 | None:
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

    def __float__(self) -> float:
        x: float = struct.unpack("<f", struct.pack("<I", self.bits))[0]
        return x

    def __eq__(self, other: object) -> bool:
        return isinstance(other, F32) and other.bits == self.bits

    def __hash__(self) -> int:
        return hash(("F32", self.bits))

    def __repr__(self) -> str:
        return f"F32({float(self)!r})"


class MapPairs(list[tuple[Any, Any]]):
    """A map as (key, value) pairs, in the order they arrived."""


def f64_bits(x: float) -> int:
    """The 64 bits of double `x`."""
    bits: int = struct.unpack("<Q", struct.pack("<d", x))[0]
    return bits


def same(a: Any, b: Any, path: str = "value") -> str | None:
    """None when `a` and `b` are equal (floats by their bits), else the path
    to the first difference and what differs there."""
    if isinstance(a, float) and isinstance(b, float):
        return None if f64_bits(a) == f64_bits(b) else (
            f"{path}: bits {f64_bits(a):#x} vs {f64_bits(b):#x}")
    if type(a) is not type(b):
        return f"{path}: {type(a).__name__} vs {type(b).__name__}"
    if isinstance(a, dict):  # a map's order is not its value
        if len(a) != len(b) or any(k not in b for k in a):
            return f"{path}: keys {list(a)!r} vs {list(b)!r}"
        for k in a:
            d = same(a[k], b[k], f"{path}[{k!r}]")
            if d:
                return d
        return None
    if isinstance(a, (list, tuple)):
        if len(a) != len(b):
            return f"{path}: {len(a)} vs {len(b)} elements"
        for i, (x, y) in enumerate(zip(a, b)):
            d = same(x, y, f"{path}[{i}]")
            if d:
                return d
        return None
    return None if a == b else f"{path}: {a!r} vs {b!r}"
