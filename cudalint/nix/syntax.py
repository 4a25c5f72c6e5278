"""Small, pure helpers over tree-sitter-nix nodes (no scopes, no CUDA knowledge)."""

from __future__ import annotations

from collections.abc import Iterator

from tree_sitter import Node

STRING_TYPES = frozenset({"string_expression", "indented_string_expression"})
ATTRSET_TYPES = frozenset({"attrset_expression", "rec_attrset_expression"})


def node_key(node: Node) -> tuple[int, int, str]:
    """A stable key for caches: py-tree-sitter creates a new Node object per access."""
    return node.start_byte, node.end_byte, node.type


def text(node: Node) -> str:
    raw = node.text
    return raw.decode("utf-8", "replace") if raw is not None else ""


def unparen(node: Node | None) -> Node | None:
    while node is not None and node.type == "parenthesized_expression":
        node = node.child_by_field_name("expression")
    return node


def identifier_name(node: Node | None) -> str | None:
    """The name of a plain identifier, or of a quoted attribute name without interpolation."""
    if node is None:
        return None
    if node.type == "identifier":
        return text(node)
    if node.type == "string_expression" and all(c.type in {'"', "string_fragment"} for c in node.children):
        return "".join(text(c) for c in node.children if c.type == "string_fragment")
    return None


def attrpath_names(attrpath: Node | None) -> list[str | None]:
    """The components of an attrpath; None for a component that is computed (`${x}`)."""
    if attrpath is None:
        return []
    return [identifier_name(c) for c in attrpath.children_by_field_name("attr")]


def dotted_name(node: Node | None) -> str | None:
    """`a.b.c` for a variable or a select of plain names (without `or` default), else None."""
    node = unparen(node)
    if node is None:
        return None
    if node.type == "variable_expression":
        return text(node.child_by_field_name("name"))
    if node.type == "select_expression" and node.child_by_field_name("default") is None:
        base = dotted_name(node.child_by_field_name("expression"))
        names = attrpath_names(node.child_by_field_name("attrpath"))
        if base is None or any(n is None for n in names):
            return None
        return ".".join([base, *names])  # type: ignore[list-item]
    return None


def last_name(node: Node | None) -> str | None:
    """The final name of `x`, `a.b.x` (whatever the base), for hooks and builders."""
    node = unparen(node)
    if node is None:
        return None
    if node.type == "variable_expression":
        return text(node.child_by_field_name("name"))
    if node.type == "select_expression":
        names = attrpath_names(node.child_by_field_name("attrpath"))
        return names[-1] if names else None
    return None


# Real calls take a handful of curried arguments; a chain longer than this (generated or
# hostile input) is not a call of any function the rules know, and walking it per node would
# make the rules quadratic.
MAX_CURRIED_ARGUMENTS = 64


def flatten_apply(node: Node) -> tuple[Node, list[Node]]:
    """`f a b c` -> (f, [a, b, c]). Past MAX_CURRIED_ARGUMENTS the returned "function" is the
    remaining application, which names no function."""
    arguments: list[Node] = []
    while node.type == "apply_expression" and len(arguments) < MAX_CURRIED_ARGUMENTS:
        arguments.append(node.child_by_field_name("argument"))
        node = node.child_by_field_name("function")
    arguments.reverse()
    return node, arguments


def outermost_apply(node: Node) -> Node:
    """The whole curried call a partial application `f a` belongs to (at most
    MAX_CURRIED_ARGUMENTS levels up)."""
    for _ in range(MAX_CURRIED_ARGUMENTS):
        parent = node.parent
        if parent is None or parent.type != "apply_expression" or parent.child_by_field_name("function") != node:
            break
        node = parent
    return node


def function_name(call: Node) -> str | None:
    """Dotted name of the called function of a (possibly curried) apply."""
    function, _ = flatten_apply(call)
    return dotted_name(function)


def string_literal(node: Node | None) -> str | None:
    """The value of a string without interpolations."""
    node = unparen(node)
    if node is None or node.type not in STRING_TYPES:
        return None
    parts = []
    for child in node.children:
        if child.type == "interpolation":
            return None
        if child.type in {"string_fragment", "escape_sequence"}:
            parts.append(text(child))
    return "".join(parts)


def field_of(parent: Node, child: Node) -> str | None:
    """Which field of `parent` holds `child` (None for unnamed positions)."""
    for index, candidate in enumerate(parent.children):
        if candidate == child:
            return parent.field_name_for_child(index)
    return None


def ancestors(node: Node) -> Iterator[Node]:
    parent = node.parent
    while parent is not None:
        yield parent
        parent = parent.parent


def descendants(node: Node, max_depth: int | None = None, skipped: list[Node] | None = None) -> Iterator[Node]:
    """Pre-order walk without recursion (deeply nested input must not hit Python's limit).

    With `max_depth`, subtrees below that depth are not entered; their roots go to `skipped`."""
    cursor = node.walk()
    depth = 0
    while True:
        yield cursor.node
        if max_depth is not None and depth >= max_depth and cursor.node.child_count:
            if skipped is not None:
                skipped.append(cursor.node)
        elif cursor.goto_first_child():
            depth += 1
            continue
        while depth > 0 and not cursor.goto_next_sibling():
            cursor.goto_parent()
            depth -= 1
        if depth == 0:
            return


def binding_value(binding: Node) -> Node | None:
    return binding.child_by_field_name("expression")


def bindings_of(attrset_or_let: Node) -> list[Node]:
    """The `binding`/`inherit`/`inherit_from` nodes of an attrset or let."""
    for child in attrset_or_let.children:
        if child.type == "binding_set":
            return [c for c in child.named_children if c.type in {"binding", "inherit", "inherit_from"}]
    return []
