"""A `cudaSupport` formal whose default is not `config.cudaSupport`.

Flags the default of a function argument named `cudaSupport` when it is anything other than
`config.cudaSupport` (or `pkgs.config.cudaSupport`): `? false`, `? true`, `? stdenv.isLinux`,
`? config.cudaSupport or false`, ... Not flagged: `cudaSupport ? config.cudaSupport`, a
default taken from another argument's switch (`cudaSupport ? torch.cudaSupport`, also with
`or false`: an extension must match the library it builds against, whose own default follows
`config.cudaSupport`), a `cudaSupport` formal without a default (the caller must pass it), and
other switch names (`enableCuda`, `withCuda`), which the CUDA team does not standardise on.

## Why
nixpkgs has one global switch, `config.cudaSupport`, that users set once (`nixpkgs.config.cudaSupport
= true;`) to get CUDA builds everywhere. A package that hard-codes its default ignores that switch:
`? false` never builds CUDA unless every caller overrides it, `? true` or `? stdenv.isLinux` turns
unfree CUDA on for every Linux user whether they asked for it or not. Since PR #224068
`config.cudaSupport` is a declared option with default `false`, so the `or false` fallback is dead
code that hides typos. The nixpkgs convention is `cudaSupport ? config.cudaSupport`, with `config`
among the formals (`callPackage` passes it).

The fix rewrites the default and adds `config` to the formals when it is missing. It is marked
safe: callers that pass `cudaSupport` explicitly are unaffected, and everybody else gets what their
nixpkgs configuration asks for.

## Example
```nix
{ lib, stdenv, cudaPackages, cudaSupport ? false }:
stdenv.mkDerivation {
  pname = "demo";
  version = "1.0";
  buildInputs = lib.optionals cudaSupport [ cudaPackages.cuda_cudart ];
}
```

## Use instead
```nix
{ lib, stdenv, config, cudaPackages, cudaSupport ? config.cudaSupport }:
stdenv.mkDerivation {
  pname = "demo";
  version = "1.0";
  buildInputs = lib.optionals cudaSupport [ cudaPackages.cuda_cudart ];
}
```

## References
- https://github.com/NixOS/nixpkgs/pull/224068
- https://nixos.org/manual/nixpkgs/unstable/#cuda
"""

from __future__ import annotations

from tree_sitter import Node

from cudalint import edits
from cudalint.context import Context
from cudalint.model import Applicability, Edit, Fix, Rule, Severity
from cudalint.syntax import attrpath_names, dotted_name, text, unparen

RULE = Rule(
    code="CUDA303",
    name="cuda-support-default",
    severity=Severity.WARNING,
    fix=Applicability.SAFE,
    summary="`cudaSupport` formal whose default is not `config.cudaSupport`",
    node_types=("formal",),
    patterns=(b"cudaSupport",),
)

# Defaults that already follow the user's nixpkgs configuration.
_ACCEPTED = frozenset({"config.cudaSupport", "pkgs.config.cudaSupport"})


@RULE
def check(formal: Node, ctx: Context) -> None:
    name = formal.child_by_field_name("name")
    default = formal.child_by_field_name("default")
    if name is None or default is None or text(name) != "cudaSupport":
        return
    if dotted_name(default) in _ACCEPTED or _follows_dependency(default, ctx):
        return
    written = " ".join(text(default).split())
    shown = written if len(written) <= 50 else written[:47] + "..."
    ctx.report(
        default,
        f"`cudaSupport ? {shown}` ignores the user's `config.cudaSupport`: "
        "write `cudaSupport ? config.cudaSupport` (with `config` among the formals)",
        fixes=[_fix(formal, unparen(default) or default, ctx)],
    )


def _follows_dependency(default: Node, ctx: Context) -> bool:
    """`cudaSupport ? torch.cudaSupport` (or `... or false`): the switch of a package passed in
    as an argument, which carries its own (`passthru.cudaSupport`), so both are built alike."""
    node = unparen(default)
    if node is None or node.type != "select_expression":
        return False
    base, path = node.child_by_field_name("expression"), node.child_by_field_name("attrpath")
    if base is None or base.type != "variable_expression" or path is None or attrpath_names(path) != ["cudaSupport"]:
        return False
    if text(base) in {"config", "pkgs"}:
        return False
    return ctx.semantic.resolve(base).kind == "formal"


def _fix(formal: Node, default: Node, ctx: Context) -> Fix | None:
    formals = formal.parent
    if formals is None or formals.type != "formals":
        return None
    changes: list[Edit] = []
    if "config" not in edits.formal_names(formals) and not edits.is_bound(ctx.semantic, formals, "config"):
        # Only the file's own function is filled by `callPackage`, which passes `config`; a new
        # required argument on an inner function would break its callers.
        function = ctx.semantic.top_function()
        if function is None or function.child_by_field_name("formals") != formals:
            return None
        added = edits.add_formal(ctx.source, formals, "config")
        if added is None:
            return None
        changes.append(added)
    whole = formal.child_by_field_name("default")
    assert whole is not None
    changes.append(edits.replace(whole, "config.cudaSupport"))
    return Fix("Default `cudaSupport` to `config.cudaSupport`", Applicability.SAFE, tuple(changes))
