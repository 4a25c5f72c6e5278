"""A top-level CUDA name nixpkgs removed or renamed (`cudatoolkit_10_2`, `cudnn_8_3_cudatoolkit_11`,
`nccl_cudatoolkit_11`, the top-level `cudnn`, `cutensor` and `nccl`, `cudatoolkit_11`, the Python
`pytorchWithCuda`): an error where the target nixpkgs no longer evaluates it, a warning where it
only warns.

Flagged where the name is taken from nixpkgs' top level: `pkgs.cudatoolkit_10_2`, `final.nccl` in an
overlay, `pkgsCross.<platform>.cudnn`, `nixpkgs.legacyPackages.${system}.cutensor`, a bare name from
`with pkgs;`, `inherit (pkgs) cudatoolkit_10_2;`, and a function formal of a versioned name
(`{ cudatoolkit_10_2 }:` asks `callPackage` for it); Python names through a Python package set
(`python3Packages.pytorchWithCuda`, `ps.pytorchWithCuda` in `withPackages`). Not flagged: names the
target nixpkgs still has as they were (an older target, before the change), formals named `cudnn`,
`nccl` or `cutensor` (a CUDA package set's `callPackage` supplies those), the names inside a CUDA
package set (`cudaPackages.cudnn`), names the file binds itself, strings and comments. Versioned
package sets are CUDA002's (`cudaPackages_11`), renamed hooks CUDA104's (`addOpenGLRunpath`). While a
name is in effect on the target CUDA001 leaves the versioned toolkits to this rule, so each is
reported once: before, CUDA001 reports `cudatoolkit_11` as the runfile toolkit.

## Why
nixpkgs moves every CUDA component into the CUDA package sets and removes old CUDA releases. The
names it drops become `throw`s in `pkgs/top-level/aliases.nix` (later deleted outright), so an
expression that still uses one fails to evaluate: CUDA 6 to 8 and their cuDNN builds throw since
2021-02-14 (PR #113107), CUDA 9 since 2021-04-18 (PR #119783); the versioned toolkits
(`cudatoolkit_10_2` -> `cudaPackages_10_2.cudatoolkit`), every `cudnn*_cudatoolkit_*`,
`cutensor_cudatoolkit_*` and `nccl_cudatoolkit_*`, and the top-level `cudnn`, `cutensor` and `nccl`
since 2022-04-04 (PR #167016). `cudatoolkit_11` warns with the rest of CUDA 11 from 24.11 (PR
#342112) and stopped evaluating on 2025-08-08 (PR #430797); `caffeWithCuda` throws since 2024-11-20;
the Python `pytorchWithCuda` is an alias of `torchWithCuda` since 2022-09-30 and `theanoWithCuda`
throws since 2024-05-20 (`pkgs/top-level/python-aliases.nix`). Whether the name is an error
follows the target nixpkgs (`nixpkgs` in `cudalint.toml`, `--nixpkgs`, or the pin the file has;
a warning that suggests `--nixpkgs` where the file's pin is a commit nothing dates, since the newest nixpkgs only stands in for it).

The fix writes the new name where nixpkgs renamed it to exactly that package and the new name
still evaluates on the target (`cudatoolkit_10_2` -> `cudaPackages_10_2.cudatoolkit` between
2022-04-04 and 2024-11-20, `nccl` -> `cudaPackages.nccl`, `pytorchWithCuda` -> `torchWithCuda`): it
is safe, the alias denoted that package. It never moves to another CUDA release: where the
release itself is gone, the message says so and there is no fix.

## Example
```nix
{ pkgs }:
pkgs.mkShell {
  packages = [ pkgs.cudatoolkit_10_2 pkgs.cudnn_cudatoolkit_10_2 ];
}
```

## Use instead
```nix
{ pkgs }:
pkgs.mkShell {
  packages = [ pkgs.cudaPackages.cuda_nvcc pkgs.cudaPackages.cudnn ];
}
```

## References
- https://github.com/NixOS/nixpkgs/pull/113107
- https://github.com/NixOS/nixpkgs/pull/119783
- https://github.com/NixOS/nixpkgs/pull/167016
- https://github.com/NixOS/nixpkgs/pull/342112
- https://github.com/NixOS/nixpkgs/pull/430797
- https://github.com/NixOS/nixpkgs/blob/master/pkgs/top-level/aliases.nix
"""

