"""Open documents: text, version and one syntax tree each, kept up to date from LSP changes.

Incremental changes are applied to the UTF-8 bytes (the tree's coordinates) and described to
tree-sitter with `Tree.edit`, so the re-parse reuses the unchanged parts of the old tree. The
old tree is copied before it is edited: a lint of the previous version may still be walking it.
A document over its size limit (`max-file-size`) is kept without a tree: it is not linted.
"""

from __future__ import annotations

from dataclasses import dataclass

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
    tree: Tree | None  # None: over the size limit, not parsed
    # The edits that led here, oldest first: (the version edited, what the edit changed). Cut
    # at MAX_EDIT_CHAIN steps and emptied when the whole text is replaced.
    history: tuple[tuple[int, Region], ...] = ()

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
    edited = tree.copy() if tree is not None else None
    region: Region | None = None
    whole = False
    for change in changes:
        data = source.data
        replacement = byte_change(source, change)
        if edited is not None and isinstance(change, types.TextDocumentContentChangePartial):
            start_point = _point(source, replacement.start)
            edited.edit(
                start_byte=replacement.start,
                old_end_byte=replacement.end,
                new_end_byte=replacement.start + len(replacement.content),
                start_point=start_point,
                old_end_point=_point(source, replacement.end),
                new_end_point=_end_point(start_point, replacement.content),
            )
        else:
            edited = None
            whole = True
        step = Region(replacement.start, replacement.end, replacement.start + len(replacement.content))
        region = step if region is None else region.then(step)
        text = (data[: replacement.start] + replacement.content + data[replacement.end :]).decode("utf-8", "surrogatepass")
        source = SourceFile(source.path, text)
    if max_size is not None and len(source.data) > max_size:
        return source, None, None if whole else region
    tree = parse(source, edited)
    if edited is not None and tree.root_node.has_error:
        # Error recovery depends on the edit history: a fresh parse keeps the findings for this
        # text equal to the command line's.
        tree = parse(source)
    return source, tree, None if whole else region


class DocumentStore:
    """The open documents by URI, as snapshots."""

    def __init__(self) -> None:
        self._documents: dict[str, Snapshot] = {}

    def open(self, uri: str, path: str, version: int, text: str, max_size: int | None = None) -> Snapshot:
        source = SourceFile(path, text)
        snapshot = Snapshot(uri, version, source, parse(source) if max_size is None or len(source.data) <= max_size else None)
        self._documents[uri] = snapshot
        return snapshot

    def change(self, uri: str, version: int, changes: list[types.TextDocumentContentChangeEvent], max_size: int | None = None) -> Snapshot | None:
        current = self._documents.get(uri)
        if current is None:
            return None
        new_source, tree, region = apply_changes(current.source, current.tree, changes, max_size)
        history = (current.history + ((current.version, region),))[-MAX_EDIT_CHAIN:] if region is not None else ()
        snapshot = Snapshot(uri, version, new_source, tree, history)
        self._documents[uri] = snapshot
        return snapshot

    def close(self, uri: str) -> None:
        self._documents.pop(uri, None)

    def get(self, uri: str) -> Snapshot | None:
        return self._documents.get(uri)

    def __iter__(self):
        return iter(list(self._documents.values()))
