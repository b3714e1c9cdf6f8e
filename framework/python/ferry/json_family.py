"""The cereal.json family: Python values shaped by a type's shape, in the
JSON that cereal's JSONOutputArchive writes and ferry reads
(docs/wire-format.md, section 7).

Contract: the payload's one frame is UTF-8 JSON `{"value0": V}`. In V a
record is an object of its members named `value0`, `value1`, ... in order;
a map an array of `{"key": k, "value": v}` objects; a pair `{"first": a,
"second": b}`, a tuple `{"tuple_element0": a, ...}`; an
optional `{"nullopt": true}` or `{"nullopt": false, "data": v}`; sequences,
sets and arrays JSON arrays (a byte sequence an array of numbers); numbers
exact: a `double` as the shortest text that reads back to its bits, a
`float` as the shortest text that reads back to its 32 bits, NaN (the
default quiet NaN only), `Infinity`, `-Infinity`. Reading treats the text
as hostile: members other than the type's, in another order or twice, a
number the member's type cannot hold exactly, a string that is not
well-formed UTF-8 or holds NUL, or data after the value raise `Error`
(`ferry_ser: ...`) naming the member. Python values are those of the
msgpack family (msgpack_family.py): records as dicts, `F32` for floats,
`bytes` for byte sequences. Pure.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from typing import Any

from .errors import ser
from .shapes import INT_RANGES, Shape
from .values import F32, MapPairs, f64_bits
from . import msgpack_family

NAME = "cereal.json"
_DEFAULT_NAN = 0x7FF8000000000000
_DEFAULT_NAN32 = 0x7FC00000


class _Number:
    """A JSON number as its text, so that it converts exactly."""


    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text


def _where(path: str) -> str:
    return f" (member {path})" if path else ""


# -- numbers ------------------------------------------------------------------

def _float_text(value: float) -> str:
    """The shortest text that reads back to double `value` (a float is
    written as the double it converts to exactly, as cereal writes it)."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    return repr(value)


def _int_value(n: _Number, kind: str, here: str) -> int:
    """The integer of JSON number text `n` for a member of integer `kind`,
    exactly."""
    if not _is_int_text(n.text):
        raise ser("inexact_value", f"{kind} cannot hold {n.text}{here}")
    return int(n.text)


def _number_value(n: _Number, kind: str, here: str) -> float | F32:
    """The Python value of JSON number text `n` for a floating point member
    of `kind` (`f32` or `f64`): read as a double (correctly rounded), which
    a float member must hold exactly."""
    text = n.text
    if _is_int_text(text) and float(int(text)) != int(text):
        raise ser("inexact_value", f"a "
                  f"{'float' if kind == 'f32' else 'double'} cannot hold "
                  f"{text} exactly{here}")
    d = float(text)
    if math.isinf(d):
        raise ser("inexact_value", f"a double cannot hold {text}{here}")
    if kind == "f32":
        x = F32.exact(d)
        if x is None:
            raise ser("inexact_value",
                      f"a float cannot hold {text} exactly{here}")
        return x
    return d


def _is_int_text(text: str) -> bool:
    return text.lstrip("-").isdigit()


# -- Python values to JSON ----------------------------------------------------

