"""One TCP (or TLS) connection carrying ferry frames, run by one I/O thread.

Contract: `Connection` owns the socket. Before `start`, `read_frame` and
`send` are blocking calls of the handshake's thread. After `start`, one
thread reads and writes the socket (non-blocking, through a selector, so a
TLS stream is never read and written by two threads at once): every frame
that arrives goes whole to `on_frame(type, body)` on that thread, in order;
`send` queues a frame from any thread and wakes the I/O thread; a sender
waits while more than `max_queued` bytes wait to be written, so a peer that
stops reading makes this side's senders wait instead of growing. The
connection checks each frame header (known type, flags 0, length within the
type's bound now) before it takes the body, and takes body bytes only as
they arrive. It sends a heartbeat when it sent nothing for
`heartbeat_interval` and ends when nothing arrived for `connection_timeout`.
`on_end(error)` is called once, on the I/O thread, when the connection ends
for any reason (None: this side closed it in order).
"""

from __future__ import annotations

import selectors
import socket
import ssl
import threading
import time
from collections.abc import Callable

from . import wire
from .errors import Error, fw
from .wire import FrameType

LINGER = 2.0

FrameHandler = Callable[[FrameType, bytes], None]
EndHandler = Callable[["Error | None"], None]


class Connection:
    """One connection and, after `start`, its I/O thread (see above)."""

    def __init__(self, sock: socket.socket, peer_address: str,
                 max_message_size: int, chunk_size: int,
                 max_queued: int = 8 << 20) -> None:
        self.sock = sock
        self.peer_address = peer_address
        self.max_message_size = max_message_size
        self.chunk_size = chunk_size
        self.max_queued = max_queued
        self.linked = False
        self._in = bytearray()
        self._out = bytearray()
        self._out_lock = threading.Condition()
        self._closing = False
        self._ended = False
        self._paused = threading.Event()
        self._wake_r: socket.socket | None = None
        self._wake_w: socket.socket | None = None
        self.last_sent = self.last_heard = time.monotonic()
        self.heartbeat_interval = 5.0
        self.connection_timeout = 30.0
        self.on_frame: FrameHandler | None = None
        self.on_end: EndHandler | None = None
        self.thread: threading.Thread | None = None

    # -- blocking use, during the handshake -----------------------------------

    def send_blocking(self, data: bytes) -> None:
        self.sock.sendall(data)
        self.last_sent = time.monotonic()

    def read_exactly(self, n: int, deadline: float) -> bytes:
        while len(self._in) < n:
            left = deadline - time.monotonic()
            if left <= 0:
                raise fw("handshake_failed", f"no handshake with the node at "
                         f"{self.peer_address} within the handshake timeout:"
                         " is it a ferry node, and alive?")
            self.sock.settimeout(left)
            try:
                chunk = self.sock.recv(65536)
            except socket.timeout:
                continue
            except OSError as e:
                raise fw("handshake_failed", f"the connection to "
                         f"{self.peer_address} failed during the handshake: "
                         f"{e}")
            if not chunk:
                raise fw("handshake_failed", f"the node at "
                         f"{self.peer_address} closed the connection during "
                         "the handshake")
            self._in += chunk
        data = bytes(self._in[:n])
        del self._in[:n]
        return data

    def read_frame(self, deadline: float) -> tuple[FrameType, bytes]:
        """The next frame (type, body) during the handshake."""
        ftype, length = self.check_header(self.read_exactly(12, deadline))
        return ftype, self.read_exactly(length, deadline)

    def check_header(self, head: bytes) -> tuple[FrameType, int]:
        """The type and body length of frame header `head`; raises `Error`
        for an unknown type, flags or a body above the type's bound."""
        length, number, flags = wire.HEADER.unpack(head)
        try:
            ftype = FrameType(number)
        except ValueError:
            raise self.broken(f"a frame of unknown type {number}")
        name = ftype.name.lower()
        if flags != 0:
            raise self.broken(f"a {name} frame with flags {flags} (none are "
                              "defined)")
        limit = wire.bound(ftype, self.linked, self.max_message_size,
                           self.chunk_size)
        if length > limit:
            raise self.broken(f"a {name} frame of {length} bytes, above the "
                              f"{limit} the connection takes of that type "
                              "now")
        return ftype, length

    def broken(self, why: str) -> Error:
        return fw("decode_failed", f"the peer broke ferry's framing: {why}")

    # -- the I/O thread -------------------------------------------------------

    def start(self, on_frame: FrameHandler, on_end: EndHandler) -> None:
        self.on_frame, self.on_end = on_frame, on_end
        self.linked = True
        self._wake_r, self._wake_w = socket.socketpair()
        self._wake_r.setblocking(False)
        self._wake_w.setblocking(False)
        self.sock.setblocking(False)
        self.thread = threading.Thread(target=self._run, daemon=True,
                                       name="ferry-io")
        self.thread.start()

    def send(self, data: bytes, wait: bool = True) -> None:
        """Queues `data` (whole frames) for the I/O thread. The I/O thread's
        own sends (answers and credit it makes while reading) never wait: it
        is the thread that drains the queue."""
        wait = wait and threading.current_thread() is not self.thread
        with self._out_lock:
            while (wait and len(self._out) > self.max_queued
                   and not self._ended and not self._closing):
                self._out_lock.wait(0.1)
            if self._ended or self._closing:
                raise fw("link_down",
                         f"the link to {self.peer_address} is down")
            if not self._out and not isinstance(self.sock, ssl.SSLSocket):
                # Nothing queued on a plain socket: this thread writes what
                # the kernel takes now, the I/O thread the rest.
                try:
                    sent = self.sock.send(data)
                except (BlockingIOError, InterruptedError):
                    sent = 0
                except OSError:
                    sent = 0  # the I/O thread meets the error and ends
                self.last_sent = time.monotonic()
                if sent == len(data):
                    return
                self._out += memoryview(data)[sent:]
            else:
                self._out += data
        self._wake()

    def close(self) -> None:
        """Closes in order: what is queued goes out, then FIN, then the
        peer's end is awaited for at most LINGER seconds."""
        with self._out_lock:
            self._closing = True
        self._wake()

    def pause_reading(self, paused: bool) -> None:
        """Stops (or resumes) reading the socket: the peer's frames wait in
        the kernel's buffers and then in the peer's."""
        if paused:
            self._paused.set()
        else:
            self._paused.clear()
        self._wake()

    def _wake(self) -> None:
        if self._wake_w is None:
            return
        try:
            self._wake_w.send(b"x")
        except OSError:
            pass

    def _run(self) -> None:
        assert self._wake_r is not None and self._wake_w is not None
        assert self.on_end is not None
        sel = selectors.DefaultSelector()
        sel.register(self._wake_r, selectors.EVENT_READ)
        err: Error | None = None
        shut_at: float | None = None
        registered = 0
        try:
            self._parse()  # what arrived behind the handshake's last frame
            while True:
                with self._out_lock:
                    want_write = bool(self._out)
                    closing = self._closing
                if closing and not want_write and shut_at is None:
                    shut_at = time.monotonic()
                    self._shutdown_write()
                if shut_at is not None and time.monotonic() - shut_at > LINGER:
                    break
                events = 0
                if not self._paused.is_set() or shut_at is not None:
                    events |= selectors.EVENT_READ
                if want_write:
                    events |= selectors.EVENT_WRITE
                if events != registered:  # a system call only on change
                    if not events:
                        sel.unregister(self.sock)
                    elif registered:
                        sel.modify(self.sock, events)
                    else:
                        sel.register(self.sock, events)
                    registered = events
                pending = (isinstance(self.sock, ssl.SSLSocket)
                           and self.sock.pending() > 0
                           and not self._paused.is_set())
                ready = sel.select(0 if pending else self._tick())
                if pending and not self._read():
                    break
                for key, mask in ready:
                    if key.fileobj is self._wake_r:
                        try:
                            self._wake_r.recv(4096)
                        except OSError:
                            pass
                        continue
                    if mask & selectors.EVENT_WRITE:
                        self._write()
                    if mask & selectors.EVENT_READ and not self._read():
                        raise EOFError
                self._keep_times()
        except EOFError:
            if shut_at is None:
                err = fw("link_down", f"the peer at {self.peer_address} "
                         "closed the connection")
        except Exception as e:  # a socket, TLS or framing error
            err = e if isinstance(e, Error) else fw(
                "link_down",
                f"the connection to {self.peer_address} failed: {e}")
        finally:
            with self._out_lock:
                self._ended = True
                self._out_lock.notify_all()
            sel.close()
            try:
                self.sock.close()
            except OSError:
                pass
            self._wake_r.close()
            self._wake_w.close()
            self.on_end(err)

    def _tick(self) -> float:
        return max(0.01, min(1.0, self.heartbeat_interval / 2))

    def _keep_times(self) -> None:
        now = time.monotonic()
        if now - self.last_heard > self.connection_timeout:
            raise fw("link_down", f"heard nothing from {self.peer_address} "
                     f"for {int((now - self.last_heard) * 1000)} ms "
                     "(connection-timeout is "
                     f"{int(self.connection_timeout * 1000)} ms): the peer's "
                     "host or process stopped answering")
        if now - self.last_sent >= self.heartbeat_interval:
            with self._out_lock:
                if not self._closing:
                    self._out += wire.frame(FrameType.HEARTBEAT)

    def _shutdown_write(self) -> None:
        try:
            if isinstance(self.sock, ssl.SSLSocket):
                self.sock = self.sock.unwrap()
            self.sock.shutdown(socket.SHUT_WR)
        except (OSError, ValueError, ssl.SSLError):
            pass

    def _write(self) -> None:
        with self._out_lock:
            if not self._out:
                return
            chunk = bytes(self._out[:1 << 20])
        try:
            n = self.sock.send(chunk)
        except (BlockingIOError, ssl.SSLWantWriteError,
                ssl.SSLWantReadError):
            return
        with self._out_lock:
            del self._out[:n]
            self._out_lock.notify_all()
        self.last_sent = time.monotonic()

    def _read(self) -> bool:
        """Reads what the socket holds; False at the peer's end."""
        try:
            chunk = self.sock.recv(1 << 20)
        except (BlockingIOError, ssl.SSLWantReadError,
                ssl.SSLWantWriteError):
            return True
        if not chunk:
            return False
        self.last_heard = time.monotonic()
        self._in += chunk
        self._parse()
        return True

    def _parse(self) -> None:
        assert self.on_frame is not None
        while len(self._in) >= 12:
            ftype, length = self.check_header(bytes(self._in[:12]))
            if len(self._in) < 12 + length:
                return
            body = bytes(self._in[12:12 + length])
            del self._in[:12 + length]
            self.on_frame(ftype, body)
