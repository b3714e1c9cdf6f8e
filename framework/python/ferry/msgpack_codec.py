"""msgpack, written and read exactly (docs/wire-format.md, section 7).

Contract: `pack` writes a Python value as msgpack: None, bool, int (the
smallest form), `float` always as float64, `F32` always as float32, `str` as
str (UTF-8), `bytes` as bin, list and tuple as array, dict and `MapPairs` as
map. `unpack` reads one value and requires the input to end there; it reads
floats by their bits (float32 as `F32`), maps as `MapPairs`, and treats the
input as hostile: a length or count that the bytes left cannot hold, a
nesting deeper than 64, a str that is not well-formed UTF-8, an ext type or
a reserved byte raises `Error` (`ferry_ser: ...`) naming the offset. Pure.
"""

from __future__ import annotations

import struct
from typing import Any, NoReturn

from .errors import ser
from .values import F32, MapPairs

MAX_DEPTH = 64


def pack(value: Any, out: bytearray | None = None) -> bytearray:
    """`value` as msgpack, appended to `out` (or a new bytearray)."""
    out = bytearray() if out is None else out
    _pack(value, out)
    return out


def _pack(v: Any, out: bytearray) -> None:
    if v is None:
        out.append(0xC0)
    elif v is True:
        out.append(0xC3)
    elif v is False:
        out.append(0xC2)
    elif isinstance(v, int):
        _pack_int(v, out)
    elif isinstance(v, F32):
        out += b"\xca" + struct.pack(">I", v.bits)
    elif isinstance(v, float):
        out += b"\xcb" + struct.pack(">d", v)
    elif isinstance(v, str):
        data = v.encode("utf-8", "surrogatepass")
        n = len(data)
        if n < 32:
            out.append(0xA0 | n)
        elif n < 0x100:
            out += struct.pack(">BB", 0xD9, n)
        elif n < 0x10000:
            out += struct.pack(">BH", 0xDA, n)
        else:
            out += struct.pack(">BI", 0xDB, n)
        out += data
    elif isinstance(v, (bytes, bytearray, memoryview)):
        n = len(v)
        if n < 0x100:
            out += struct.pack(">BB", 0xC4, n)
        elif n < 0x10000:
            out += struct.pack(">BH", 0xC5, n)
        else:
            out += struct.pack(">BI", 0xC6, n)
        out += v
    elif isinstance(v, (list, tuple)) and not isinstance(v, MapPairs):
        _pack_len(len(v), 0x90, 0xDC, out)
        for x in v:
            _pack(x, out)
    elif isinstance(v, (dict, MapPairs)):
        items = v.items() if isinstance(v, dict) else v
        _pack_len(len(v), 0x80, 0xDE, out)
        for k, x in items:
            _pack(k, out)
            _pack(x, out)
    else:
        raise TypeError(f"msgpack cannot write a {type(v).__name__}")


def _pack_len(n: int, fix: int, big: int, out: bytearray) -> None:
    if n < 16:
        out.append(fix | n)
    elif n < 0x10000:
        out += struct.pack(">BH", big, n)
    else:
        out += struct.pack(">BI", big + 1, n)


def _pack_int(v: int, out: bytearray) -> None:
    if 0 <= v < 0x80:
        out.append(v)
    elif -32 <= v < 0:
        out.append(v & 0xFF)
    elif v >= 0:
        for code, fmt, top in ((0xCC, ">B", 0x100), (0xCD, ">H", 0x10000),
                               (0xCE, ">I", 1 << 32), (0xCF, ">Q", 1 << 64)):
            if v < top:
                out += struct.pack(">B", code) + struct.pack(fmt, v)
                return
        raise OverflowError("msgpack holds no integer above 2^64 - 1")
    else:
        for code, fmt, low in ((0xD0, ">b", -0x80), (0xD1, ">h", -0x8000),
                               (0xD2, ">i", -(1 << 31)),
                               (0xD3, ">q", -(1 << 63))):
            if v >= low:
                out += struct.pack(">B", code) + struct.pack(fmt, v)
                return
        raise OverflowError("msgpack holds no integer below -2^63")


