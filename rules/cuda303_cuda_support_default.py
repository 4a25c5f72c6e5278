"""A package's CUDA switch (`cudaSupport`, `enableCuda`, ...) whose default is not the user's `config.cudaSupport`.

Flags the default of a `cudaSupport` argument of a callPackage-style package function (the file's
own function, or one the file hands to `callPackage`) when it is not `config.cudaSupport`:
`? false`, `? true`, `? stdenv.isLinux` (warning). The switch's other names are judged alike
(`cuda`, `enableCuda`, `withCuda`, `useCuda`, also spelt `CUDA`; nixpkgs writes `enableCuda ?
config.cudaSupport`) when their default is decided by the package alone: a boolean or a platform
test (`? false`, `? true`, `? stdenv.hostPlatform.isLinux`). `? config.cudaSupport or false` respects the
user's configuration: on targets where `config.cudaSupport` is a declared option (nixpkgs PR
#224068, April 2023) the `or false` is only redundant, an info with a safe fix that drops it; on
older targets it is the correct form (a bare `config.cudaSupport` fails when the user never set
it) and is not flagged. Not flagged: `cudaSupport ? config.cudaSupport` (also `pkgs.config`), a
default taken from a dependency's switch (`cudaSupport ? torch.cudaSupport`, also with
`or false`: an extension must match the library it builds against), a `cudaSupport` formal
without a default, another name's default that reads a choice made elsewhere (`withCuda ?
cudaSupport`, `enableCuda ? withGpu`, `useCuda ? torch.cudaSupport`), names that are not the
switch (`enableCudnn`, `cudaArch`), and functions that are not
callPackage'd packages: an overlay factory (`{ cudaSupport ? true }: final: prev: { ... }`), an
entry file called by hand (its formals carry defaults such as
`pkgs ? import <nixpkgs> { }`, `system ? builtins.currentSystem`, or its own `config ? { }`,
which is not nixpkgs' config, so the fix would break it), inner helpers the file calls itself,
dev shells and modules.

Contexts: only packages are judged; a dev shell, a NixOS/home-manager module, or an entry file
decides its switch for itself.

## Why
nixpkgs has one global switch, `config.cudaSupport`, that users set once (`nixpkgs.config.cudaSupport
= true;`) to get CUDA builds everywhere. A package that hard-codes its default ignores that switch:
`? false` never builds CUDA unless every caller overrides it, `? true` or `? stdenv.isLinux` turns
unfree CUDA on for every Linux user whether they asked for it or not. The nixpkgs convention is
`cudaSupport ? config.cudaSupport`, with `config` among the formals (`callPackage` passes it).
PR #224068 declared `config.cudaSupport` as an option with default `false` (pkgs/top-level/config.nix,
`cudaSupport = mkMassRebuild`), and rewrote `enableCuda ? false` to `config.cudaSupport or false`
tree-wide. From then on `or false` changes nothing; before it, `or false` is what makes an unset
switch work. cudalint dates the option at 2023-04-30 (the PR was reviewed in early April 2023), so
an April 2023 date target counts as older and keeps `or false`.

The fix for a hard-coded default writes `config.cudaSupport` (`config.cudaSupport or false` on
older targets) and adds `config` to the formals when it is missing. It is unsafe: callers that
pass `cudaSupport` are unaffected, but users whose configuration says `cudaSupport = true` now get
this package built with CUDA (a new closure, unfree CUDA packages), and with `? true` or
`? stdenv.isLinux` everybody else now gets it without CUDA. That is what they asked for, but it is
not the same build, so it needs `--unsafe-fixes`. Dropping a redundant `or false` is safe: the
declared option already defaults to `false`, so every configuration builds the same thing.

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
- https://github.com/NixOS/nixpkgs/blob/master/pkgs/top-level/config.nix
- https://nixos.org/manual/nixpkgs/unstable/#cuda
"""

from __future__ import annotations

import re

from tree_sitter import Node

