"""A Python peer's end of one ferry link: `connect` makes it, `Node` runs it.

Contract: `connect("host:port", ...)` dials a ferry node, runs the handshake
(handshake.py) and returns a `Node` whose link is up. The node then:

- reads every frame on the connection's I/O thread (connection.py) and
  hands messages, in link order, to one delivery thread (delivery.py), which
  pulls large frames with chunk requests, decodes, and puts each message in
  its target actor's mailbox, or refuses it as a C++ node would;
- answers the peer's requests it can (`lookup` of a name it exposes) and
  refuses the rest (`spawn`, chunk and relay requests: a Python peer holds
  no frames for pulling and spawns no actors);
- holds its own sends to its credit window (`window_bytes`,
  `window_messages`), sending a `probe` when a send has to wait, and returns
  credit for the peer's messages once its actors processed them, so a peer
  that stops processing makes the C++ sender wait instead of grow;
- takes the link down on `goodbye`, a framing error, a silent peer or
  `close()`, failing the requests that still wait with `link_down`.

Thread-safety: every public method may be called from any thread.
"""

from __future__ import annotations

import itertools
import os
import random
import socket
import ssl
import threading
import time
from collections.abc import Callable, Iterable
from types import TracebackType
from typing import Any, Generic, TypeVar

from . import families, wire
from .actors import Handler, LocalActor, RemoteActor
from .connection import Connection
from .delivery import Delivery, Envelope
from .errors import Error, fw, ser, system
from .handshake import Local, Peer, handshake
from .message import (ONE_WAY, Element, Frame, Message,
                      encode_header, encode_message, wire_size)
from .wire import FrameType

_request_ids = itertools.count(1)

T = TypeVar("T")


class _Slot(Generic[T]):
    """Where one waiting call's answer arrives: `set` once, from another
    thread, with the answer or the `Error` that ends the wait."""

    __slots__ = ("event", "value")

    def __init__(self) -> None:
        self.event = threading.Event()
        self.value: T | Error | None = None

    def set(self, value: T | Error) -> None:
        self.value = value
        self.event.set()


def _host_id() -> str:
    def first_line(path: str) -> str:
        try:
            with open(path) as f:
                return f.readline().strip()
        except OSError:
            return ""
    machine = first_line("/etc/machine-id") or socket.gethostname()
    return machine + "/" + first_line("/proc/sys/kernel/random/boot_id")


def _split_address(address: str) -> tuple[str, int]:
    host, sep, port = address.rpartition(":")
    if not sep or not port.isdigit():
        raise fw("connect_failed", f"{address!r} is no host:port address")
    return host.strip("[]"), int(port)


def connect(address: str, name: str | None = None,
            families: Iterable[str] = ("msgpack", "cereal.json"),
            deserializers: Iterable[str] | None = None,
            ssl_context: ssl.SSLContext | None = None,
            timeout: float = 10.0, window_bytes: int = 64 << 20,
            window_messages: int = 4096, max_message_size: int = 1 << 30,
            heartbeat_interval: float = 5.0,
            connection_timeout: float = 30.0,
            send_timeout: float = 30.0) -> Node:
    """Connects to the ferry node at `address` ("host:port") and returns the
    `Node` of the link. `families` is this side's preference list to send
    with, `deserializers` (default: the same) what it accepts; `ssl_context`
    (see `tls_context`) makes the link TLS. Raises `Error`."""
    host, port = _split_address(address)
    serializers = list(families)
    accepted = list(deserializers) if deserializers else serializers
    for f in serializers + accepted:
        if f not in ("msgpack", "cereal.json"):
            raise fw("invalid_config", "a Python peer speaks the families "
                     f"msgpack and cereal.json, not {f!r}")
    deadline = time.monotonic() + timeout
    try:
        sock = socket.create_connection((host, port), timeout=timeout)
    except OSError as e:
        raise fw("connect_failed", f"cannot connect to {address}: {e}")
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    if ssl_context is not None:
        try:
            sock = ssl_context.wrap_socket(sock, server_hostname=host)
        except (OSError, ValueError) as e:
            sock.close()
            raise fw("handshake_failed",
                     f"TLS: the handshake with {address} failed: {e}")
    me = Local(random.getrandbits(64) or 1,
               name or f"python-{socket.gethostname()}:{os.getpid()}",
               _host_id(), serializers, list(accepted),
               window_bytes, window_messages)
    conn = Connection(sock, address, max_message_size, 4 << 20)
    try:
        peer = handshake(conn, me, deadline)
    except BaseException:
        sock.close()
        raise
    conn.heartbeat_interval = heartbeat_interval
    conn.connection_timeout = connection_timeout
    node = Node(conn, me, peer, send_timeout)
    conn.start(node._on_frame, node._on_end)
    return node