class _Raw:
    """JSON text written as is (numbers written exactly)."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text


def to_json(shape: Shape, v: Any, path: str = "") -> Any:
    """Converts a Python value into a tree of JSON parts (dicts, lists,
    strings, `_Raw` numbers) by its shape."""
    k = shape.kind
    here = _where(path)
    w = msgpack_family.to_wire(shape, v, path) if k != "record" else None
    return _json_of(shape, w if w is not None else v, path, here)


def _json_of(shape: Shape, w: Any, path: str, here: str) -> Any:
    k = shape.kind
    if k == "record":
        if isinstance(w, dict):
            w = msgpack_family.to_wire(shape, w, path)
        return {f"value{i}": _json_of(s, x, f"{path}.{n}" if path else n,
                                      here)
                for i, (s, n, x) in enumerate(zip(shape.args, shape.names,
                                                  w))}
    if k in INT_RANGES or k == "enum":
        return _Raw(str(w))
    if k == "bool":
        return _Raw("true" if w else "false")
    if k == "f32":
        bits = w.bits
        if math.isnan(float(w)) and bits != _DEFAULT_NAN32:
            raise ser("inexact_value", f"cereal.json writes only the default "
                      f"NaN, not float bits {bits:#x}{here}")
        return _Raw(_float_text(float(w)))
    if k in ("f64", "f80"):
        if math.isnan(w) and f64_bits(w) != _DEFAULT_NAN:
            raise ser("inexact_value", f"cereal.json writes only the default "
                      f"NaN, not double bits {f64_bits(w):#x}{here}")
        return _Raw(_float_text(w))
    if k.startswith("str"):
        if "\0" in w:
            raise ser("invalid_text",
                      f"cereal.json carries no NUL in a string{here}")
        return w
    if k == "array":  # cereal writes std::array as an object
        return {f"value{i}": _json_of(shape.args[0], x, f"{path}[{i}]",
                                      here)
                for i, x in enumerate(w)}
    if k in ("list", "set", "multiset"):
        if shape.is_bytes:
            signed = shape.args[0].kind == "char"
            return [_Raw(str(b - 256 if signed and b > 127 else b))
                    for b in w]
        return [_json_of(shape.args[0], x, f"{path}[{i}]", here)
                for i, x in enumerate(w)]
    if k in ("tuple", "pair"):
        parts = [_json_of(s, x, f"{path}[{i}]", here)
                 for i, (s, x) in enumerate(zip(shape.args, w))]
        if k == "pair":
            return {"first": parts[0], "second": parts[1]}
        return {f"tuple_element{i}": p for i, p in enumerate(parts)}
    if k in ("map", "multimap"):
        return [{"key": _json_of(shape.args[0], a, path + "[key]", here),
                 "value": _json_of(shape.args[1], b, path + "[value]", here)}
                for a, b in w]
    if k == "opt":
        if w is None:
            return {"nullopt": _Raw("true")}
        return {"nullopt": _Raw("false"),
                "data": _json_of(shape.args[0], w, path, here)}
    if k == "custom":
        return w
    raise ser("type_mismatch",
              f"the Python peer writes no {k} in cereal.json{here}")


def _write(part: Any, out: list[str]) -> None:
    if isinstance(part, _Raw):
        out.append(part.text)
    elif isinstance(part, str):
        out.append(json.dumps(part, ensure_ascii=False))
    elif isinstance(part, dict):
        out.append("{")
        for i, (key, value) in enumerate(part.items()):
            out.append(", " if i else "")
            out.append(json.dumps(key))
            out.append(": ")
            _write(value, out)
        out.append("}")
    elif isinstance(part, list):
        out.append("[")
        for i, value in enumerate(part):
            out.append(", " if i else "")
            _write(value, out)
        out.append("]")
    else:  # a custom type's plain JSON value
        out.append(json.dumps(part, ensure_ascii=False))


def encode(shape: Shape, value: Any) -> list[bytes]:
    """The payload's frames of `value` of `shape`."""
    out = ["{\"value0\": "]
    _write(to_json(shape, value), out)
    out.append("}")
    try:
        return ["".join(out).encode("utf-8")]
    except UnicodeEncodeError as e:
        raise ser("invalid_text",
                  f"a string that is not UTF-8 text: {e.reason}")


# -- JSON to Python values ----------------------------------------------------

def _pairs(items: list[tuple[str, Any]]) -> list[tuple[str, Any]]:
    names = [k for k, _ in items]
    if len(set(names)) != len(names):
        twice = next(n for n in names if names.count(n) > 1)
        raise ser("duplicate_key",
                  f"a JSON object names member {twice!r} twice")
    return items  # a list of (name, value), in order


def _members(w: Any, names: list[str], here: str) -> list[Any]:
    if not isinstance(w, list) or not all(isinstance(p, tuple) for p in w):
        raise ser("member_mismatch", f"an object with members {names}, "
                  f"read {_describe(w)}{here}")
    got = [k for k, _ in w]
    if got != names:
        raise ser("member_mismatch",
                  f"an object with members {names}, read {got}{here}")
    return [v for _, v in w]


def _describe(w: object) -> str:
    if isinstance(w, list) and w and isinstance(w[0], tuple):
        return f"an object of {[k for k, _ in w]}"
    if isinstance(w, list):
        return f"an array of {len(w)}"
    if isinstance(w, _Number):
        return "the number " + w.text
    return f"a {type(w).__name__}"


