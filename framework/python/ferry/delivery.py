"""The link's incoming messages, in order, to their actors
(docs/wire-format.md, "What a receiver checks per message").

Contract: `Delivery` takes the link's `message` and `batch` bodies from the
I/O thread (`arrived`) and handles them on one thread of its own, in link
order: it reads each body (a body that does not read ends the connection),
pulls its `remote_object` frames with chunk requests (at most 4 in flight,
4 MiB each, then `transfer_done`), decodes its elements with the link's
families and puts it in its target actor's mailbox. A message it cannot take
is refused as a C++ node refuses one: a request gets the error as its
response, any other message a `refusal`; its credit goes back all the same.
The first message with pulled frames holds the ones behind it until its
frames are complete, so delivery keeps the link's order. A response with
nothing to pull that arrives while nothing waits or is being taken is taken
on the I/O thread at once (the same order, one thread hand-over less).
"""

from __future__ import annotations

import collections
import threading
from typing import TYPE_CHECKING, Any

from . import families, wire
from .errors import Error, fw, ser
from .message import (INLINE_PLAIN, KIND_NAMES, REMOTE_OBJECT, RESPONSE_BIT,
                      Frame, Message, read_batch, read_header, read_message,
                      wire_size)
from .wire import FrameType

if TYPE_CHECKING:
    from .actors import RemoteActor
    from .node import Node

CHUNK_SIZE = 4 << 20
CHUNKS_IN_FLIGHT = 4
PULL_TIMEOUT = 60.0
MAX_HELD_MESSAGES = 16384
MAX_HELD_BYTES = 1 << 30


class Envelope:
    """A message as a Python actor receives it: its `values` (one per
    element) of the peer's types `type_names` in `family`, the actor that
    sent it (None for a response or a message without a sender), its
    message id and its wire size."""

    def __init__(self, values: list[Any], type_names: list[str],
                 family: str | None, sender: RemoteActor | None, mid: int,
                 size: int) -> None:
        self.values = values
        self.type_names = type_names
        self.family = family
        self.sender = sender
        self.mid = mid
        self.size = size

    @property
    def value(self) -> Any:
        """The message's value (a tuple when it has several elements)."""
        return self.values[0] if len(self.values) == 1 else tuple(self.values)

    @property
    def type_name(self) -> str | None:
        """The type of the message's first element (None without one)."""
        return self.type_names[0] if self.type_names else None

    @property
    def is_request(self) -> bool:
        """Whether the sender waits for an answer (`reply`)."""
        return (not self.mid & RESPONSE_BIT
                and self.mid & ((1 << 60) - 1) != 0)


