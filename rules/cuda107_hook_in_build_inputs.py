"""A driver-runpath setup hook in `buildInputs` or `propagatedBuildInputs`.

Flags `autoAddDriverRunpath`, `autoAddCudaCompatRunpath` and `addDriverRunpath` (and their old
names `autoAddOpenGLRunpathHook`, `autoAddCudaCompatRunpathHook`, `addOpenGLRunpath`) listed as
items of `buildInputs` or `propagatedBuildInputs`: directly, through `++`, `lib.optionals`,
`with`, or a let-bound list that flows into them (reported without a fix there). Not flagged:
the hooks in `nativeBuildInputs`, and `${addDriverRunpath.driverLink}` or other attributes of
the hook packages, which are values, not hooks, and a hook's own definition
(`makeSetupHook { propagatedBuildInputs = [ addDriverRunpath ]; } ./hook.sh`: the hooks it
needs, propagated into its users' `nativeBuildInputs`).

## Why
These packages are setup hooks: build-time tools that patch the outputs in `postFixup`.
Build tools belong in `nativeBuildInputs`, which nixpkgs takes for the build platform; in
`buildInputs` the hook (and the `patchelf` it runs) is taken for the host platform, which
breaks cross-compilation and `strictDeps` builds, and `propagatedBuildInputs` pushes the hook
onto every package that depends on this one, patching their files too.

The fix moves the item to `nativeBuildInputs` (keeping a `lib.optionals cond` guard around it,
and only deleting it when `nativeBuildInputs` already has it). It is safe: the same hook runs,
from the place nixpkgs expects.

## Example
```nix
{ stdenv, autoAddDriverRunpath, cudaPackages }:
stdenv.mkDerivation {
  pname = "cuda-app";
  version = "1.0";
  nativeBuildInputs = [ cudaPackages.cuda_nvcc ];
  buildInputs = [ cudaPackages.cuda_cudart autoAddDriverRunpath ];
}
```

## Use instead
```nix
{ stdenv, autoAddDriverRunpath, cudaPackages }:
stdenv.mkDerivation {
  pname = "cuda-app";
  version = "1.0";
  nativeBuildInputs = [ cudaPackages.cuda_nvcc autoAddDriverRunpath ];
  buildInputs = [ cudaPackages.cuda_cudart ];
}
```

## References
- https://nixos.org/manual/nixpkgs/unstable/#ssec-stdenv-dependencies
- https://nixos.org/manual/nixpkgs/unstable/#cuda
- https://github.com/NixOS/nixpkgs/pull/297212
"""

from __future__ import annotations

from tree_sitter import Node

from cudalint.knowledge import catalog
from cudalint.lint import edits
from cudalint.lint.context import Context
from cudalint.lint.model import Applicability, Fix, FixAvailability, Severity
from cudalint.lint.rule import Rule
from cudalint.nix.semantic import InputSite
from cudalint.nix.syntax import last_name, unparen
from cudalint.rules._runpath_hooks import ADD_FUNCTIONS, COMPAT_HOOKS, DRIVER_HOOKS, elements_of, owner_attrset

RULE = Rule(
    code="CUDA107",
    name="hook-in-build-inputs",
    severity=Severity.WARNING,
    fix=Applicability.SAFE,
    availability=FixAvailability.SOMETIMES,
    summary="Driver-runpath setup hook in `buildInputs` instead of `nativeBuildInputs`",
    node_types=("variable_expression", "select_expression"),
    patterns=(b"DriverRunpath", b"CudaCompatRunpath", b"OpenGLRunpath"),
)

HOOKS = DRIVER_HOOKS | COMPAT_HOOKS | ADD_FUNCTIONS


@RULE
def check(node: Node, ctx: Context) -> None:
    parent = node.parent
    if parent is not None and parent.type == "select_expression" and parent.child_by_field_name("expression") == node:
        return  # the base of a longer selection (`addDriverRunpath.driverLink`)
    name = last_name(node)
    if name not in HOOKS:
        return
    call = ctx.semantic.enclosing_call(node)
    if call is not None and call.name == "makeSetupHook":
        return  # a hook's own definition: its `propagatedBuildInputs` are the hooks it needs
    site = ctx.semantic.input_site(node)
    if site is None:
        through = sorted(ctx.semantic.input_attrs(node) & catalog.HOST_INPUTS)
        if through:
            ctx.report(node, _message(name, through[0]) + " (by hand: it gets there through a variable)")
        return
    if site.attr not in catalog.HOST_INPUTS or unparen(site.element) != node:
        return
    ctx.report(node, _message(name, site.attr), fixes=[_move(node, name, site, ctx)])


def _message(name: str, attr: str) -> str:
    return f"setup hook `{name}` in `{attr}`: move it to `nativeBuildInputs`"


def _move(node: Node, name: str, site: InputSite, ctx: Context) -> Fix | None:
    attrset = owner_attrset(site.binding)
    if attrset is None:
        return None
    if elements_of(ctx, attrset, "nativeBuildInputs", frozenset({name})):
        removal = edits.remove_input_element(ctx.source, site)
        if removal is None:
            return None
        return Fix(f"Remove `{name}` from `{site.attr}` (it is in `nativeBuildInputs`)", Applicability.SAFE, (removal,))
    spelled = edits.spell_at(ctx.semantic, node, edits.input_destination(attrset, "nativeBuildInputs"))
    if spelled is None:
        return None
    changes = edits.move_to_input(ctx.source, site, attrset, "nativeBuildInputs", spelled)
    if not changes:
        return None
    return Fix(f"Move `{name}` to `nativeBuildInputs`", Applicability.SAFE, tuple(changes))
