"""Where a rule about names meets one: `x.name` (a select), a bare `name` (a variable, resolved
through `with` or the file's bindings), `inherit (x) name;`, and for some rules a function formal.
CUDA002, CUDA003, CUDA005 and CUDA006 judge names of package sets and of nixpkgs' top level on
all of these; this is their one dispatch, so each writes only what it judges."""

from __future__ import annotations

from collections.abc import Callable

from tree_sitter import Node

from cudalint.lint.context import Context
from cudalint.nix.syntax import identifier_name

NAME_SITES = ("select_expression", "variable_expression", "inherited_attrs")
NAME_SITES_AND_FORMALS = (*NAME_SITES, "formal")

Check = Callable[[Node, Context], None]


def dispatch(node: Node, ctx: Context, *, select: Check, variable: Check, inherit: Check, formal: Check | None = None) -> None:
    """Hand `node` (one of the rule's `node_types`: NAME_SITES, or NAME_SITES_AND_FORMALS with
    `formal`) to the check for its kind."""
    kind = node.type
    if kind == "select_expression":
        select(node, ctx)
    elif kind == "variable_expression":
        variable(node, ctx)
    elif kind == "inherited_attrs":
        inherit(node, ctx)
    elif kind == "formal" and formal is not None:
        formal(node, ctx)


def inherited_from(attrs: Node) -> tuple[Node, Node | None, list[tuple[Node, str | None]]] | None:
    """For the `inherited_attrs` of `inherit (source) a b;`: the statement, its source expression
    and each name's node with the name. None for a plain `inherit a b;`."""
    statement = attrs.parent
    if statement is None or statement.type != "inherit_from":
        return None
    names = [(attr, identifier_name(attr)) for attr in attrs.children_by_field_name("attr")]
    return statement, statement.child_by_field_name("expression"), names


def inherited_from_package_set(attrs: Node, ctx: Context) -> tuple[Node, Node | None, list[tuple[Node, str | None]]] | None:
    """`inherited_from`, for `inherit (cudaPackages) a b;` only (the source is a CUDA package set)."""
    inherited = inherited_from(attrs)
    if inherited is None or ctx.semantic.package_set_name(inherited[1]) is None:
        return None
    return inherited
