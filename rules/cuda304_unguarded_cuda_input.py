"""CUDA packages added to inputs regardless of the expression's `cudaSupport` switch.

In an expression that has a `cudaSupport` switch (a formal, a `let` binding or an
`inherit (config) cudaSupport;`), flags CUDA packages and outputs (`cudaPackages.cuda_cudart`,
`libcublas` under `with cudaPackages;`, `(lib.getDev libcusparse)`, a `cuda_nvcc` formal, ...)
and the CUDA runpath hooks (`autoAddDriverRunpath`, `autoAddCudaCompatRunpath`) that reach an
input list (`nativeBuildInputs`, `buildInputs`, `propagatedBuildInputs`, `dependencies`,
`packages`, ...) without a guard on that switch, also through let-bound lists
(`cudaDeps = [ ... ]; buildInputs = cudaDeps;`). Guards are `lib.optionals cudaSupport [...]`,
`lib.optional cudaSupport x`, `if cudaSupport then ... else ...`, conditions that mention the
switch (`cudaSupport && cudaAtLeast "12.0"`) and variables derived from it
(`useCuda = cudaSupport && ...;`) or that the file asserts to imply it
(`assert withNccl -> cudaSupport && ...;` makes `lib.optional withNccl nccl` guarded), and the
body of `assert cudaSupport;` / `assert lib.assertMsg cudaSupport "...";` (CUDA311 asks to turn
that assert into `meta.broken = !cudaSupport;`, which keeps this rule silent too). Not
flagged: expressions without a `cudaSupport` switch (CUDA-only packages, including those that
read `cudaSupport` only in `meta`, e.g. `broken = !cudaSupport;`), CUDA packages outside input lists (`passthru`, `disallowedRequisites`),
a runpath hook under any condition (drivers serve Vulkan/OpenCL too), and
`addDriverRunpath`, which graphics packages use without CUDA.

Contexts: wherever a derivation with a `cudaSupport` switch lists inputs (packages, overrides,
dev shells built with `mkShell`): the same warning, as the switch makes the same promise there.

## Why
A `cudaSupport` switch promises that with it off the package neither builds nor depends on
CUDA: no unfree redistributables to download or evaluate, no CUDA in the closure, and it
evaluates on platforms CUDA does not support (Darwin). One CUDA input outside the guard breaks
that promise: the "CPU" variant still pulls `cuda_cudart` (and with it `allowUnfree` errors or a
larger closure), and `config.cudaSupport = false` no longer means what it says.

The fix moves the element into `lib.optionals cudaSupport [ ... ]` appended to its list (reusing
one that is already there), when `lib` (or `pkgs`, for `pkgs.lib.optionals`) is in scope. It is unsafe: it changes what the non-CUDA
build gets, which is the point, but a package that really needs the input unconditionally
should instead be CUDA-only (drop the switch).

## Example
```nix
{ lib, stdenv, config, cudaPackages, zlib, cudaSupport ? config.cudaSupport }:
stdenv.mkDerivation {
  pname = "demo";
  version = "1.0";
  buildInputs = [ zlib cudaPackages.cuda_cudart ];
}
```

## Use instead
```nix
{ lib, stdenv, config, cudaPackages, zlib, cudaSupport ? config.cudaSupport }:
stdenv.mkDerivation {
  pname = "demo";
  version = "1.0";
  buildInputs = [ zlib ] ++ lib.optionals cudaSupport [ cudaPackages.cuda_cudart ];
}
```

## References
- https://nixos.org/manual/nixpkgs/unstable/#cuda
- https://github.com/NixOS/nixpkgs/pull/224068
"""

from __future__ import annotations

from tree_sitter import Node

from cudalint.knowledge import catalog
from cudalint.lint import edits
from cudalint.lint.context import Context
from cudalint.lint.model import Applicability, Edit, Fix, FixAvailability, Severity
from cudalint.lint.rule import Rule
from cudalint.nix.semantic import InputSite
from cudalint.nix.syntax import (
    attrpath_names,
    flatten_apply,
    last_name,
    text,
    unparen,
)

