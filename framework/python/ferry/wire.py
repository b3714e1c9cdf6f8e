"""ferry's wire: field encodings, the frame header and the frame types
(docs/wire-format.md, "Encodings", "1. Transport", "2. Handshake" and
"5. Control frames").

Contract: `Writer` appends fields little-endian; `Reader` reads a body as
hostile input: every length and count is checked against the bytes left
before anything is allocated, and the first field that does not fit raises
`Error` (`ferry_fw: decode_failed`, naming the frame and the field). The
bodies of the handshake and control frames are read and written here, each
as a tuple of its fields in the document's order. Pure: no I/O, no state.
"""

from __future__ import annotations

import builtins
import enum
import struct
from collections.abc import Iterable, Sequence
from typing import Any, NoReturn

from .errors import Error, fw

PREFACE = b"FERRY/1\n"
PROTOCOL = 15
MAX_STR = 1 << 20
MAX_STRS = 65536
HEADER = struct.Struct("<QHH")
NO_ERROR = None
MIB = 1 << 20


class FrameType(enum.IntEnum):
    INTRO = 1
    HELLO = 2
    WELCOME = 3
    REFUSE = 4
    HEARTBEAT = 5
    GOODBYE = 6
    MESSAGE = 16
    BATCH = 17
    CREDIT = 18
    PROBE = 19
    DOWN = 20
    EXIT = 21
    LINK = 22
    REFUSAL = 23
    TRANSFER_DONE = 24
    LOOKUP = 32
    SPAWN = 33
    CHUNK_REQUEST = 34
    RELAY_REQUEST = 35
    ACTOR_ID = 40
    CHUNK = 41
    FAILED = 42


HANDSHAKE_TYPES = {FrameType.INTRO, FrameType.HELLO, FrameType.WELCOME}

# The largest body this peer takes of each type before its link is made and
# on the link (the table "Frame types"); messages, spawns and chunks on a
# link are bounded by the link's max_message_size (see bounds_on_link).
BEFORE_LINK: dict[FrameType, int] = {
    FrameType.INTRO: 65536, FrameType.HELLO: 64 * MIB,
    FrameType.REFUSE: 2 * MIB,
}


def bound(frame_type: FrameType, linked: bool, max_message_size: int,
          chunk_size: int) -> int:
    """The largest body of `frame_type` this peer takes now."""
    if not linked:
        return BEFORE_LINK.get(frame_type, 0)
    if frame_type in (FrameType.MESSAGE, FrameType.SPAWN):
        return max_message_size + MIB
    if frame_type == FrameType.BATCH:
        return 4 * MIB
    if frame_type == FrameType.CHUNK:
        return max(4 * chunk_size, 64 * MIB) + 64
    if frame_type in (FrameType.HEARTBEAT, FrameType.GOODBYE,
                      FrameType.PROBE, FrameType.INTRO, FrameType.HELLO,
                      FrameType.WELCOME):
        return 0
    return 2 * MIB


def header(frame_type: FrameType, length: int) -> bytes:
    """The 12-byte header of a frame of `length` body bytes."""
    return HEADER.pack(length, int(frame_type), 0)


def frame(frame_type: FrameType, body: bytes = b"") -> bytes:
    """A whole frame: header and body."""
    return header(frame_type, len(body)) + bytes(body)


class Writer:
    """Builds a frame body field by field."""

    def __init__(self) -> None:
        self.buf = bytearray()

    def u8(self, v: int) -> Writer:
        self.buf += struct.pack("<B", v)
        return self

    def flag(self, v: bool) -> Writer:
        return self.u8(1 if v else 0)

    def le16(self, v: int) -> Writer:
        self.buf += struct.pack("<H", v)
        return self

    def le32(self, v: int) -> Writer:
        self.buf += struct.pack("<I", v)
        return self

    def le64(self, v: int) -> Writer:
        self.buf += struct.pack("<Q", v)
        return self

    def str(self, v: builtins.str | builtins.bytes) -> Writer:
        data = v.encode() if isinstance(v, str) else bytes(v)
        self.le32(len(data))
        self.buf += data
        return self

    def strs(self, vs: Sequence[builtins.str | builtins.bytes]) -> Writer:
        self.le32(len(vs))
        for v in vs:
            self.str(v)
        return self

    def error(self, err: Error | None) -> Writer:
        """An `error` field; None (or an error of code 0) is no error."""
        if err is None or err.code == 0:
            self.buf += bytes(13)
            return self
        return self.u8(err.code).le64(err.category).str(err.text)

    def raw(self, data: builtins.bytes | bytearray | memoryview) -> Writer:
        self.buf += data
        return self

    def bytes(self) -> builtins.bytes:
        return bytes(self.buf)


