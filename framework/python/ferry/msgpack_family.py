"""The msgpack family: Python values shaped by a type's shape, as ferry's
msgpack family writes and reads them (docs/wire-format.md, section 7).

Contract: `encode(shape, value)` returns the payload's frames, `decode(shape,
frames)` the value; both raise `Error` (`ferry_ser: ...`) naming the member
that does not fit. A record is a msgpack array of its members (from a dict
by member name, or a list or tuple in member order), a byte sequence a bin,
a `float` member float32 (an `F32`, or a Python number it holds exactly), a
`double` float64; a map a msgpack map (a dict, or (key, value) pairs). A
decoded record is a dict; a map a dict, or `MapPairs` when its keys are not
hashable; sets and sequences lists; pairs and tuples tuples. A split array
(a top-level array of 64 KiB or more) arrives as two frames whose bytes,
joined, are one msgpack value. Pure.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from . import msgpack_codec
from .errors import ser
from .shapes import INT_RANGES, Shape
from .values import F32, MapPairs

NAME = "msgpack"


def _where(path: str) -> str:
    return f" (member {path})" if path else ""


def to_wire(shape: Shape, v: Any, path: str = "") -> Any:
    """`v` as the plain msgpack value its shape makes of it."""
    k = shape.kind
    if k == "record":
        if isinstance(v, dict):
            missing = [n for n in shape.names if n not in v]
            extra = [n for n in v if n not in shape.names]
            if missing or extra:
                raise ser("member_mismatch", f"a record of members "
                          f"{shape.names}, given {list(v)}{_where(path)}")
            v = [v[n] for n in shape.names]
        if not isinstance(v, (list, tuple)) or len(v) != len(shape.names):
            raise ser("member_mismatch", f"a record of {len(shape.names)} "
                      f"members {shape.names}, given "
                      f"{type(v).__name__!r}{_where(path)}")
        return [to_wire(s, x, f"{path}.{n}" if path else n)
                for s, n, x in zip(shape.args, shape.names, v)]
    if k in INT_RANGES or k == "enum":
        rng = INT_RANGES[k if k != "enum" else shape.args[0].kind]
        if isinstance(v, bool) or not isinstance(v, int):
            raise ser("type_mismatch", f"{k} needs an int, given "
                      f"{type(v).__name__}{_where(path)}")
        if not rng[0] <= v <= rng[1]:
            raise ser("inexact_value", f"{v} does not fit {k}{_where(path)}")
        return v
    if k == "bool":
        if not isinstance(v, bool):
            raise ser("type_mismatch", f"bool needs a bool, given "
                      f"{type(v).__name__}{_where(path)}")
        return v
    if k == "f32":
        x = F32.exact(v) if isinstance(v, (int, float, F32)) else None
        if x is None:
            raise ser("inexact_value",
                      f"a float does not hold {v!r} exactly{_where(path)}")
        return x
    if k in ("f64", "f80"):
        if isinstance(v, F32):
            return float(v)
        if isinstance(v, int) and not isinstance(v, bool):
            if float(v) != v:
                raise ser("inexact_value",
                          f"a double does not hold {v} exactly{_where(path)}")
            return float(v)
        if not isinstance(v, float):
            raise ser("type_mismatch", f"{k} needs a float, given "
                      f"{type(v).__name__}{_where(path)}")
        return v
    if k.startswith("str"):
        if not isinstance(v, str):
            raise ser("type_mismatch", f"str needs a str, given "
                      f"{type(v).__name__}{_where(path)}")
        return v
    if shape.is_bytes and isinstance(v, (bytes, bytearray)):
        return bytes(v)
    if k in ("list", "set", "multiset", "array", "tuple", "pair"):
        if not isinstance(v, (list, tuple, set, frozenset, bytes, bytearray)):
            raise ser("type_mismatch", f"{k} needs a sequence, given "
                      f"{type(v).__name__}{_where(path)}")
        v = list(v)
        if k == "array" and len(v) != shape.size:
            raise ser("member_mismatch", f"an array of {shape.size}, given "
                      f"{len(v)}{_where(path)}")
        if k in ("tuple", "pair"):
            if len(v) != len(shape.args):
                raise ser("member_mismatch", f"a tuple of {len(shape.args)}"
                          f", given {len(v)}{_where(path)}")
            return [to_wire(s, x, f"{path}[{i}]")
                    for i, (s, x) in enumerate(zip(shape.args, v))]
        if shape.is_bytes:
            return bytes(to_wire(shape.args[0], x, path) & 0xFF for x in v)
        return [to_wire(shape.args[0], x, f"{path}[{i}]")
                for i, x in enumerate(v)]
    if k in ("map", "multimap"):
        items = v.items() if isinstance(v, dict) else v
        return MapPairs((to_wire(shape.args[0], a, path + "[key]"),
                         to_wire(shape.args[1], b, path + "[value]"))
                        for a, b in items)
    if k in ("opt", "ptr"):
        return None if v is None else to_wire(shape.args[0], v, path)
    if k == "custom":
        return v
    raise ser("type_mismatch", f"msgpack carries no {k}{_where(path)}")


def _hashable(x: object) -> bool:
    try:
        hash(x)
        return True
    except TypeError:
        return False


def from_wire(shape: Shape, w: Any, path: str = "") -> Any:
    """The Python value of the plain msgpack value `w` of `shape`."""
    k = shape.kind
    here = _where(path)
    if k == "record":
        if not isinstance(w, list) or len(w) != len(shape.names):
            raise ser("member_mismatch", f"a record of {len(shape.names)} "
                      f"members {shape.names}, read {_describe(w)}{here}")
        return {n: from_wire(s, x, f"{path}.{n}" if path else n)
                for n, s, x in zip(shape.names, shape.args, w)}
    if k in INT_RANGES or k == "enum":
        rng = INT_RANGES[k if k != "enum" else shape.args[0].kind]
        if isinstance(w, bool) or not isinstance(w, int):
            raise ser("type_mismatch", f"{k} read {_describe(w)}{here}")
        if not rng[0] <= w <= rng[1]:
            raise ser("inexact_value", f"{w} does not fit {k}{here}")
        return w
    if k == "bool":
        if not isinstance(w, bool):
            raise ser("type_mismatch", f"bool read {_describe(w)}{here}")
        return w
    if k == "f32":
        x = F32.exact(w) if isinstance(w, (int, float, F32)) else None
        if x is None:
            raise ser("inexact_value", f"a float does not hold "
                      f"{_describe(w)} exactly{here}")
        return x
    if k in ("f64", "f80"):
        if isinstance(w, F32):
            return float(w)
        if isinstance(w, int) and not isinstance(w, bool):
            if float(w) != w or math.isinf(float(w)):
                raise ser("inexact_value",
                          f"a double does not hold {w} exactly{here}")
            return float(w)
        if not isinstance(w, float):
            raise ser("type_mismatch", f"{k} read {_describe(w)}{here}")
        return w
    if k.startswith("str"):
        if not isinstance(w, str):
            raise ser("type_mismatch", f"str read {_describe(w)}{here}")
        return w
    if shape.is_bytes and isinstance(w, bytes):
        return w
    if k in ("list", "set", "multiset", "array", "tuple", "pair"):
        if not isinstance(w, list):
            raise ser("type_mismatch", f"{k} read {_describe(w)}{here}")
        if k == "array" and len(w) != shape.size:
            raise ser("member_mismatch", f"an array of {shape.size} read "
                      f"{len(w)} elements{here}")
        if k in ("tuple", "pair"):
            if len(w) != len(shape.args):
                raise ser("member_mismatch", f"a tuple of {len(shape.args)}"
                          f" read {len(w)}{here}")
            return tuple(from_wire(s, x, f"{path}[{i}]")
                         for i, (s, x) in enumerate(zip(shape.args, w)))
        out = [from_wire(shape.args[0], x, f"{path}[{i}]")
               for i, x in enumerate(w)]
        if k == "set":
            seen: set[str] = set()
            for x in out:
                key = repr(x)
                if key in seen:
                    raise ser("duplicate_key",
                              f"a set names {key} twice{here}")
                seen.add(key)
        return out
    if k in ("map", "multimap"):
        if not isinstance(w, MapPairs):
            raise ser("type_mismatch", f"{k} read {_describe(w)}{here}")
        pairs = [(from_wire(shape.args[0], a, path + "[key]"),
                  from_wire(shape.args[1], b, path + "[value]"))
                 for a, b in w]
        if k == "map":
            seen_keys: set[str] = set()
            for a, _ in pairs:
                key = repr(a)
                if key in seen_keys:
                    raise ser("duplicate_key",
                              f"a map names key {key} twice{here}")
                seen_keys.add(key)
            if all(_hashable(a) for a, _ in pairs):
                return dict(pairs)
        return MapPairs(pairs)
    if k in ("opt", "ptr"):
        return None if w is None else from_wire(shape.args[0], w, path)
    if k == "custom":
        return w
    raise ser("type_mismatch", f"msgpack carries no {k}{here}")


def _describe(w: object) -> str:
    if isinstance(w, list):
        return f"an array of {len(w)}"
    if isinstance(w, MapPairs):
        return f"a map of {len(w)}"
    return f"a {type(w).__name__}"


def encode(shape: Shape, value: Any) -> list[bytes]:
    """The payload's frames of `value` of `shape`."""
    return [bytes(msgpack_codec.pack(to_wire(shape, value)))]


def decode(shape: Shape, frames: Sequence[bytes], where: str) -> Any:
    """The value of `shape` in the payload's `frames`."""
    data = frames[0] if len(frames) == 1 else b"".join(frames)
    return from_wire(shape, msgpack_codec.unpack(data, where))
