"""A versioned CUDA package set (`cudaPackages_11_8`, `cudaPackages_12`): an error where the target
nixpkgs has removed it (it throws), a warning otherwise (also, suggesting `--nixpkgs`, where the
file's pin is a commit nothing dates and the newest nixpkgs stands in for it).

Flagged wherever the set is taken from nixpkgs: selections (`pkgs.cudaPackages_11_8.libcublas`,
`final.cudaPackages_12` in an overlay), a bare name from `with pkgs;` or from outside the file
(`callPackage ./x.nix { cudaPackages = cudaPackages_11; }`), `inherit (pkgs) cudaPackages_12_1;`,
an attribute written as `{ inherit cudaPackages_11; }`, and a function formal
(`{ cudaPackages_11, ... }:` asks `callPackage` for the set, even when the body only passes it
on). Each is reported once, where the set is requested: uses of a formal, of an inherited name or
of a `let` binding are not reported again. Not flagged: the unversioned `cudaPackages`, names a
file binds itself (`let cudaPackages_11 = ...;`, an overlay defining `cudaPackages_12_8 = ...`:
only what the definition is made from is judged, so `prev.cudaPackages_11.overrideScope ...` is
reported at `prev.cudaPackages_11`), `pkgs ? cudaPackages_11` tests, strings and comments, and
the overlay the nixpkgs manual shows for picking the CUDA release (`final: prev: { cudaPackages =
final.cudaPackages_12_9; }`) while the target has that set; where the target removed it, the
advice is another release, never `cudaPackages` (the binding itself: it would recurse). A
function that takes sets of two or more CUDA majors as formals (`{ cudaPackages_11_8,
cudaPackages_12, ... }:`, one plugin per major) needs them side by side: only a removed set is
reported there, and the advice is to drop that major or pick a release of it the target has.

Contexts: a removed set is an error (or a warning before its removal) everywhere. A set that still
exists is a warning in packages, shells and modules, and info in an overlay or override, where
picking a release on purpose is the point (a Jetson JetPack pinning its CUDA).

## Why
nixpkgs keeps one set per CUDA release (`cudaPackages_12_8`), a major-version alias
(`cudaPackages_12`) and the unversioned `cudaPackages`, and the manual recommends the unversioned
one: versioned sets are periodically removed. Removed sets become `throw`s, so evaluation fails:
`cudaPackages_10*` throw since 2024-11-20, `cudaPackages_11*` and `cudaPackages_12_0` to
`cudaPackages_12_5` since 2025-08-08. A set that still exists is a warning: it pins this file to a
release that will go the same way, and to libraries nixpkgs no longer tests together with the
rest of the tree. Whether a removed set is an error follows the target nixpkgs (`nixpkgs` in
`cudalint.toml`).

There is no automatic fix: moving to another CUDA release changes what is built (and may need
source changes); choose the release in one place, the unversioned `cudaPackages`.

## Example
```nix
{ stdenv, pkgs }:
stdenv.mkDerivation {
  pname = "kernels";
  version = "1.0";
  nativeBuildInputs = [ pkgs.cudaPackages_11_8.cuda_nvcc ];
  buildInputs = [ pkgs.cudaPackages_11_8.cuda_cudart ];
}
```

## Use instead
```nix
{ stdenv, cudaPackages }:
stdenv.mkDerivation {
  pname = "kernels";
  version = "1.0";
  nativeBuildInputs = [ cudaPackages.cuda_nvcc ];
  buildInputs = [ cudaPackages.cuda_cudart ];
}
```

## References
- https://nixos.org/manual/nixpkgs/unstable/#cuda
- https://github.com/NixOS/nixpkgs/pull/430797
"""

from __future__ import annotations

import re

from tree_sitter import Node

from cudalint.lint.context import Context
from cudalint.lint.model import Applicability, FixAvailability, Severity
from cudalint.lint.rule import Rule
from cudalint.nix.syntax import attrpath_names, identifier_name, text
from cudalint.rules._name_sites import NAME_SITES_AND_FORMALS, dispatch

RULE = Rule(
    code="CUDA002",
    name="removed-package-set",
    severity=Severity.ERROR,
    fix=Applicability.NONE,
    availability=FixAvailability.NEVER,
    summary="Versioned CUDA package set (`cudaPackages_11_8`): removed ones throw; use `cudaPackages`",
    node_types=NAME_SITES_AND_FORMALS,
    patterns=(b"cudaPackages_",),
    removals=True,
)

VERSIONED_SET = re.compile(r"^cudaPackages_\d+(_\d+)*$")


def is_versioned_set(name: str | None) -> bool:
    return name is not None and VERSIONED_SET.match(name) is not None


@RULE
def check(node: Node, ctx: Context) -> None:
    dispatch(node, ctx, select=_check_select, variable=_check_variable, inherit=_check_inherit, formal=_check_formal)


def _check_formal(formal: Node, ctx: Context) -> None:
    name_node = formal.child_by_field_name("name")
    if name_node is not None and is_versioned_set(text(name_node)):
        _report(ctx, name_node, text(name_node))