def from_json(shape: Shape, w: Any, path: str = "") -> Any:
    """The Python value of `w` (JSON as `decode` reads it) of `shape`."""
    k = shape.kind
    here = _where(path)
    if k == "record":
        values = _members(w, [f"value{i}" for i in range(len(shape.names))],
                          here)
        return {n: from_json(s, x, f"{path}.{n}" if path else n)
                for n, s, x in zip(shape.names, shape.args, values)}
    if k in INT_RANGES or k == "enum":
        kind = k if k != "enum" else shape.args[0].kind
        if not isinstance(w, _Number):
            raise ser("type_mismatch", f"{kind} read {_describe(w)}{here}")
        x = _int_value(w, kind, here)
        lo, hi = INT_RANGES[kind]
        if not lo <= x <= hi:
            raise ser("inexact_value", f"{x} does not fit {kind}{here}")
        return x
    if k == "bool":
        if not isinstance(w, bool):
            raise ser("type_mismatch", f"bool read {_describe(w)}{here}")
        return w
    if k in ("f32", "f64", "f80"):
        if isinstance(w, float):  # NaN, Infinity, -Infinity
            return F32(w) if k == "f32" else w
        if not isinstance(w, _Number):
            raise ser("type_mismatch", f"{k} read {_describe(w)}{here}")
        return _number_value(w, "f32" if k == "f32" else "f64", here)
    if k.startswith("str"):
        if not isinstance(w, str):
            raise ser("type_mismatch", f"str read {_describe(w)}{here}")
        if "\0" in w:
            raise ser("invalid_text", f"a NUL inside a string{here}")
        try:
            w.encode("utf-8")
        except UnicodeEncodeError:
            raise ser("invalid_text", f"a lone surrogate in a string{here}")
        return w
    if k == "array":
        values = _members(w, [f"value{i}" for i in range(shape.size)],
                          here)
        return [from_json(shape.args[0], x, f"{path}[{i}]")
                for i, x in enumerate(values)]
    if k in ("list", "set", "multiset"):
        if not isinstance(w, list) or (w and isinstance(w[0], tuple)):
            raise ser("type_mismatch", f"{k} read {_describe(w)}{here}")
        out = [from_json(shape.args[0], x, f"{path}[{i}]")
               for i, x in enumerate(w)]
        if k == "set" and len({repr(x) for x in out}) != len(out):
            raise ser("duplicate_key",
                      f"a set names an element twice{here}")
        if shape.is_bytes:
            return bytes(x & 0xFF for x in out)
        return out
    if k in ("tuple", "pair"):
        names = (["first", "second"] if k == "pair" else
                 [f"tuple_element{i}" for i in range(len(shape.args))])
        values = _members(w, names, here)
        return tuple(from_json(s, x, f"{path}[{i}]")
                     for i, (s, x) in enumerate(zip(shape.args, values)))
    if k in ("map", "multimap"):
        if not isinstance(w, list):
            raise ser("type_mismatch", f"{k} read {_describe(w)}{here}")
        pairs = []
        for entry in w:
            key, value = _members(entry, ["key", "value"], here)
            pairs.append((from_json(shape.args[0], key, path + "[key]"),
                          from_json(shape.args[1], value, path + "[value]")))
        if k == "map":
            if len({repr(a) for a, _ in pairs}) != len(pairs):
                raise ser("duplicate_key", f"a map names a key twice{here}")
            try:
                return dict(pairs)
            except TypeError:
                pass
        return MapPairs(pairs)
    if k == "opt":
        if isinstance(w, list) and w and w[0] == ("nullopt", True):
            _members(w, ["nullopt"], here)
            return None
        _, value = _members(w, ["nullopt", "data"], here)
        return from_json(shape.args[0], value, path)
    if k == "custom":
        return _plain(w)
    raise ser("type_mismatch",
              f"the Python peer reads no {k} in cereal.json{here}")


def _plain(w: Any) -> Any:
    """A custom type's JSON as plain Python values."""
    if isinstance(w, _Number):
        return int(w.text) if _is_int_text(w.text) else float(w.text)
    if isinstance(w, list) and w and isinstance(w[0], tuple):
        return {k: _plain(v) for k, v in w}
    if isinstance(w, list):
        return [_plain(x) for x in w]
    return w


def decode(shape: Shape, frames: Sequence[bytes], where: str) -> Any:
    """The value of `shape` in the payload's `frames` (one frame)."""
    if len(frames) != 1:
        raise ser("unused_frame", f"a cereal.json payload of {len(frames)} "
                  f"frames in {where}: the Python peer reads no split arrays")
    try:
        text = frames[0].decode("utf-8")
    except UnicodeDecodeError as e:
        raise ser("invalid_text", f"{where} is not UTF-8 ({e.reason} at "
                  f"byte {e.start})")
    try:
        doc = json.loads(text, object_pairs_hook=_pairs,
                         parse_float=_Number, parse_int=_Number,
                         parse_constant=float)
    except json.JSONDecodeError as e:
        raise ser("malformed_frame", f"{where} does not read as JSON: {e}")
    except RecursionError:
        raise ser("nesting_too_deep", f"{where} nests too deep")
    value = _members(doc, ["value0"], "")[0]
    return from_json(shape, value)
