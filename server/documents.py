"""Open documents: text, version and one syntax tree each, kept up to date from LSP changes.

Incremental changes are applied to the UTF-8 bytes (the tree's coordinates) and described to
tree-sitter with `Tree.edit`, so the re-parse reuses the unchanged parts of the old tree. The
old tree is copied before it is edited: a lint of the previous version may still be walking it.
A document over its size limit (`max-file-size`) is kept without a tree: it is not linted.
The store parses nothing itself: a snapshot's tree is parsed when first asked for, by a lint on
a worker thread (a 5 MB document took 5-25 s to parse, which held up every other request when
done on the protocol thread at each open and edit).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field

from lsprotocol import types
from tree_sitter import Point, Tree

from cudalint.nix.parsing import parse
from cudalint.nix.source import SourceFile


@dataclass(frozen=True)
class Snapshot:
    """One version of a document: what a lint needs, immutable once made."""

    uri: str
    version: int
    source: SourceFile
    lazy_tree: LazyTree
    # The edits that led here, oldest first: (the version edited, what the edit changed). Cut
    # at MAX_EDIT_CHAIN steps and emptied when the whole text is replaced.
    history: tuple[tuple[int, Region], ...] = ()

    @property
    def tree(self) -> Tree | None:
        """The syntax tree (parsed now if nobody asked before); None over the size limit."""
        return self.lazy_tree.get()

    def changed_since(self, version: int) -> Region | None:
        """What changed from `version` of this document to this one, as one region; None when
        the text was replaced in between or `version` is too old."""
        for index, (edited, _) in enumerate(self.history):
            if edited == version:
                regions = [region for _, region in self.history[index:]]
                combined = regions[0]
                for region in regions[1:]:
                    combined = combined.then(region)
                return combined
        return None


@dataclass(eq=False)
class LazyTree:
    """A tree made on first use, once, whichever thread asks first."""

    make: Callable[[], Tree | None] | None
    _tree: Tree | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @classmethod
    def of(cls, tree: Tree | None) -> LazyTree:
        return cls(None, tree)

    @property
    def ready(self) -> bool:
        return self.make is None

    def get(self) -> Tree | None:
        with self._lock:
            if self.make is not None:
                self._tree, self.make = self.make(), None
            return self._tree


# How many versions back a re-lint may reach.
MAX_EDIT_CHAIN = 64


@dataclass(frozen=True)
class ByteChange:
    """A replacement of `data[start:end]` in the text it was computed against."""

    start: int
    end: int
    content: bytes


def byte_change(source: SourceFile, change: types.TextDocumentContentChangeEvent) -> ByteChange:
    """An LSP content change in the byte coordinates of `source` (None range: the whole text)."""
    if isinstance(change, types.TextDocumentContentChangePartial):
        start = source.offset_of_utf16(change.range.start.line, change.range.start.character)
        end = source.offset_of_utf16(change.range.end.line, change.range.end.character)
        return ByteChange(min(start, end), max(start, end), change.text.encode("utf-8", "surrogatepass"))
    return ByteChange(0, len(source.data), change.text.encode("utf-8", "surrogatepass"))


def _point(source: SourceFile, byte: int) -> Point:
    line = source.line_of(byte)
    return Point(line, byte - source.line_start(line))


def _end_point(start: Point, inserted: bytes) -> Point:
    newlines = inserted.count(b"\n")
    if not newlines:
        return Point(start.row, start.column + len(inserted))
    return Point(start.row + newlines, len(inserted) - inserted.rfind(b"\n") - 1)


@dataclass(frozen=True)
class Region:
    """What changed between two versions: bytes `start:old_end` of the older text are
    `start:new_end` of the newer; everything outside is the same text, shifted after it."""

    start: int
    old_end: int
    new_end: int

    def then(self, later: Region) -> Region:
        """This change followed by `later` (in the coordinates this one produced), as one."""

        def carried(offset: int) -> int:
            if offset >= later.old_end:
                return offset + later.new_end - later.old_end
            return offset if offset <= later.start else later.new_end

        new_end = max(carried(self.new_end), later.new_end)
        shift = (self.new_end - self.old_end) + (later.new_end - later.old_end)
        return Region(min(self.start, later.start), new_end - shift, new_end)


def apply_changes(source: SourceFile, tree: Tree | None, changes: list[types.TextDocumentContentChangeEvent], max_size: int | None = None) -> tuple[SourceFile, Tree | None, Region | None]:
    """The new text and its tree after LSP `changes`, each in the coordinates of the text the
    ones before it produced, and the region they changed (None when the whole text was
    replaced). Parses once, reusing `tree` unless the whole text was replaced; not at all when
    the new text is over `max_size` bytes (the tree is None)."""
    source, edits, region = _apply_text(source, changes)
    if max_size is not None and len(source.data) > max_size:
        return source, None, region
    return source, _reparse(source, tree, edits), region


def _apply_text(source: SourceFile, changes: list[types.TextDocumentContentChangeEvent]) -> tuple[SourceFile, list[dict] | None, Region | None]:
    """The new text, the edits to describe to the old tree (`Tree.edit` arguments; None when the
    whole text was replaced) and the region changed (None then too)."""
    edits: list[dict] | None = []
    region: Region | None = None
    for change in changes:
        data = source.data
        replacement = byte_change(source, change)
        if edits is not None and isinstance(change, types.TextDocumentContentChangePartial):
            start_point = _point(source, replacement.start)
            end_point = _end_point(start_point, replacement.content)
            old_end = _point(source, replacement.end)
            edits.append(
                dict(
                    start_byte=replacement.start,
                    old_end_byte=replacement.end,
                    new_end_byte=replacement.start + len(replacement.content),
                    start_point=start_point,
                    old_end_point=old_end,
                    new_end_point=end_point,
                )
            )
        else:
            edits = None
        step = Region(replacement.start, replacement.end, replacement.start + len(replacement.content))
        region = step if region is None else region.then(step)
        text = (data[: replacement.start] + replacement.content + data[replacement.end :]).decode("utf-8", "surrogatepass")
        source = SourceFile(source.path, text)
    return source, edits, None if edits is None else region


def _reparse(source: SourceFile, tree: Tree | None, edits: list[dict] | None) -> Tree:
    """`source`'s tree, reusing the old `tree` told about `edits` when there is one."""
    edited = tree.copy() if tree is not None and edits is not None else None
    if edited is not None and edits is not None:
        for edit in edits:
            edited.edit(**edit)
    new = parse(source, edited)
    if edited is not None and new.root_node.has_error:
        # Error recovery depends on the edit history: a fresh parse keeps the findings for this
        # text equal to the command line's.
        new = parse(source)
    return new


