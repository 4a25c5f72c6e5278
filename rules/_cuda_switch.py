"""The expression's CUDA switch and the guards on it, shared by CUDA304, CUDA311 and CUDA315
(not a rule module).

"The switch" is a lexical `cudaSupport` (a formal, a `let` binding, `inherit (config)
cudaSupport;`) that the build reads: one read only by `meta` (`broken = !cudaSupport;`) marks a
CUDA-only package. A condition "mentions" the switch when it names `cudaSupport` (also as
`config.cudaSupport`), a switch-like name (`enableCuda`, `withCuda`), a variable derived from it
(`useCuda = cudaSupport && ...;`, `enableCuda ? config.cudaSupport`) or one the file asserts to
imply it (`assert withNccl -> cudaSupport;`). An `assert cudaSupport;` (or
`lib.assertMsg cudaSupport "..."`) guards everything in its body.
"""

from __future__ import annotations

import re

from tree_sitter import Node

from cudalint.lint import edits
from cudalint.lint.context import Context
from cudalint.lint.model import Applicability, Edit, Fix
from cudalint.nix.semantic import InputSite, NameBinding
from cudalint.nix.syntax import ancestors, attrpath_names, descendants, flatten_apply, last_name, text, unparen

SWITCH = re.compile(r"\bcudaSupport\b")
_META = frozenset({"meta"})
_SWITCH_LIKE = re.compile(r"^(?:enable|with|use|has)_?[Cc]uda$")


def file_switch(node: Node, ctx: Context) -> NameBinding | None:
    """The `cudaSupport` switch in scope at `node` that the build reads, if any."""
    switch = ctx.semantic.resolve_name("cudaSupport", node)
    if not switch.lexical or _only_in_meta(switch, ctx):
        return None
    return switch


def is_guarded(node: Node, ctx: Context) -> bool:
    """`node` is evaluated only when the switch is on (or off): under a condition that mentions
    it, or in the body of an `assert` that requires it."""
    return any(mentions_switch(g.condition, ctx) for g in ctx.semantic.guards(node)) or under_switch_assert(node, ctx)


def mentions_switch(condition: Node, ctx: Context) -> bool:
    if SWITCH.search(text(condition)):
        return True
    for node in descendants(condition):
        if node.type != "variable_expression":
            continue
        name = text(node)
        if _SWITCH_LIKE.match(name):
            return True
        binding = ctx.semantic.resolve(node)
        if binding.kind in {"let", "rec"} and binding.value is not None and SWITCH.search(text(binding.value)):
            return True
        if binding.kind == "formal" and binding.node is not None and binding.node.type == "formal":
            default = binding.node.child_by_field_name("default")
            if default is not None and SWITCH.search(text(default)):
                return True
        if binding.lexical and _asserted_switch(binding, ctx):
            return True
    return False


def conjuncts(node: Node | None) -> list[Node]:
    """The terms of `a && b && c` (a single term otherwise), without parentheses."""
    terms: list[Node] = []
    pending = [node]  # a stack, not recursion: generated conditions chain thousands of terms
    while pending:
        current = unparen(pending.pop())
        if current is None:
            continue
        if current.type == "binary_expression" and operator(current) == "&&":
            pending += [current.child_by_field_name("right"), current.child_by_field_name("left")]
        else:
            terms.append(current)
    return terms


def operator(node: Node) -> str | None:
    found = node.child_by_field_name("operator")
    return found.type if found is not None else None


def asserted_condition(assertion: Node) -> Node | None:
    """What an `assert` checks, looking through `lib.assertMsg cond "message"`."""
    condition = unparen(assertion.child_by_field_name("condition"))
    if condition is not None and condition.type == "apply_expression":
        function, arguments = flatten_apply(condition)
        if last_name(function) == "assertMsg" and len(arguments) == 2:
            return unparen(arguments[0])
    return condition


def under_switch_assert(node: Node, ctx: Context) -> bool:
    """`node` is in the body of `assert cudaSupport;` (or `assert cudaSupport && ...;`)."""
    child = node
    for parent in ancestors(node):
        if parent.type == "assert_expression" and parent.child_by_field_name("body") == child:
            if any(term.type in {"variable_expression", "select_expression"} and mentions_switch(term, ctx) for term in conjuncts(asserted_condition(parent))):
                return True
        child = parent
    return False


def in_attribute(node: Node, names: frozenset[str]) -> bool:
    """`node` is (in) the value of an attribute whose path starts with one of `names`."""
    current: Node | None = node
    while current is not None:
        if current.type == "binding" and attrpath_names(current.child_by_field_name("attrpath"))[0] in names:
            return True
        current = current.parent
    return False


def _only_in_meta(switch: NameBinding, ctx: Context) -> bool:
    """A `cudaSupport` read only by the package's `meta` (`broken = !cudaSupport;`) switches
    nothing in the build: the package is CUDA-only."""
    if switch.node is None:
        return False
    semantic = ctx.semantic
    return semantic.first_use("cudaSupport", switch.node) is not None and semantic.first_use("cudaSupport", switch.node, lambda use: not in_attribute(use, _META)) is None


