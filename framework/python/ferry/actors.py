"""Actors on either side of a Python peer's link.

Contract: `RemoteActor` is the peer's actor `id` as seen from Python:
`send` and `request` encode values of the peer's registered types with the
link's families; `request` returns the response's value or raises the
`Error` it carried. `LocalActor` is a Python actor the peer can message:
each message runs `handler(envelope)` on the actor's own thread, in arrival
order; what the handler returns answers a request (`typed(name, value)`
names the response's type, else it is the request's type), an `Error` it
raises answers it as that error, any other exception as CAF's
`runtime_error`. Without a handler, `receive()` takes the messages. Credit
for a message goes back once its handler returned (or `receive()` took it).
When a local actor that the peer knows of stops, the peer hears its `down`.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from . import wire
from .delivery import Envelope
from .errors import Error, fw, system
from .message import ONE_WAY, RESPONSE_BIT, Element, Message
from .wire import FrameType

if TYPE_CHECKING:
    from .node import Node

Handler = Callable[[Envelope], Any]
"""A Python actor's handler: takes a message, returns the answer to a
request (a value of the request's type, or `typed`)."""


class typed:
    """A value with the name of its type on the peer (`add_message_type`)."""

    def __init__(self, type_name: str, value: Any) -> None:
        self.type_name = type_name
        self.value = value


def _elements(node: Node, values: Iterable[Any],
              type_name: str | None) -> list[Element]:
    out: list[Element] = []
    for v in values:
        if isinstance(v, typed):
            out.append(node.element(v.type_name, v.value))
        elif type_name is not None:
            out.append(node.element(type_name, v))
        else:
            raise fw("unregistered_type", "a value without its type: pass "
                     "type=\"name\" or ferry.typed(\"name\", value)")
    return out


class RemoteActor:
    """An actor of the peer, by its id on the link (see above)."""

    def __init__(self, node: Node, actor_id: int) -> None:
        self.node = node
        self.id = actor_id
        self.down_reason: Error | None = None
        self.is_down = False

    def send(self, *values: Any, type: str | None = None,
             sender: LocalActor | None = None) -> None:
        """Sends a one-way message of `values` (each of the peer's type
        `type`, or `typed`)."""
        elements = _elements(self.node, values, type)
        self.node.send_message(Message(
            self.id, sender.id if sender else 0, ONE_WAY, elements))
        if sender is not None:
            sender.exported = True

    def request(self, *values: Any, type: str | None = None,
                timeout: float = 10.0,
                sender: LocalActor | None = None) -> Any:
        """Sends a request and returns the response's value (a tuple for
        several elements); raises the `Error` the peer answered."""
        elements = _elements(self.node, values, type)
        if sender is not None:
            sender.exported = True
        env = self.node.request_message(self.id, sender.id if sender else 0,
                                        elements, timeout)
        return env.value

    def _went_down(self, reason: Error | None) -> None:
        self.is_down = True
        self.down_reason = reason

    def __repr__(self) -> str:
        return f"RemoteActor({self.id} on {self.node.peer_name})"


class LocalActor:
    """A Python actor the peer can message, made by `Node.spawn`."""

    def __init__(self, node: Node, actor_id: int,
                 handler: Handler | None) -> None:
        self.node = node
        self.id = actor_id
        self.handler = handler
        self.exported = False
        self.stopped = False
        self.exit_reason: Error | None = None
        self._links: set[int] = set()
        self._mailbox: queue.Queue[Envelope | None] = queue.Queue()
        self._thread: threading.Thread | None = None
        if handler is not None:
            self._thread = threading.Thread(target=self._run, daemon=True,
                                            name=f"ferry-actor-{actor_id}")
            self._thread.start()

    def _enqueue(self, envelope: Envelope) -> None:
        self._mailbox.put(envelope)

    def receive(self, timeout: float | None = None) -> Envelope:
        """The next message (an `Envelope`) of an actor without a handler;
        raises `queue.Empty` after `timeout` seconds."""
        env = self._mailbox.get(timeout=timeout)
        if env is None:
            raise queue.Empty
        self.node._delivery.released(env.size)
        return env

    def reply(self, envelope: Envelope, value: Any = None,
              error: Error | None = None) -> None:
        """Answers `envelope` (a request taken with `receive`)."""
        self._respond(envelope, value, error)

    def _run(self) -> None:
        assert self.handler is not None
        while True:
            env = self._mailbox.get()
            if env is None:
                return
            error: Error | None
            try:
                result, error = self.handler(env), None
            except Error as e:
                result, error = None, e
            except Exception as e:
                result, error = None, system(
                    "runtime_error", f"Python actor {self.id} raised "
                    f"{type(e).__name__}: {e}")
            try:
                if env.is_request:
                    self._respond(env, result, error)
            except Error:
                pass
            finally:
                self.node._delivery.released(env.size)

    def _respond(self, env: Envelope, value: Any,
                 error: Error | None) -> None:
        node = self.node
        if error is None:
            if not isinstance(value, typed):
                value = typed(env.type_name or "", value)
            elements: list[Element]
            try:
                elements = [node.element(value.type_name, value.value)]
            except Error as e:
                elements, error = [], e
        else:
            elements = []
        target = env.sender.id if env.sender else 0
        node.send_message(Message(target, self.id, env.mid | RESPONSE_BIT,
                                  elements, error), wait=False)

    def stop(self, reason: Error | None = None) -> None:
        """Stops the actor; the peer hears its `down` with `reason`."""
        if self.stopped:
            return
        self.stopped = True
        self.exit_reason = reason
        self._mailbox.put(None)
        if self.exported and self.node.is_up:
            try:
                self.node._send(FrameType.DOWN, wire.down(self.id, reason))
            except Error:
                pass

    def _link(self, partner: int, establish: bool) -> None:
        (self._links.add if establish else self._links.discard)(partner)

    def _partner_down(self, partner: int, reason: Error | None) -> None:
        if partner in self._links and reason is not None:
            self.stop(reason)

    def _link_down(self, err: Error) -> None:
        self.stopped = True
        self._mailbox.put(None)
