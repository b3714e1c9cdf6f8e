"""Type shapes, and Python values shaped by them.

Contract: `parse(text)` reads a shape as a C++ node sends it in its hello
(the grammar of ferry/serializers/shape.hpp) into a tree of `Shape` nodes,
refusing text that is longer than 64 KiB, nested deeper than 64 or malformed
(`Error`, `ferry_ser: malformed_header`). A record (`{name:shape,...}`) is a
Python dict of its members in order; `custom"..."` is a type ferry cannot
see into, carried as the family's plain value. The families' modules walk
these trees to turn Python values into the family's form and back. Pure.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NoReturn

from .errors import ser

MAX_SHAPE = 64 * 1024
MAX_DEPTH = 64

SCALARS = {"bool", "char", "byte", "i8", "i16", "i32", "i64", "u8", "u16",
           "u32", "u64", "f32", "f64", "f80", "char8", "char16", "char32",
           "str", "str8", "str16", "str32"}
INT_RANGES = {"i8": (-(1 << 7), (1 << 7) - 1),
              "i16": (-(1 << 15), (1 << 15) - 1),
              "i32": (-(1 << 31), (1 << 31) - 1),
              "i64": (-(1 << 63), (1 << 63) - 1), "u8": (0, 255),
              "u16": (0, 65535), "u32": (0, (1 << 32) - 1),
              "u64": (0, (1 << 64) - 1), "char": (-128, 255),
              "byte": (0, 255), "char8": (0, 255), "char16": (0, 65535),
              "char32": (0, (1 << 32) - 1)}


@dataclass
class Shape:
    kind: str                       # a scalar's name, or list, map, record...
    args: list[Shape] = field(default_factory=list)  # inner shapes
    names: list[str] = field(default_factory=list)  # a record's members
    size: int = 0                   # an array's length
    label: str = ""                 # a custom type's label
    version: int = 0

    @property
    def is_bytes(self) -> bool:
        """A sequence of bytes: msgpack carries it as bin."""
        return (self.kind == "list" and self.args[0].kind in
                ("u8", "char", "byte"))


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0

    def fail(self, why: str) -> NoReturn:
        raise ser("malformed_header", f"type shape {self.text[:200]!r}: "
                  f"{why} at offset {self.pos}")

    def peek(self) -> str:
        return self.text[self.pos] if self.pos < len(self.text) else ""

    def expect(self, ch: str) -> None:
        if self.peek() != ch:
            self.fail(f"expected {ch!r}")
        self.pos += 1

    def word(self) -> str:
        start = self.pos
        while self.pos < len(self.text) and (self.text[self.pos].isalnum()
                                             or self.text[self.pos] == "_"):
            self.pos += 1
        return self.text[start:self.pos]

    def digits(self) -> int:
        w = self.word()
        if not w.isdigit():
            self.fail("expected digits")
        return int(w)

    def shape(self, depth: int) -> Shape:
        if depth > MAX_DEPTH:
            self.fail(f"nested deeper than {MAX_DEPTH}")
        version = 0
        if self.peek() == "@":
            self.pos += 1
            version = self.digits()
            if self.peek() != "{":
                self.fail("a version outside a record")
        if self.peek() == "{":
            self.pos += 1
            rec = Shape("record", version=version)
            while self.peek() != "}":
                if rec.names:
                    self.expect(",")
                name = self.word()
                if not name:
                    self.fail("a member without a name")
                self.expect(":")
                rec.names.append(name)
                rec.args.append(self.shape(depth + 1))
            self.pos += 1
            return rec
        name = self.word()
        if name == "custom" and self.peek() == '"':
            end = self.text.find('"', self.pos + 1)
            if end < 0:
                self.fail("an unterminated custom label")
            label = self.text[self.pos + 1:end]
            self.pos = end + 1
            if self.peek() == "@":
                self.pos += 1
                version = self.digits()
            return Shape("custom", label=label, version=version)
        if name in SCALARS:
            return Shape(name)
        if name in ("enum", "list", "set", "multiset", "opt", "ptr",
                    "separate", "view", "map", "multimap", "array", "tuple",
                    "pair", "variant"):
            self.expect("<")
            s = Shape(name)
            s.args.append(self.shape(depth + 1))
            if name == "array":
                self.expect(",")
                s.size = self.digits()
            elif name in ("map", "multimap", "tuple", "pair", "variant"):
                while self.peek() == ",":
                    self.pos += 1
                    s.args.append(self.shape(depth + 1))
            self.expect(">")
            if name in ("map", "multimap", "pair") and len(s.args) != 2:
                self.fail(f"a {name} of {len(s.args)} shapes")
            return s
        self.fail(f"unknown shape {name!r}")


def parse(text: str) -> Shape:
    """The shape `text` describes; raises `Error` when it is malformed."""
    if len(text) > MAX_SHAPE:
        raise ser("malformed_header", f"a type shape of {len(text)} bytes, "
                  f"above {MAX_SHAPE}")
    p = _Parser(text)
    s = p.shape(0)
    if p.pos != len(text):
        p.fail("text after the shape")
    return s
