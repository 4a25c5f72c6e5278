"""Reading a file the user's tree holds, which may be hostile: only a regular file is read, it is
opened so that a FIFO or a device cannot block (`O_NONBLOCK`, then `fstat` on what was opened:
no race between a check and the open), and never more than a cap is read (a symlink to
/dev/zero as a baseline read until memory ran out; a FIFO as a pin blocked for ever).

A leaf: the pins (knowledge/), configuration, baselines and sources (frontend/) all read here.
"""

from __future__ import annotations

import errno
import os
import stat

_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOCTTY", 0)


class NotRegularFile(OSError):
    """The path is a FIFO, a device, a socket or a directory: not read."""

    def __init__(self, path: str, mode: int) -> None:
        super().__init__(errno.EINVAL, f"{kind_of_mode(mode)}, not a regular file", path)
        self.mode = mode


class FileTooLarge(OSError):
    """The file holds more than the cap: not read."""

    def __init__(self, path: str, size: int, limit: int) -> None:
        super().__init__(errno.EFBIG, f"larger than {limit} bytes", path)
        self.size, self.limit = size, limit


def kind_of_mode(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "not a regular file"


def open_regular(path: str) -> tuple[int, os.stat_result]:
    """A descriptor of `path` and its status, when it is a regular file (raises
    `NotRegularFile`, or the `OSError` of the open)."""
    fd = os.open(path, _OPEN_FLAGS)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise NotRegularFile(path, info.st_mode)
    except BaseException:
        os.close(fd)
        raise
    return fd, info


def read_descriptor(fd: int, size_hint: int, limit: int) -> bytes:
    """At most `limit` + 1 bytes of an open file (one more than allowed shows that it is larger).
    Asks first for the size `fstat` gave plus one byte: a fixed large chunk would be allocated in
    full for every small file."""
    chunks = []
    remaining = limit + 1
    want = min(remaining, size_hint + 1)
    while remaining > 0:
        chunk = os.read(fd, want)
        if not chunk:
            break
        chunks.append(chunk)
        remaining -= len(chunk)
        want = min(remaining, 1 << 20)
    return b"".join(chunks)


def read_regular(path: str, limit: int) -> bytes:
    """The bytes of the regular file `path`, at most `limit` of them (raises `NotRegularFile`,
    `FileTooLarge` or the `OSError` of the open or read: all are `OSError`s)."""
    fd, info = open_regular(path)
    try:
        if info.st_size > limit:
            raise FileTooLarge(path, info.st_size, limit)
        data = read_descriptor(fd, info.st_size, limit)
    finally:
        os.close(fd)
    if len(data) > limit:
        raise FileTooLarge(path, len(data), limit)
    return data