class DocumentStore:
    """The open documents by URI, as snapshots."""

    def __init__(self) -> None:
        self._documents: dict[str, Snapshot] = {}

    def open(self, uri: str, path: str, version: int, text: str, max_size: int | None = None) -> Snapshot:
        source = SourceFile(path, text)
        over = max_size is not None and len(source.data) > max_size
        snapshot = Snapshot(uri, version, source, LazyTree.of(None) if over else LazyTree(lambda: parse(source)))
        self._documents[uri] = snapshot
        return snapshot

    def change(self, uri: str, version: int, changes: list[types.TextDocumentContentChangeEvent], max_size: int | None = None) -> Snapshot | None:
        current = self._documents.get(uri)
        if current is None:
            return None
        new_source, edits, region = _apply_text(current.source, changes)
        if max_size is not None and len(new_source.data) > max_size:
            lazy = LazyTree.of(None)
        else:
            # The old tree helps only when a lint parsed it; else a fresh parse (no chain of
            # unparsed versions is kept alive)
            old = current.lazy_tree.get() if current.lazy_tree.ready else None
            lazy = LazyTree(lambda: _reparse(new_source, old, edits if old is not None else None))
        history = (current.history + ((current.version, region),))[-MAX_EDIT_CHAIN:] if region is not None else ()
        snapshot = Snapshot(uri, version, new_source, lazy, history)
        self._documents[uri] = snapshot
        return snapshot

    def close(self, uri: str) -> None:
        self._documents.pop(uri, None)

    def get(self, uri: str) -> Snapshot | None:
        return self._documents.get(uri)

    def __iter__(self):
        return iter(list(self._documents.values()))
