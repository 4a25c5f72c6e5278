"""The expression's CUDA switch and the guards on it, shared by CUDA304, CUDA311 and CUDA315
(not a rule module).

"The switch" is a lexical `cudaSupport` (a formal, a `let` binding, `inherit (config)
cudaSupport;`) that the build reads, in a package that also builds without CUDA. A CUDA-only
package switches nothing, whatever it reads: it says so by `meta` (`broken = !cudaSupport;`,
`broken = !cudaSupport || ...;`, `badPlatforms = lib.optionals (!cudaSupport) lib.platforms.all;`,
`platforms = lib.optionals cudaSupport lib.platforms.linux;`), by reading the switch only in
`meta` and `passthru`, or by failing without it (`assert cudaSupport;`, a `throw` on the
non-CUDA side of a derivation attribute or of the whole package, `lib.throwIfNot cudaSupport`).
A condition "mentions" the switch when it names `cudaSupport` (also as `config.cudaSupport`), a
switch-like name (`enableCuda`, `withCuda`), a variable derived from it (`useCuda = cudaSupport
&& ...;`, `enableCuda ? config.cudaSupport`, also through more `let` bindings) or one the file
asserts to imply it (`assert withNccl -> cudaSupport;`). An `assert cudaSupport;` (or
`lib.assertMsg cudaSupport "..."`, `lib.throwIfNot cudaSupport "..." drv`) guards everything in
its body.
"""

from __future__ import annotations

import re

from tree_sitter import Node

from cudalint.lint import edits
from cudalint.lint.context import Context
from cudalint.lint.model import Applicability, Edit, Fix
from cudalint.nix.places import DERIVATION_BUILDERS
from cudalint.nix.semantic import InputSite, NameBinding
from cudalint.nix.syntax import ancestors, attrpath_names, binding_value, descendants, flatten_apply, last_name, outermost_apply, text, unparen

SWITCH = re.compile(r"\bcudaSupport\b")
_META = frozenset({"meta"})
# Attributes the build never reads: a switch read only there switches nothing.
_NOT_BUILD = frozenset({"meta", "passthru"})
_SWITCH_LIKE = re.compile(r"^(?:enable|with|use|has)_?(?:[Cc]uda|CUDA)$")
# `meta` attributes by which a package says it is CUDA-only.
_CUDA_ONLY_META = frozenset({"broken", "badPlatforms", "platforms"})
_THROWS = frozenset({"throw", "throwIf", "throwIfNot"})
_MAX_DEPTH = 6


def file_switch(node: Node, ctx: Context) -> NameBinding | None:
    """The `cudaSupport` switch in scope at `node` that the build reads, if any: None also in a
    CUDA-only package, which has nothing to switch."""
    switch = ctx.semantic.resolve_name("cudaSupport", node)
    if not switch.lexical or _only_outside_build(switch, ctx) or cuda_only(ctx):
        return None
    return switch


def is_guarded(node: Node, ctx: Context) -> bool:
    """`node` is evaluated only when the switch is on (or off): under a condition that mentions
    it, or in the body of an `assert` (or `lib.throwIfNot`) that requires it."""
    return any(mentions_switch(g.condition, ctx) for g in ctx.semantic.guards(node)) or under_switch_assert(node, ctx)


def mentions_switch(condition: Node, ctx: Context, depth: int = 0) -> bool:
    if SWITCH.search(text(condition)):
        return True
    for node in descendants(condition):
        if node.type != "variable_expression":
            continue
        name = text(node)
        if _SWITCH_LIKE.match(name):
            return True
        binding = ctx.semantic.resolve(node)
        if binding.kind in {"let", "rec"} and binding.value is not None and depth < _MAX_DEPTH and _value_mentions_switch(binding.value, ctx, depth + 1):
            return True
        if binding.kind == "formal" and binding.node is not None and binding.node.type == "formal":
            default = binding.node.child_by_field_name("default")
            if default is not None and SWITCH.search(text(default)):
                return True
        if binding.lexical and _asserted_switch(binding, ctx):
            return True
    return False


def _value_mentions_switch(value: Node, ctx: Context, depth: int) -> bool:
    """`mentions_switch` of a `let` value, once per value and file (chains of `let` names would
    otherwise be walked again for every condition that reads them; a cycle reads as False)."""
    memo = ctx.semantic.memo(__name__)
    key = ("mentions", value.start_byte, value.end_byte)
    if key not in memo:
        memo[key] = False
        memo[key] = mentions_switch(value, ctx, depth)
    return memo[key]


