"""Finding, reading and writing the files a run checks.

- `GlobPattern` / `IgnoreFile`: `.gitignore` syntax (globs, `**`, `!` negation, trailing `/` for
  directories, anchored patterns), also used for the config's `exclude` and `per-file-ignores`.
- `read_source`: one file's bytes -> text, with the per-file problems a user needs to hear about
  (not a regular file, too large, binary, not UTF-8, symlink loop, vanished).
- `write_atomic`: a temp file in the same directory + `os.replace`, keeping the mode and refusing
  when the file changed on disk since it was read.
- `walk`: directories walked for `*.nix`, honouring `.gitignore`, skipping `.git`, never
  walking a directory twice (so symlink loops end).
"""

from __future__ import annotations

import collections
import errno
import functools
import os
import stat
import tempfile
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING, NamedTuple

from cudalint.regular_files import NotRegularFile, kind_of_mode, open_regular, read_descriptor, read_regular

DEFAULT_MAX_FILE_SIZE = 10 * 1024 * 1024
BOM = b"\xef\xbb\xbf"
NIX_SUFFIX = ".nix"
NIX_STORE = "/nix/store/"

if TYPE_CHECKING:
    from pathspec import GitIgnoreSpec
    from pathspec.patterns.gitignore.spec import GitIgnoreSpecPattern

# --------------------------------------------------------------------------------------------
# .gitignore-style patterns


@functools.cache
def _pathspec():
    """pathspec's gitignore classes, imported on the first pattern: the import costs ~50 ms
    (it pulls in asyncio), which a run without ignore files or excludes should not pay."""
    from pathspec import GitIgnoreSpec
    from pathspec.patterns.gitignore.spec import GitIgnoreSpecPattern

    return GitIgnoreSpec, GitIgnoreSpecPattern


@dataclass(frozen=True)
class GlobPattern:
    """One `.gitignore` line (git's own rules, by `pathspec`). Matches `/`-separated paths
    relative to the file's directory."""

    text: str
    negated: bool
    pattern: GitIgnoreSpecPattern

    @classmethod
    def parse(cls, line: str) -> GlobPattern | None:
        """None for blank lines and comments."""
        line = line.rstrip("\n").rstrip("\r")
        try:
            pattern = _pathspec()[1](line)
        except ValueError:  # git skips a line that is no pattern (`!` alone)
            return None
        if pattern.include is None:
            return None
        return cls(line, not pattern.include, pattern)

    def matches(self, relative: str, is_dir: bool) -> bool:
        return self.pattern.match_file(relative + "/" if is_dir else relative) is not None

    def matches_path_or_parent(self, relative: str) -> bool:
        """Whether the pattern matches a file's path or one of the directories holding it (a
        matched directory covers everything inside, as in `.gitignore`). Ignores negation."""
        parts = relative.split("/")
        for i in range(1, len(parts) + 1):
            if self.matches("/".join(parts[:i]), i < len(parts)):
                return True
        return False


@dataclass
class IgnoreFile:
    """The patterns of one ignore file (or of `exclude`), relative to `base` (an absolute dir)."""

    base: str
    patterns: list[GlobPattern]
    spec: GitIgnoreSpec = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self.spec = _pathspec()[0]([p.pattern for p in self.patterns])

    @classmethod
    def from_lines(cls, base: str, lines: Iterable[str]) -> IgnoreFile:
        patterns = [p for p in (GlobPattern.parse(line) for line in lines) if p is not None]
        return cls(base, patterns)

    @classmethod
    def load(cls, path: str) -> IgnoreFile | None:
        try:
            data = read_regular(path, 1024 * 1024)
        except OSError:
            return None
        if data.startswith(BOM):
            data = data[3:]
        text = data.decode("utf-8", "replace")
        return cls.from_lines(os.path.dirname(path), text.split("\n"))

    def decide(self, path: str, is_dir: bool) -> bool | None:
        """True (ignored), False (re-included by `!`), or None (no pattern matches). `path` is
        absolute; paths outside `base` never match."""
        relative = _relative_to(path, self.base)
        if relative is None:
            return None
        return self.spec.check_file(relative + "/" if is_dir else relative).include


