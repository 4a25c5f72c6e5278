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
(`useCuda = cudaSupport && ...;`, also through more `let` bindings) or that the file asserts to imply it
(`assert withNccl -> cudaSupport && ...;` makes `lib.optional withNccl nccl` guarded), and the
body of `assert cudaSupport;` / `assert lib.assertMsg cudaSupport "...";` /
`lib.throwIfNot cudaSupport "..." drv`. Not flagged: expressions without a `cudaSupport` switch,
and CUDA-only packages, which have nothing to switch: those that read `cudaSupport` only in
`meta` and `passthru`, and those that say they need CUDA, whatever else reads the switch
(`meta.broken = !cudaSupport;` or `!cudaSupport || ...`, `meta.badPlatforms = lib.optionals
(!cudaSupport) lib.platforms.all;`, `meta.platforms` empty without CUDA, an `assert` or a
derivation attribute that fails without CUDA: `src = if cudaSupport then ... else throw "...";`);
CUDA packages outside input lists (`passthru`, `disallowedRequisites`),
a runpath hook under any condition (drivers serve Vulkan/OpenCL too), and
`addDriverRunpath`, which graphics packages use without CUDA. A package that marks only some
platforms bad without CUDA (`badPlatforms = lib.optionals (!cudaSupport) [ "aarch64-darwin" ]`)
still builds without CUDA elsewhere: flagged.

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
from cudalint.lint.context import Context
from cudalint.lint.model import Applicability, FixAvailability, Severity
from cudalint.lint.rule import Rule
from cudalint.nix.semantic import InputSite
from cudalint.nix.syntax import (
    attrpath_names,
    last_name,
    text,
    unparen,
)
from cudalint.rules._cuda_switch import file_switch, guard_fix, is_guarded
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
        fixes=[guard_fix(root, site, ctx) if direct else None],
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