def switch_value(expression: Node | None, ctx: Context, on: bool, depth: int = 0) -> bool | None:
    """The value of a boolean expression when the CUDA switch is `on` (or off), where that alone
    decides it: `cudaSupport`, `config.cudaSupport`, `enableCuda ? config.cudaSupport`, a `let`
    name for one of them, and `!`, `&&`, `||`, `->` of those; None where it depends on more."""
    node = unparen(expression)
    if node is None or depth > _MAX_DEPTH:
        return None
    kind = node.type
    if kind == "unary_expression" and text(node).lstrip().startswith("!"):
        inner = switch_value(node.child_by_field_name("argument"), ctx, on, depth + 1)
        return None if inner is None else not inner
    if kind == "binary_expression" and operator(node) in {"&&", "||", "->"}:
        left = switch_value(node.child_by_field_name("left"), ctx, on, depth + 1)
        right = switch_value(node.child_by_field_name("right"), ctx, on, depth + 1)
        if operator(node) == "->":
            left = None if left is None else not left
        elif operator(node) == "&&":
            return False if False in (left, right) else True if left is right is True else None
        return True if True in (left, right) else False if left is right is False else None
    if kind == "select_expression":
        names = attrpath_names(node.child_by_field_name("attrpath"))
        return on if names[-1:] == ["cudaSupport"] and node.child_by_field_name("default") is None else None
    if kind != "variable_expression":
        return None
    name = text(node)
    binding = ctx.semantic.resolve(node)
    if binding.kind in {"let", "rec"} and binding.value is not None and name != "cudaSupport":
        return switch_value(binding.value, ctx, on, depth + 1)
    if name == "cudaSupport" or _SWITCH_LIKE.match(name):
        return on
    if binding.kind == "formal" and binding.node is not None and binding.node.type == "formal":
        return switch_value(binding.node.child_by_field_name("default"), ctx, on, depth + 1)
    return None


def cuda_only(ctx: Context) -> bool:
    """The file's package says it is CUDA-only: `meta` marks it broken or unsupported without
    CUDA, or one of its attributes throws without CUDA."""
    memo = ctx.semantic.memo(__name__)
    if "cuda_only" not in memo:
        memo["cuda_only"] = _marked_cuda_only(ctx) or _throws_without_switch(ctx)
    return memo["cuda_only"]


def throw_call(variable: Node) -> tuple[str, Node] | None:
    """For the variable a throw is reached through (`throw`, `lib` of `lib.throwIf`, `builtins`),
    the throw's name and its whole call."""
    call = variable.parent
    if call is not None and call.type == "select_expression":
        variable, call = call, call.parent
    name = last_name(variable)
    if name not in _THROWS or call is None or call.type != "apply_expression" or call.child_by_field_name("function") != variable:
        return None
    return name, outermost_apply(call)


def throws_when(name: str, call: Node, ctx: Context, on: bool) -> bool | None:
    """Whether the throw `call` fails evaluation when the switch is `on` (or off), as far as the
    switch alone decides: False when a guard around it (or `throwIf`'s condition) rules that out."""
    if name != "throw":
        _, arguments = flatten_apply(call)
        if not arguments:
            return None
        condition = switch_value(arguments[0], ctx, on)
        if condition is not None:
            return condition if name == "throwIf" else not condition
    taken = [switch_value(g.condition, ctx, on) for g in ctx.semantic.guards(call)]
    polarity = [g.positive for g in ctx.semantic.guards(call)]
    if any(value is not None and value != positive for value, positive in zip(taken, polarity)):
        return False
    return True if any(value is not None for value in taken) else None


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
    """`node` is in the body of `assert cudaSupport;` (or `assert cudaSupport && ...;`), or of
    `lib.throwIfNot cudaSupport "..." body`: evaluated only with the switch on."""
    child = node
    for parent in ancestors(node):
        if parent.type == "assert_expression" and parent.child_by_field_name("body") == child:
            condition = asserted_condition(parent)
            if switch_value(condition, ctx, on=False) is False:
                return True
            if any(term.type in {"variable_expression", "select_expression"} and mentions_switch(term, ctx) for term in conjuncts(condition)):
                return True
        elif parent.type == "apply_expression" and parent.child_by_field_name("argument") == child:
            function, arguments = flatten_apply(parent)
            if last_name(function) in {"throwIf", "throwIfNot"} and len(arguments) == 3:
                condition = switch_value(arguments[0], ctx, on=False)
                if condition is not None and condition == (last_name(function) == "throwIf"):
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


def _only_outside_build(switch: NameBinding, ctx: Context) -> bool:
    """A `cudaSupport` read only by the package's `meta` (`broken = !cudaSupport;`) and
    `passthru` switches nothing in the build: the package is CUDA-only."""
    if switch.node is None:
        return False
    semantic = ctx.semantic
    return semantic.first_use("cudaSupport", switch.node) is not None and semantic.first_use("cudaSupport", switch.node, lambda use: not in_attribute(use, _NOT_BUILD)) is None