from cudalint.lint import edits
from cudalint.lint.context import Context
from cudalint.lint.model import Applicability, Edit, Fix, FixAvailability, Severity
from cudalint.lint.rule import Rule
from cudalint.nix.syntax import attrpath_names, descendants, dotted_name, flatten_apply, last_name, outermost_apply, text, unparen

RULE = Rule(
    code="CUDA303",
    name="cuda-support-default",
    severity=Severity.WARNING,
    fix=Applicability.UNSAFE,
    availability=FixAvailability.SOMETIMES,
    summary="A package's CUDA switch (`cudaSupport`, `enableCuda`, `withCuda`, ...) whose default is not `config.cudaSupport`",
    node_types=("formal",),
    patterns=(b"cudaSupport", b"cuda", b"Cuda", b"CUDA"),
)

# Defaults that already follow the user's nixpkgs configuration.
_ACCEPTED = frozenset({"config.cudaSupport", "pkgs.config.cudaSupport"})
# Formal defaults that only a file called by hand has (`nix-build default.nix`), not callPackage.
_ENTRY_DEFAULTS = ("import ", "builtins.currentSystem", "fetchTarball", "fetchGit", "<nixpkgs>")
_ENTRY_FORMALS = frozenset({"config", "pkgs", "nixpkgs", "system", "crossSystem", "overlays"})
_CALL_PACKAGE = frozenset({"callPackage", "callPackages", "callPythonPackage"})
# The other names packages give their CUDA switch (nixpkgs writes `enableCuda ? config.cudaSupport`).
_OTHER_SWITCH = re.compile(r"^(?:cuda|(?:enable|with|use)(?:Cuda|CUDA))$")
# Names a hard-coded default may read: the platform, nothing that carries a choice.
_PLATFORM_NAMES = frozenset({"stdenv", "lib", "builtins", "true", "false"})


def _hard_coded(default: Node) -> bool:
    """A boolean the package decides alone: `false`, `true`, `stdenv.isLinux`,
    `stdenv.hostPlatform.isx86_64 && !stdenv.isDarwin`; not a default that reads another switch,
    a dependency or `config`."""
    variables = [n for n in descendants(default) if n.type == "variable_expression"]
    if any(text(v) not in _PLATFORM_NAMES for v in variables):
        return False
    return any(text(v) in {"true", "false"} for v in variables) or any(n.type == "select_expression" and (last_name(n) or "").startswith("is") for n in descendants(default))


@RULE
def check(formal: Node, ctx: Context) -> None:
    name = formal.child_by_field_name("name")
    default = formal.child_by_field_name("default")
    if name is None or default is None:
        return
    switch = text(name)
    if switch != "cudaSupport" and not (_OTHER_SWITCH.match(switch) and (_hard_coded(default) or _or_false(default) is not None)):
        return  # another name's default that reads anything (`withCuda ? cudaSupport`) is the file's choice
    if dotted_name(default) in _ACCEPTED or _follows_dependency(default, ctx) or not _is_package_function(formal, ctx):
        return
    declared = ctx.reference.has("config.cudaSupport", ctx.target)  # a declared option (PR #224068), else `or false`
    redundant = _or_false(default)
    if redundant is not None:
        if declared:
            fix = Fix("Drop the redundant `or false`", Applicability.SAFE, (Edit(redundant[0], redundant[1], ""),))
            ctx.report(default, f"`or false` is redundant: `config.cudaSupport` defaults to `false`; write `{switch} ? config.cudaSupport`", fixes=[fix], severity=Severity.INFO)
        return
    wanted = "config.cudaSupport" if declared else "config.cudaSupport or false"
    written = " ".join(text(default).split())
    shown = written if len(written) <= 40 else written[:37] + "..."
    ctx.report(
        default,
        f"`{switch} ? {shown}` ignores the user's `config.cudaSupport`: write `{switch} ? {wanted}`",
        fixes=[_fix(formal, switch, wanted, ctx)],
    )


