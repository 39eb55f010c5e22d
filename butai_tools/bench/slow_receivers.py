"""Webhook receivers that hold an attempt as long as they can, on real sockets (the slowloris tests and
`butai bench wake`): they read the request, then dribble their answer a few bytes at a time (or flood
it), and record when the sender hung up."""
from __future__ import annotations

import select
import socket
import threading
import time

# What a slow TLS server dribbles: a handshake record header announcing 16 KiB, then one byte at a time.
TLS_RECORD = b"\x16\x03\x03\x40\x00"


class SlowLoris:
    def __init__(self, answer: bytes = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok", *, pause: float = 1.0,
                 chunk: int = 1, read_request: bool = True, endless: bytes | None = None):
        self.answer = answer          # sent `chunk` bytes every `pause` seconds
        self.endless = endless        # then this, over and over (a head that never ends)
        self.pause = pause
        self.chunk = chunk
        self.read_request = read_request
        self.connections: list[dict] = []
        self.most_open = 0            # the most connections open at once
        self._socks: dict[int, socket.socket] = {}   # the open connections' sockets, by their record's id
        self.lock = threading.Condition()
        self._sock = socket.create_server(("127.0.0.1", 0))
        self.port = self._sock.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}/hook"
        self._closing = False
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while not self._closing:
            try:
                conn, _ = self._sock.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        record = {"opened": time.monotonic(), "hung_up": None, "sent": 0}
        with self.lock:
            # Another connection's thread may not have noticed yet that its sender hung up (on a busy machine it
            # can run a moment after this accept): the kernel knows, so a peer that has closed is not counted.
            others = sum(1 for sock in self._socks.values() if not _peer_closed(sock))
            self._socks[id(record)] = conn
            self.connections.append(record)
            self.most_open = max(self.most_open, others + 1)
            self.lock.notify_all()
        try:
            if self.read_request:
                conn.settimeout(10)
                data = b""
                while b"\r\n\r\n" not in data:
                    got = conn.recv(65536)
                    if not got:
                        return
                    data += got
                head, _, body = data.partition(b"\r\n\r\n")
                length = next((int(line.split(b":", 1)[1]) for line in head.split(b"\r\n")
                               if line.lower().startswith(b"content-length:")), 0)
                while len(body) < length:
                    got = conn.recv(65536)
                    if not got:
                        return
                    body += got
            conn.settimeout(None)
            payload = self.answer
            while not self._closing:
                if not payload:
                    if self.endless is None:
                        if _hung_up(conn, self.pause):
                            return
                        continue
                    payload = self.endless
                piece, payload = payload[:self.chunk], payload[self.chunk:]
                conn.sendall(piece)
                record["sent"] += len(piece)
                if self.pause and _hung_up(conn, self.pause):
                    return
        except OSError:
            pass           # the sender hung up: what the deadline is for
        finally:
            with self.lock:
                record["hung_up"] = time.monotonic()
                self._socks.pop(id(record), None)
                self.lock.notify_all()
            conn.close()

    def open_connections(self) -> int:
        with self.lock:
            return sum(1 for c in self.connections if c["hung_up"] is None)

    def wait_for_hang_ups(self, count: int, timeout: float = 30) -> bool:
        with self.lock:
            return self.lock.wait_for(lambda: sum(1 for c in self.connections if c["hung_up"]) >= count, timeout)

    def wait_for_connections(self, count: int, timeout: float = 30) -> bool:
        with self.lock:
            return self.lock.wait_for(lambda: len(self.connections) >= count, timeout)

    def close(self) -> None:
        self._closing = True
        self._sock.close()


def _peer_closed(conn: socket.socket) -> bool:
    """Whether the sender has closed its end, asked of the kernel without reading anything."""
    poller = select.poll()
    poller.register(conn, select.POLLIN | select.POLLRDHUP)
    return any(events & (select.POLLRDHUP | select.POLLHUP | select.POLLERR) for _, events in poller.poll(0))


def _hung_up(conn: socket.socket, pause: float) -> bool:
    """Waits ``pause`` seconds, noticing at once when the sender closes its end (what it sends meanwhile, a
    TLS client's hello, is read and dropped)."""
    end = time.monotonic() + pause
    while (left := end - time.monotonic()) > 0:
        ready, _, _ = select.select([conn], [], [], left)
        if not ready:
            return False
        try:
            if conn.recv(65536) == b"":
                return True
        except OSError:
            return True
    return False
