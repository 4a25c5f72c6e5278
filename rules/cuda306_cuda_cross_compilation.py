"""CUDA packages reached through `pkgsCross.*`.

Flags CUDA package sets and packages taken from a cross-compiling package set:
`pkgsCross.aarch64-multiplatform.cudaPackages.cuda_nvcc`, `pkgs.pkgsCross.X.cudaPackages`,
`with pkgsCross.X; [ cudaPackages.cuda_cudart ]`, `with pkgsCross.X.cudaPackages; ...`,
`inherit (pkgsCross.X) cudaPackages;`, a let-bound `cross = pkgsCross.X;` followed by
`cross.cudaPackages.libcublas`, and `pkgsCuda` or `*WithCuda` packages under `pkgsCross`. Each
construct is reported once, where the cross package set meets the CUDA name (later uses of a
variable bound to it are not reported again). Not flagged: `pkgsCross` for non-CUDA packages, and
native CUDA (`cudaPackages`, `pkgs.cudaPackages`, `pkgsCuda`).

Contexts: the same warning in packages, dev shells, modules and overrides: none of them can
cross-compile CUDA.

## Why
The CUDA redistributables in nixpkgs are NVIDIA's prebuilt binaries, unpacked and patched for
the platform they run on. The CUDA package set does not model cross-compilation: `nvcc` from a
`pkgsCross` set is the target's binary, setup hooks and the host compiler (`backendStdenv`)
are wired for native builds, and the nixpkgs manual's "On cross-compilation" note says it is
unsupported (an attempt to enable it, PR #279952, was closed unmerged). Such expressions fail to
build or, worse, build something that does not run.

There is no automatic fix: build natively for the target instead, on a builder of that platform
(a remote builder, or binfmt emulation such as `boot.binfmt.emulatedSystems = [ "aarch64-linux" ]`
on NixOS), with `nixpkgs.legacyPackages.aarch64-linux` or `import nixpkgs { system = ...; }`.

## Example
```nix
{ pkgsCross }:
pkgsCross.aarch64-multiplatform.cudaPackages.cuda_nvcc
```

## Use instead
```nix
{ nixpkgs }:
let
  pkgs = import nixpkgs {
    system = "aarch64-linux";
    config = { allowUnfree = true; cudaSupport = true; };
  };
in
pkgs.cudaPackages.cuda_nvcc
```

## References
- https://nixos.org/manual/nixpkgs/unstable/#cuda
- https://github.com/NixOS/nixpkgs/pull/279952
"""

from __future__ import annotations

from tree_sitter import Node

from cudalint.knowledge import catalog
from cudalint.lint.context import Context
from cudalint.lint.model import Applicability, FixAvailability, Severity
from cudalint.lint.rule import Rule
from cudalint.nix.syntax import attrpath_names, dotted_name, identifier_name, text, unparen

RULE = Rule(
    code="CUDA306",
    name="cuda-cross-compilation",
    severity=Severity.WARNING,
    fix=Applicability.NONE,
    availability=FixAvailability.NEVER,
    summary="CUDA packages reached through `pkgsCross`, which CUDA does not support",
    node_types=("select_expression", "variable_expression", "inherit_from"),
    patterns=(b"pkgsCross",),
)

_MAX_DEPTH = 8
# `with` environments that provide native package names: a name found there is not cross.
_NATIVE_SETS = (catalog.NIXPKGS_NAMES - {"pkgs'"}) | {"pkgsBuildHost", "buildPackages"}

# Kinds an expression can have for this rule.
CROSS_PKGS = "cross-pkgs"  # `pkgsCross.X` itself: a whole package set for another platform
INTRODUCED = "introduced"  # CUDA from a cross set, first named here: report here
WITH_NAME = "with-name"  # a CUDA name that `with pkgsCross.X;` provides: report at its use
REPORTED = "reported"  # CUDA from a cross set that is reported where it was first named


@RULE
def check(node: Node, ctx: Context) -> None:
    if node.type == "inherit_from":
        _check_inherit(node, ctx)
        return
    if _is_select_base(node):
        return  # the select it starts is checked as a whole
    kind, platform = _kind(node, ctx, 0)
    if node.type == "select_expression" and kind == INTRODUCED or node.type == "variable_expression" and kind == WITH_NAME:
        _report(node, platform, ctx)


