"""`addDriverRunpath` in `nativeBuildInputs` that no phase calls.

Flags `addDriverRunpath` (or the old `addOpenGLRunpath`, plain, `pkgs.`-qualified or under
`with`) listed in a derivation's `nativeBuildInputs` when no shell code in the file calls the
function (`addDriverRunpath $out/bin/x`, `postFixupHooks+=(...)`, in any phase or script).
`${addDriverRunpath.driverLink}` is not a call. Not flagged: derivations that also list
`autoAddDriverRunpath`; dev shells (`mkShell`: the function is there for the user to call);
derivations that never run the postFixup hooks (`runCommand`, `buildCommand`, `dontFixup = true`,
`phases` without `fixupPhase`, a `fixupPhase` of their own without `runHook postFixup`), where
`autoAddDriverRunpath` would not run either.

## Why
`addDriverRunpath` only defines the shell function `addDriverRunpath`; listing it does not
patch anything. Unless a phase calls it on the binaries, they get no `DT_RUNPATH` entry for
the driver directory and fail at run time with `libcuda.so.1: cannot open shared object file`
(or report no CUDA device). The hook meant here is `autoAddDriverRunpath`, which patches every
dynamically linked ELF file of every output in `postFixup`.

The fix replaces the item with `autoAddDriverRunpath` (renaming the function argument when
this was its only use, or adding the argument). It is unsafe: the outputs change, which is the
point, and files that were deliberately left alone are patched too. On a target before
`autoAddDriverRunpath` (2024-04-01, PR #297212) it writes that era's hook,
`cudaPackages.autoAddOpenGLRunpathHook`; before that hook (2022-04) there is no fix.

## Example
```nix
{ stdenv, addDriverRunpath }:
stdenv.mkDerivation {
  pname = "cuda-app";
  version = "1.0";
  nativeBuildInputs = [ addDriverRunpath ];
}
```

## Use instead
```nix
{ stdenv, autoAddDriverRunpath }:
stdenv.mkDerivation {
  pname = "cuda-app";
  version = "1.0";
  nativeBuildInputs = [ autoAddDriverRunpath ];
}
```

## References
- https://github.com/NixOS/nixpkgs/issues/232420
- https://github.com/NixOS/nixpkgs/pull/297212
- https://nixos.org/manual/nixpkgs/unstable/#cuda
"""

from __future__ import annotations

from tree_sitter import Node

from cudalint.lint.context import Context
from cudalint.lint.model import Applicability, Fix, FixAvailability, Severity
from cudalint.lint.rule import Rule
from cudalint.nix.syntax import last_name, unparen
from cudalint.rules._runpath_hooks import (
    ADD_FUNCTIONS,
    DRIVER_HOOKS,
    HookElement,
    driver_hook,
    elements_of,
    fixup_runs,
    function_calls,
    hook_isolation,
    no_hook_reason,
    owner_attrset,
    replace_element_with,
)

RULE = Rule(
    code="CUDA108",
    name="uncalled-add-driver-runpath",
    severity=Severity.WARNING,
    fix=Applicability.UNSAFE,
    availability=FixAvailability.SOMETIMES,
    summary="`addDriverRunpath` in `nativeBuildInputs` but never called",
    node_types=("variable_expression", "select_expression"),
    patterns=(b"addDriverRunpath", b"addOpenGLRunpath"),
)

SHELLS = frozenset({"mkShell", "mkShellNoCC", "mkDevShell", "devshell", "mkShellNoCC'"})


@RULE
def check(node: Node, ctx: Context) -> None:
    parent = node.parent
    if parent is not None and parent.type == "select_expression" and parent.child_by_field_name("expression") == node:
        return  # `addDriverRunpath.driverLink`
    name = last_name(node)
    if name not in ADD_FUNCTIONS:
        return
    site = ctx.semantic.input_site(node)
    if site is None or site.attr != "nativeBuildInputs" or unparen(site.element) != node:
        return
    attrset = owner_attrset(site.binding)
    if attrset is None:
        return
    call = ctx.semantic.enclosing_call(node)
    if call is not None and call.name in SHELLS:
        return
    if not fixup_runs(ctx, attrset) or function_calls(ctx) or elements_of(ctx, attrset, "nativeBuildInputs", DRIVER_HOOKS):
        return
    hook = driver_hook(ctx)
    if hook is None:
        ctx.report(node, f"`{name}` is listed but its function is never called, so nothing gets the driver runpath: call it on the binaries ({no_hook_reason(ctx)})")
        return
    changes = replace_element_with(ctx, HookElement(node, name, site), hook, keep_formal=False)
    fix = Fix(f"Replace with `{hook}`", Applicability.UNSAFE, tuple(changes), hook_isolation(ctx, attrset, changes)) if changes else None
    ctx.report(node, f"`{name}` is listed but its function is never called, so nothing gets the driver runpath: use `{hook}`", fixes=[fix])
