"""LSP's base protocol on raw pipes: `Content-Length` headers around JSON bodies. For the tests
and benchmarks that talk to `cudalint server` below any client library (malformed input,
memory figures that must be the server's alone)."""

from __future__ import annotations

import json
import queue
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any


def write_body(stream: IO[bytes], body: bytes, length: int | str | None = None) -> None:
    """`body` framed by its length, or by the `length` given (a client's mistake)."""
    stream.write(b"Content-Length: %s\r\n\r\n" % str(len(body) if length is None else length).encode() + body)
    stream.flush()


def write_message(stream: IO[bytes], message: dict[str, Any]) -> None:
    write_body(stream, json.dumps({"jsonrpc": "2.0", **message}).encode())


def read_messages(stream: IO[bytes]) -> Iterator[dict[str, Any]]:
    """The messages on `stream` until it closes."""
    while True:
        length = None
        while True:
            line = stream.readline()
            if not line:
                return
            if line in (b"\r\n", b"\n"):
                break
            name, _, value = line.decode("ascii").partition(":")
            if name.strip().lower() == "content-length":
                length = int(value)
        if length is None:
            raise ValueError("a message without Content-Length")
        yield json.loads(stream.read(length))


class RawServer:
    """A `cudalint server` process and the raw messages it sends, read on a thread (each with
    the `time.perf_counter()` it arrived at); `patience`: how long a wait may take (seconds)."""

    def __init__(self, root: Path, patience: float) -> None:
        self.process = subprocess.Popen([sys.executable, "-m", "cudalint", "server"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, cwd=root)
        self.patience = patience
        self.incoming: queue.Queue[tuple[float, dict[str, Any]]] = queue.Queue()
        self.seen: list[dict[str, Any]] = []  # every message read so far
        self.arrived = 0.0  # when the message a wait returned came
        self.next_id = 0
        threading.Thread(target=self._read, daemon=True).start()
        self.request("initialize", {"processId": None, "rootUri": root.as_uri(), "capabilities": {}})
        self.notify("initialized", {})

    def _read(self) -> None:
        assert self.process.stdout is not None
        for message in read_messages(self.process.stdout):
            self.incoming.put((time.perf_counter(), message))

    def send_raw(self, body: bytes, length: int | str | None = None) -> None:
        assert self.process.stdin is not None
        write_body(self.process.stdin, body, length)

    def send_request(self, method: str, params: Any, length: int | str | None = None) -> int:
        """Send a request (framed by `length` when given) without waiting: its id."""
        self.next_id += 1
        self.send_raw(json.dumps({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params}).encode(), length)
        return self.next_id

    def answer(self, ident: int) -> dict[str, Any]:
        return self.wait(lambda m: m.get("id") == ident and "method" not in m)

    def notify(self, method: str, params: Any) -> None:
        self.send_raw(json.dumps({"jsonrpc": "2.0", "method": method, "params": params}).encode())

    def request(self, method: str, params: Any) -> dict[str, Any]:
        """The response (with `result` or `error`), waiting past any notifications."""
        return self.answer(self.send_request(method, params))

    def wait(self, wanted: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
        while True:
            self.arrived, message = self.incoming.get(timeout=self.patience)  # a hung server fails
            self.seen.append(message)
            if wanted(message):
                return message

    def close(self) -> None:
        try:
            self.request("shutdown", None)
            self.notify("exit", None)
            self.process.wait(timeout=self.patience)
        finally:
            if self.process.poll() is None:
                self.process.kill()
