"""The base protocol's framing (`Content-Length` headers around JSON bodies), read so that a
client's mistake costs one message, not the connection.

pygls reads the bytes a header announces and believes it: `Content-Length: 99999999999999999999`
asked Python for that many bytes (the server died), and a length larger than the body swallowed
the messages after it while waiting for the rest (the server stayed up but answered nothing).
This reader sits under pygls' loop on stdin: an announced length over `MAX_BODY` gives a body
that is not JSON (answered with a parse error) and the bytes after it are skipped up to the next
header; a body that is complete JSON followed by a header before the announced length ends is
taken as it is (the rest is the next message); a body cut short by a too small length is
answered with a parse error and the next header found where it is, even mid-line.
"""

from __future__ import annotations

import json
import re
from typing import BinaryIO

HEADER = b"Content-Length:"
# The largest body read: documents over `max-file-size` (10 MiB by default) are not linted, and
# JSON escapes at most double a text.
MAX_BODY = 256 * 1024 * 1024
_CHUNK = 1 << 16
NOT_JSON = b"\x00"  # what an oversized body reads as: pygls answers it as unreadable
# The id of a request, read from the start of a body that could not be decoded.
_ID = re.compile(rb'"id"\s*:\s*(-?\d{1,18}|"(?:[^"\\]|\\.){0,256}")')


class GuardedReader:
    """A blocking reader of stdin with pygls' `readline` and `read`, guarding the framing."""

    def __init__(self, raw: BinaryIO) -> None:
        self._raw = raw
        self._buffer = bytearray()
        self.last_body = b""  # the start of the last body read (for the id of an unreadable one)

    def _fill(self) -> bool:
        read1 = getattr(self._raw, "read1", None)
        chunk = read1(_CHUNK) if read1 is not None else self._raw.read(_CHUNK)
        if not chunk:
            return False
        self._buffer += chunk
        return True

    def _take(self, size: int) -> bytes:
        taken = bytes(self._buffer[:size])
        del self._buffer[:size]
        return taken

    def readline(self) -> bytes:
        while True:
            newline = self._buffer.find(b"\n")
            header = self._buffer.find(HEADER, 1)
            if header > 0 and (newline < 0 or header < newline):
                return self._take(header)  # the tail of a body cut short, then a header mid-line
            if newline >= 0:
                return self._take(newline + 1)
            if not self._fill():
                return self._take(len(self._buffer))

    def read(self, size: int) -> bytes:
        if size > MAX_BODY:
            self.last_body = b""
            return NOT_JSON
        scanned = 0
        while True:
            # a header within the announced body, after a complete message: the length was wrong
            header = self._buffer.find(HEADER, max(0, scanned - len(HEADER)), size + len(HEADER))
            scanned = min(len(self._buffer), size)
            if header >= 0:
                body = bytes(self._buffer[:header]).rstrip()
                if _is_json(body):
                    del self._buffer[:header]
                    self.last_body = body[:4096]
                    return body
            if len(self._buffer) >= size or not self._fill():
                break
        body = self._take(min(size, len(self._buffer)))
        self.last_body = body[:4096]
        return body


def _is_json(body: bytes) -> bool:
    try:
        json.loads(body)
    except (ValueError, RecursionError):
        return False
    return True


def request_id(body: bytes) -> int | str | None:
    """The id a body that could not be decoded seems to carry (None when none shows)."""
    found = _ID.search(body)
    if found is None:
        return None
    try:
        value = json.loads(found.group(1))
    except ValueError:
        return None
    return value if isinstance(value, (int, str)) else None