class _Unpacker:
    def __init__(self, data: bytes | bytearray | memoryview,
                 where: str) -> None:
        self.data = memoryview(data)
        self.pos = 0
        self.where = where

    def fail(self, name: str, why: str) -> NoReturn:
        raise ser(name, f"{why}, at offset {self.pos} of {self.where}")

    def take(self, n: int) -> memoryview:
        if n > len(self.data) - self.pos:
            self.fail("truncated_frame", f"msgpack needs {n} bytes, "
                      f"{len(self.data) - self.pos} left")
        chunk = self.data[self.pos:self.pos + n]
        self.pos += n
        return chunk

    def num(self, fmt: str, n: int) -> Any:
        return struct.unpack(fmt, self.take(n))[0]

    def count(self, n: int, least: int) -> int:
        if n * least > len(self.data) - self.pos:
            self.fail("length_out_of_range", f"a msgpack container claims "
                      f"{n} entries, more than the "
                      f"{len(self.data) - self.pos} bytes left hold")
        return n

    def value(self, depth: int) -> Any:
        if depth > MAX_DEPTH:
            self.fail("nesting_too_deep",
                      f"msgpack nested deeper than {MAX_DEPTH}")
        b = self.take(1)[0]
        if b <= 0x7F:
            return b
        if b >= 0xE0:
            return b - 0x100
        if 0x80 <= b <= 0x8F:
            return self.map(b & 0x0F, depth)
        if 0x90 <= b <= 0x9F:
            return self.array(b & 0x0F, depth)
        if 0xA0 <= b <= 0xBF:
            return self.text(b & 0x1F)
        simple: dict[int, bool | None] = {0xC0: None, 0xC2: False,
                                          0xC3: True}
        if b in simple:
            return simple[b]
        if b in (0xC4, 0xC5, 0xC6):
            n = self.num(">" + "BHI"[b - 0xC4], 1 << (b - 0xC4))
            return bytes(self.take(n))
        if b == 0xCA:
            return F32.from_bits(self.num(">I", 4))
        if b == 0xCB:
            return self.num(">d", 8)
        ints = {0xCC: (">B", 1), 0xCD: (">H", 2), 0xCE: (">I", 4),
                0xCF: (">Q", 8), 0xD0: (">b", 1), 0xD1: (">h", 2),
                0xD2: (">i", 4), 0xD3: (">q", 8)}
        if b in ints:
            return self.num(*ints[b])
        if b in (0xD9, 0xDA, 0xDB):
            return self.text(self.num(">" + "BHI"[b - 0xD9], 1 << (b - 0xD9)))
        if b in (0xDC, 0xDD):
            return self.array(self.num(">" + "HI"[b - 0xDC], 2 << (b - 0xDC)),
                              depth)
        if b in (0xDE, 0xDF):
            return self.map(self.num(">" + "HI"[b - 0xDE], 2 << (b - 0xDE)),
                            depth)
        self.pos -= 1
        self.fail("malformed_frame", f"msgpack byte {b:#04x} (an ext type or "
                  "a reserved byte) where a value begins")

    def text(self, n: int) -> str:
        raw = bytes(self.take(n))
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError as e:
            self.fail("invalid_text",
                      f"a msgpack str that is not UTF-8 ({e.reason})")

    def array(self, n: int, depth: int) -> list[Any]:
        return [self.value(depth + 1) for _ in range(self.count(n, 1))]

    def map(self, n: int, depth: int) -> MapPairs:
        pairs = MapPairs()
        for _ in range(self.count(n, 2)):
            k = self.value(depth + 1)
            pairs.append((k, self.value(depth + 1)))
        return pairs


def unpack(data: bytes | bytearray | memoryview,
           where: str = "a msgpack frame") -> Any:
    """The one msgpack value `data` holds; raises `Error` otherwise."""
    u = _Unpacker(data, where)
    v = u.value(0)
    if u.pos != len(u.data):
        u.fail("trailing_bytes",
               f"{len(u.data) - u.pos} bytes after the msgpack value")
    return v
