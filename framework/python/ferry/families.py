"""The families a Python peer speaks, by name.

Contract: `encode(family, shape_text, value)` returns a payload's frames and
`decode(family, shape_text, frames, where)` the value, for the families
`msgpack` and `cereal.json`; shapes are parsed once and kept. Errors are
`Error` (`ferry_ser: ...`). Pure but for the cache of parsed shapes.
"""

import functools

from . import json_family, msgpack_family, shapes
from .errors import ser

_FAMILIES = {"msgpack": msgpack_family, "cereal.json": json_family}


@functools.lru_cache(maxsize=1024)
def _shape(text):
    return shapes.parse(text)


def _family(name):
    fam = _FAMILIES.get(name)
    if fam is None:
        raise ser("unknown_family", "a Python peer has no family %r" % name)
    return fam


def encode(family, shape_text, value):
    return _family(family).encode(_shape(shape_text), value)


def decode(family, shape_text, frames, where):
    return _family(family).decode(_shape(shape_text), frames, where)