from __future__ import annotations

import re

from tree_sitter import Node

from cudalint.knowledge import catalog
from cudalint.lint import edits
from cudalint.lint.context import Context
from cudalint.lint.model import Applicability, Fix, FixAvailability, Severity
from cudalint.lint.rule import Rule
from cudalint.nix.syntax import identifier_name, text, unparen
from cudalint.rules._name_sites import NAME_SITES_AND_FORMALS, dispatch, inherited_from

RULE = Rule(
    code="CUDA006",
    name="removed-toplevel-name",
    severity=Severity.ERROR,
    fix=Applicability.SAFE,
    availability=FixAvailability.SOMETIMES,
    summary="Top-level CUDA name nixpkgs removed or renamed (`cudatoolkit_10_2`, `cudnn_cudatoolkit_*`)",
    node_types=NAME_SITES_AND_FORMALS,
    patterns=(b"cudatoolkit_", b"cudnn", b"cutensor", b"nccl", b"WithCuda"),
    removals=True,
)

# `cudnn`, `cutensor`, `nccl`: also members of every CUDA package set, so taken from the top level
# only when spelled that way (a formal of one of these is supplied by the set's `callPackage`).
_UNVERSIONED = re.compile(r"^[a-z]+$")
_SET_OF = re.compile(r"^(?P<set>cudaPackages(?:_\d+)*)\.")


@RULE
def check(node: Node, ctx: Context) -> None:
    dispatch(node, ctx, select=_check_select, variable=_check_variable, inherit=_check_inherit, formal=_check_formal)


def _check_formal(formal: Node, ctx: Context) -> None:
    name_node = formal.child_by_field_name("name")
    name = text(name_node) if name_node is not None else None
    if name is not None and not _UNVERSIONED.match(name):
        _report(ctx, name_node, name, "top-level", replaceable=False)


def _check_select(select: Node, ctx: Context) -> None:
    attrpath = select.child_by_field_name("attrpath")
    components = attrpath.children_by_field_name("attr") if attrpath is not None else []
    names = [identifier_name(c) for c in components]
    base = unparen(select.child_by_field_name("expression"))
    base_name = _top_level_variable(base, ctx)
    for index, name in enumerate(names):
        if name is None:
            continue
        if catalog.reaches_python_set(names, index, base_name) or _withpackages_formal(base, ctx) and index == 0:
            _report(ctx, components[index], name, "python", replaceable=True)
        elif catalog.reaches_top_level(names, index, base_name) or (index == 0 and _is_nixpkgs_import(base)):
            _report(ctx, components[index], name, "top-level", replaceable=True)


def _top_level_variable(base: Node | None, ctx: Context) -> str | None:
    """The name of the variable a selection starts from, as `reaches_top_level` wants it: a name
    the file binds counts as `pkgs` when its value is nixpkgs (`pkgs = import nixpkgs { };`)."""
    if base is None or base.type != "variable_expression":
        return None
    binding = ctx.semantic.resolve(base)
    if binding.kind in {"let", "rec"}:
        value = unparen(binding.value)
        return "pkgs" if value is not None and value.type != "variable_expression" and _names_top_level(value, ctx) else None
    return text(base.child_by_field_name("name"))


def _is_nixpkgs_import(node: Node | None) -> bool:
    """`import <nixpkgs> {}`, `(import nixpkgs { ... })`."""
    node = unparen(node)
    if node is None or node.type != "apply_expression":
        return False
    function = unparen(node.child_by_field_name("function"))
    if function is None or function.type != "apply_expression":
        return False
    head = text(function.child_by_field_name("function"))
    return head in ("import", "builtins.import") and "nixpkgs" in text(function.child_by_field_name("argument"))