def _relative_to(path: str, base: str) -> str | None:
    if path == base:
        return None
    prefix = base if base.endswith(os.sep) else base + os.sep
    if not path.startswith(prefix):
        return None
    relative = path[len(prefix) :]
    return relative.replace(os.sep, "/") if os.sep != "/" else relative


def is_ignored(stack: Iterable[IgnoreFile], path: str, is_dir: bool) -> bool:
    """Decide with the deepest ignore file first (the innermost `.gitignore` wins)."""
    for ignore in stack:
        decision = ignore.decide(path, is_dir)
        if decision is not None:
            return decision
    return False


# --------------------------------------------------------------------------------------------
# Reading


@dataclass
class ReadProblem:
    """Why a file could not be checked. `kind` decides whether it is an error for the user:
    `missing`, `unreadable`, `not-regular`, `too-large`, `binary`, `encoding`, `loop`, `directory`."""

    kind: str
    message: str


@dataclass
class ReadSource:
    text: str  # without the BOM
    raw: bytes  # exactly the bytes read (to detect changes before writing)
    bom: bool


def _describe_os_error(error: OSError) -> str:
    if error.errno == errno.ELOOP:
        return "symlink loop (too many levels of symbolic links)"
    if error.errno == errno.ENOENT:
        return "no such file or directory"
    if error.errno in (errno.EACCES, errno.EPERM):
        return "permission denied"
    if error.errno == errno.EISDIR:
        return "is a directory"
    return error.strerror or str(error)


def stat_problem(path: str, error: OSError) -> ReadProblem:
    if error.errno == errno.ELOOP:
        return ReadProblem("loop", "cannot read: symlink loop (too many levels of symbolic links)")
    if error.errno == errno.ENOENT:
        if os.path.islink(path):
            try:
                target = os.readlink(path)
            except OSError:
                target = "?"
            return ReadProblem("missing", f"broken symlink (points to {target!r}, which does not exist)")
        return ReadProblem("missing", "no such file or directory")
    return ReadProblem("unreadable", f"cannot read: {_describe_os_error(error)}")


def format_size(size: int) -> str:
    for unit, factor in (("GB", 1 << 30), ("MB", 1 << 20), ("KB", 1 << 10)):
        if size >= factor:
            value = size / factor
            return f"{value:.1f} {unit}".replace(".0 ", " ")
    return f"{size} bytes"


def _too_large(size: int, limit: int) -> ReadProblem:
    return ReadProblem(
        "too-large",
        f"skipped: {format_size(size)} is larger than the limit of {format_size(limit)} (raise `max-file-size` in the configuration to check it)",
    )


def decode_source(data: bytes) -> ReadSource | ReadProblem:
    """Bytes -> text: rejects binary data and invalid UTF-8 (naming the byte), accepts a BOM."""
    nul = data.find(b"\0")
    if nul != -1:
        return ReadProblem("binary", f"binary file (NUL byte at byte offset {nul}); not checked")
    bom = data.startswith(BOM)
    body = data[3:] if bom else data
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as error:
        offset = error.start + (3 if bom else 0)
        line = data.count(b"\n", 0, offset) + 1
        line_start = data.rfind(b"\n", 0, offset) + 1
        column = len(data[line_start:offset].decode("utf-8", "replace")) + 1
        bad = data[offset : offset + 1].hex()
        return ReadProblem(
            "encoding",
            f"not valid UTF-8: invalid byte 0x{bad} at byte offset {offset} (line {line}, column {column}); Nix files must be UTF-8",
        )
    return ReadSource(text, data, bom)


