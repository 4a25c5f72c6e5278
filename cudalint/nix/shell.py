"""Shell text inside Nix strings (phases, `shellHook`, `runCommand` scripts).

A `ShellText` keeps absolute byte offsets: the string's bytes with every `${...}` interpolation
masked by 0x01 bytes of the same length, so a regex can match shell words and a rule can still
ask which interpolations a matched span covers. Logical lines join backslash continuations;
shell comments are cut off (`# export LD_LIBRARY_PATH=...` never runs).
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass
from collections.abc import Iterator

from tree_sitter import Node

from cudalint.nix.source import SourceFile

MASK = 0x01
_SHELL_ATTR = re.compile(
    r"^(?:\w*Phase|pre\w+|post\w+|shellHook|script|buildCommand|text|extraCommands|commands|"
    r"setupHook|fixupPhase|extraSetup|runScript|profile|extraInstallCommands|extraBuildCommands)$"
)
_SHELL_FUNCTIONS = frozenset(
    {"runCommand", "runCommandLocal", "runCommandCC", "runCommandNoCC", "writeShellScript", "writeShellScriptBin", "writeScript", "writeScriptBin", "writeShellApplication"}
)
_NOT_SHELL = frozenset({"meta", "description", "longDescription", "passthru"})


@dataclass(frozen=True)
class ShellLine:
    start: int  # absolute byte offsets of the logical line
    end: int
    code: bytes  # masked bytes of the line with its comment cut off (same offsets from start)
    comment_start: int | None  # absolute offset of a trailing/whole-line comment


class ShellText:
    def __init__(self, node: Node, source: SourceFile) -> None:
        self.node = node
        self.source = source
        self.interpolations = [c for c in node.children if c.type == "interpolation"]
        self._interpolation_ends = [i.end_byte for i in self.interpolations]  # sorted: they do not overlap
        start, end = node.start_byte, node.end_byte
        masked = bytearray(source.data[start:end])
        for interpolation in self.interpolations:
            a, b = interpolation.start_byte - start, interpolation.end_byte - start
            masked[a:b] = bytes([MASK]) * (b - a)
        self.offset = start
        self.masked = bytes(masked)
        self._lines: list[ShellLine] | None = None
        self._line_starts: list[int] = []

    def lines(self) -> list[ShellLine]:
        """The logical lines, computed once per string."""
        if self._lines is None:
            self._lines = list(self._split_lines())
            self._line_starts = [line.start for line in self._lines]
        return self._lines

    def line_at(self, offset: int) -> ShellLine | None:
        """The logical line holding the absolute byte `offset` (its end included)."""
        lines = self.lines()
        index = bisect.bisect_right(self._line_starts, offset) - 1
        if index < 0 or offset > lines[index].end:
            return None
        return lines[index]

    def _split_lines(self) -> Iterator[ShellLine]:
        data = self.masked
        position = 0
        length = len(data)
        while position < length:
            end = position
            while True:
                newline = data.find(b"\n", end)
                if newline == -1:
                    end = length
                    break
                if newline > 0 and data[newline - 1 : newline] == b"\\":
                    end = newline + 1
                    continue
                end = newline
                break
            raw = data[position:end]
            cut = _comment_offset(raw)
            code = raw if cut is None else raw[:cut]
            yield ShellLine(self.offset + position, self.offset + end, code, None if cut is None else self.offset + position + cut)
            position = end + 1

    def code_matches(self, pattern: re.Pattern[bytes]) -> Iterator[tuple[ShellLine, re.Match[bytes]]]:
        """Matches of `pattern` in code (not in comments); match offsets are relative to line.start."""
        for line in self.lines():
            for match in pattern.finditer(line.code):
                yield line, match

    def interpolations_in(self, start: int, end: int) -> list[Node]:
        """Interpolations overlapping the absolute byte span [start, end)."""
        first = bisect.bisect_right(self._interpolation_ends, start)
        found = []
        for interpolation in self.interpolations[first:]:
            if interpolation.start_byte >= end:
                break
            found.append(interpolation)
        return found

    def expression_of(self, interpolation: Node) -> Node | None:
        return interpolation.child_by_field_name("expression") or next((c for c in interpolation.named_children), None)

    def slice(self, start: int, end: int) -> str:
        return self.source.slice(start, end)


def _comment_offset(line: bytes) -> int | None:
    """Where a shell comment starts: `#` at a word start, outside quotes."""
    quote: int | None = None
    previous = 0x20
    for index, byte in enumerate(line):
        if quote is not None:
            if byte == quote and previous != 0x5C:
                quote = None
        elif byte in (0x22, 0x27):  # " '
            quote = byte
        elif byte == 0x23 and previous in (0x20, 0x09, 0x3B, 0x0A):  # '#' after blank or ';'
            return index
        previous = byte if index or byte != 0x20 else 0x20
    return None


def is_shell_string(node: Node, binding_path: tuple[str, ...], call_name: str | None) -> bool:
    """Whether a string node holds shell code, judged from where it sits."""
    if any(part in _NOT_SHELL for part in binding_path):
        return False
    if binding_path and _SHELL_ATTR.match(binding_path[-1]):
        return True
    if call_name in _SHELL_FUNCTIONS:
        return True
    # multi-line strings elsewhere (let-bound scripts, wrapper arguments) are usually shell too
    return node.type == "indented_string_expression"
