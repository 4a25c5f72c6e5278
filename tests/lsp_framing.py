"""LSP's base protocol on raw pipes: `Content-Length` headers around JSON bodies. For the tests
and benchmarks that talk to `cudalint server` below any client library (malformed input,
memory figures that must be the server's alone)."""

from __future__ import annotations

import json
from collections.abc import Iterator
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
