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

from __future__ import annotations

import ssl
from dataclasses import dataclass
from typing import Any, NoReturn

from . import wire
from .connection import Connection
from .errors import Error, fw
from .wire import FrameType, PREFACE, PROTOCOL

DECODABLE = ["msgpack", "cereal.json"]


@dataclass
class Local:
    node_id: int
    name: str
    host_id: str
    serializers: list[str]
    deserializers: list[str]
    window_bytes: int
    window_messages: int


@dataclass
class Peer:
    node_id: int
    name: str
    host_id: str
    hello: dict[str, Any]
    send_families: list[str]
    recv_families: list[str]


def _refuse(conn: Connection, err: Error) -> NoReturn:
    try:
        conn.send_blocking(wire.frame(FrameType.REFUSE, wire.refuse(err)))
    except OSError:
        pass
    raise err


def _expect(conn: Connection, deadline: float, wanted: FrameType,
            where: str) -> bytes:
    """The next frame of type `wanted`, heartbeats skipped; a refusal
    raises its reason."""
    while True:
        ftype, body = conn.read_frame(deadline)
        if ftype == FrameType.HEARTBEAT:
            continue
        if ftype == FrameType.REFUSE:
            reason = wire.read_refuse(body)
            if reason is None:
                raise fw("handshake_failed",
                         f"node at {where} refused the connection")
            if reason.category_name != "ferry_fw":
                raise fw("handshake_failed", f"handshake with the node at "
                         f"{where} failed: {reason.render()}")
            raise reason
        if ftype != wanted:
            raise fw("handshake_failed", f"the node at {where} sent a "
                     f"{ftype.name.lower()} frame out of the handshake's "
                     "order")
        return body


def _certificate_names(sock: ssl.SSLSocket) -> list[str]:
    cert: dict[str, Any] = dict(sock.getpeercert() or {})
    names = [v for rdn in cert.get("subject", ()) for k, v in rdn
             if k == "commonName"]
    names += [v for k, v in cert.get("subjectAltName", ()) if k == "DNS"]
    return names


def handshake(conn: Connection, me: Local, deadline: float) -> Peer:
    """Runs the handshake for `me` on `conn` until `deadline` (a
    `time.monotonic()` value); returns the peer or raises `Error`."""
    where = conn.peer_address
    conn.send_blocking(PREFACE + wire.frame(
        FrameType.INTRO, wire.intro(me.node_id, me.name, me.host_id)))
    first = conn.read_exactly(8, deadline)
    if first != PREFACE:
        raise fw("handshake_failed", f"the node at {where} does not speak "
                 f"ferry's protocol (its first bytes are {first.hex(' ')}, "
                 "not \"FERRY/1\\n\")")
    body = _expect(conn, deadline, FrameType.INTRO, where)
    try:
        intro = wire.read_intro(body)
    except Error as e:
        _refuse(conn, fw("handshake_failed", f"the peer at {where} sent an "
                         f"intro this node cannot read: {e.text}"))
    protocol, node_id, name = intro[:3]
    if protocol != PROTOCOL:
        _refuse(conn, fw("handshake_failed", f"node '{name}' at {where} "
                         f"speaks ferry wire protocol {protocol}, node "
                         f"{me.name} speaks {PROTOCOL}; run the same ferry "
                         "version on both"))
    if node_id == 0 or not name:
        _refuse(conn, fw("handshake_failed", f"the peer at {where} sent an "
                         "intro without a node id or a node name"))
    if node_id == me.node_id:
        _refuse(conn, fw("handshake_failed",
                         f"node {me.name} connected to itself at {where}"))
    if isinstance(conn.sock, ssl.SSLSocket):
        names = _certificate_names(conn.sock)
        if name not in names:
            _refuse(conn, fw("handshake_failed", f"refused node '{name}' at "
                             f"{where}: name mismatch: the peer presents a "
                             f"certificate for {names} but calls itself "
                             f"'{name}'"))
    conn.send_blocking(wire.frame(FrameType.HELLO, wire.hello(
        me.serializers, me.deserializers, DECODABLE, 0, me.window_bytes,
        me.window_messages)))
    body = _expect(conn, deadline, FrameType.HELLO, where)
    try:
        hello = wire.read_hello(body)
    except Error as e:
        _refuse(conn, fw("handshake_failed", f"node '{name}' at {where} sent "
                         f"a hello this node cannot read: {e.text}"))
    send = [f for f in me.serializers
            if f in hello["deserializers"] and f in hello["decodable"]]
    recv = [f for f in hello["serializers"]
            if f in me.deserializers and f in DECODABLE]
    if not send:
        _refuse(conn, fw("no_common_family", f"node {me.name} sends with "
                         f"serializers {me.serializers} but node {name} "
                         "accepts only deserializers "
                         f"{hello['deserializers']} (and decodes "
                         f"{hello['decodable']}); add a common family to "
                         "one of the lists"))
    if not recv:
        _refuse(conn, fw("no_common_family", f"node {name} sends with "
                         f"serializers {hello['serializers']} but node "
                         f"{me.name} accepts only deserializers "
                         f"{me.deserializers} (and decodes {DECODABLE}); add "
                         "a common family to one of the lists"))
    if me.node_id < node_id:
        conn.send_blocking(wire.frame(FrameType.WELCOME))
    else:
        _expect(conn, deadline, FrameType.WELCOME, where)
    return Peer(node_id, name, intro[3] or "", hello, send, recv)