def read_source(path: str, max_size: int) -> ReadSource | ReadProblem:
    """Read one file, or say why it cannot be checked. Never blocks on a FIFO."""
    try:
        info = os.stat(path)
    except OSError as error:
        return stat_problem(path, error)
    if stat.S_ISDIR(info.st_mode):
        return ReadProblem("directory", "is a directory")
    if not stat.S_ISREG(info.st_mode):
        return ReadProblem("not-regular", f"cannot read: {kind_of_mode(info.st_mode)}, not a regular file")
    if info.st_size > max_size:
        return _too_large(info.st_size, max_size)
    try:
        fd, info = open_regular(path)
    except NotRegularFile as error:
        return ReadProblem("not-regular", f"cannot read: {kind_of_mode(error.mode)}, not a regular file")
    except OSError as error:
        return stat_problem(path, error)
    try:
        data = read_descriptor(fd, info.st_size, max_size)
    except OSError as error:
        return ReadProblem("unreadable", f"cannot read: {_describe_os_error(error)}")
    finally:
        os.close(fd)
    if len(data) > max_size:
        return _too_large(len(data), max_size)
    return decode_source(data)


# --------------------------------------------------------------------------------------------
# Writing


class WriteError(Exception):
    pass


def _read_bytes(path: str, limit: int = DEFAULT_MAX_FILE_SIZE * 4) -> bytes | None:
    try:
        return read_regular(path, limit)
    except OSError:
        return None


TEMP_SUFFIX = ".cudalint-tmp"
# The directories (real paths) a run may write in: those it was asked to check, and the files
# named on its command line. Empty: anywhere (cudalint used as a library).
_write_roots: tuple[str, ...] = ()


def set_write_roots(paths: Iterable[str]) -> None:
    """Confine `write_atomic` to these files and trees (set before workers fork: they inherit it)."""
    global _write_roots
    _write_roots = tuple(os.path.realpath(p) for p in paths)


def _inside_roots(real: str) -> bool:
    return not _write_roots or any(real == root or real.startswith(root.rstrip(os.sep) + os.sep) for root in _write_roots)


def _remove_stale_temps(directory: str, name: str) -> None:
    """Temp files of `name` left by a run that was killed while writing (a live run holds a lock
    on its own: those stay)."""
    import fcntl

    prefix = f".{name}."
    try:
        entries = [e for e in os.listdir(directory) if e.startswith(prefix) and e.endswith(TEMP_SUFFIX)]
    except OSError:
        return
    for entry in entries:
        path = os.path.join(directory, entry)
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0))
        except OSError:
            continue
        try:
            if stat.S_ISREG(os.fstat(fd).st_mode):
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                os.unlink(path)
        except OSError:
            pass  # (locked: a run is writing it)
        finally:
            os.close(fd)


def write_atomic(path: str, data: bytes, expected: bytes) -> None:
    """Replace `path` with `data` unless its content is no longer `expected` (it changed on disk
    since it was read), never half-written. Writes a temp file in the same directory (locked while
    it exists: one a killed run left is removed by the next), keeps the mode (and owner where
    permitted), fsyncs, then renames over the file. A symlink is kept: its target is written, when
    that is inside the checked trees (else refused). A file without write permission is refused.
    A hard-linked file, or one whose owner a new file could not keep, is written in place (the
    whole new text is first written and synced to the temp file)."""
    import fcntl

    real = os.path.realpath(path)
    if not _inside_roots(real):
        # the target as the working directory reaches it: runs in different places say the same
        shown = os.path.relpath(real) if os.path.commonpath([real, os.getcwd()]) != os.sep else real
        raise WriteError(f"not written: it is a symlink to {shown}, outside the checked files and directories")
    try:
        info = os.stat(real)
    except OSError as error:
        raise WriteError(f"not fixed: the file vanished before the fixes were written ({_describe_os_error(error)})") from error
    if not stat.S_ISREG(info.st_mode):
        raise WriteError(f"not written: {kind_of_mode(info.st_mode)}, not a regular file")
    if not info.st_mode & 0o222 or not os.access(real, os.W_OK):
        raise WriteError(f"not written: the file is read-only (mode {stat.S_IMODE(info.st_mode):04o}); make it writable to fix it")
    current = _read_bytes(real)
    if current != expected:
        raise WriteError("not fixed: the file changed on disk since it was read; run cudalint again")
    directory, name = os.path.dirname(real) or ".", os.path.basename(real)
    _remove_stale_temps(directory, name)
    in_place = info.st_nlink > 1 or ((info.st_uid, info.st_gid) != (os.getuid(), os.getgid()) and os.geteuid() != 0)
    try:
        fd, temp = tempfile.mkstemp(prefix=f".{name}.", suffix=TEMP_SUFFIX, dir=directory)
    except OSError as error:
        raise WriteError(f"not fixed: cannot create a temporary file in {directory}: {_describe_os_error(error)}") from error
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            os.fchmod(fd, stat.S_IMODE(info.st_mode))
            if hasattr(os, "fchown") and (info.st_uid, info.st_gid) != (os.getuid(), os.getgid()):
                try:
                    os.fchown(fd, info.st_uid, info.st_gid)
                except OSError:
                    pass
            _write_all(fd, data)
            os.fsync(fd)
            if _read_bytes(real) != expected:  # a last check, right before the rename
                raise WriteError("not fixed: the file changed on disk since it was read; run cudalint again")
            if in_place:
                _write_in_place(real, data)
                os.unlink(temp)
            else:
                os.replace(temp, real)
        finally:
            os.close(fd)
    except BaseException as error:
        try:
            os.unlink(temp)
        except OSError:
            pass
        if isinstance(error, OSError):
            raise WriteError(f"not fixed: cannot write: {_describe_os_error(error)}") from error
        raise


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def _write_in_place(real: str, data: bytes) -> None:
    """Overwrite the file itself (its inode: hard links and owner stay), then cut it to size."""
    fd = os.open(real, os.O_WRONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0))
    try:
        _write_all(fd, data)
        os.ftruncate(fd, len(data))
        os.fsync(fd)
    finally:
        os.close(fd)


