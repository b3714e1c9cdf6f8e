"""The families a Python peer speaks, by name.

Contract: `encode(family, shape_text, value)` returns a payload's frames and
`decode(family, shape_text, frames, where)` the value, for the families
`msgpack` and `cereal.json`; shapes are parsed once and kept. Errors are
`Error` (`ferry_ser: ...`). Pure but for the cache of parsed shapes.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any, Protocol

from . import json_family, msgpack_family, shapes
from .errors import ser


class Family(Protocol):
    """What a family's module offers (msgpack_family, json_family)."""

    def encode(self, shape: shapes.Shape, value: Any) -> list[bytes]: ...

    def decode(self, shape: shapes.Shape, frames: Sequence[bytes],
               where: str) -> Any: ...


_FAMILIES: dict[str, Family] = {"msgpack": msgpack_family,
                                "cereal.json": json_family}


@functools.lru_cache(maxsize=1024)
def _shape(text: str) -> shapes.Shape:
    return shapes.parse(text)


def _family(name: str) -> Family:
    fam = _FAMILIES.get(name)
    if fam is None:
        raise ser("unknown_family", f"a Python peer has no family {name!r}")
    return fam


def encode(family: str, shape_text: str, value: Any) -> list[bytes]:
    """The payload's frames of `value` of the shape `shape_text`."""
    return _family(family).encode(_shape(shape_text), value)


def decode(family: str, shape_text: str, frames: Sequence[bytes],
           where: str) -> Any:
    """The value of the shape `shape_text` in the payload's `frames`."""
    return _family(family).decode(_shape(shape_text), frames, where)
