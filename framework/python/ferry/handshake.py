"""The handshake that makes a connection a link (docs/wire-format.md,
"2. Handshake").

Contract: `handshake(conn, me, deadline)` runs the whole handshake on a
connected `Connection` for the local side `me` (a `Local` below): preface
and intro both ways, the checks on the peer's intro, hellos both ways,
family negotiation and the welcome rule. It returns the peer's intro and
hello and the two directions' families, or raises `Error` with the reason:
the peer's refusal as sent, or this side's own, which it sends the peer as a
`refuse` first. A Python peer has no store and no lanes: its intro says
`has_store` 0, and its hello names no ring and no compression it reads, so
the C++ node offers none of them (its frames to a Python peer go inline,
uncompressed, or pulled in chunks).
"""

import ssl
from dataclasses import dataclass

from . import wire
from .errors import Error, fw
from .wire import FrameType, PREFACE, PROTOCOL

DECODABLE = ["msgpack", "cereal.json"]


@dataclass
class Local:
    node_id: int
    name: str
    host_id: str
    serializers: list
    deserializers: list
    window_bytes: int
    window_messages: int


@dataclass
class Peer:
    node_id: int
    name: str
    host_id: str
    hello: dict
    send_families: list
    recv_families: list


def _refuse(conn, err):
    try:
        conn.send_blocking(wire.frame(FrameType.REFUSE, wire.refuse(err)))
    except OSError:
        pass
    raise err


def _expect(conn, deadline, wanted, where):
    """The next frame of type `wanted`, heartbeats skipped; a refusal
    raises its reason."""
    while True:
        ftype, body = conn.read_frame(deadline)
        if ftype == FrameType.HEARTBEAT:
            continue
        if ftype == FrameType.REFUSE:
            reason = wire.read_refuse(body)
            if reason is None:
                raise fw("handshake_failed", "node at %s refused the "
                         "connection" % where)
            if reason.category_name != "ferry_fw":
                raise fw("handshake_failed", "handshake with the node at "
                         "%s failed: %s" % (where, reason.render()))
            raise reason
        if ftype != wanted:
            raise fw("handshake_failed", "the node at %s sent a %s frame "
                     "out of the handshake's order"
                     % (where, ftype.name.lower()))
        return body


def _certificate_names(sock):
    cert = sock.getpeercert() or {}
    names = [v for rdn in cert.get("subject", ()) for k, v in rdn
             if k == "commonName"]
    names += [v for k, v in cert.get("subjectAltName", ()) if k == "DNS"]
    return names


def handshake(conn, me, deadline):
    where = conn.peer_address
    conn.send_blocking(PREFACE + wire.frame(
        FrameType.INTRO, wire.intro(me.node_id, me.name, me.host_id)))
    first = conn.read_exactly(8, deadline)
    if first != PREFACE:
        raise fw("handshake_failed", "the node at %s does not speak ferry's "
                 "protocol (its first bytes are %s, not \"FERRY/1\\n\")"
                 % (where, first.hex(" ")))
    body = _expect(conn, deadline, FrameType.INTRO, where)
    try:
        intro = wire.read_intro(body)
    except Error as e:
        _refuse(conn, fw("handshake_failed", "the peer at %s sent an intro "
                         "this node cannot read: %s" % (where, e.text)))
    protocol, node_id, name = intro[:3]
    if protocol != PROTOCOL:
        _refuse(conn, fw("handshake_failed", "node '%s' at %s speaks ferry "
                         "wire protocol %d, node %s speaks %d; run the same "
                         "ferry version on both"
                         % (name, where, protocol, me.name, PROTOCOL)))
    if node_id == 0 or not name:
        _refuse(conn, fw("handshake_failed", "the peer at %s sent an intro "
                         "without a node id or a node name" % where))
    if node_id == me.node_id:
        _refuse(conn, fw("handshake_failed", "node %s connected to itself "
                         "at %s" % (me.name, where)))
    if isinstance(conn.sock, ssl.SSLSocket):
        names = _certificate_names(conn.sock)
        if name not in names:
            _refuse(conn, fw("handshake_failed", "refused node '%s' at %s: "
                             "name mismatch: the peer presents a certificate "
                             "for %s but calls itself '%s'"
                             % (name, where, names, name)))
    conn.send_blocking(wire.frame(FrameType.HELLO, wire.hello(
        me.serializers, me.deserializers, DECODABLE, 0, me.window_bytes,
        me.window_messages)))
    body = _expect(conn, deadline, FrameType.HELLO, where)
    try:
        hello = wire.read_hello(body)
    except Error as e:
        _refuse(conn, fw("handshake_failed", "node '%s' at %s sent a hello "
                         "this node cannot read: %s" % (name, where, e.text)))
    send = [f for f in me.serializers
            if f in hello["deserializers"] and f in hello["decodable"]]
    recv = [f for f in hello["serializers"]
            if f in me.deserializers and f in DECODABLE]
    if not send:
        _refuse(conn, fw("no_common_family", "node %s sends with serializers "
                         "%s but node %s accepts only deserializers %s "
                         "(and decodes %s); add a common family to one of "
                         "the lists" % (me.name, me.serializers, name,
                                        hello["deserializers"],
                                        hello["decodable"])))
    if not recv:
        _refuse(conn, fw("no_common_family", "node %s sends with serializers "
                         "%s but node %s accepts only deserializers %s (and "
                         "decodes %s); add a common family to one of the "
                         "lists" % (name, hello["serializers"], me.name,
                                    me.deserializers, DECODABLE)))
    if me.node_id < node_id:
        conn.send_blocking(wire.frame(FrameType.WELCOME))
    else:
        _expect(conn, deadline, FrameType.WELCOME, where)
    return Peer(node_id, name, intro[3], hello, send, recv)