# --------------------------------------------------------------------------------------------
# Walking


class Listings:
    """What the walk learnt about a few names in each directory it listed: whether the name is
    there as a regular file (or a link to one) and whether it exists at all. The walk and the
    configuration lookup ask about these names in every directory (`.gitignore`, config files,
    `flake.lock`, `.git`): answering from the one `os.scandir` listing saves a stat per question.
    Directories the walk did not list (those above its roots) are asked of the file system."""

    NAMES = frozenset(
        {".gitignore", ".git", "flake.lock", "cudalint.toml", ".cudalint.toml", "pyproject.toml"}
        | {"flake.nix", "default.nix", "shell.nix", "nix", "npins"}  # where a nixpkgs pin can be (cudalint/knowledge/pins.py)
    )
    _NONE: dict[str, tuple[bool, bool]] = {}  # shared by the directories holding none of the names (never changed)

    def __init__(self) -> None:
        self._present: dict[str, dict[str, tuple[bool, bool]]] = {}  # directory -> name -> (is_file, exists)
        self._order: list[str] = []  # the directories in the order they were listed

    def record(self, directory: str, entries: Iterable[os.DirEntry]) -> None:
        present = self._NONE
        for entry in entries:
            if entry.name in self.NAMES:
                try:
                    is_file = entry.is_file()
                    exists = is_file or not entry.is_symlink() or os.path.exists(entry.path)
                except OSError:
                    is_file = exists = False
                if present is self._NONE:
                    present = {}
                present[entry.name] = (is_file, exists)
        self._present[directory] = present
        self._order.append(directory)

    def mark(self) -> int:
        return len(self._order)

    def since(self, mark: int) -> dict[str, dict[str, tuple[bool, bool]]]:
        """What was learnt about the directories listed since `mark()`, for `update` in another
        process."""
        return {directory: self._present[directory] for directory in self._order[mark:]}

    def update(self, learnt: dict[str, dict[str, tuple[bool, bool]]]) -> None:
        self._present.update(learnt)

    def is_file(self, directory: str, name: str) -> bool:
        present = self._present.get(directory)
        if present is not None:
            return present.get(name, (False, False))[0]
        return os.path.isfile(os.path.join(directory, name))

    def exists(self, directory: str, name: str) -> bool:
        present = self._present.get(directory)
        if present is not None:
            return present.get(name, (False, False))[1]
        return os.path.exists(os.path.join(directory, name))


@dataclass(frozen=True)
class Found:
    """A file to check. `path` is absolute (not resolved: symlinks kept), `explicit` when the
    user named it; `key` identifies the underlying file (to check it once)."""

    path: str
    explicit: bool
    key: tuple[int, int] | None = None


