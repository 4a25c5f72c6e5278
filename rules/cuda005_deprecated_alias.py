"""Deprecated aliases of the CUDA package set: `cudaFlags` (now `flags`), `cudaVersion` (now
`cudaMajorMinorVersion`), `cusparselt` (now `libcusparse_lt`), and the setup hooks
`cudaPackages.autoAddDriverRunpath` / `cudaPackages.autoFixElfFiles`, which live at the top level.

Flagged only where the name is reached through a CUDA package set: `cudaPackages.cudaFlags`,
`pkgs.cudaPackages_12.cudaVersion`, a bare `cudaFlags` under `with cudaPackages;`, and
`inherit (cudaPackages) cudaVersion;` (reported once, at the `inherit`; its uses are part of the
fix). Not flagged: a `cudaVersion` formal, a `let`-bound or otherwise unrelated variable with one
of these names, the top-level `autoAddDriverRunpath`, the new names, and an alias on a target
nixpkgs where the name was still the current one (the reference set dates each deprecation:
`cudaFlags` before PR #322070, mid 2024; `cudaVersion` before the May 2025 rework, PR #405664;
the scope's hooks before April 2024), where the new name may not exist yet.

## Why
The CUDA package set keeps these names as aliases so that old expressions still evaluate, but
they warn (or throw when `allowAliases = false`) and are removed in later releases. `cusparselt`
is kept without a warning (`cusparselt = final.libcusparse_lt;`): an info that asks for the
package's own name.
`cudaPackages.cudaFlags` became `cudaPackages.flags` (PR #322070), `cudaVersion` became
`cudaMajorMinorVersion`, `cusparselt` became `libcusparse_lt`, and the runpath hooks moved out of
the CUDA scope to the top level of nixpkgs.

The fix writes the new name and is safe: the alias evaluates to exactly what the new name
denotes. For `inherit (cudaPackages) cudaFlags;` in a `let` it renames the inherited name and
every use of it; where that could capture another binding, or where the name is an attribute of
the result, it binds the old name to the new attribute (`cudaFlags = cudaPackages.flags;`). The
hooks are written as `pkgs.autoAddDriverRunpath` when `pkgs` is in scope, otherwise as a formal of
the file's function (added when missing, but never to a NixOS module's arguments); elsewhere there
is no fix.

## Example
```nix
{ lib, stdenv, cudaPackages }:
stdenv.mkDerivation {
  pname = "kernels";
  version = "1.0";
  cmakeFlags = [ "-DCMAKE_CUDA_ARCHITECTURES=${cudaPackages.cudaFlags.cmakeCudaArchitecturesString}" ];
  nativeBuildInputs = [ cudaPackages.cuda_nvcc cudaPackages.autoAddDriverRunpath ];
  buildInputs = lib.optionals (lib.versionAtLeast cudaPackages.cudaVersion "12.0") [ cudaPackages.cusparselt ];
}
```

## Use instead
```nix
{ lib, stdenv, cudaPackages, autoAddDriverRunpath }:
stdenv.mkDerivation {
  pname = "kernels";
  version = "1.0";
  cmakeFlags = [ "-DCMAKE_CUDA_ARCHITECTURES=${cudaPackages.flags.cmakeCudaArchitecturesString}" ];
  nativeBuildInputs = [ cudaPackages.cuda_nvcc autoAddDriverRunpath ];
  buildInputs = lib.optionals (cudaPackages.cudaAtLeast "12.0") [ cudaPackages.libcusparse_lt ];
}
```

## References
- https://github.com/NixOS/nixpkgs/pull/322070
- https://nixos.org/manual/nixpkgs/unstable/#cuda
- https://nixos.org/manual/nixpkgs/unstable/#setup-hook-autoAddDriverRunpath
"""

from __future__ import annotations

import re

from tree_sitter import Node

from cudalint.knowledge import catalog
from cudalint.lint import edits
from cudalint.lint.context import Context
from cudalint.lint.model import Applicability, Edit, Fix, FixAvailability, Severity
from cudalint.lint.rule import Rule
from cudalint.nix.semantic import NameBinding
from cudalint.nix.syntax import bindings_of, descendants, dotted_name, identifier_name, node_key, text, unparen
from cudalint.rules._name_sites import NAME_SITES, dispatch, inherited_from_package_set