class Reader:
    """Reads a frame body field by field; `what` names it in errors."""

    def __init__(self, data: bytes | bytearray | memoryview,
                 what: str) -> None:
        self.data = memoryview(data)
        self.pos = 0
        self.what = what

    def fail(self, why: str) -> NoReturn:
        raise fw("decode_failed",
                 f"malformed {self.what} from the peer: {why}")

    def left(self) -> int:
        return len(self.data) - self.pos

    def take(self, n: int, field: str) -> memoryview:
        if n > self.left():
            self.fail(f"{field} needs {n} bytes, {self.left()} left")
        chunk = self.data[self.pos:self.pos + n]
        self.pos += n
        return chunk

    def u8(self, field: str = "u8") -> int:
        return self.take(1, field)[0]

    def flag(self, field: str = "flag") -> bool:
        v = self.u8(field)
        if v > 1:
            self.fail(f"{field} reads {v}, neither 0 nor 1")
        return v == 1

    def le16(self, field: str = "le16") -> int:
        return int.from_bytes(self.take(2, field), "little")

    def le32(self, field: str = "le32") -> int:
        return int.from_bytes(self.take(4, field), "little")

    def le64(self, field: str = "le64") -> int:
        return int.from_bytes(self.take(8, field), "little")

    def raw_str(self, field: str = "str") -> bytes:
        n = self.le32(field)
        if n > MAX_STR:
            self.fail(f"{field} of {n} bytes, above the {MAX_STR} a string "
                      "takes")
        return bytes(self.take(n, field))

    def str(self, field: str = "str") -> str:
        data = self.raw_str(field)
        try:
            return data.decode()
        except UnicodeDecodeError:
            return data.decode("latin-1")

    def strs(self, field: builtins.str = "strs") -> list[builtins.str]:
        n = self.le32(field)
        if n > MAX_STRS or n > self.left() // 4:
            self.fail(f"{field} claims {n} entries, more than the "
                      f"{self.left()} bytes left hold")
        return [self.str(field) for _ in range(n)]

    def error(self, field: builtins.str = "error") -> Error | None:
        code = self.u8(field)
        category = self.le64(field)
        text = self.str(field)
        return None if code == 0 else Error(code, category, text)

    def rest(self) -> memoryview:
        chunk = self.data[self.pos:]
        self.pos = len(self.data)
        return chunk

    def done(self) -> None:
        if self.left() != 0:
            self.fail(f"{self.left()} bytes after the last field")


# -- handshake bodies ---------------------------------------------------------

def intro(node_id: int, node_name: str, host_id: str, store_name: str = "",
          has_store: bool = False, store_token: int = 0,
          protocol: int = PROTOCOL) -> bytes:
    return (Writer().le32(protocol).le64(node_id).str(node_name)
            .str(host_id).str(store_name).flag(has_store)
            .le64(store_token).bytes())


IntroFields = tuple[int, int, str, str | None, str | None, bool | None,
                    int | None]


def read_intro(body: bytes) -> IntroFields:
    """(protocol, node_id, node_name, host_id, store_name, has_store,
    store_token); for another protocol version only the first three."""
    r = Reader(body, "intro")
    protocol = r.le32("protocol")
    node_id = r.le64("node_id")
    name = r.str("node_name")
    if protocol != PROTOCOL:
        return protocol, node_id, name, None, None, None, None
    fields = (r.str("host_id"), r.str("store_name"), r.flag("has_store"),
              r.le64("store_token"))
    r.done()
    return (protocol, node_id, name) + fields


def hello(serializers: Sequence[str], deserializers: Sequence[str],
          decodable: Sequence[str], default_actor: int, window_bytes: int,
          window_messages: int, type_names: Iterable[str] = (),
          type_shapes: Iterable[str] = (), lane: str = "",
          compressions: Iterable[str] = ()) -> bytes:
    return (Writer().strs(serializers).strs(deserializers).strs(decodable)
            .le64(default_actor).le64(window_bytes).le64(window_messages)
            .strs(list(type_names)).strs(list(type_shapes)).str(lane)
            .strs(list(compressions)).bytes())


def read_hello(body: bytes) -> dict[str, Any]:
    """A dict of the hello's ten fields."""
    r = Reader(body, "hello")
    h: dict[str, Any] = {"serializers": r.strs("serializers"),
         "deserializers": r.strs("deserializers"),
         "decodable": r.strs("decodable"),
         "default_actor": r.le64("default_actor"),
         "window_bytes": r.le64("window_bytes"),
         "window_messages": r.le64("window_messages"),
         "type_names": r.strs("type_names"),
         "type_shapes": r.strs("type_shapes"),
         "lane": r.str("lane"),
         "compressions": r.strs("compressions")}
    r.done()
    if len(h["type_names"]) != len(h["type_shapes"]):
        r.fail(f"{len(h['type_names'])} type names but "
               f"{len(h['type_shapes'])} type shapes")
    return h


def refuse(err: Error | None) -> bytes:
    return Writer().error(err).bytes()


def read_refuse(body: bytes) -> Error | None:
    r = Reader(body, "refuse")
    err = r.error("reason")
    r.done()
    return err


# -- control bodies -----------------------------------------------------------

def credit(messages: int, nbytes: int, delivered: int) -> bytes:
    return Writer().le64(messages).le64(nbytes).le64(delivered).bytes()


def read_fields(body: bytes, what: str, spec: str) -> list[Any]:
    """Reads a body of fixed fields: `spec` is a string of 'q' (le64),
    'e' (error), 's' (str) and 'f' (flag) in order."""
    r = Reader(body, what)
    out: list[Any] = []
    for kind in spec:
        if kind == "q":
            out.append(r.le64())
        elif kind == "e":
            out.append(r.error())
        elif kind == "s":
            out.append(r.str())
        elif kind == "f":
            out.append(r.flag())
    r.done()
    return out


def down(actor: int, reason: Error | None) -> bytes:
    return Writer().le64(actor).error(reason).bytes()


def refusal(target: int, reason: Error | None) -> bytes:
    return Writer().le64(target).error(reason).bytes()


def le64s(*values: int) -> bytes:
    return struct.pack(f"<{len(values)}Q", *values)


def lookup(request: int, name: str) -> bytes:
    return Writer().le64(request).str(name).bytes()


def failed(request: int, reason: Error | None) -> bytes:
    return Writer().le64(request).error(reason).bytes()