def _marked_cuda_only(ctx: Context) -> bool:
    """`meta.broken` true without CUDA (`!cudaSupport`, `!cudaSupport || ...`), `badPlatforms`
    listing every platform only without CUDA, or `platforms` empty without CUDA."""
    for binding in ctx.semantic.nodes_of_type("binding"):
        names = attrpath_names(binding.child_by_field_name("attrpath"))
        value = binding_value(binding)
        if not names or names[-1] not in _CUDA_ONLY_META or value is None or not in_attribute(binding, _META):
            continue
        if names[-1] == "broken" and switch_value(value, ctx, on=False) is True:
            return True
        if names[-1] == "badPlatforms" and any(_every_platform(node) and _only_without_switch(node, value, ctx) for node in descendants(value)):
            return True
        if names[-1] == "platforms" and _empty_without_switch(value, ctx):
            return True
    return False


def _every_platform(node: Node) -> bool:
    """`lib.platforms.all`, or the package's own `platforms` (`finalAttrs.meta.platforms`): not
    one platform that lacks something without CUDA (`[ "aarch64-darwin" ]`)."""
    return node.type in {"variable_expression", "select_expression"} and last_name(node) in {"all", "platforms"}


def _only_without_switch(node: Node, within: Node, ctx: Context) -> bool:
    """`node` is evaluated (within `within`) when the switch is off and not when it is on:
    `lib.optionals (!cudaSupport) lib.platforms.all`."""
    guards = [g for g in ctx.semantic.guards(node) if within.start_byte <= g.condition.start_byte and g.condition.end_byte <= within.end_byte]
    off = [switch_value(g.condition, ctx, on=False) for g in guards]
    on = [switch_value(g.condition, ctx, on=True) for g in guards]
    positive = [g.positive for g in guards]
    reached_off = all(value is None or value == p for value, p in zip(off, positive))
    excluded_on = any(value is not None and value != p for value, p in zip(on, positive))
    return reached_off and excluded_on


def _empty_without_switch(value: Node, ctx: Context) -> bool:
    """`lib.optionals cudaSupport lib.platforms.linux`, `if cudaSupport then ... else [ ]`."""
    node = unparen(value)
    if node is None:
        return False
    if node.type == "apply_expression":
        function, arguments = flatten_apply(node)
        return last_name(function) in {"optionals", "optional"} and len(arguments) == 2 and switch_value(arguments[0], ctx, on=False) is False
    if node.type == "if_expression":
        taken = switch_value(node.child_by_field_name("condition"), ctx, on=False)
        branch = unparen(node.child_by_field_name("consequence" if taken else "alternative")) if taken is not None else None
        return branch is not None and branch.type == "list_expression" and not branch.named_children
    return False


def _throws_without_switch(ctx: Context) -> bool:
    """An attribute of the package's derivation throws when the switch is off:
    `src = if cudaSupport then fetchurl { ... } else throw "CUDA only";`."""
    for variable in ctx.semantic.nodes_of_type("variable_expression"):
        if text(variable) not in {"throw", "lib", "builtins"}:
            continue
        found = throw_call(variable)
        if found is None or throws_when(found[0], found[1], ctx, on=False) is not True or throws_when(found[0], found[1], ctx, on=True) is not False:
            continue
        binding = ctx.semantic.enclosing_binding(found[1])
        if binding is None or in_attribute(binding, _NOT_BUILD):
            continue
        while binding is not None:
            call = ctx.semantic.enclosing_call(binding)
            if call is not None and call.name in DERIVATION_BUILDERS and binding.parent is not None and binding.parent.parent == call.attrset:
                return True
            binding = ctx.semantic.enclosing_binding(binding)
    return False


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


def switch_guard(at: Node, ctx: Context) -> str | None:
    """`lib.optionals cudaSupport ` (with the `lib` the file has) for an input a fix adds at `at`
    when the file's switch is in scope there (CUDA304 would ask for the guard); else None."""
    if file_switch(at, ctx) is None:
        return None
    if edits.is_bound(ctx.semantic, at, "lib"):
        return "lib.optionals cudaSupport "
    if edits.is_bound(ctx.semantic, at, "pkgs"):
        return "pkgs.lib.optionals cudaSupport "
    return None


def guard_fix(root: Node, site: InputSite, ctx: Context) -> Fix | None:
    """Move the list element `root` of `site` under `lib.optionals cudaSupport [ ... ]`, into
    one already joined to its list by `++` if there is one."""
    source = ctx.source
    listing = site.list_node
    if listing is None or unparen(site.element) != unparen(root):
        return None
    prefix = switch_guard(listing, ctx)
    if prefix is None:
        return None
    guard = prefix.rstrip()
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
            joint = " "
            if source.line_of(listing.start_byte) != source.line_of(listing.end_byte) and site.binding.type == "binding" and binding_value(site.binding) == listing:
                # nixfmt: a multi-line list continues with `++` on its own line, at the binding's indentation
                joint = source.newline + source.indentation_of_line(source.line_of(site.binding.start_byte))
            rewritten = f"{kept}{joint}++ {guard} [ {item} ]"
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