def _or_false(default: Node) -> tuple[int, int] | None:
    """The span of ` or false` in `config.cudaSupport or false` (also parenthesised)."""
    node = unparen(default)
    if node is None or node.type != "select_expression":
        return None
    fallback = node.child_by_field_name("default")
    path = node.child_by_field_name("attrpath")
    if fallback is None or text(fallback) != "false" or path is None:
        return None
    selected = f"{dotted_name(node.child_by_field_name('expression'))}.{'.'.join(n or '?' for n in attrpath_names(path))}"
    return (path.end_byte, fallback.end_byte) if selected in _ACCEPTED else None


def _is_package_function(formal: Node, ctx: Context) -> bool:
    """A callPackage-style package function: the file's own function (unless the file is an
    entry point called by hand) or a function the file passes to `callPackage`; not a dev
    shell's or a module's."""
    formals = formal.parent
    function = formals.parent if formals is not None else None
    if function is None or function.type != "function_expression":
        return False
    place = ctx.place(function)
    if place.is_shell or place.is_module:
        return False
    if function == ctx.semantic.top_function():
        return not _entry_point(formals) and not _returns_overlay(function)
    return _called_by_call_package(function, ctx)


def _returns_overlay(function: Node) -> bool:
    """`{ cudaSupport ? true, ... }: final: prev: { ... }`: an overlay factory, which callers
    configure by hand; `callPackage` never calls it, so it has no `config` to read."""
    body = function.child_by_field_name("body")
    while body is not None and body.type == "parenthesized_expression":
        body = body.named_children[0] if body.named_children else None
    inner = body.child_by_field_name("body") if body is not None and body.type == "function_expression" else None
    return inner is not None and inner.type == "function_expression"


def _entry_point(formals: Node) -> bool:
    for other in formals.children_by_field_name("formal"):
        name, default = other.child_by_field_name("name"), other.child_by_field_name("default")
        if default is None:
            continue
        if (name is not None and text(name) in _ENTRY_FORMALS) or any(sign in text(default) for sign in _ENTRY_DEFAULTS):
            return True
    return False


def _called_by_call_package(function: Node, ctx: Context) -> bool:
    """`callPackage ({ cudaSupport ? ... }: ...) { }`, or through a let-bound name."""
    return (function.start_byte, function.end_byte) in _call_package_functions(ctx)


def _call_package_functions(ctx: Context) -> set[tuple[int, int]]:
    """Spans of the functions this file hands to `callPackage`, found in one walk per file."""
    cache = ctx.semantic.memo(__name__)
    if "functions" not in cache:
        found: set[tuple[int, int]] = set()
        for call in ctx.semantic.nodes_of_type("apply_expression"):
            if outermost_apply(call) != call:
                continue
            callee, arguments = flatten_apply(call)
            if last_name(callee) not in _CALL_PACKAGE or not arguments:
                continue
            first = unparen(arguments[0])
            if first is not None and first.type == "variable_expression":
                first = unparen(ctx.semantic.resolve(first).value)
            if first is not None and first.type == "function_expression":
                found.add((first.start_byte, first.end_byte))
        cache["functions"] = found
    return cache["functions"]


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


def _fix(formal: Node, switch: str, wanted: str, ctx: Context) -> Fix | None:
    formals = formal.parent
    if formals is None or formals.type != "formals":
        return None
    changes: list[Edit] = []
    if "config" not in edits.formal_names(formals) and not edits.is_bound(ctx.semantic, formals, "config"):
        # `callPackage` passes `config` to the function it calls; add it to that function's formals
        added = edits.add_formal(ctx.source, formals, "config")
        if added is None:
            return None
        changes.append(added)
    whole = formal.child_by_field_name("default")
    assert whole is not None
    changes.append(edits.replace(whole, wanted))
    return Fix(f"Default `{switch}` to `{wanted}`", Applicability.UNSAFE, tuple(changes))