@dataclass(frozen=True)
class WalkNotice:
    path: str
    message: str
    error: bool  # the user must act (exit 2)


LINK_KEY = (-1, -1)  # a directory symlink's: its target's is looked up when it is walked


class Pending(NamedTuple):
    """A directory to list: its `.gitignore` files so far (deepest first) and its (st_dev,
    st_ino)."""

    directory: str
    ignores: tuple[IgnoreFile, ...]
    key: tuple[int, int] = LINK_KEY


class Listed(NamedTuple):
    """What listing one directory gave, before the walk's "once only" sets decide: the `*.nix`
    files and real subdirectories not ignored (in name order), directory symlinks (walked
    last), notices, or the error (a broken configuration) that stops the walk there."""

    directory: str
    files: list[tuple[str, tuple[int, int]]]
    subdirs: list[Pending]
    links: list[Pending]
    notices: list[WalkNotice]
    error: Exception | None = None


class Walked(NamedTuple):
    """A subtree another process walked from `top` as `Walker.walking` would, given that none
    of its directories had been walked before: the files (in walk order, not deduplicated),
    the directories below `top` it walked, the directory symlinks it met, its notices and
    the error (a broken configuration) it stopped at. Lists and tuples only: it crosses
    process boundaries in bulk."""

    top: str
    files: list[tuple[str, tuple[int, int]]]
    dirs: list[tuple[int, int]]
    links: list[Pending]
    notices: list[WalkNotice]
    error: Exception | None = None