def _check_select(select: Node, ctx: Context) -> None:
    attrpath = select.child_by_field_name("attrpath")
    for component in attrpath.children_by_field_name("attr") if attrpath is not None else ():
        name = identifier_name(component)
        if is_versioned_set(name):
            _report(ctx, component, name)


def _check_variable(variable: Node, ctx: Context) -> None:
    name = text(variable.child_by_field_name("name"))
    if not is_versioned_set(name):
        return
    # a formal or `inherit (pkgs) x;` is reported where it binds the name; a `let` binding is the
    # file's own name (its value is judged); only names from `with` or outside the file remain
    if not ctx.semantic.resolve(variable).lexical:
        _report(ctx, variable, name)


def _check_inherit(attrs: Node, ctx: Context) -> None:
    statement = attrs.parent
    if statement is None:
        return
    plain = statement.type == "inherit"
    scope = statement.parent.parent if statement.parent is not None else None
    if plain and (scope is None or scope.type == "let_expression"):
        return  # `let inherit cudaPackages_11; in`: its uses in the body are reported instead
    for attr in attrs.children_by_field_name("attr"):
        name = identifier_name(attr)
        if not is_versioned_set(name):
            continue
        if plain and ctx.semantic.resolve_name(name, scope).lexical:
            continue  # `{ inherit cudaPackages_11; }` of a formal: reported at the formal
        _report(ctx, attr, name)


def _mentions_versioned_set(entry: Node) -> bool:
    return re.search(r"\bcudaPackages_\d", text(entry)) is not None


def _report(ctx: Context, where: Node, name: str) -> None:
    instead = "use `cudaPackages`"
    table = ctx.semantic.lookup_table(where)
    if table is not None:
        first = table.first(_mentions_versioned_set)
        if first is None or not (first.start_byte <= where.start_byte and where.end_byte <= first.end_byte):
            return  # a later entry of a version table: the table's first entry carries the finding
        entries = table.count(_mentions_versioned_set)
        instead += f" (one finding for the table's {entries} entries)" if entries > 1 else ""
    removal = ctx.reference.removed_set(name)
    picks_release = _overlay_picks_release(where)
    if _several_majors(ctx):
        # one build per CUDA major (`cudaPackages_11_8` and `cudaPackages_12` side by side):
        # the unversioned set cannot stand for them, so only a removed set is a finding
        if removal is None or removal.throws_from is None or not removal.throws_on(ctx.target):
            return
        instead = "drop that CUDA major or pick a release of it the target still has"
    elif picks_release:
        # the manual's overlay (`cudaPackages = final.cudaPackages_12_9;`): `cudaPackages` there
        # would be the binding itself, so the advice is another release, and none while it exists
        if removal is None or removal.throws_from is None or not removal.throws_on(ctx.target):
            return
        instead = "pick a CUDA release the target nixpkgs still has"
    if removal is not None and removal.throws_from is not None:
        if removal.throws_on(ctx.target):
            message = f"`{name}` was removed (it throws since {removal.throws_from}): {instead}"
            severity = Severity.ERROR
        else:
            message = f"`{name}` throws from {removal.throws_from} on, after the target: {instead}"
            severity = Severity.WARNING
        ctx.report(where, message, severity=severity)
        return
    # An overlay or override that picks a release on purpose (a platform's pinned CUDA, such as a
    # Jetson JetPack's) is advice, not a defect.
    severity = Severity.INFO if ctx.place(where).is_override else Severity.WARNING
    ctx.report(where, f"`{name}` is a versioned CUDA package set, which nixpkgs removes periodically: {instead}", severity=severity)


def _overlay_picks_release(where: Node) -> bool:
    """`where` is in the value of an overlay's `cudaPackages = ...;` (`final: prev: { ... }`):
    the way the nixpkgs manual picks the CUDA release for the whole package set."""
    node = where
    while node is not None and node.type != "binding":
        node = node.parent
    if node is None or attrpath_names(node.child_by_field_name("attrpath")) != ["cudaPackages"]:
        return False
    attrset = node.parent.parent if node.parent is not None else None
    function = attrset.parent if attrset is not None else None
    while function is not None and function.type == "parenthesized_expression":
        function = function.parent
    return function is not None and function.type == "function_expression" and function.parent is not None and function.parent.type == "function_expression"


_MAJOR = re.compile(r"^cudaPackages_(\d+)")


def _several_majors(ctx: Context) -> bool:
    """The file's function takes versioned sets of two or more CUDA majors as formals
    (`{ cudaPackages_11_8, cudaPackages_12, ... }:`): it builds for each of them at once."""
    memo = ctx.semantic.memo(__name__)
    if "majors" not in memo:
        function = ctx.semantic.top_function()
        formals = function.child_by_field_name("formals") if function is not None else None
        names = [text(f.child_by_field_name("name")) for f in formals.children_by_field_name("formal")] if formals is not None else []
        memo["majors"] = len({m.group(1) for n in names if (m := _MAJOR.match(n))}) >= 2
    return memo["majors"]
