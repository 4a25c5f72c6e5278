"""The one place that loads the Nix grammar and turns parse errors into syntax-error spans.

The PyPI grammar (tree-sitter-nix 0.1) predates trailing commas in formals (`{ a, b, }:`,
nixfmt's style): it yields a MISSING identifier in a last `formal`, or a small ERROR holding
only that `,`. Nix accepts both, so exactly those two shapes are tolerated; anything else
(`{ a, ..., }`, `{ a,, }`, `{ a, , b }`) is a real syntax error.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import tree_sitter
import tree_sitter_nix

from cudalint.source import SourceFile


@lru_cache(maxsize=1)
def language() -> tree_sitter.Language:
    return tree_sitter.Language(tree_sitter_nix.language())


def new_parser() -> tree_sitter.Parser:
    return tree_sitter.Parser(language())


def parse(source: SourceFile, old_tree: tree_sitter.Tree | None = None) -> tree_sitter.Tree:
    parser = new_parser()
    return parser.parse(source.data, old_tree) if old_tree else parser.parse(source.data)


@dataclass(frozen=True)
class SyntaxProblem:
    start: int
    end: int
    message: str


def _is_trailing_comma_gap(node: tree_sitter.Node) -> bool:
    parent = node.parent
    if parent is None:
        return False
    if node.is_missing and node.type == "identifier" and parent.type == "formal":
        formal = parent
        formals = formal.parent
        if formals is None or formals.type != "formals" or formal.named_child_count != 1:
            return False
        comma = formal.prev_sibling
        closing = formal.next_sibling
        before_comma = comma.prev_sibling if comma is not None else None
        return (
            comma is not None
            and comma.type == ","
            and closing is not None
            and closing.type == "}"
            and before_comma is not None
            and before_comma.type == "formal"
        )
    if node.type == "ERROR" and parent.type == "formals":
        children = node.children
        prev, nxt = node.prev_sibling, node.next_sibling
        return (
            len(children) == 1
            and children[0].type == ","
            and prev is not None
            and prev.type == "formal"
            and nxt is not None
            and nxt.type == "}"
        )
    return False


def is_gap_formal(node: tree_sitter.Node) -> bool:
    """A `formal` node that only exists because of a tolerated trailing comma."""
    return (
        node.type == "formal"
        and node.child_count == 1
        and node.children[0].is_missing
        and _is_trailing_comma_gap(node.children[0])
    )


def syntax_problems(tree: tree_sitter.Tree, source: SourceFile) -> list[SyntaxProblem]:
    """Parse errors a user must fix, outermost first; the trailing-comma gap is not one."""
    root = tree.root_node
    if not root.has_error:
        return []
    problems: list[SyntaxProblem] = []
    stack = [root]
    while stack:
        node = stack.pop()
        if not node.has_error and not node.is_missing:
            continue
        if node.is_missing:
            if not _is_trailing_comma_gap(node):
                problems.append(SyntaxProblem(node.start_byte, node.end_byte, _missing_message(node)))
            continue
        if node.type == "ERROR":
            if not _is_trailing_comma_gap(node):
                problems.append(_error_problem(node, source))
            continue
        stack.extend(reversed(node.children))
    problems.sort(key=lambda p: (p.start, p.end))
    return problems


def _missing_message(node: tree_sitter.Node) -> str:
    if node.is_named:
        what = "an expression" if node.type == "identifier" else node.type.replace("_", " ")
        return f"syntax error: expected {what} here"
    return f"syntax error: missing `{node.type}`"


def _error_problem(node: tree_sitter.Node, source: SourceFile) -> SyntaxProblem:
    start, end = node.start_byte, node.end_byte
    first_line_end = source.line_end(source.line_of(start))
    shown = source.slice(start, min(end, first_line_end, start + 40)).strip()
    if not shown:
        return SyntaxProblem(start, end, "syntax error")
    return SyntaxProblem(start, end, f"syntax error: unexpected `{shown}`")
