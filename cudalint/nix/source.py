"""Source text and position conversions.

tree-sitter works in UTF-8 byte offsets; users (CLI, JSON, SARIF) want 1-based rows and
character columns, and the language server wants UTF-16 code units. All conversions live here.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field


@dataclass(eq=False)
class SourceFile:
    """One file's text; `data` is its UTF-8 encoding, the coordinate system of the tree."""

    path: str
    text: str
    # `text` in UTF-8: encoded here unless the caller has it (a file just read and decoded; for a
    # multi-megabyte file another copy is megabytes more of a worker's peak)
    data: bytes = field(default=b"", repr=False)
    _line_starts: list[int] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        if not self.data:
            self.data = self.text.encode("utf-8", "surrogatepass")
        starts = [0]
        find = self.data.find
        pos = find(b"\n")
        while pos != -1:
            starts.append(pos + 1)
            pos = find(b"\n", pos + 1)
        self._line_starts = starts

    @property
    def line_count(self) -> int:
        return len(self._line_starts)

    def line_of(self, byte: int) -> int:
        """0-based line of a byte offset."""
        return bisect.bisect_right(self._line_starts, byte) - 1

    def line_start(self, line: int) -> int:
        return self._line_starts[line]

    def line_end(self, line: int) -> int:
        """Byte offset of the line's end, before its newline (and before a CR of CRLF)."""
        if line + 1 < len(self._line_starts):
            end = self._line_starts[line + 1] - 1
        else:
            end = len(self.data)
        if end > self._line_starts[line] and self.data[end - 1 : end] == b"\r":
            end -= 1
        return end

    def line_bytes(self, line: int) -> bytes:
        return self.data[self._line_starts[line] : self.line_end(line)]

    def line_text(self, line: int) -> str:
        return self.line_bytes(line).decode("utf-8", "replace")

    def slice(self, start: int, end: int) -> str:
        return self.data[start:end].decode("utf-8", "replace")

    def location(self, byte: int) -> tuple[int, int]:
        """1-based (row, column) with the column counted in characters (ruff's convention)."""
        line = self.line_of(byte)
        prefix = self.data[self._line_starts[line] : byte]
        return line + 1, len(prefix.decode("utf-8", "replace")) + 1

    def utf16_position(self, byte: int) -> tuple[int, int]:
        """0-based (line, UTF-16 code unit) as the Language Server Protocol counts."""
        line = self.line_of(byte)
        prefix = self.data[self._line_starts[line] : byte].decode("utf-8", "replace")
        return line, len(prefix.encode("utf-16-le")) // 2

    def offset_of_utf16(self, line: int, character: int) -> int:
        """Byte offset of an LSP position; positions past a line's end clamp to it."""
        if line < 0:
            return 0
        if line >= len(self._line_starts):
            return len(self.data)
        raw = self.line_bytes(line).decode("utf-8", "replace").encode("utf-16-le")
        prefix = raw[: max(character, 0) * 2].decode("utf-16-le", "ignore")
        return self._line_starts[line] + len(prefix.encode("utf-8"))

    def indentation_of_line(self, line: int) -> str:
        raw = self.line_bytes(line)
        return raw[: len(raw) - len(raw.lstrip(b" \t"))].decode()

    @property
    def newline(self) -> str:
        """The file's line ending, for text that fixes insert."""
        first = self.data.find(b"\n")
        return "\r\n" if first > 0 and self.data[first - 1 : first] == b"\r" else "\n"
