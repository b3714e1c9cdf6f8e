"""Message bodies and payload headers (docs/wire-format.md, "3. User
messages" and "4. The payload header").

Contract: `Message` is one user message as it travels: target, sender and
message id, its elements (each a payload header and its frames) or an
error. `encode_message` writes a `message` frame's body with every frame
inline; `read_message` and `read_batch` read bodies as hostile input (every
claim checked against the bytes of the body before anything is taken) and
raise `Error` (`ferry_fw: decode_failed`) when they do not read, which ends
the connection. `read_header` reads a payload header and raises the
serializers' errors (`ferry_ser: ...`), which refuse the one message.
`wire_size` is what a message counts against credit. Pure: no I/O.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence
from dataclasses import dataclass, field

from .errors import Error, ser
from .wire import Reader, Writer

MAX_HEAD = 29 + 8 + 4096 * 33
MAX_BATCH_MESSAGES = 8192
MAX_FRAMES = 4096
MAX_NAME_BYTES = 1024
WIRE_OVERHEAD = 64
WIRE_FRAME_OVERHEAD = 32

ONE_WAY = 0x1000000000000000
RESPONSE_BIT = 1 << 63
REQUEST_MASK = (1 << 60) - 1

INLINE_PLAIN, INLINE_LZ4, INLINE_ZSTD = 0, 1, 2
STORE_OBJECT, REMOTE_OBJECT, REMOTE_HANDLE, INLINE_HANDLE = 3, 4, 5, 6
KIND_NAMES = ["inline_plain", "inline_lz4", "inline_zstd", "store_object",
              "remote_object", "remote_handle", "inline_handle"]


@dataclass
class Frame:
    """One frame of an element: `data` for inline kinds, else what the
    peer's head says of it (a pulled frame's `data` arrives later)."""
    kind: int
    size: int
    object_id: int = 0
    ticket: int = 0
    data: bytes = b""


@dataclass
class Element:
    header: bytes
    frames: list[Frame] = field(default_factory=list)


@dataclass
class Message:
    target: int
    sender: int
    mid: int
    elements: list[Element] = field(default_factory=list)
    error: Error | None = None

    @property
    def is_response(self) -> bool:
        return bool(self.mid & RESPONSE_BIT)

    @property
    def is_request(self) -> bool:
        return not self.is_response and (self.mid & REQUEST_MASK) != 0


def wire_size(msg: Message) -> int:
    """What `msg` counts against credit ("wire_size")."""
    total = WIRE_OVERHEAD
    for el in msg.elements:
        total += len(el.header)
        for fr in el.frames:
            counted = (len(fr.data) if fr.kind in (INLINE_PLAIN, INLINE_HANDLE)
                       else fr.size)
            total += counted + WIRE_FRAME_OVERHEAD
    return min(total, (1 << 64) - 1)


def encode_message(msg: Message) -> bytes:
    """A message body: head, pieces, error; every frame inline_plain."""
    head = Writer().le64(msg.target).le64(msg.sender).le64(msg.mid)
    head.u8(1 if msg.error is not None else 0).le32(len(msg.elements))
    pieces: list[bytes] = []
    for el in msg.elements:
        head.le32(len(el.header)).le32(len(el.frames))
        pieces.append(el.header)
        for fr in el.frames:
            head.u8(fr.kind).le64(fr.size).le64(fr.object_id)
            head.le64(fr.ticket).le64(len(fr.data))
            pieces.append(fr.data)
    out = Writer().le32(len(head.buf)).raw(head.buf)
    for piece in pieces:
        out.raw(piece)
    if msg.error is not None:
        out.error(msg.error)
    return out.bytes()


def _read_one(r: Reader) -> Message:
    """Reads one message body from `r` (which may hold more after it)."""
    head_len = r.le32("head length")
    if head_len > MAX_HEAD or head_len > r.left() or head_len < 29:
        r.fail(f"a head of {head_len} bytes (at most {MAX_HEAD}, at least "
               f"29, and {r.left()} left)")
    h = Reader(r.take(head_len, "head"), r.what)
    target, sender, mid = h.le64(), h.le64(), h.le64()
    flags = h.u8("flags")
    if flags & ~1:
        h.fail(f"message flags {flags:#x} (only bit 0 is defined)")
    count = h.le32("element count")
    if count > h.left() // 8:
        h.fail(f"{count} elements in a head of {h.left()} bytes left")
    shapes: list[tuple[int, list[list[int]]]] = []
    for _ in range(count):
        header_len = h.le32("header length")
        nframes = h.le32("frame count")
        if nframes > h.left() // 33:
            h.fail(f"{nframes} frames in a head of {h.left()} bytes left")
        frames: list[list[int]] = []
        for _ in range(nframes):
            frames.append([h.u8("kind"), h.le64("size"), h.le64("object_id"),
                           h.le64("ticket"), h.le64("data length")])
        shapes.append((header_len, frames))
    h.done()
    elements: list[Element] = []
    for header_len, frames in shapes:
        el = Element(bytes(r.take(header_len, "payload header")))
        for kind, size, object_id, ticket, data_len in frames:
            el.frames.append(Frame(kind, size, object_id, ticket,
                                   bytes(r.take(data_len, "frame data"))))
        elements.append(el)
    err = None
    if flags & 1:
        err = r.error("error")
        if err is None:
            r.fail("an error of code 0 after the pieces")
    return Message(target, sender, mid, elements, err)


def read_message(body: bytes) -> Message:
    r = Reader(body, "message frame")
    msg = _read_one(r)
    r.done()
    return msg


def read_batch(body: bytes) -> list[Message]:
    r = Reader(body, "batch frame")
    count = r.le32("count")
    if count > MAX_BATCH_MESSAGES or count > r.left() // 33:
        r.fail(f"a batch of {count} messages in {r.left()} bytes")
    msgs = [_read_one(r) for _ in range(count)]
    r.done()
    return msgs


# -- the payload header -------------------------------------------------------

@dataclass
class PayloadHeader:
    family: str
    type_name: str
    stand_in: str
    format_version: int
    frame_sizes: list[int]


def encode_header(family: str, type_name: str, frame_sizes: Sequence[int],
                  stand_in: str = "", version: int = 1) -> bytes:
    out = bytearray(b"FS\x01")
    for name in (family, type_name, stand_in):
        data = name.encode()
        out += struct.pack("<H", len(data)) + data
    out += struct.pack("<II", version, len(frame_sizes))
    out += struct.pack(f"<{len(frame_sizes)}Q", *frame_sizes)
    return bytes(out)


def read_header(data: bytes, max_message_size: int) -> PayloadHeader:
    """Reads a payload header; raises the serializers' errors."""
    view = memoryview(data)
    pos = 0

    def take(n: int, what: str) -> memoryview:
        nonlocal pos
        if pos + n > len(view):
            raise ser("truncated_frame", "payload header ends inside its "
                      f"{what} ({n} bytes needed at offset {pos} of "
                      f"{len(view)})")
        chunk = view[pos:pos + n]
        pos += n
        return chunk

    if bytes(take(3, "magic")) != b"FS\x01":
        raise ser("malformed_header", "payload header without the magic "
                  "'FS' and header version 1")
    names: list[str] = []
    for what, low in (("family", 0x21), ("type", 0x20), ("stand-in", 0x20)):
        n = struct.unpack("<H", take(2, what + " length"))[0]
        if n > MAX_NAME_BYTES:
            raise ser("length_out_of_range", f"payload header's {what} name "
                      f"of {n} bytes, above {MAX_NAME_BYTES}")
        raw = bytes(take(n, what))
        if any(b < low or b > 0x7e for b in raw) or (what == "family"
                                                     and not raw):
            raise ser("malformed_header", f"payload header's {what} name "
                      f"{raw!r} is not printable ASCII")
        names.append(raw.decode())
    version, count = struct.unpack("<II", take(8, "format version"))
    if count > MAX_FRAMES:
        raise ser("length_out_of_range", f"payload header claims {count} "
                  f"frames, above {MAX_FRAMES}")
    sizes = list(struct.unpack(f"<{count}Q", take(8 * count,
                                                  "frame sizes")))
    if sum(sizes) > max_message_size:
        raise ser("payload_too_large", f"payload of {sum(sizes)} bytes, "
                  f"above the link's max message size {max_message_size}")
    if pos != len(view):
        raise ser("trailing_bytes", f"{len(view) - pos} bytes after the "
                  "payload header's frame sizes")
    return PayloadHeader(names[0], names[1], names[2], version, sizes)
