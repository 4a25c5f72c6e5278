"""Where a suppression comment goes (ruff's noqa edits): the edit behind the editor's "Ignore
CUDAxxx on this line" and behind `cudalint check --add-suppressions`.

Where it goes, in order of preference: into a suppression that already covers the line (the
code is added to it); at the end of the line, as a Nix comment, or as a shell comment when the
line ends inside shell text (phases, `shellHook`) and not after a `\\` continuation; on its own
line before. Each candidate is checked by re-parsing the edited text and reading its
suppressions with the engine's own reader, so the finding is gone after the edit.
"""

from __future__ import annotations

from collections.abc import Iterable

from tree_sitter import Node, Point, Tree

from cudalint.lint.model import Diagnostic, Edit
from cudalint.lint.suppressions import find_suppressions
from cudalint.nix.parsing import parse, syntax_problems
from cudalint.nix.semantic import Semantic
from cudalint.nix.source import SourceFile

_STRINGS = {"string_expression", "indented_string_expression"}


def directive(codes: Iterable[str], reason: str | None = None) -> str:
    return f"cudalint: ignore[{', '.join(codes)}]" + (f" -- {reason}" if reason else "")


def suppression_edit(source: SourceFile, tree: Tree, diagnostic: Diagnostic) -> Edit | None:
    """The edit that suppresses one finding (an editor's quick fix), or None when no comment can."""
    return _line_edit(source, tree, Semantic(tree, source), source.line_of(diagnostic.start), [diagnostic.code], None)


def suppression_edits(source: SourceFile, tree: Tree, diagnostics: Iterable[Diagnostic], reason: str | None = None) -> list[Edit]:
    """One edit per line with findings, suppressing all of that line's codes (with `reason` after
    `--`), for `cudalint check --add-suppressions`. Lines where no comment can go are left out."""
    by_line: dict[int, list[str]] = {}
    for diagnostic in diagnostics:
        codes = by_line.setdefault(source.line_of(diagnostic.start), [])
        if diagnostic.code not in codes:
            codes.append(diagnostic.code)
    semantic = Semantic(tree, source)
    found = (_line_edit(source, tree, semantic, line, sorted(codes), reason) for line, codes in sorted(by_line.items()))
    return [edit for edit in found if edit is not None]


def _line_edit(source: SourceFile, tree: Tree, semantic: Semantic, line: int, codes: list[str], reason: str | None) -> Edit | None:
    for existing in find_suppressions(tree.root_node, source):
        if existing.kind == "ignore" and existing.target_line == line:
            return _extend(source, existing.start, existing.end, existing.raw_codes, codes)
    candidates = [_end_of_line(source, tree, semantic, line, codes, reason), _line_before(source, tree, semantic, line, codes, reason)]
    for edit, target in (c for c in candidates if c is not None):
        if _suppresses(source, tree, edit, target, codes):
            return edit
    return None


def _extend(source: SourceFile, start: int, end: int, raw_codes: str | None, codes: list[str]) -> Edit:
    text = source.slice(start, end)
    if raw_codes is not None:
        merged = ", ".join(dict.fromkeys(c.strip() for c in [*raw_codes.split(","), *codes] if c.strip()))
        return Edit(start, end, text.replace(f"[{raw_codes}]", f"[{merged}]", 1))
    keyword = text.index("ignore") + len("ignore")
    return Edit(start, end, f"{text[:keyword]}[{', '.join(codes)}]{text[keyword:]}")


def _innermost_string(node: Node | None) -> Node | None:
    while node is not None:
        if node.type in _STRINGS:
            return node
        if node.type == "interpolation":
            return None  # Nix code inside `${ }`
        node = node.parent
    return None


def _comment_at(node: Node | None) -> Node | None:
    return node if node is not None and node.type == "comment" else None


def _end_of_line(source: SourceFile, tree: Tree, semantic: Semantic, line: int, codes: list[str], reason: str | None) -> tuple[Edit, int] | None:
    raw = source.line_bytes(line)
    content = raw.rstrip()
    if not content.strip():
        return None
    last = source.line_start(line) + len(content) - 1
    node = tree.root_node.descendant_for_byte_range(last, last + 1)
    comment = _comment_at(node)
    if comment is not None and source.line_of(comment.end_byte) != line:
        return None  # inside a `/* */` comment that goes on
    string = _innermost_string(node) if comment is None else None
    if string is not None and source.line_of(string.end_byte) != line:
        if string.type != "indented_string_expression" or semantic.shell_text(string) is None:
            return None  # a `#` here would become part of the string's value
        if content.endswith(b"\\"):
            return None  # a comment would end the shell line continuation
    at = source.line_start(line) + len(content)
    return Edit(at, at, f" # {directive(codes, reason)}"), line


def _line_before(source: SourceFile, tree: Tree, semantic: Semantic, line: int, codes: list[str], reason: str | None) -> tuple[Edit, int] | None:
    start = source.line_start(line)
    indent = source.indentation_of_line(line)
    if line > 0:
        # The new line starts where the previous line ends: that decides its context.
        previous_end = source.line_end(line - 1)
        node = tree.root_node.descendant_for_byte_range(max(previous_end - 1, 0), previous_end)
        string = _innermost_string(node)
        if string is not None and string.start_byte < start and string.end_byte > start:
            if string.type != "indented_string_expression" or semantic.shell_text(string) is None:
                return None
            if source.line_bytes(line - 1).rstrip().endswith(b"\\"):
                return None
    return Edit(start, start, f"{indent}# {directive(codes, reason)}{source.newline}"), line + 1


def _suppresses(source: SourceFile, tree: Tree, edit: Edit, target: int, codes: list[str]) -> bool:
    """Whether the edited text has a suppression of `codes` for line `target` and parses as well."""
    new_source, new_tree = _edited(source, tree, edit)
    if new_tree.root_node.has_error and len(syntax_problems(new_tree, new_source)) > len(syntax_problems(tree, source)):
        return False
    covered = {code for s in find_suppressions(new_tree.root_node, new_source) if s.kind == "ignore" and s.target_line == target for code in s.codes}
    return covered.issuperset(codes)


def _edited(source: SourceFile, tree: Tree, edit: Edit) -> tuple[SourceFile, Tree]:
    """The text after `edit` and its tree (parsed incrementally; afresh if that has errors, as
    error recovery depends on the edit history)."""
    data = source.data[: edit.start] + edit.content.encode("utf-8") + source.data[edit.end :]
    new_source = SourceFile(source.path, data.decode("utf-8", "surrogatepass"))
    edited = tree.copy()
    start = _point(source, edit.start)
    lines = edit.content.encode("utf-8").split(b"\n")
    new_end = Point(start.row + len(lines) - 1, (start.column if len(lines) == 1 else 0) + len(lines[-1]))
    edited.edit(
        start_byte=edit.start,
        old_end_byte=edit.end,
        new_end_byte=edit.start + len(edit.content.encode("utf-8")),
        start_point=start,
        old_end_point=_point(source, edit.end),
        new_end_point=new_end,
    )
    new_tree = parse(new_source, edited)
    return new_source, parse(new_source) if new_tree.root_node.has_error else new_tree


def _point(source: SourceFile, byte: int) -> Point:
    line = source.line_of(byte)
    return Point(line, byte - source.line_start(line))