RULE = Rule(
    code="CUDA005",
    name="deprecated-alias",
    severity=Severity.WARNING,
    fix=Applicability.SAFE,
    availability=FixAvailability.SOMETIMES,
    summary="Deprecated alias in the CUDA package set (`cudaFlags`, `cudaVersion`, `cusparselt`, scoped runpath hooks)",
    node_types=NAME_SITES,
    patterns=(b"cudaFlags", b"cudaVersion", b"cusparselt", b"autoAddDriverRunpath", b"autoFixElfFiles"),
)

RENAMED = {"cudaFlags": "flags", "cudaVersion": "cudaMajorMinorVersion", "cusparselt": "libcusparse_lt"}
MOVED = frozenset({"autoAddDriverRunpath", "autoFixElfFiles"})  # now top-level packages
ALIASES = frozenset(RENAMED) | MOVED


@RULE
def check(node: Node, ctx: Context) -> None:
    dispatch(node, ctx, select=_check_select, variable=_check_with, inherit=_check_inherit)


def _deprecated_on_target(name: str, ctx: Context) -> bool:
    """Whether the target nixpkgs already deprecates the name: before that it was the current
    name (`cudaVersion` until 2025-05, `cudaFlags` until PR #322070), and the new one may not
    exist yet."""
    deprecation = ctx.reference.deprecation(name)
    return deprecation is None or deprecation.in_effect_on(ctx.target)


def _advice(name: str) -> str:
    if name in RENAMED:
        return f"use `{RENAMED[name]}`"
    return f"the hook lives at the top level of nixpkgs: use `{name}` (or `pkgs.{name}`)"


def _message(written: str, name: str) -> str:
    return f"`{written}` is {_kind(name)} in the CUDA package set{_effect(name)}; {_advice(name)}"


# Aliases the package set keeps without a warning (`cusparselt = final.libcusparse_lt;` in
# pkgs/top-level/cuda-packages.nix): the old name still works; the new one is the package's name.
QUIET = frozenset({"cusparselt"})


def _kind(name: str) -> str:
    return "an old alias" if name in QUIET else "a deprecated alias"


def _effect(name: str) -> str:
    return "" if name in QUIET else " (it warns, and throws without aliases)"


def _severity(name: str) -> Severity | None:
    """Info for an alias that still works silently: the CUDA team asks for the new name."""
    return Severity.INFO if name in QUIET else None


# ----- `cudaPackages.cudaFlags`, `pkgs.cudaPackages_12.cudaVersion` -----------------------------


def _check_select(select: Node, ctx: Context) -> None:
    attrpath = select.child_by_field_name("attrpath")
    components = attrpath.children_by_field_name("attr") if attrpath is not None else []
    names = [identifier_name(c) for c in components]
    base = select.child_by_field_name("expression")
    for index, name in enumerate(names):
        if name not in ALIASES or not _deprecated_on_target(name, ctx):
            continue
        if index == 0:
            through_set = ctx.semantic.package_set_name(base) is not None
        else:
            through_set = catalog.is_package_set_name(names[index - 1])
        if not through_set:
            continue
        component = components[index]
        span = (select.start_byte, component.end_byte)
        written = ctx.source.slice(*span)
        if name in RENAMED:
            fix = _fix(name, (edits.replace(component, RENAMED[name]),))
        else:
            fix = _moved_select_fix(ctx, select, base, components, index, name)
        ctx.report(span, _message(written, name), fixes=[fix], severity=_severity(name))
        return


