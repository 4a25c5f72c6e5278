"""Whether a node stands in a test's script (CUDA102, CUDA305): the text a check runs, where
literal paths and architectures are the expectations or inputs of the test, not settings of a
package (not a rule module)."""

from __future__ import annotations

from tree_sitter import Node

from cudalint.lint.context import Context
from cudalint.nix.syntax import ATTRSET_TYPES, ancestors, flatten_apply, last_name, outermost_apply, string_literal, text, unparen

# Builders of a check's script.
TEST_RUNNERS = frozenset({"runCommand", "runCommandCC", "runCommandLocal", "runCommandNoCC"})


def in_test_script(node: Node, ctx: Context) -> bool:
    """`node` is in a `runCommand` that is a test: named `...test...`, in a `tests/` directory, or
    asking for a GPU builder (`requiredSystemFeatures`)."""
    return any(ancestor.type == "apply_expression" and _test_runner(ancestor, ctx) for ancestor in ancestors(node))


def _test_runner(apply: Node, ctx: Context) -> bool:
    if outermost_apply(apply) != apply:
        return False
    function, arguments = flatten_apply(apply)
    if last_name(function) not in TEST_RUNNERS or not arguments:
        return False
    name = string_literal(arguments[0]) or text(arguments[0])
    if "test" in name.lower() or "/tests/" in ctx.source.path.replace("\\", "/"):
        return True
    attrs = unparen(arguments[1]) if len(arguments) > 1 else None
    return attrs is not None and attrs.type in ATTRSET_TYPES and b"requiredSystemFeatures" in (attrs.text or b"")