class Node:
    """One link to a ferry node, made by `connect`."""

    def __init__(self, conn: Connection, me: Local, peer: Peer,
                 send_timeout: float) -> None:
        self._conn = conn
        self.name = me.name
        self.node_id = me.node_id
        self.peer_name = peer.name
        self.peer_node_id = peer.node_id
        self.send_families = peer.send_families
        self.recv_families = peer.recv_families
        self.send_timeout = send_timeout
        self.max_message_size = conn.max_message_size
        hello = peer.hello
        self.shapes: dict[str, str] = dict(zip(hello["type_names"],
                                               hello["type_shapes"]))
        self._window: tuple[int, int] = (me.window_bytes, me.window_messages)
        self._peer_window: tuple[int, int] = (hello["window_bytes"],
                                              hello["window_messages"])
        self._lock = threading.Condition()
        # The link's end, once it went down.
        self._down: Error | None = None
        self._in_flight = [0, 0]       # bytes, messages sent, not processed
        self._probed = False
        self._processed = [0, 0]       # processed since the last credit
        self._credit_now = False       # a probe asks for credit at once
        self._delivered = 0
        # request id -> the answer's slot
        self._answers: dict[int, _Slot[tuple[FrameType, bytes]]] = {}
        # request number -> the response's slot
        self._responses: dict[int, _Slot[Envelope]] = {}
        self._actors: dict[int, LocalActor] = {}     # by id
        self._exposed: dict[str, LocalActor] = {}    # by name
        self._proxies: dict[int, RemoteActor] = {}   # by id
        self._ids = itertools.count(1)
        self._asker = self._new_actor_id()
        self.stats: dict[str, Any] = {
            "messages_sent": 0, "messages_received": 0, "refusals": 0,
            "refused_by_peer": 0, "credit_waits": 0, "bytes_pulled": 0,
            "peak_in_flight_bytes": 0, "batches_received": 0,
            "unasked_answers": 0, "last_refusal": None}
        self._delivery = Delivery(self)
        self.default_actor = (self.proxy(hello["default_actor"])
                              if hello["default_actor"] else None)

    # -- public API -----------------------------------------------------------

    def lookup(self, name: str, timeout: float = 10.0) -> RemoteActor:
        """The peer's actor exposed under `name` (`node::expose`)."""
        body = self.ask(FrameType.LOOKUP, lambda rid: wire.lookup(rid, name),
                        timeout, f"a lookup of {name!r}")
        ftype, payload = body
        if ftype != FrameType.ACTOR_ID:
            raise fw("decode_failed", "the peer answered a request for an "
                     f"actor id with a {ftype.name.lower()}")
        _, actor = wire.read_fields(payload, "actor_id", "qq")
        return self.proxy(actor)

    def spawn(self, handler: Handler | None = None,
              name: str | None = None) -> LocalActor:
        """A Python actor on this link: `handler(envelope)` runs for each
        message on the actor's own thread and returns the response to a
        request (or None); without a handler, `receive()` takes messages.
        With `name` the peer can look it up (`node::remote_actor`)."""
        actor = LocalActor(self, self._new_actor_id(), handler)
        with self._lock:
            self._actors[actor.id] = actor
            if name is not None:
                self._exposed[name] = actor
        return actor

    def proxy(self, actor_id: int) -> RemoteActor:
        """The `RemoteActor` for the peer's actor `actor_id`."""
        with self._lock:
            p = self._proxies.get(actor_id)
            if p is None:
                p = self._proxies[actor_id] = RemoteActor(self, actor_id)
            return p

    def close(self) -> None:
        """Ends the link in order: `goodbye`, then the connection closes."""
        try:
            self._conn.send(wire.frame(FrameType.GOODBYE), wait=False)
        except Error:
            pass
        self._conn.close()
        if self._conn.thread is not None:
            self._conn.thread.join(5)
        self._take_down(fw("link_down", f"node {self.name} closed the link"))

    @property
    def is_up(self) -> bool:
        """Whether the link is up."""
        with self._lock:
            return self._down is None

    def wait_down(self, timeout: float | None = None) -> Error | None:
        """Waits until the link is down; returns why (an `Error`)."""
        with self._lock:
            self._lock.wait_for(lambda: self._down is not None, timeout)
            return self._down

    def pause_reading(self, paused: bool = True) -> None:
        """Stops (or resumes) reading the connection, as a stalled peer."""
        self._conn.pause_reading(paused)

    def __enter__(self) -> Node:
        return self

    def __exit__(self, exc_type: type[BaseException] | None,
                 exc: BaseException | None,
                 traceback: TracebackType | None) -> None:
        self.close()

    # -- sending --------------------------------------------------------------

    def _new_actor_id(self) -> int:
        return next(self._ids)

    def element(self, type_name: str, value: Any) -> Element:
        """One message element: `value` of the peer's type `type_name` in
        the first family of the link that carries it."""
        shape = self.shapes.get(type_name)
        if shape is None:
            raise fw("unregistered_type", f"node {self.peer_name} has no "
                     f"message type named {type_name!r} (it lists "
                     f"{sorted(self.shapes)})")
        refusals: list[str] = []
        for family in self.send_families:
            try:
                frames = families.encode(family, shape, value)
            except Error as e:
                refusals.append(f"{family}: {e.render()}")
                continue
            header = encode_header(family, type_name,
                                   [len(f) for f in frames])
            return Element(header, [Frame(0, len(f), data=f) for f in frames])
        raise ser("no_family_can_encode", f"no family of the link to "
                  f"{self.peer_name} can encode a {type_name}: "
                  f"{'; '.join(refusals)}")

    def send_message(self, msg: Message, wait: bool = True) -> None:
        """Sends `msg` on the link, within the credit window unless it is a
        response or an error answer (`wait` False)."""
        size = wire_size(msg)
        if sum(f.size for e in msg.elements for f in e.frames) > \
                self.max_message_size:
            raise fw("message_too_large",
                     f"a message of {size} bytes, above max_message_size")
        self._take_credit(size, wait)
        try:
            self._send(FrameType.MESSAGE, encode_message(msg))
        except Error:
            self._return_credit(size, 1)
            raise
        with self._lock:
            self.stats["messages_sent"] += 1

    def _take_credit(self, size: int, wait: bool) -> None:
        deadline = time.monotonic() + self.send_timeout
        with self._lock:
            def fits() -> bool:
                b, m = self._in_flight
                return (self._down is not None or (b == 0 and m == 0)
                        or (b + size <= self._window[0]
                            and m + 1 <= self._window[1]))
            if wait and not fits():
                self.stats["credit_waits"] += 1
                if not self._probed:
                    self._probed = True
                    self._send(FrameType.PROBE, b"")
                while not fits():
                    left = deadline - time.monotonic()
                    if left <= 0:
                        raise fw("send_timeout", "no credit from node "
                                 f"{self.peer_name} within "
                                 f"{self.send_timeout * 1e3:.0f} ms")
                    self._lock.wait(left)
            if self._down is not None:
                raise self._down
            self._in_flight[0] += size
            self._in_flight[1] += 1
            self.stats["peak_in_flight_bytes"] = max(
                self.stats["peak_in_flight_bytes"], self._in_flight[0])

    def _return_credit(self, nbytes: int, messages: int) -> None:
        with self._lock:
            self._in_flight[0] = max(0, self._in_flight[0] - nbytes)
            self._in_flight[1] = max(0, self._in_flight[1] - messages)
            self._probed = False
            self._lock.notify_all()

    def _send(self, ftype: FrameType, body: bytes) -> None:
        self._conn.send(wire.header(ftype, len(body)) + body)

    def request_message(self, target: int, sender: int,
                        elements: list[Element],
                        timeout: float) -> Envelope:
        """Sends a request and waits for its response."""
        number = next(_request_ids) & ((1 << 60) - 1)
        slot: _Slot[Envelope] = _Slot()
        with self._lock:
            if self._down is not None:
                raise self._down
            self._responses[number] = slot
        try:
            self.send_message(Message(target, sender or self._asker,
                                      ONE_WAY | number, elements))
            if not slot.event.wait(timeout):
                raise system("request_timeout", f"node {self.peer_name} did "
                             f"not answer within {timeout * 1e3:.0f} ms")
        finally:
            with self._lock:
                self._responses.pop(number, None)
        answer = slot.value
        if isinstance(answer, Error):
            raise answer
        assert answer is not None
        return answer

    def ask(self, ftype: FrameType, make_body: Callable[[int], bytes],
            timeout: float, what: str) -> tuple[FrameType, bytes]:
        """Sends a control request and waits for its answer frame."""
        rid = next(_request_ids)
        slot: _Slot[tuple[FrameType, bytes]] = _Slot()
        with self._lock:
            if self._down is not None:
                raise self._down
            self._answers[rid] = slot
        try:
            self._send(ftype, make_body(rid))
            if not slot.event.wait(timeout):
                raise system("request_timeout", f"node {self.peer_name} did "
                             f"not answer {what} within "
                             f"{timeout * 1e3:.0f} ms")
        finally:
            with self._lock:
                self._answers.pop(rid, None)
        answer = slot.value
        if isinstance(answer, Error):
            raise answer
        assert answer is not None
        if answer[0] == FrameType.FAILED:
            _, reason = wire.read_fields(answer[1], "failed", "qe")
            raise reason or fw("decode_failed", f"node {self.peer_name} "
                               "answered a request with an empty error")
        return answer

    # -- receiving (I/O thread) -----------------------------------------------

    def _on_frame(self, ftype: FrameType, body: bytes) -> None:
        if ftype in (FrameType.MESSAGE, FrameType.BATCH):
            self._delivery.arrived(ftype, body)
        elif ftype == FrameType.CREDIT:
            messages, nbytes, _ = wire.read_fields(body, "credit", "qqq")
            self._return_credit(nbytes, messages)
        elif ftype == FrameType.PROBE:
            with self._lock:
                self._credit_now = True
            self._maybe_credit()
        elif ftype in (FrameType.ACTOR_ID, FrameType.CHUNK, FrameType.FAILED):
            self._answer(ftype, body)
        elif ftype == FrameType.DOWN:
            actor, reason = wire.read_fields(body, "down", "qe")
            self.proxy(actor)._went_down(reason)
            for each in list(self._actors.values()):
                each._partner_down(actor, reason)
        elif ftype == FrameType.EXIT:
            actor, _, reason = wire.read_fields(body, "exit", "qqe")
            local = self._actors.get(actor)
            if local is not None and local.exported:
                local.stop(reason)
        elif ftype == FrameType.LINK:
            actor, partner, establish = wire.read_fields(body, "link", "qqf")
            local = self._actors.get(actor)
            if local is not None:
                local._link(partner, establish)
        elif ftype == FrameType.REFUSAL:
            target, reason = wire.read_fields(body, "refusal", "qe")
            with self._lock:
                self.stats["refused_by_peer"] += 1
                self.stats["last_refusal"] = reason
        elif ftype == FrameType.TRANSFER_DONE:
            wire.read_fields(body, "transfer_done", "q")
        elif ftype == FrameType.LOOKUP:
            self._answer_lookup(body)
        elif ftype in (FrameType.SPAWN, FrameType.CHUNK_REQUEST,
                       FrameType.RELAY_REQUEST):
            self._refuse_request(ftype, body)
        elif ftype == FrameType.GOODBYE:
            self._conn.close()
            self._take_down(fw("link_down",
                               f"node {self.peer_name} shut down"))
        elif ftype == FrameType.REFUSE:
            reason = wire.read_refuse(body) or fw(
                "handshake_failed", f"node {self.peer_name} refused the link")
            self._conn.close()
            self._take_down(reason)
        elif ftype in (FrameType.INTRO, FrameType.HELLO, FrameType.WELCOME):
            raise fw("decode_failed", f"node {self.peer_name} sent a "
                     f"{ftype.name.lower()} frame on a link (a handshake "
                     "frame)")

    def _answer(self, ftype: FrameType, body: bytes) -> None:
        if len(body) < 8:
            raise fw("decode_failed", f"malformed {ftype.name.lower()} from "
                     "the peer: fewer than 8 bytes")
        rid = int.from_bytes(body[:8], "little")
        with self._lock:
            slot = self._answers.get(rid)
            if slot is None:
                self.stats["unasked_answers"] += 1
                return
            slot.set((ftype, body))

    def _answer_lookup(self, body: bytes) -> None:
        rid, name = wire.read_fields(body, "lookup", "qs")
        with self._lock:
            actor = self._exposed.get(name)
            exposed = sorted(self._exposed)
        if actor is None:
            self._send(FrameType.FAILED, wire.failed(rid, fw(
                "no_such_actor", f"node {self.name} exposes no actor named "
                f"\"{name}\" (exposed: {exposed}); call "
                "node.spawn(handler, name=...) there")))
            return
        actor.exported = True
        self._send(FrameType.ACTOR_ID, wire.le64s(rid, actor.id))

    def _refuse_request(self, ftype: FrameType, body: bytes) -> None:
        if len(body) < 8:
            raise fw("decode_failed",
                     f"malformed {ftype.name.lower()} from the peer")
        rid = int.from_bytes(body[:8], "little")
        if ftype == FrameType.SPAWN:
            err = fw("no_such_actor", f"node {self.name} is a Python peer: "
                     "it spawns no actors for its peers")
        else:
            err = fw("transfer_failed", f"node {self.name} holds no such "
                     "transfer (a Python peer sends every frame inline)")
        self._send(FrameType.FAILED, wire.failed(rid, err))

    def _on_response(self, msg: Envelope) -> bool:
        """A response to one of this node's requests (delivery thread)."""
        with self._lock:
            slot = self._responses.get(msg.mid & ((1 << 60) - 1))
        if slot is None:
            return False
        slot.set(msg)
        return True

    def _fail_response(self, mid: int, err: Error) -> None:
        with self._lock:
            slot = self._responses.get(mid & ((1 << 60) - 1))
        if slot is not None:
            slot.set(err)

    # -- credit back to the peer ----------------------------------------------

    def _taken(self) -> None:
        """A message left the link: delivered or refused."""
        with self._lock:
            self._delivered += 1

    def processed(self, nbytes: int) -> None:
        """An actor processed a message of `nbytes` wire size (or it was
        refused): its credit goes back in batches of a quarter window."""
        with self._lock:
            self._processed[0] += nbytes
            self._processed[1] += 1
        self._maybe_credit()

    def _maybe_credit(self) -> None:
        with self._lock:
            quarter_b = max(1, min(self._window[0], self._peer_window[0]) // 4)
            quarter_m = max(1, min(self._window[1], self._peer_window[1]) // 4)
            b, m = self._processed
            if m == 0 and b == 0:
                return
            if not (self._credit_now or b >= quarter_b or m >= quarter_m):
                return
            self._processed = [0, 0]
            self._credit_now = False
            body = wire.credit(m, b, self._delivered)
        try:
            self._send(FrameType.CREDIT, body)
        except Error:
            pass

    # -- the end --------------------------------------------------------------

    def _on_end(self, err: Error | None) -> None:
        self._take_down(err or fw("link_down",
                                  f"the link to {self.peer_name} ended"))

    def _take_down(self, err: Error) -> None:
        with self._lock:
            if self._down is not None:
                return
            self._down = err
            answers = list(self._answers.values())
            responses = list(self._responses.values())
            self._lock.notify_all()
        down = fw("link_down", f"the link to node {self.peer_name} went down "
                  f"before the answer arrived: {err.render()}")
        for slot in answers:
            slot.set(down)
        for waiting in responses:
            waiting.set(down)
        self._delivery.stop()
        for actor in list(self._actors.values()):
            actor._link_down(err)
