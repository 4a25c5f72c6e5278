"""`autoAddCudaCompatRunpath` listed before `autoAddDriverRunpath` in the same `nativeBuildInputs`.

Flags the first `autoAddCudaCompatRunpath` (also the old `autoAddCudaCompatRunpathHook`, through
`with cudaPackages;` or `cudaPackages.`) that precedes the first `autoAddDriverRunpath` (or the old
`autoAddOpenGLRunpathHook`) of one `nativeBuildInputs` value, also when they sit in different
pieces joined by `++` or under `lib.optionals`. Not flagged: the compat hook after the driver hook
(the nixpkgs idiom, Jetson only), either hook alone, and hooks in different attributes or
derivations.

## Why
Both hooks prepend a directory holding a `libcuda.so` to the `DT_RUNPATH` of every ELF file in
`postFixup`, in the order their setup hooks were sourced, which is the order of
`nativeBuildInputs`. The last one to run ends up first in `DT_RUNPATH`, and the `cuda_compat`
directory must win over the driver directory or it has no effect: nixpkgs documents that
`autoAddCudaCompatRunpath` "must be added after autoAddDriverRunpath". Listed first, the Jetson
forward-compatibility libraries are silently ignored.

The fix swaps the two hooks when they are items of the same list literal; it is safe (the
same inputs, in the order the hooks require). Hooks in different `++` pieces are reported
without a fix: move the compat hook after the driver hook by hand.

## Example
```nix
{ stdenv, autoAddDriverRunpath, cudaPackages }:
stdenv.mkDerivation {
  pname = "jetson-app";
  version = "1.0";
  nativeBuildInputs = [
    cudaPackages.autoAddCudaCompatRunpath
    autoAddDriverRunpath
  ];
}
```

## Use instead
```nix
{ stdenv, autoAddDriverRunpath, cudaPackages }:
stdenv.mkDerivation {
  pname = "jetson-app";
  version = "1.0";
  nativeBuildInputs = [
    autoAddDriverRunpath
    cudaPackages.autoAddCudaCompatRunpath
  ];
}
```

## References
- https://github.com/NixOS/nixpkgs/pull/267247
- https://github.com/NixOS/nixpkgs/pull/281576
- https://nixos.org/manual/nixpkgs/unstable/#cuda
"""

from __future__ import annotations

from tree_sitter import Node

from cudalint.lint import edits
from cudalint.lint.context import Context
from cudalint.lint.model import Applicability, Edit, Fix, FixAvailability, Severity
from cudalint.lint.rule import Rule
from cudalint.nix.syntax import attrpath_names, node_key, text
from cudalint.rules._runpath_hooks import COMPAT_HOOKS, DRIVER_HOOKS, hook_elements, owner_attrset

RULE = Rule(
    code="CUDA106",
    name="compat-hook-order",
    severity=Severity.WARNING,
    fix=Applicability.SAFE,
    availability=FixAvailability.SOMETIMES,
    summary="`autoAddCudaCompatRunpath` listed before `autoAddDriverRunpath`",
    node_types=("binding",),
    patterns=(b"autoAddCudaCompatRunpath",),
    attrpath_patterns=(b"nativeBuildInputs",),
)


@RULE
def check(binding: Node, ctx: Context) -> None:
    names = attrpath_names(binding.child_by_field_name("attrpath"))
    if len(names) != 1 or names[0] != "nativeBuildInputs" or owner_attrset(binding) is None:
        return
    found = hook_elements(ctx, binding, COMPAT_HOOKS | DRIVER_HOOKS)
    compat = next((e for e in found if e.name in COMPAT_HOOKS), None)
    driver = next((e for e in found if e.name in DRIVER_HOOKS), None)
    if compat is None or driver is None or compat.node.start_byte > driver.node.start_byte:
        return
    fix = None
    if compat.site.list_node is not None and driver.site.list_node is not None and node_key(compat.site.list_node) == node_key(driver.site.list_node):
        fix = Fix(
            f"Move `{compat.name}` after `{driver.name}`",
            Applicability.SAFE,
            (edits.replace(compat.node, text(driver.node)), Edit(driver.node.start_byte, driver.node.end_byte, text(compat.node))),
        )
    where = "" if fix is not None else " (by hand: they are in different lists)"
    ctx.report(compat.node, f"`{compat.name}` before `{driver.name}` loses to it: list it after `{driver.name}`{where}", fixes=[fix])