def _withpackages_formal(base: Node | None, ctx: Context) -> bool:
    """`ps` in `python3.withPackages (ps: [ ps.x ])`."""
    if base is None or base.type != "variable_expression":
        return False
    binding = ctx.semantic.resolve(base)
    if binding.kind != "formal" or binding.node is None:
        return False
    function = binding.node.parent
    while function is not None and function.type != "function_expression":
        function = function.parent
    call = function.parent if function is not None else None
    while call is not None and call.type == "parenthesized_expression":
        call = call.parent
    if call is None or call.type != "apply_expression":
        return False
    return text(call.child_by_field_name("function")).endswith("withPackages")


def _check_variable(variable: Node, ctx: Context) -> None:
    name = text(variable.child_by_field_name("name"))
    binding = ctx.semantic.resolve(variable)
    if binding.lexical or binding.kind in {"let", "rec"}:
        return  # a formal or `inherit (x)` is reported where it binds the name
    withs = [unparen(environment) for environment in binding.withs]
    if any(ctx.semantic.package_set_name(w) is not None for w in withs):
        return  # `with cudaPackages;` brings the set's `cudnn`
    python = any(w is not None and (catalog.PYTHON_SET.match(text(w).split(".")[-1]) or text(w).endswith(".pkgs")) for w in withs)
    if _UNVERSIONED.match(name) and not any(w is not None and _names_top_level(w, ctx) for w in withs):
        return
    _report(ctx, variable, name, "python" if python else "top-level", replaceable=True)


def _names_top_level(node: Node, ctx: Context) -> bool:
    if node.type == "variable_expression":
        return text(node.child_by_field_name("name")) in catalog.TOP_LEVEL_VARIABLES
    if node.type == "select_expression":
        attrpath = node.child_by_field_name("attrpath")
        names = [identifier_name(c) for c in attrpath.children_by_field_name("attr")] if attrpath is not None else []
        base = unparen(node.child_by_field_name("expression"))
        base_name = text(base.child_by_field_name("name")) if base is not None and base.type == "variable_expression" else None
        return bool(names) and names[-1] in catalog.TOP_LEVEL_VARIANTS | {"pkgs"} and catalog.reaches_top_level(names + ["x"], len(names), base_name)
    return _is_nixpkgs_import(node)


def _check_inherit(attrs: Node, ctx: Context) -> None:
    inherited = inherited_from(attrs)
    if inherited is None:
        return
    source = unparen(inherited[1])
    if source is None or not _names_top_level(source, ctx):
        return
    for attr, name in inherited[2]:
        if name is not None:
            _report(ctx, attr, name, "top-level", replaceable=False)


def _report(ctx: Context, where: Node, name: str, scope: str, replaceable: bool) -> None:
    change = ctx.reference.toplevel_change(name, scope)
    target = ctx.target
    if change is None or not change.in_effect_on(target):
        return
    replacement = change.replacement
    gone = _replacement_gone(ctx, replacement)
    if change.throws_on(target):
        head = f"`{name}` does not evaluate on {target.nixpkgs_name()} (removed {change.throws_from})"
        severity = Severity.ERROR
    elif change.throws_from:
        head = f"`{name}` is deprecated: it warns since {change.since} and is removed on {change.throws_from}"
        severity = Severity.WARNING
    else:
        head = f"`{name}` is a deprecated alias (since {change.since})"
        severity = Severity.WARNING
    fix = None
    if replacement is None:
        advice = change.note
    elif gone is not None:
        advice = f"`{gone}`, where it moved, is removed too: use `cudaPackages`"
    elif change.certain:
        advice = f"write `{replacement}`"
        if replaceable:
            fix = Fix(f"Replace `{name}` with `{replacement}`", Applicability.SAFE, (edits.replace(where, replacement),))
    else:
        advice = f"use `{replacement}` ({change.note})"
    ctx.report(where, f"{head}; {advice}", fixes=[fix], severity=severity)


def _replacement_gone(ctx: Context, replacement: str | None) -> str | None:
    """The package set a replacement lives in when the target removed that set too."""
    match = _SET_OF.match(replacement or "")
    if match is None:
        return None
    removal = ctx.reference.removed_set(match.group("set"))
    return match.group("set") if removal is not None and removal.throws_on(ctx.target) else None