from cudalint.rules._cuda_switch import file_switch, is_guarded
from cudalint.rules._runpath_hooks import COMPAT_HOOKS, DRIVER_HOOKS

RULE = Rule(
    code="CUDA304",
    name="unguarded-cuda-input",
    severity=Severity.WARNING,
    fix=Applicability.UNSAFE,
    availability=FixAvailability.SOMETIMES,
    summary="CUDA package in inputs outside the expression's `cudaSupport` guard",
    node_types=("variable_expression",),
    patterns=(b"cudaSupport",),
)

# A dev shell's `packages` count too: a CUDA package there is as unguarded as in `buildInputs`.
INPUT_ATTRS = catalog.INPUT_ATTRIBUTES | {"packages"}
# Hooks that exist for CUDA's sake; `addDriverRunpath` also serves OpenGL/Vulkan packages.
RUNPATH_HOOKS = DRIVER_HOOKS | COMPAT_HOOKS
_MAX_DEPTH = 3


@RULE
def check(variable: Node, ctx: Context) -> None:
    semantic = ctx.semantic
    root = semantic.reference_root(variable)
    what = _cuda_input(root, ctx)
    if what is None:
        return
    if file_switch(root, ctx) is None:
        return
    is_hook = what in RUNPATH_HOOKS
    found = _unguarded_site(root, ctx, is_hook, 0)
    if found is None:
        return
    site, direct = found
    shown = " ".join(text(root).split())
    shown = shown if len(shown) <= 60 else what
    through = "" if direct else " (through a let binding)"
    ctx.report(
        root,
        f"`{shown}` is in `{site.attr}`{through} even when `cudaSupport` is false: put it under `lib.optionals cudaSupport [ ... ]`",
        fixes=[_guard_fix(root, site, ctx) if direct else None],
    )


def _cuda_input(root: Node, ctx: Context) -> str | None:
    """The CUDA package or hook `root` denotes, if it is one this rule cares about."""
    ref = ctx.semantic.cuda_ref(root)
    if ref is not None:
        if ref.via == "let" or ref.package in catalog.scope_attributes():
            return None  # a let-bound reference is judged where it is bound
        return ref.package
    name = last_name(root)
    if name in RUNPATH_HOOKS and unparen(root) is not None and unparen(root).type in {"variable_expression", "select_expression"}:
        return name
    return None


def _unguarded_site(node: Node, ctx: Context, is_hook: bool, depth: int) -> tuple[InputSite, bool] | None:
    """An input list `node` reaches without a `cudaSupport` guard, and whether directly."""
    if is_hook and ctx.semantic.guards(node) or is_guarded(node, ctx):
        return None
    site = ctx.semantic.input_site(node)
    if site is not None:
        return (site, depth == 0) if site.attr in INPUT_ATTRS else None
    if depth >= _MAX_DEPTH:
        return None
    binding = ctx.semantic.let_binding_holding(node)
    if binding is None:
        return None
    name = attrpath_names(binding.child_by_field_name("attrpath"))[0]
    assert name is not None
    for use in ctx.semantic.uses(name, binding):
        found = _unguarded_site(use, ctx, is_hook, depth + 1)
        if found is not None:
            return found[0], False
    return None


# ----- the fix -----------------------------------------------------------------------------------

# Where a list can be replaced by `list ++ lib.optionals cudaSupport [ x ]` without parentheses.
_OPEN_CONTEXTS = frozenset({"binding", "parenthesized_expression", "with_expression", "let_expression", "assert_expression", "if_expression", "function_expression"})


def _guard_fix(root: Node, site: InputSite, ctx: Context) -> Fix | None:
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
        isolation=f"CUDA304:list:{listing.start_byte}",
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