def _check_inherit(statement: Node, ctx: Context) -> None:
    source = statement.child_by_field_name("expression")
    attrs = statement.child_by_field_name("attrs")
    if source is None or attrs is None:
        return
    kind, platform = _kind(source, ctx, 0)
    if kind != CROSS_PKGS:
        return
    for attr in attrs.children_by_field_name("attr"):
        if _is_cuda_name(identifier_name(attr)):
            _report(attr, platform, ctx)


def _report(node: Node, platform: str | None, ctx: Context) -> None:
    written = " ".join(text(node).split())
    shown = written if len(written) <= 40 else written[:37] + "..."
    where = f"`pkgsCross.{platform}`" if platform else "`pkgsCross`"
    ctx.report(
        node,
        f"`{shown}` comes from {where}: CUDA cannot be cross-compiled, build natively there",
    )


def _is_select_base(node: Node) -> bool:
    parent = node.parent
    while parent is not None and parent.type == "parenthesized_expression":
        node, parent = parent, parent.parent
    return parent is not None and parent.type == "select_expression" and parent.child_by_field_name("expression") == node


def _is_cuda_name(name: str | None) -> bool:
    if name is None:
        return False
    return catalog.is_package_set_name(name) or catalog.is_cuda_package(name) or name == "pkgsCuda" or name.endswith("WithCuda")


def _kind(node: Node | None, ctx: Context, depth: int) -> tuple[str | None, str | None]:
    """What `node` denotes for this rule, and the cross platform's name."""
    node = unparen(node)
    if node is None or depth > _MAX_DEPTH:
        return None, None
    if node.type == "select_expression":
        return _select_kind(node, ctx, depth)
    if node.type == "variable_expression":
        return _variable_kind(node, ctx, depth)
    return None, None


def _select_kind(select: Node, ctx: Context, depth: int) -> tuple[str | None, str | None]:
    base = unparen(select.child_by_field_name("expression"))
    names = attrpath_names(select.child_by_field_name("attrpath"))
    # `pkgsCross.X...` or `pkgs.pkgsCross.X...`: the cross set is spelled out in this select
    if base is not None and base.type == "variable_expression" and text(base) == "pkgsCross":
        chain: list[str | None] = ["pkgsCross", *names]
    else:
        chain = [None, *names]
    if "pkgsCross" in chain:
        index = chain.index("pkgsCross")
        if index + 1 >= len(chain):
            return None, None
        platform = chain[index + 1]
        rest = chain[index + 2 :]
        if not rest:
            return CROSS_PKGS, platform
        return (INTRODUCED, platform) if any(_is_cuda_name(n) for n in rest) else (None, None)
    base_kind, platform = _kind(base, ctx, depth + 1)
    if base_kind == CROSS_PKGS:
        return (INTRODUCED, platform) if any(_is_cuda_name(n) for n in names) else (None, None)
    if base_kind == WITH_NAME:
        return INTRODUCED, platform  # `with pkgsCross.X; cudaPackages.x`: report the select
    if base_kind in {INTRODUCED, REPORTED}:
        return REPORTED, platform
    return None, None


def _variable_kind(variable: Node, ctx: Context, depth: int) -> tuple[str | None, str | None]:
    name = text(variable)
    binding = ctx.semantic.resolve(variable)
    if binding.kind in {"let", "rec"}:
        kind, platform = _kind(binding.value, ctx, depth + 1)
        if kind == CROSS_PKGS:
            return CROSS_PKGS, platform
        return (REPORTED, platform) if kind in {INTRODUCED, REPORTED, WITH_NAME} else (None, None)
    if binding.kind == "inherit-from":
        kind, platform = _kind(binding.source, ctx, depth + 1)
        if kind == CROSS_PKGS and _is_cuda_name(name) or kind in {INTRODUCED, REPORTED}:
            return REPORTED, platform
        return None, None
    if binding.kind == "with" and _is_cuda_name(name):
        for environment in binding.withs:
            kind, platform = _kind(environment, ctx, depth + 1)
            if kind == CROSS_PKGS:
                return WITH_NAME, platform
            if kind in {INTRODUCED, REPORTED, WITH_NAME}:
                return REPORTED, platform
            if dotted_name(environment) in _NATIVE_SETS or ctx.semantic.package_set_name(environment) is not None:
                return None, None  # a native set provides the name first
    return None, None