def _moved_select_fix(ctx: Context, select: Node, base: Node, components: list[Node], index: int, name: str) -> Fix | None:
    """`pkgs.cudaPackages.autoAddDriverRunpath` -> `pkgs.autoAddDriverRunpath`;
    `cudaPackages.autoAddDriverRunpath` -> the top-level name as the scope allows."""
    source = ctx.source
    span_end = components[index].end_byte
    if index > 0:
        # drop the package-set component: `pkgs.cudaPackages.x` -> `pkgs.x`
        prefix = source.slice(select.start_byte, components[index - 1].start_byte)
        if not _is_package_collection(prefix):
            return None
        return _fix(name, (Edit(select.start_byte, span_end, prefix + name),))
    inner = unparen(base)
    if inner is not None and inner.type == "select_expression" and inner.child_by_field_name("default") is None:
        inner_path = inner.child_by_field_name("attrpath")
        inner_components = inner_path.children_by_field_name("attr") if inner_path is not None else []
        if inner_components and catalog.is_package_set_name(identifier_name(inner_components[-1])):
            prefix = source.slice(inner.start_byte, inner_components[-1].start_byte)
            if not _is_package_collection(prefix):
                return None
            return _fix(name, (Edit(select.start_byte, span_end, prefix + name),))
    spelled = _toplevel(ctx, select, name)
    if spelled is None:
        return None
    written, extra = spelled
    return _fix(name, (Edit(select.start_byte, span_end, written), *extra), isolation=f"CUDA005:formal:{name}" if extra else None)


def _is_package_collection(prefix: str) -> bool:
    """Whether `prefix` (the text before `cudaPackages`, e.g. `pkgs.`) reaches a whole nixpkgs
    package set: `pkgs`, an overlay's `final`/`prev`, `pkgsCross.<platform>`, `buildPackages`,
    `(import <nixpkgs> { })`. There the top-level hook sits next to `cudaPackages`; not under
    `config` or an arbitrary attrset."""
    whole = prefix.rstrip().rstrip(".").strip()
    last = whole.rsplit(".", 1)[-1]
    return (
        last in {"pkgs", "final", "prev", "self", "super", "nixpkgs"} or last.startswith("pkgs") or last.endswith("Packages") or "pkgsCross." in whole or re.match(r"^\(\s*import\b", whole) is not None
    )


def _toplevel(ctx: Context, at: Node, name: str) -> tuple[str, tuple[Edit, ...]] | None:
    """How to write top-level package `name` at `at`: `pkgs.name`, or the bare name bound by a
    formal of the file's function (adding the formal when nothing binds the name)."""
    semantic = ctx.semantic
    binding = semantic.resolve_name(name, at)
    top = semantic.top_function()
    formals = top.child_by_field_name("formals") if top is not None else None
    if binding.kind == "formal" and binding.node is not None and formals is not None and binding.node.parent == formals:
        return name, ()
    if edits.is_bound(semantic, at, "pkgs") and semantic.resolve_name("pkgs", at).kind != "with":
        return f"pkgs.{name}", ()
    if formals is not None and binding.kind in {"free", "with"} and _takes_packages(formals):
        addition = edits.add_formal(ctx.source, formals, name)
        return (name, (addition,)) if addition is not None else None
    return None


def _takes_packages(formals: Node) -> bool:
    """Whether the file's function is called with packages as arguments (`callPackage`), so that
    a new formal gets the top-level hook. A NixOS module (`{ config, pkgs, ... }:`) is not."""
    names = set(edits.formal_names(formals))
    module = any(c.type == "ellipses" for c in formals.children) and bool(names & {"config", "options", "modulesPath"})
    return not module


def _fix(name: str, changes: tuple[Edit, ...], isolation: str | None = None) -> Fix:
    new = RENAMED.get(name, name)
    title = f"Use `{new}`" if name in RENAMED else f"Use the top-level `{name}`"
    return Fix(title, Applicability.SAFE, tuple(edits.merge_edits(list(changes))), isolation)


# ----- `with cudaPackages; cudaFlags` ------------------------------------------------------------


def _check_with(variable: Node, ctx: Context) -> None:
    name = text(variable.child_by_field_name("name"))
    if name not in ALIASES or not _deprecated_on_target(name, ctx):
        return
    semantic = ctx.semantic
    binding = semantic.resolve(variable)
    if binding.kind != "with" or not _reaches_package_set(ctx, binding, name):
        return
    message = f"`{name}` here is `{text(_first_set(ctx, binding))}.{name}`, {_kind(name)} in the CUDA package set{_effect(name)}; {_advice(name)}"
    ctx.report(variable, message, fixes=[_with_fix(ctx, variable, binding, name)], severity=_severity(name))