def _asserted_switch(binding: NameBinding, ctx: Context) -> bool:
    """`assert ncclSupport -> cudaSupport && ...;`: the file asserts that the variable implies
    the switch, so a guard on it is a guard on `cudaSupport`."""
    if binding.node is None:
        return False
    for use in ctx.semantic.uses(binding.name, binding.node):
        implication = use.parent
        if implication is None or implication.type != "binary_expression":
            continue
        if operator(implication) != "->" or implication.child_by_field_name("left") != use:
            continue
        condition = implication
        while condition.parent is not None and condition.parent.type == "parenthesized_expression":
            condition = condition.parent
        holder = condition.parent
        if holder is None or holder.type != "assert_expression" or holder.child_by_field_name("condition") != condition:
            continue
        if any(text(term) == "cudaSupport" for term in conjuncts(implication.child_by_field_name("right"))):
            return True
    return False


# ----- the fix -----------------------------------------------------------------------------------

# Where a list can be replaced by `list ++ lib.optionals cudaSupport [ x ]` without parentheses.
_OPEN_CONTEXTS = frozenset({"binding", "parenthesized_expression", "with_expression", "let_expression", "assert_expression", "if_expression", "function_expression"})


def guard_fix(root: Node, site: InputSite, ctx: Context) -> Fix | None:
    """Move the list element `root` of `site` under `lib.optionals cudaSupport [ ... ]`, into
    one already joined to its list by `++` if there is one."""
    semantic, source = ctx.semantic, ctx.source
    listing = site.list_node
    if listing is None or unparen(site.element) != unparen(root):
        return None
    if edits.is_bound(semantic, listing, "lib"):
        guard = "lib.optionals cudaSupport"
    elif edits.is_bound(semantic, listing, "pkgs"):
        guard = "pkgs.lib.optionals cudaSupport"
    else:
        return None
    if not semantic.resolve_name("cudaSupport", listing).lexical:
        return None
    element = site.element
    item = text(element)
    elements = edits.list_elements(listing)
    sibling, joint = _guarded_sibling(listing)
    changes: list[Edit]
    if sibling is not None and joint is not None:
        added = edits.append_to_list(source, sibling, [item])
        if added is None:
            return None
        if len(elements) == 1:
            removal = Edit(listing.start_byte, joint[1], "") if joint[0] == "left" else Edit(joint[1], listing.end_byte, "")
        else:
            removal = edits.delete_element(source, element)
        changes = [removal, added]
    else:
        if len(elements) == 1:
            rewritten = f"{guard} [ {item} ]"
        else:
            removal = edits.delete_element(source, element)
            data = source.data
            kept = (data[listing.start_byte : removal.start] + data[removal.end : listing.end_byte]).decode("utf-8", "replace")
            rewritten = f"{kept} ++ {guard} [ {item} ]"
        if not _is_open(listing):
            rewritten = f"({rewritten})"
        changes = [edits.replace(listing, rewritten)]
    return Fix(
        f"Move `{item}` under `{guard}`",
        Applicability.UNSAFE,
        tuple(edits.merge_edits(changes)),
        isolation=f"cuda-guard:list:{listing.start_byte}",
    )


def _is_open(listing: Node) -> bool:
    parent = listing.parent
    if parent is None:
        return True
    if parent.type == "binary_expression":
        return parent.child_by_field_name("operator").type == "++"
    if parent.type == "if_expression":
        return parent.child_by_field_name("condition") != listing
    return parent.type in _OPEN_CONTEXTS


def _guarded_sibling(listing: Node) -> tuple[Node | None, tuple[str, int] | None]:
    """A `lib.optionals cudaSupport [ ... ]` list joined to `listing` by `++`, and where the
    joint is: ("left", start of the right operand) when `listing` is the left operand,
    ("right", end of the left operand) when it is the right one."""
    parent = listing.parent
    if parent is None or parent.type != "binary_expression" or parent.child_by_field_name("operator").type != "++":
        return None, None
    left, right = parent.child_by_field_name("left"), parent.child_by_field_name("right")
    if left == listing:
        neighbour = right
        while neighbour is not None and neighbour.type == "binary_expression" and neighbour.child_by_field_name("operator").type == "++":
            neighbour = neighbour.child_by_field_name("left")
        found = _guarded_list(neighbour)
        return (found, ("left", right.start_byte)) if found is not None else (None, None)
    found = _guarded_list(left)
    return (found, ("right", left.end_byte)) if found is not None else (None, None)


def _guarded_list(node: Node | None) -> Node | None:
    node = unparen(node)
    if node is None or node.type != "apply_expression":
        return None
    function, arguments = flatten_apply(node)
    if last_name(function) != "optionals" or len(arguments) != 2 or text(arguments[0]) != "cudaSupport":
        return None
    listing = unparen(arguments[1])
    return listing if listing is not None and listing.type == "list_expression" else None
