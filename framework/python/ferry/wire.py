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

import enum
import struct

from .errors import Error, fw

PREFACE = b"FERRY/1\n"
PROTOCOL = 15
MAX_STR = 1 << 20
MAX_STRS = 65536
HEADER = struct.Struct("<QHH")
NO_ERROR = None


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
MIB = 1 << 20

# The largest body this peer takes of each type before its link is made and
# on the link (the table "Frame types"); messages, spawns and chunks on a
# link are bounded by the link's max_message_size (see bounds_on_link).
BEFORE_LINK = {
    FrameType.INTRO: 65536, FrameType.HELLO: 64 * MIB,
    FrameType.REFUSE: 2 * MIB,
}


def bound(frame_type, linked, max_message_size, chunk_size):
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


def header(frame_type, length):
    """The 12-byte header of a frame of `length` body bytes."""
    return HEADER.pack(length, int(frame_type), 0)


def frame(frame_type, body=b""):
    """A whole frame: header and body."""
    return header(frame_type, len(body)) + bytes(body)


class Writer:
    """Builds a frame body field by field."""

    def __init__(self):
        self.buf = bytearray()

    def u8(self, v):
        self.buf += struct.pack("<B", v)
        return self

    def flag(self, v):
        return self.u8(1 if v else 0)

    def le16(self, v):
        self.buf += struct.pack("<H", v)
        return self

    def le32(self, v):
        self.buf += struct.pack("<I", v)
        return self

    def le64(self, v):
        self.buf += struct.pack("<Q", v)
        return self

    def str(self, v):
        data = v.encode() if isinstance(v, str) else bytes(v)
        self.le32(len(data))
        self.buf += data
        return self

    def strs(self, vs):
        self.le32(len(vs))
        for v in vs:
            self.str(v)
        return self

    def error(self, err):
        """An `error` field; None (or an error of code 0) is no error."""
        if err is None or err.code == 0:
            self.buf += bytes(13)
            return self
        return self.u8(err.code).le64(err.category).str(err.text)

    def raw(self, data):
        self.buf += data
        return self

    def bytes(self):
        return bytes(self.buf)


class Reader:
    """Reads a frame body field by field; `what` names it in errors."""

    def __init__(self, data, what):
        self.data = memoryview(data)
        self.pos = 0
        self.what = what

    def fail(self, why):
        raise fw("decode_failed",
                 "malformed %s from the peer: %s" % (self.what, why))

    def left(self):
        return len(self.data) - self.pos

    def take(self, n, field):
        if n > self.left():
            self.fail("%s needs %d bytes, %d left" % (field, n, self.left()))
        chunk = self.data[self.pos:self.pos + n]
        self.pos += n
        return chunk

    def u8(self, field="u8"):
        return self.take(1, field)[0]

    def flag(self, field="flag"):
        v = self.u8(field)
        if v > 1:
            self.fail("%s reads %d, neither 0 nor 1" % (field, v))
        return v == 1

    def le16(self, field="le16"):
        return struct.unpack("<H", self.take(2, field))[0]

    def le32(self, field="le32"):
        return struct.unpack("<I", self.take(4, field))[0]

    def le64(self, field="le64"):
        return struct.unpack("<Q", self.take(8, field))[0]

    def raw_str(self, field="str"):
        n = self.le32(field)
        if n > MAX_STR:
            self.fail("%s of %d bytes, above the %d a string takes"
                      % (field, n, MAX_STR))
        return bytes(self.take(n, field))

    def str(self, field="str"):
        data = self.raw_str(field)
        try:
            return data.decode()
        except UnicodeDecodeError:
            return data.decode("latin-1")

    def strs(self, field="strs"):
        n = self.le32(field)
        if n > MAX_STRS or n > self.left() // 4:
            self.fail("%s claims %d entries, more than the %d bytes left hold"
                      % (field, n, self.left()))
        return [self.str(field) for _ in range(n)]

    def error(self, field="error"):
        code = self.u8(field)
        category = self.le64(field)
        text = self.str(field)
        return None if code == 0 else Error(code, category, text)

    def rest(self):
        chunk = self.data[self.pos:]
        self.pos = len(self.data)
        return chunk

    def done(self):
        if self.left() != 0:
            self.fail("%d bytes after the last field" % self.left())


# -- handshake bodies ---------------------------------------------------------

def intro(node_id, node_name, host_id, store_name="", has_store=False,
          store_token=0, protocol=PROTOCOL):
    return (Writer().le32(protocol).le64(node_id).str(node_name)
            .str(host_id).str(store_name).flag(has_store)
            .le64(store_token).bytes())


def read_intro(body):
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


def hello(serializers, deserializers, decodable, default_actor,
          window_bytes, window_messages, type_names=(), type_shapes=(),
          lane="", compressions=()):
    return (Writer().strs(serializers).strs(deserializers).strs(decodable)
            .le64(default_actor).le64(window_bytes).le64(window_messages)
            .strs(list(type_names)).strs(list(type_shapes)).str(lane)
            .strs(list(compressions)).bytes())


def read_hello(body):
    """A dict of the hello's ten fields."""
    r = Reader(body, "hello")
    h = {"serializers": r.strs("serializers"),
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
        r.fail("%d type names but %d type shapes"
               % (len(h["type_names"]), len(h["type_shapes"])))
    return h


def refuse(err):
    return Writer().error(err).bytes()


def read_refuse(body):
    r = Reader(body, "refuse")
    err = r.error("reason")
    r.done()
    return err


# -- control bodies -----------------------------------------------------------

def credit(messages, nbytes, delivered):
    return Writer().le64(messages).le64(nbytes).le64(delivered).bytes()


def read_fields(body, what, spec):
    """Reads a body of fixed fields: `spec` is a string of 'q' (le64),
    'e' (error), 's' (str) and 'f' (flag) in order."""
    r = Reader(body, what)
    out = []
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


def down(actor, reason):
    return Writer().le64(actor).error(reason).bytes()


def refusal(target, reason):
    return Writer().le64(target).error(reason).bytes()


def le64s(*values):
    return struct.pack("<%dQ" % len(values), *values)


def lookup(request, name):
    return Writer().le64(request).str(name).bytes()


def failed(request, reason):
    return Writer().le64(request).error(reason).bytes()