def _reaches_package_set(ctx: Context, binding: NameBinding, name: str) -> bool:
    """Whether the name, looked up through the `with`s (innermost first), lands in a CUDA package
    set. `lib` holds none of these names; any other environment (`with pkgs;`) may hold the
    top-level hooks, so for them an inner unknown `with` means the name is not the alias."""
    for environment in binding.withs:
        if ctx.semantic.package_set_name(environment) is not None:
            return True
        if name in MOVED and not _is_lib(environment):
            return False
    return False


def _is_lib(environment: Node) -> bool:
    written = dotted_name(environment) or ""
    return written in {"lib", "builtins"} or written.startswith("lib.")


def _first_set(ctx: Context, binding: NameBinding) -> Node:
    return next(w for w in binding.withs if ctx.semantic.package_set_name(w) is not None)


def _with_fix(ctx: Context, variable: Node, binding: NameBinding, name: str) -> Fix | None:
    semantic = ctx.semantic
    if name in RENAMED:
        new = RENAMED[name]
        # the new name must reach the same `with`: nothing lexical may bind it, and only `lib`
        # may sit between it and the package set (another environment could hold the new name)
        there = semantic.resolve_name(new, variable)
        if there.kind != "with":
            return None
        for environment in there.withs:
            if semantic.package_set_name(environment) is not None:
                break
            if not _is_lib(environment):
                return None
        return _fix(name, (edits.replace(variable, new),))
    spelled = _toplevel(ctx, variable, name)
    if spelled is None:
        return None
    written, extra = spelled
    changes = extra if written == name else (edits.replace(variable, written), *extra)
    return _fix(name, tuple(changes), isolation=f"CUDA005:formal:{name}" if extra else None)


# ----- `inherit (cudaPackages) cudaFlags;` ---------------------------------------------------------


def _check_inherit(attrs: Node, ctx: Context) -> None:
    inherited = inherited_from_package_set(attrs, ctx)
    if inherited is None:
        return
    statement, source_node, names = inherited
    for attr, name in names:
        if name not in ALIASES or not _deprecated_on_target(name, ctx):
            continue
        ctx.report(
            attr,
            f"`inherit ({text(source_node)}) {name};` brings in {_kind(name)} of the CUDA package set{_effect(name)}; {_advice(name)}",
            fixes=[_inherit_fix(ctx, statement, attrs, attr, name)],
            severity=_severity(name),
        )


def _inherit_fix(ctx: Context, statement: Node, attrs: Node, attr: Node, name: str) -> Fix | None:
    scope = statement.parent.parent if statement.parent is not None else None
    if scope is None:
        return None
    source_text = text(statement.child_by_field_name("expression"))
    qualifier = source_text if dotted_name(statement.child_by_field_name("expression")) is not None else f"({source_text})"
    if name in RENAMED:
        new = RENAMED[name]
        if scope.type == "let_expression":
            renamed = _rename_in_let(ctx, scope, statement, attrs, attr, name, new)
            if renamed is not None:
                return _fix(name, renamed)
        # keep the name, bind it to the new attribute (also keeps attribute names of attrsets)
        return _fix(name, tuple(_replace_attr(ctx, statement, attrs, attr, f"{name} = {qualifier}.{new};")))
    return _moved_inherit_fix(ctx, scope, statement, attrs, attr, name)