@dataclass
class Walker:
    """Collects the files under directories. `exclude(path, is_dir)` is asked for every entry
    (the config's `exclude`); `respect_gitignore` turns `.gitignore` handling on.

    A walk lists each directory (`Listed`), then applies the listing in order: files already
    found and directories already walked are skipped, so symlink loops end. `recorded` answers a
    directory another process listed already, or a whole subtree it walked (`Walked`; the
    parallel walk, `cudalint.frontend.runner`): applied in the same order they give exactly the
    files and notices of a walk done here. A subtree holding a directory walked before (a
    directory mounted twice) is walked here instead."""

    exclude: Callable[[str, bool], bool] = lambda path, is_dir: False
    respect_gitignore: bool = True
    listings: Listings = field(default_factory=Listings)  # shared with the configuration lookup
    found: list[Found] = field(default_factory=list)
    notices: list[WalkNotice] = field(default_factory=list)
    recorded: Callable[[str], Listed | Walked | None] = field(default=lambda directory: None, repr=False)
    _seen_dirs: set[tuple[int, int]] = field(default_factory=set)
    _seen_files: set[tuple[int, int]] = field(default_factory=set)
    _gitignore_cache: dict[str, IgnoreFile | None] = field(default_factory=dict)
    _reported: int = 0  # how many of `found` `fresh` has handed out

    def add_file(self, path: str, explicit: bool, key: tuple[int, int] | None = None) -> None:
        if key is None:
            try:
                info = os.stat(path)
                key = (info.st_dev, info.st_ino)
            except OSError:
                key = None
        if key is not None:
            if key in self._seen_files:
                return
            self._seen_files.add(key)
        self.found.append(Found(path, explicit, key))

    def _gitignore(self, directory: str) -> IgnoreFile | None:
        if directory not in self._gitignore_cache:
            present = self.listings.is_file(directory, ".gitignore")
            self._gitignore_cache[directory] = IgnoreFile.load(os.path.join(directory, ".gitignore")) if present else None
        return self._gitignore_cache[directory]

    def _ancestor_ignores(self, directory: str) -> tuple[IgnoreFile, ...]:
        """`.gitignore` files of the directories above a walk root, up to the root of the git
        repository holding it (none when it is not in a repository), plus `.git/info/exclude`."""
        if not self.respect_gitignore:
            return ()
        chain: list[str] = []
        current = directory
        while True:
            parent = os.path.dirname(current)
            if os.path.exists(os.path.join(current, ".git")):
                exclude = os.path.join(current, ".git", "info", "exclude")
                ignores = [ig for ig in (self._gitignore(d) for d in chain) if ig is not None]
                if os.path.isfile(exclude):
                    loaded = IgnoreFile.load(exclude)
                    if loaded is not None:
                        loaded.base = current
                        ignores.append(loaded)
                return tuple(ignores)
            if parent == current:
                return ()
            chain.append(parent)
            current = parent

    def fresh(self) -> list[Found]:
        """The files added to `found` since the last call."""
        added = self.found[self._reported :]
        self._reported = len(self.found)
        return added

    def walk(self, root: str) -> None:
        """Walk a directory (absolute path) the user named."""
        for _ in self.walking(root):
            pass

    def start(self, root: str) -> Pending | OSError:
        """The walk of a directory the user named (absolute), or why it cannot be walked."""
        try:
            info = os.stat(root)
        except OSError as error:
            return error
        return Pending(root, self._ancestor_ignores(root), (info.st_dev, info.st_ino))

    def walking(self, root: str) -> Iterator[Found]:
        """Walk a directory (absolute path) the user named, yielding the `fresh` files as it
        goes (so they can be checked while the walk goes on)."""
        start = self.start(root)
        if isinstance(start, OSError):
            self.notices.append(WalkNotice(root, stat_problem(root, start).message, True))
            return
        self._seen_dirs.add(start.key)
        deferred: list[Pending] = []
        yield from self._walk_tree(start, deferred)
        # Directory symlinks last, so a directory reached both directly and through a link is
        # checked under its real path; each directory is walked once, so loops end.
        while deferred:
            pending = deferred.pop(0)
            try:
                info = os.stat(pending.directory)
            except OSError as error:
                self.notices.append(WalkNotice(pending.directory, stat_problem(pending.directory, error).message + "; skipped", False))
                continue
            key = (info.st_dev, info.st_ino)
            if key in self._seen_dirs:
                continue
            self._seen_dirs.add(key)
            yield from self._walk_tree(pending, deferred)

    def _walk_tree(self, start: Pending, deferred: list[Pending]) -> Iterator[Found]:
        stack = [start]
        while stack:
            yield from self.fresh()
            pending = stack.pop()
            listed = self.recorded(pending.directory)
            if isinstance(listed, Walked):
                if self._seen_dirs.isdisjoint(listed.dirs):
                    self._apply(listed, deferred)
                    continue
                listed = None
            if listed is None:
                listed = self.list_directory(pending)
            if listed.error is not None:
                raise listed.error
            self.notices.extend(listed.notices)
            for path, key in listed.files:
                self.add_file(path, False, key)
            deferred.extend(listed.links)
            subdirs = []
            for subdir in listed.subdirs:
                if subdir.key not in self._seen_dirs:
                    self._seen_dirs.add(subdir.key)
                    subdirs.append(subdir)
            stack.extend(reversed(subdirs))
        yield from self.fresh()

    def _apply(self, walked: Walked, deferred: list[Pending]) -> None:
        self.notices.extend(walked.notices)
        for path, key in walked.files:
            self.add_file(path, False, key)
        deferred.extend(walked.links)
        self._seen_dirs.update(walked.dirs)
        if walked.error is not None:
            raise walked.error

    def list_directory(self, pending: Pending) -> Listed:
        """List one directory. An exception (a broken configuration the `exclude` lookup found)
        is kept in the `Listed`: the walk raises it where it reaches this directory."""
        try:
            return self._list(pending)
        except Exception as error:
            return Listed(pending.directory, [], [], [], [], error)

    def _list(self, pending: Pending) -> Listed:
        directory = pending.directory
        ignores = pending.ignores
        listed = Listed(directory, [], [], [], [])
        try:
            with os.scandir(directory) as iterator:
                entries = sorted(iterator, key=lambda e: e.name)
        except FileNotFoundError:
            listed.notices.append(WalkNotice(directory, "directory vanished while it was being walked; skipped", False))
            return listed
        except NotADirectoryError:
            listed.notices.append(WalkNotice(directory, "no longer a directory; skipped", False))
            return listed
        except OSError as error:
            listed.notices.append(WalkNotice(directory, f"cannot read directory: {_describe_os_error(error)}", True))
            return listed
        self.listings.record(directory, entries)
        if self.respect_gitignore:
            own = self._gitignore(directory)
            if own is not None:
                ignores = (own,) + ignores
        try:
            dir_dev = os.stat(directory).st_dev
        except OSError:
            dir_dev = -1
        for entry in entries:
            name = entry.name
            if name == ".git":
                continue
            path = entry.path
            try:
                is_link = entry.is_symlink()
                if is_link:
                    try:
                        target = os.stat(path)
                    except OSError as error:
                        if name.endswith(NIX_SUFFIX):
                            message = stat_problem(path, error).message
                            listed.notices.append(WalkNotice(path, f"{message}; skipped", False))
                        continue
                    is_dir = stat.S_ISDIR(target.st_mode)
                    is_file = stat.S_ISREG(target.st_mode)
                    key = (target.st_dev, target.st_ino)
                else:
                    is_dir = entry.is_dir(follow_symlinks=False)
                    is_file = entry.is_file(follow_symlinks=False)
                    key = (dir_dev, entry.inode())
            except OSError:
                # vanished between listing and looking at it
                continue
            if is_dir:
                if self._skip(ignores, path, True):
                    continue
                if is_link:
                    try:
                        resolved = os.path.realpath(path)
                    except OSError:
                        continue
                    if resolved.startswith(NIX_STORE):
                        continue  # a `result` link into the Nix store is build output
                    listed.links.append(Pending(path, ignores))
                    continue
                listed.subdirs.append(Pending(path, ignores, key))
            elif name.endswith(NIX_SUFFIX):
                if self._skip(ignores, path, False):
                    continue
                if not is_file:
                    listed.notices.append(WalkNotice(path, "not a regular file (a FIFO, socket or device); skipped", False))
                    continue
                listed.files.append((path, key))
        return listed

    def _skip(self, ignores: tuple[IgnoreFile, ...], path: str, is_dir: bool) -> bool:
        if self.exclude(path, is_dir):
            return True
        return self.respect_gitignore and is_ignored(ignores, path, is_dir)

    # The parallel walk: the parent lists the top directories (`split`), workers walk the
    # subtrees below (`walk_subtree`), the parent applies it all in order (`walking`).

    def split(self, start: Pending, wanted: int) -> tuple[dict[str, Listed], list[Pending]]:
        """List directories breadth first from `start` until `wanted` directories are left
        unlisted (the subtrees to hand out), or none, or `4 * wanted` are listed (a narrow
        tree). Returns the listings and those subtrees."""
        listings: dict[str, Listed] = {}
        seen = {start.key}
        frontier = collections.deque([start])
        while frontier and len(frontier) < wanted and len(listings) < 4 * wanted:
            pending = frontier.popleft()
            listed = listings[pending.directory] = self.list_directory(pending)
            if listed.error is not None:
                break
            for subdir in listed.subdirs:
                if subdir.key not in seen:  # a directory mounted inside itself
                    seen.add(subdir.key)
                    frontier.append(subdir)
        return listings, list(frontier)

    def walk_subtree(self, start: Pending) -> Walked:
        """Walk `start` and the real directories below it as `walking` would if none of them had
        been walked before (in another process: this walker's found files and once-only sets
        are left alone)."""
        walked = Walked(start.directory, [], [], [], [])
        seen = {start.key}
        stack = [start]
        while stack:
            listed = self.list_directory(stack.pop())
            walked.notices.extend(listed.notices)
            if listed.error is not None:
                return walked._replace(error=listed.error)
            walked.files.extend(listed.files)
            walked.links.extend(listed.links)
            subdirs = []
            for subdir in listed.subdirs:
                if subdir.key not in seen:
                    seen.add(subdir.key)
                    walked.dirs.append(subdir.key)
                    subdirs.append(subdir)
            stack.extend(reversed(subdirs))
        return walked


@lru_cache(maxsize=4096)
def compile_globs(globs: tuple[str, ...]) -> tuple[GlobPattern, ...]:
    return tuple(p for p in (GlobPattern.parse(g) for g in globs) if p is not None)
