"""Suppression comments: `# cudalint: ignore[CODE, ...] -- reason` and `ignore-file[...]`.

A suppression at the end of a line covers that line; one on a line of its own covers the next
line with code. They may be Nix comments or shell comments inside Nix strings (phases,
`shellHook`), where most findings about shell text sit. `ignore-file` counts in the file's
leading comments only.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from tree_sitter import Node

from cudalint.nix.source import SourceFile
from cudalint.nix.syntax import descendants

DIRECTIVE = re.compile(rb"cudalint:[ \t]*(?P<kind>ignore-file|ignore)\b(?:\[(?P<codes>[^\]\n]*)\])?(?:[ \t]*--[^\n]*)?")
_SHELL_COMMENT = re.compile(rb"(?:^|(?<=[ \t;]))#[^\n]*", re.M)
_CODE = re.compile(r"^CUDA\d{3}$")


@dataclass
class Suppression:
    kind: str  # "ignore" or "ignore-file"
    codes: list[str]
    start: int  # byte span of the directive text (what a removal fix deletes)
    end: int
    comment_start: int  # where the comment begins (`#` or `/*`)
    target_line: int  # 0-based; -1 for ignore-file
    used: set[str] = field(default_factory=set)
    raw_codes: str | None = None


def find_suppressions(root: Node, source: SourceFile) -> list[Suppression]:
    if b"cudalint:" not in source.data:
        return []
    found: list[Suppression] = []
    leading = True
    for node in descendants(root):
        kind = node.type
        if kind == "comment":
            found.extend(_from_comment(node.start_byte, node.end_byte, source, leading))
        elif kind == "string_fragment":
            fragment = source.data[node.start_byte : node.end_byte]
            if b"cudalint:" in fragment:
                for match in _SHELL_COMMENT.finditer(fragment):
                    start = node.start_byte + match.start()
                    found.extend(_from_comment(start, node.start_byte + match.end(), source, False))
        if leading and node.is_named and kind not in {"source_code", "comment"} and node.parent is not None:
            leading = False
    return found


def _from_comment(start: int, end: int, source: SourceFile, leading: bool) -> list[Suppression]:
    result = []
    for match in DIRECTIVE.finditer(source.data, start, end):
        kind = match.group("kind").decode()
        raw = match.group("codes")
        codes = [c.strip().upper() for c in raw.decode(errors="replace").split(",") if c.strip()] if raw is not None else []
        if kind == "ignore-file" and not leading:
            continue
        line = source.line_of(start)
        before = source.data[source.line_start(line) : start]
        own_line = not before.strip()
        target = -1 if kind == "ignore-file" else (_next_code_line(source, line) if own_line else line)
        directive_start = start if source.data[start : match.start()].strip(b"#/* \t") == b"" else match.start()
        result.append(Suppression(kind, codes, directive_start, match.end(), start, target, raw_codes=raw.decode(errors="replace") if raw is not None else None))
    return result


def _next_code_line(source: SourceFile, line: int) -> int:
    candidate = line + 1
    while candidate < source.line_count:
        stripped = source.line_bytes(candidate).strip()
        if stripped and not stripped.startswith(b"#"):
            return candidate
        candidate += 1
    return line + 1


def is_valid_code(code: str) -> bool:
    return _CODE.match(code) is not None