class Delivery:
    """The delivery thread of one link (see above)."""

    def __init__(self, node: Node) -> None:
        self.node = node
        self._queue: collections.deque[Message] = collections.deque()
        self._cv = threading.Condition()
        self._stopped = False
        self._busy = False  # a message is being taken (by either thread)
        self.held = [0, 0]  # messages, bytes held in mailboxes
        self._thread = threading.Thread(target=self._run, daemon=True,
                                        name="ferry-delivery")
        self._thread.start()

    def arrived(self, ftype: FrameType, body: bytes) -> None:
        """Reads a body on the I/O thread (a body that does not read ends
        the connection) and queues its messages."""
        msgs = ([read_message(body)] if ftype == FrameType.MESSAGE
                else read_batch(body))
        if ftype == FrameType.BATCH:
            with self.node._lock:
                self.node.stats["batches_received"] += 1
        with self._cv:
            # A response with nothing to pull, behind nothing: taken here at
            # once, which saves its requester a hand-over between threads.
            if (len(msgs) == 1 and not self._queue and not self._busy
                    and msgs[0].mid & RESPONSE_BIT
                    and all(f.kind == INLINE_PLAIN for e in msgs[0].elements
                            for f in e.frames)):
                self._busy = True
            else:
                self._queue.extend(msgs)
                self._cv.notify()
                return
        try:
            self._take(msgs[0])
        finally:
            with self._cv:
                self._busy = False
                self._cv.notify()

    def stop(self) -> None:
        with self._cv:
            self._stopped = True
            self._cv.notify()

    def _run(self) -> None:
        while True:
            with self._cv:
                self._cv.wait_for(lambda: (self._queue and not self._busy)
                                  or self._stopped)
                if self._stopped:
                    return
                msg = self._queue.popleft()
                self._busy = True
            try:
                self._take(msg)
            finally:
                with self._cv:
                    self._busy = False

    def _take(self, msg: Message) -> None:
        try:
            self._deliver(msg)
        except Exception as e:  # never lose the thread to one message
            err = e if isinstance(e, Error) else fw(
                "decode_failed",
                f"the Python peer could not take a message: {e!r}")
            self._refuse(msg, err, wire_size(msg))

    def _deliver(self, msg: Message) -> None:
        node = self.node
        size = wire_size(msg)
        node._taken()
        with node._lock:
            node.stats["messages_received"] += 1
        if msg.error is not None:
            if msg.mid & RESPONSE_BIT:
                node._fail_response(msg.mid, msg.error)
            node.processed(size)
            return
        is_response = bool(msg.mid & RESPONSE_BIT)
        if not is_response and (self.held[0] >= MAX_HELD_MESSAGES
                                or self.held[1] + size > MAX_HELD_BYTES) \
                and self.held[0] > 0:
            return self._refuse(msg, fw(
                "receiver_full", f"node {node.name} holds {self.held[0]} "
                f"messages ({self.held[1]} bytes) of node {node.peer_name} "
                "unprocessed"), size)
        try:
            self._pull(msg)
            values, names, family = self._decode(msg)
        except Error as e:
            if is_response:
                node._fail_response(msg.mid, e)
                node.processed(size)
                return
            return self._refuse(msg, e, size)
        if is_response:
            envelope = Envelope(values, names, family, None, msg.mid, size)
            if not node._on_response(envelope):
                pass  # its requester stopped waiting: dropped
            node.processed(size)
            return
        actor = node._actors.get(msg.target)
        if actor is None or actor.stopped:
            return self._refuse(msg, fw(
                "no_such_actor", f"node {node.name} has no actor "
                f"{msg.target} (a Python actor that stopped, or one never "
                "spawned)"), size)
        sender = node.proxy(msg.sender) if msg.sender else None
        with self._cv:
            self.held[0] += 1
            self.held[1] += size
        actor._enqueue(Envelope(values, names, family, sender, msg.mid, size))

    def released(self, size: int) -> None:
        """An actor processed a message this delivery handed it."""
        with self._cv:
            self.held[0] -= 1
            self.held[1] -= size
        self.node.processed(size)

    def _refuse(self, msg: Message, err: Error, size: int) -> None:
        node = self.node
        with node._lock:
            node.stats["refusals"] += 1
        try:
            if msg.mid & RESPONSE_BIT:
                pass  # a response this node cannot take: dropped
            elif msg.mid & ((1 << 60) - 1):
                node.send_message(Message(msg.sender, msg.target,
                                          msg.mid | RESPONSE_BIT, [], err),
                                  wait=False)
            else:
                node._send(FrameType.REFUSAL, wire.refusal(msg.target, err))
        except Error:
            pass
        node.processed(size)

    def _pull(self, msg: Message) -> None:
        """Pulls every `remote_object` frame of `msg` into its data."""
        pulled = [f for e in msg.elements for f in e.frames
                  if f.kind == REMOTE_OBJECT]
        if not pulled:
            return
        node = self.node
        try:
            if sum(f.size for f in pulled) > node.max_message_size:
                raise fw("message_too_large", f"pulled frames of "
                         f"{sum(f.size for f in pulled)} bytes, above "
                         f"max_message_size {node.max_message_size}")
            for fr in pulled:
                fr.data = self._pull_frame(fr)
                with node._lock:
                    node.stats["bytes_pulled"] += fr.size
        finally:
            for fr in pulled:
                try:
                    node._send(FrameType.TRANSFER_DONE, wire.le64s(fr.ticket))
                except Error:
                    pass

    def _pull_frame(self, fr: Frame) -> bytes:
        node = self.node
        data = bytearray(fr.size)
        offsets = list(range(0, fr.size, CHUNK_SIZE))
        results: list[Error] = []
        lock = threading.Lock()

        def ask(offset: int) -> None:
            length = min(CHUNK_SIZE, fr.size - offset)
            ftype, body = node.ask(
                FrameType.CHUNK_REQUEST,
                lambda rid: wire.le64s(rid, fr.ticket, offset, length),
                PULL_TIMEOUT, "a chunk request")
            if ftype != FrameType.CHUNK or len(body) - 8 != length:
                got = (f"{len(body) - 8} bytes" if ftype == FrameType.CHUNK
                       else ftype.name)
                raise fw("transfer_failed", f"node {node.peer_name} answered "
                         f"a chunk request of {length} bytes with {got}")
            data[offset:offset + length] = memoryview(body)[8:]

        def worker() -> None:
            while True:
                with lock:
                    if not offsets or results:
                        return
                    offset = offsets.pop(0)
                try:
                    ask(offset)
                except Error as e:
                    with lock:
                        results.append(e)
        threads = [threading.Thread(target=worker, daemon=True)
                   for _ in range(min(CHUNKS_IN_FLIGHT, len(offsets)))]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        if results:
            err = results[0]
            raise fw("transfer_failed", f"pulling a frame of {fr.size} bytes "
                     f"from node {node.peer_name} failed: {err.render()}")
        return bytes(data)

    def _decode(self, msg: Message) -> tuple[list[Any], list[str],
                                             str | None]:
        node = self.node
        values: list[Any] = []
        names: list[str] = []
        family: str | None = None
        for el in msg.elements:
            header = read_header(el.header, node.max_message_size)
            for fr in el.frames:
                if fr.kind not in (INLINE_PLAIN, REMOTE_OBJECT):
                    raise (fw("decode_failed",
                              f"unknown frame kind {fr.kind}")
                           if fr.kind >= len(KIND_NAMES)
                           else fw("transfer_failed" if fr.kind >= 3
                                   else "decode_failed",
                                   f"a {KIND_NAMES[fr.kind]} frame: a Python "
                                   "peer has no store and reads no "
                                   "compressed frames (set compression none "
                                   "on links to it)"))
                if fr.kind == INLINE_PLAIN and len(fr.data) != fr.size:
                    raise fw("decode_failed", f"an inline frame of size "
                             f"{fr.size} with {len(fr.data)} bytes of data")
            sizes = [fr.size for fr in el.frames]
            if sizes != header.frame_sizes:
                raise ser("frame_mismatch", f"frames of {sizes} arrived for a "
                          f"header of {header.frame_sizes}")
            if header.family not in node.recv_families:
                raise fw("family_refused", f"family {header.family} is not "
                         f"among the families node {node.name} accepts from "
                         f"node {node.peer_name} ({node.recv_families})")
            shape = node.shapes.get(header.type_name)
            if shape is None:
                raise fw("unregistered_type", f"node {node.peer_name} sent a "
                         f"{header.type_name}, a type it did not list in its "
                         "hello")
            if header.format_version != 1:
                raise ser("version_mismatch", f"family {header.family} of "
                          f"format version {header.format_version}; this "
                          "build reads version 1")
            values.append(families.decode(
                header.family, shape, [fr.data for fr in el.frames],
                f"a {header.type_name} in {header.family}"))
            names.append(header.type_name)
            family = header.family
        return values, names, family
