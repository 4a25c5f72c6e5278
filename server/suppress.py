"""The edit behind "Ignore CUDAxxx on this line": a suppression comment the engine honours.

Where it goes, in order of preference: into a suppression that already covers the line (the
code is added to it); at the end of the line, as a Nix comment, or as a shell comment when the
line ends inside shell text (phases, `shellHook`) and not after a `\\` continuation; on its own
line before. Each candidate is checked by re-parsing the edited text and reading its
suppressions with the engine's own reader, so the finding is gone after the edit.
"""

from __future__ import annotations

from lsprotocol import types
from tree_sitter import Node, Tree

from cudalint.lint.model import Diagnostic, Edit
from cudalint.lint.suppressions import find_suppressions
from cudalint.nix.parsing import syntax_problems
from cudalint.nix.semantic import Semantic
from cudalint.nix.source import SourceFile

from .documents import apply_changes

_STRINGS = {"string_expression", "indented_string_expression"}


def directive(code: str) -> str:
    return f"cudalint: ignore[{code}]"


def suppression_edit(source: SourceFile, tree: Tree, diagnostic: Diagnostic) -> Edit | None:
    line = source.line_of(diagnostic.start)
    for existing in find_suppressions(tree.root_node, source):
        if existing.kind == "ignore" and existing.target_line == line:
            return _extend(source, existing.start, existing.end, existing.raw_codes, diagnostic.code)
    semantic = Semantic(tree, source)
    candidates = [_end_of_line(source, tree, semantic, line, diagnostic.code), _line_before(source, tree, semantic, line, diagnostic.code)]
    for edit, target in (c for c in candidates if c is not None):
        if _suppresses(source, tree, edit, target, diagnostic.code):
            return edit
    return None


def _extend(source: SourceFile, start: int, end: int, raw_codes: str | None, code: str) -> Edit:
    text = source.slice(start, end)
    if raw_codes is not None:
        codes = ", ".join(c.strip() for c in [*raw_codes.split(","), code] if c.strip())
        return Edit(start, end, text.replace(f"[{raw_codes}]", f"[{codes}]", 1))
    keyword = text.index("ignore") + len("ignore")
    return Edit(start, end, f"{text[:keyword]}[{code}]{text[keyword:]}")


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


def _end_of_line(source: SourceFile, tree: Tree, semantic: Semantic, line: int, code: str) -> tuple[Edit, int] | None:
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
    return Edit(at, at, f" # {directive(code)}"), line


def _line_before(source: SourceFile, tree: Tree, semantic: Semantic, line: int, code: str) -> tuple[Edit, int] | None:
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
    return Edit(start, start, f"{indent}# {directive(code)}{source.newline}"), line + 1


def _suppresses(source: SourceFile, tree: Tree, edit: Edit, target: int, code: str) -> bool:
    """Whether the edited text has a suppression of `code` for line `target` and parses as well."""
    start_line, start_character = source.utf16_position(edit.start)
    end_line, end_character = source.utf16_position(edit.end)
    change = types.TextDocumentContentChangePartial(
        range=types.Range(
            start=types.Position(line=start_line, character=start_character),
            end=types.Position(line=end_line, character=end_character),
        ),
        text=edit.content,
    )
    new_source, new_tree, _ = apply_changes(source, tree, [change])
    if new_tree.root_node.has_error and len(syntax_problems(new_tree, new_source)) > len(syntax_problems(tree, source)):
        return False
    return any(
        s.kind == "ignore" and s.target_line == target and code in s.codes
        for s in find_suppressions(new_tree.root_node, new_source)
    )