def _rename_in_let(ctx: Context, scope: Node, statement: Node, attrs: Node, attr: Node, name: str, new: str) -> tuple[Edit, ...] | None:
    """Rename an inherited alias and all its uses to `new`, when no other binding gets in the way."""
    semantic = ctx.semantic
    uses = semantic.uses(name, statement)
    body = scope.child_by_field_name("body")
    if body is None:
        return None
    source_text = text(statement.child_by_field_name("expression"))
    existing = semantic.resolve_name(new, body)
    merge: Node | None = None
    if existing.node is not None and _within(existing.node, scope) and existing.node.parent is not None and existing.node.parent.parent == scope:
        if existing.kind != "inherit-from" or existing.source is None or text(existing.source) != source_text:
            return None  # `new` is bound to something else in this let
        merge = existing.node
    for use in uses:
        found = semantic.resolve_name(new, use)
        if merge is not None:
            if found.node is None or node_key(found.node) != node_key(merge):
                return None
        elif found.node is not None and _within(found.node, scope):
            return None  # an inner binding of `new` would capture the renamed use
    for node in descendants(scope):
        if node.type == "variable_expression" and text(node.child_by_field_name("name")) == new and merge is None:
            found = semantic.resolve(node)
            if found.node is None or not _within(found.node, scope):
                return None  # an existing `new` from outside would be captured by the rename
        elif node.type == "inherit" and any(identifier_name(a) in {name, new} for a in _inherit_attrs(node)):
            return None  # `inherit name;` would need the old name
    changes: list[Edit] = []
    if merge is not None:
        changes.extend(_replace_attr(ctx, statement, attrs, attr, None))
    else:
        changes.append(edits.replace(attr, new))
    changes.extend(edits.replace(use, new) for use in uses)
    return tuple(changes)


def _moved_inherit_fix(ctx: Context, scope: Node, statement: Node, attrs: Node, attr: Node, name: str) -> Fix | None:
    semantic = ctx.semantic
    if edits.is_bound(semantic, statement, "pkgs"):
        return _fix(name, tuple(_replace_attr(ctx, statement, attrs, attr, f"inherit (pkgs) {name};")))
    top = semantic.top_function()
    formals = top.child_by_field_name("formals") if top is not None else None
    if formals is None:
        return None
    outside = semantic.resolve_name(name, scope)
    extra: list[Edit] = []
    if outside.kind in {"free", "with"}:
        if not _takes_packages(formals):
            return None
        addition = edits.add_formal(ctx.source, formals, name)
        if addition is None:
            return None
        extra.append(addition)
    elif not (outside.kind == "formal" and outside.node is not None and outside.node.parent == formals):
        return None
    if scope.type == "let_expression":
        changes = _remove_from_let(ctx, scope, statement, attrs, attr)
    else:
        changes = _replace_attr(ctx, statement, attrs, attr, f"inherit {name};")
    return _fix(name, tuple(changes) + tuple(extra), isolation=f"CUDA005:formal:{name}" if extra else None)


def _remove_from_let(ctx: Context, scope: Node, statement: Node, attrs: Node, attr: Node) -> list[Edit]:
    """Remove one inherited name from a let; the whole `let ... in` when nothing else is bound."""
    if len(bindings_of(scope)) == 1 and len(attrs.children_by_field_name("attr")) == 1:
        body = scope.child_by_field_name("body")
        return [Edit(scope.start_byte, body.start_byte, "")]
    return _replace_attr(ctx, statement, attrs, attr, None)


def _replace_attr(ctx: Context, statement: Node, attrs: Node, attr: Node, replacement: str | None) -> list[Edit]:
    """Take `attr` out of `inherit (s) a b;` and put `replacement` (a binding) in its place."""
    source = ctx.source
    names = attrs.children_by_field_name("attr")
    if len(names) == 1:
        if replacement is None:
            return [edits.delete_element(source, statement)]
        return [edits.replace(statement, replacement)]
    changes = [edits.delete_element(source, attr)]
    if replacement is not None:
        last_line = source.line_of(statement.end_byte)
        if not source.data[statement.end_byte : source.line_end(last_line)].strip():
            # the statement ends its line: the new binding goes on the next line, same indentation
            indent = source.indentation_of_line(source.line_of(statement.start_byte))
            changes.append(Edit(statement.end_byte, statement.end_byte, source.newline + indent + replacement))
        else:
            changes.append(Edit(statement.end_byte, statement.end_byte, " " + replacement))
    return changes


def _inherit_attrs(node: Node) -> list[Node]:
    attrs = node.child_by_field_name("attrs")
    return attrs.children_by_field_name("attr") if attrs is not None else []


def _within(node: Node, scope: Node) -> bool:
    return scope.start_byte <= node.start_byte and node.end_byte <= scope.end_byte
