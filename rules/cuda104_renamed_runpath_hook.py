"""Old names of the driver-runpath hooks: `addOpenGLRunpath`, `autoAddOpenGLRunpathHook`,
`autoAddCudaCompatRunpathHook` and the `dontUseAutoAddOpenGLRunpath` switch.

Flags function formals (reported once, where the name is requested; the fix renames the formal
and every use), `inherit (pkgs) addOpenGLRunpath;`, references through `with`, package-set
selections (`pkgs.addOpenGLRunpath`, `cudaPackages.autoAddOpenGLRunpathHook`,
`prev.cudaPackages_11.autoAddOpenGLRunpathHook`, `${addOpenGLRunpath.driverLink}`),
`dontUseAutoAddOpenGLRunpath = true;`, and the old names in shell code of phases
(`addOpenGLRunpath $out/lib/libfoo.so`). An error where the target nixpkgs throws on the old
name (`addOpenGLRunpath` since 2024-11-17, the scope's `autoAddOpenGLRunpathHook` since
2024-07-30, `autoAddCudaCompatRunpathHook` since its rename in March 2024), a warning where it is still a
deprecated alias (a warning that suggests `--nixpkgs` where the file's pin is a commit nothing dates). Not flagged: targets older than 24.05 (the new names do not exist there),
names merely bound by the file (`let addOpenGLRunpath = ...;`, a lambda parameter), attributes
of other sets (`config.deps.autoAddOpenGLRunpathHook`), comments and non-shell strings.

## Why
nixpkgs renamed the hooks that add the driver directory to `DT_RUNPATH`: they are not about
OpenGL, and the CUDA hooks moved out of `cudaPackages`. `addOpenGLRunpath` became
`addDriverRunpath` (PR #275241), `cudaPackages.autoAddOpenGLRunpathHook` became the top-level
`autoAddDriverRunpath` (PR #297212), `autoAddCudaCompatRunpathHook` became
`autoAddCudaCompatRunpath` (PR #281576) and `dontUseAutoAddOpenGLRunpath` became
`dontUseAutoAddDriverRunpath`. The CUDA set dropped its aliases on 2024-07-30 (PR #331017) and
`addOpenGLRunpath` became a `throw` on 2024-11-17, so the old names break evaluation on 24.11 and
later. The setup hook of `addDriverRunpath` defines only the
shell function `addDriverRunpath`, so phases calling `addOpenGLRunpath` fail as well.

The fix renames every occurrence consistently (a formal together with all its uses;
`cudaPackages.autoAddOpenGLRunpathHook` becomes `autoAddDriverRunpath`, adding the formal when
nothing binds it). It is safe: the new names denote the same packages and shell functions.

## Example
```nix
{ stdenv, addOpenGLRunpath, cudaPackages }:
stdenv.mkDerivation {
  pname = "cuda-app";
  version = "1.0";
  nativeBuildInputs = [ cudaPackages.autoAddOpenGLRunpathHook ];
  makeFlags = [ "DRIVER_LIB=${addOpenGLRunpath.driverLink}/lib" ];
}
```

## Use instead
```nix
{ stdenv, addDriverRunpath, autoAddDriverRunpath }:
stdenv.mkDerivation {
  pname = "cuda-app";
  version = "1.0";
  nativeBuildInputs = [ autoAddDriverRunpath ];
  makeFlags = [ "DRIVER_LIB=${addDriverRunpath.driverLink}/lib" ];
}
```

## References
- https://github.com/NixOS/nixpkgs/pull/275241
- https://github.com/NixOS/nixpkgs/pull/297212
- https://github.com/NixOS/nixpkgs/pull/281576
- https://github.com/NixOS/nixpkgs/issues/141803
- https://nixos.org/manual/nixpkgs/unstable/#cuda
"""

from __future__ import annotations

import re

from tree_sitter import Node

from cudalint.knowledge import catalog
from cudalint.knowledge.targets import TargetError
from cudalint.lint import edits
from cudalint.lint.context import Context
from cudalint.lint.model import Applicability, Edit, Fix, FixAvailability, Severity
from cudalint.lint.rule import Rule
from cudalint.nix.syntax import ATTRSET_TYPES, STRING_TYPES, attrpath_names, bindings_of, descendants, identifier_name, last_name, node_key, text, unparen
from cudalint.rules._runpath_hooks import MOVED_TO_TOPLEVEL, RENAMED, formals_isolation, hook_reference

OLD_FLAG, NEW_FLAG = "dontUseAutoAddOpenGLRunpath", "dontUseAutoAddDriverRunpath"

RULE = Rule(
    code="CUDA104",
    name="renamed-runpath-hook",
    severity=Severity.ERROR,
    fix=Applicability.SAFE,
    availability=FixAvailability.SOMETIMES,
    summary="Old name of a driver-runpath hook (`addOpenGLRunpath`, `autoAddOpenGLRunpathHook`, ...)",
    node_types=("formal", "inherited_attrs", "variable_expression", "select_expression", "binding", *sorted(STRING_TYPES)),
    patterns=(b"OpenGLRunpath", b"CudaCompatRunpathHook"),
    attrpath_patterns=(OLD_FLAG.encode(),),
    removals=True,
)

ALL_RENAMES = {**RENAMED, OLD_FLAG: NEW_FLAG}
NEW_NAMES_SINCE = "2024-05-22"  # 24.05: the first release with all the new names
_SHELL_OLD = re.compile(rb"(?<![\w./@-])(addOpenGLRunpath|autoAddOpenGLRunpathHook|autoAddCudaCompatRunpathHook|dontUseAutoAddOpenGLRunpath)(?!\w)")


@RULE
def check(node: Node, ctx: Context) -> None:
    if not _target_includes(ctx, NEW_NAMES_SINCE):
        return
    kind = node.type
    if kind == "formal":
        _check_formal(node, ctx)
    elif kind == "inherited_attrs":
        _check_inherit(node, ctx)
    elif kind == "variable_expression":
        _check_variable(node, ctx)
    elif kind == "select_expression":
        _check_select(node, ctx)
    elif kind == "binding":
        _check_flag_binding(node, ctx)
    else:
        _check_shell(node, ctx)


def _target_includes(ctx: Context, change_date: str) -> bool:
    """Whether the target nixpkgs has the change; a target that does not parse counts as the newest."""
    try:
        return ctx.target.includes(change_date)
    except TargetError:
        return True


def _status(old: str, ctx: Context) -> tuple[Severity, str]:
    """Severity, and a clause saying how the target treats the old name."""
    if old == OLD_FLAG:
        return Severity.WARNING, " (deprecated)"
    since = ctx.reference.deprecation(old).throws_from  # when the alias became a throw (reference set)
    if _target_includes(ctx, since):
        if old == "autoAddCudaCompatRunpathHook":
            return Severity.ERROR, " without an alias (it does not exist)"
        return Severity.ERROR, f" (throws since {since})"
    return Severity.WARNING, f" (throws from {since})"


def _message(old: str, ctx: Context, described: str, advice: str) -> tuple[str, Severity]:
    severity, status = _status(old, ctx)
    new = ALL_RENAMES[old]
    renamed = f"was renamed to the top-level `{new}`" if old in MOVED_TO_TOPLEVEL else f"was renamed `{new}`"
    return f"{described} {renamed}{status}: {advice or f'use `{new}`'}", severity


def _fix(ctx: Context, old: str, changes: list[Edit] | None, title: str | None = None) -> Fix | None:
    if not changes:
        return None
    changes = edits.merge_edits(changes)
    for first, second in zip(changes, changes[1:]):
        if second.start < first.end:
            return None
    return Fix(title or f"Rename to `{ALL_RENAMES[old]}`", Applicability.SAFE, tuple(changes), formals_isolation(ctx, changes))


# ----- formals: reported once, renamed with every use ------------------------------------------


def _check_formal(formal: Node, ctx: Context) -> None:
    name_node = formal.child_by_field_name("name")
    old = text(name_node) if name_node is not None else None
    if old not in RENAMED:
        return
    new = RENAMED[old]
    uses = ctx.semantic.uses(old, formal)
    total = len(uses) + len(_plain_inherits(ctx, old, formal))
    count = f" and its {total} use{'s' if total != 1 else ''}" if total else ""
    message, severity = _message(old, ctx, f"`{old}`", f"rename the argument{count}")
    ctx.report(name_node, message, severity=severity, fixes=[_fix(ctx, old, _formal_edits(formal, name_node, old, new, uses, ctx), f"Rename `{old}` to `{new}` here and in every use")])


def _formal_edits(formal: Node, name_node: Node, old: str, new: str, uses: list[Node], ctx: Context) -> list[Edit] | None:
    formals = formal.parent
    if formals is None:
        return None
    changes: list[Edit] = []
    if new in edits.formal_names(formals):
        changes.append(edits.remove_formal(ctx.source, formal))
    else:
        changes.append(edits.replace(name_node, new))
    for use in uses:
        seen = ctx.semantic.resolve_name(new, use)
        if seen.kind not in {"free", "with"} and not (seen.kind == "formal" and seen.node is not None and seen.node.parent is not None and node_key(seen.node.parent) == node_key(formals)):
            return None  # another `new` is bound in between: renaming would capture it
        changes.append(edits.replace(use, new))
    for statement, attr in _plain_inherits(ctx, old, formal):
        owner = statement.parent.parent if statement.parent is not None else None
        if owner is not None and owner.type == "let_expression":
            changes.append(edits.replace(attr, new))
        else:  # an attribute of a set: keep its name, take the value from the renamed argument
            attrs = statement.child_by_field_name("attrs")
            if attrs is not None and len(attrs.children_by_field_name("attr")) == 1:
                changes.append(Edit(statement.start_byte, statement.end_byte, f"{old} = {new};"))
            else:
                changes.append(edits.delete_element(ctx.source, attr))
                changes.append(Edit(statement.end_byte, statement.end_byte, f" {old} = {new};"))
    return changes


def _plain_inherits(ctx: Context, name: str, formal: Node) -> list[tuple[Node, Node]]:
    """`inherit name;` statements whose name comes from `formal`: (statement, attr)."""
    found = []
    key = node_key(formal)
    for node in descendants(formal.parent.parent if formal.parent is not None and formal.parent.parent is not None else ctx.tree.root_node):
        if node.type != "inherit":
            continue
        attrs = node.child_by_field_name("attrs")
        for attr in attrs.children_by_field_name("attr") if attrs is not None else ():
            if identifier_name(attr) == name:
                binding = ctx.semantic.resolve_name(name, node)
                if binding.node is not None and node_key(binding.node) == key:
                    found.append((node, attr))
    return found


# ----- inherit -----------------------------------------------------------------------------------


def _check_inherit(attrs: Node, ctx: Context) -> None:
    statement = attrs.parent
    if statement is None:
        return
    for attr in attrs.children_by_field_name("attr"):
        old = identifier_name(attr)
        if old not in RENAMED:
            continue
        new = RENAMED[old]
        if statement.type == "inherit":
            binding = ctx.semantic.resolve_name(old, statement)
            if binding.kind == "formal" or (binding.lexical and binding.node is not None and node_key(binding.node) != node_key(statement)):
                continue  # the name comes from a binding of this file: reported (and renamed) there
            message, severity = _message(old, ctx, f"`{old}`", f"inherit `{new}`")
            ctx.report(attr, message, severity=severity)
            continue
        from_set = old in MOVED_TO_TOPLEVEL and ctx.semantic.package_set_name(statement.child_by_field_name("expression")) is not None
        message, severity = _message(old, ctx, f"`{old}`", f"take the top-level `{new}` instead" if from_set else f"inherit `{new}`")
        ctx.report(attr, message, severity=severity, fixes=[_fix(ctx, old, _inherit_from_edits(statement, attr, old, new, ctx))])


def _inherit_from_edits(statement: Node, attr: Node, old: str, new: str, ctx: Context) -> list[Edit] | None:
    owner = statement.parent.parent if statement.parent is not None else None
    if owner is None or owner.type != "let_expression":
        return None  # an attribute of a set: renaming it changes what the set defines
    attrs = statement.child_by_field_name("attrs")
    names = [identifier_name(a) for a in attrs.children_by_field_name("attr")] if attrs is not None else []
    uses = ctx.semantic.uses(old, statement)
    source_expression = statement.child_by_field_name("expression")
    set_name = ctx.semantic.package_set_name(source_expression)
    if old not in MOVED_TO_TOPLEVEL or set_name is None:
        changes = [edits.delete_element(ctx.source, attr) if new in names else edits.replace(attr, new)]
        return changes + [edits.replace(use, new) for use in uses]
    # `inherit (cudaPackages) autoAddOpenGLRunpathHook;`: the new hook is top-level
    base = unparen(source_expression)
    if base is not None and base.type == "select_expression" and len(attrpath_names(base.child_by_field_name("attrpath"))) == 1:
        nixpkgs = text(base.child_by_field_name("expression"))
        renamed_uses = [edits.replace(use, new) for use in uses]
        if len(names) == 1:
            return [edits.replace(source_expression, f"({nixpkgs})" if source_expression.type == "parenthesized_expression" else nixpkgs), edits.replace(attr, new), *renamed_uses]
        line = ctx.source.line_of(statement.start_byte)
        separator = " "
        if ctx.source.line_of(statement.end_byte) == line and not ctx.source.data[ctx.source.line_start(line) : statement.start_byte].strip():
            separator = ctx.source.newline + ctx.source.indentation_of_line(line)
        return [edits.delete_element(ctx.source, attr), Edit(statement.end_byte, statement.end_byte, f"{separator}inherit ({nixpkgs}) {new};"), *renamed_uses]
    spelled = hook_reference(ctx, statement, new)
    if spelled is None:
        return None
    written, extra = spelled
    if len(names) > 1:
        removal = edits.delete_element(ctx.source, attr)
    elif len(bindings_of(owner)) == 1 and owner.child_by_field_name("body") is not None:
        removal = Edit(owner.start_byte, owner.child_by_field_name("body").start_byte, "")  # the let held only this
    else:
        removal = edits.delete_element(ctx.source, statement)
    return [removal, *extra, *(edits.replace(use, written) for use in uses)]


# ----- references ------------------------------------------------------------------------------


def _check_variable(variable: Node, ctx: Context) -> None:
    old = text(variable.child_by_field_name("name"))
    if old not in RENAMED:
        return
    binding = ctx.semantic.resolve(variable)
    if binding.kind not in {"with", "free"}:
        return  # bound in this file: a formal or inherit is reported where it is bound
    new = RENAMED[old]
    if old in MOVED_TO_TOPLEVEL:
        spelled = hook_reference(ctx, variable, new)
        changes = None if spelled is None else [edits.replace(variable, spelled[0]), *spelled[1]]
        advice = ""
    else:
        changes = [edits.replace(variable, new)]
        advice = ""
    message, severity = _message(old, ctx, f"`{old}`", advice)
    ctx.report(variable, message, severity=severity, fixes=[_fix(ctx, old, changes)])


def _check_select(select: Node, ctx: Context) -> None:
    attrpath = select.child_by_field_name("attrpath")
    components = attrpath.children_by_field_name("attr") if attrpath is not None else []
    names = [identifier_name(c) for c in components]
    index = next((i for i, n in enumerate(names) if n in RENAMED), None)
    if index is None:
        return
    base = select.child_by_field_name("expression")
    if not _from_packages(ctx, base, names, index):
        return
    old = names[index]
    new = RENAMED[old]
    component = components[index]
    changes: list[Edit] | None = [edits.replace(component, new)]
    advice = ""
    if old in MOVED_TO_TOPLEVEL:
        previous = names[index - 1] if index > 0 else None
        if index == 0 and ctx.semantic.package_set_name(base) is not None:
            spelled = hook_reference(ctx, select, new)
            changes = None if spelled is None else [Edit(select.start_byte, component.end_byte, spelled[0]), *spelled[1]]
        elif previous is not None and catalog.is_package_set_name(previous):
            if _nixpkgs_prefix(ctx, base, names, index - 1):
                changes = [Edit(components[index - 1].start_byte, component.end_byte, new)]
            else:
                changes = None
    described = ctx.source.slice(select.start_byte, component.end_byte)
    described = described if len(described) <= 60 and "\n" not in described else old
    message, severity = _message(old, ctx, f"`{described}`", advice)
    ctx.report((select.start_byte, component.end_byte), message, severity=severity, fixes=[_fix(ctx, old, changes)])


def _from_packages(ctx: Context, base: Node | None, names: list[str | None], index: int) -> bool:
    """Whether component `index` of a selection is taken from nixpkgs or a CUDA package set
    (and not from some other attrset of the user's, e.g. `config.deps`)."""
    if index == 0:
        return ctx.semantic.package_set_name(base) is not None or _is_nixpkgs(base)
    previous = names[index - 1]
    return catalog.is_package_set_name(previous) or _nixpkgs_prefix(ctx, base, names, index)


def _nixpkgs_prefix(ctx: Context, base: Node | None, names: list[str | None], index: int) -> bool:
    """Whether the selection up to (not including) component `index` denotes nixpkgs."""
    if index == 0:
        return _is_nixpkgs(base)
    if names[index - 1] in catalog.NIXPKGS_NAMES:
        return True
    return index >= 2 and names[index - 2] == "legacyPackages"


def _is_nixpkgs(node: Node | None) -> bool:
    node = unparen(node)
    if node is None:
        return False
    if node.type == "apply_expression":
        return text(node).startswith("import")
    return last_name(node) in catalog.NIXPKGS_NAMES


# ----- dontUseAutoAddOpenGLRunpath = true; -------------------------------------------------------


def _check_flag_binding(binding: Node, ctx: Context) -> None:
    attrpath = binding.child_by_field_name("attrpath")
    names = attrpath_names(attrpath)
    if not names or names[-1] != OLD_FLAG:
        return
    owner = binding.parent.parent if binding.parent is not None else None
    if owner is None or owner.type not in ATTRSET_TYPES:
        return
    component = attrpath.children_by_field_name("attr")[-1]
    duplicate = any(b.type == "binding" and attrpath_names(b.child_by_field_name("attrpath")) == [*names[:-1], NEW_FLAG] for b in bindings_of(owner))
    message, severity = _message(OLD_FLAG, ctx, f"`{OLD_FLAG}`", f"set `{NEW_FLAG}`" + (" (it is set here too: drop this one)" if duplicate else ""))
    ctx.report(component, message, severity=severity, fixes=[None if duplicate else _fix(ctx, OLD_FLAG, [edits.replace(component, NEW_FLAG)])])


# ----- shell code -------------------------------------------------------------------------------


def _check_shell(string: Node, ctx: Context) -> None:
    shell = ctx.semantic.shell_text(string)
    if shell is None:
        return
    for line, match in shell.code_matches(_SHELL_OLD):
        old = match.group(1).decode()
        if old != OLD_FLAG and _quoted(line.code, max(0, string.children[0].end_byte - line.start), match.start(1)):
            continue  # a word in a message, not a command
        start, end = line.start + match.start(1), line.start + match.end(1)
        new = ALL_RENAMES[old]
        if old == "addOpenGLRunpath":
            severity, status = _status(old, ctx)
            message = f"shell function `{old}` went with its package, renamed `{new}`{status}: call `{new}`"
        else:
            message, severity = _message(old, ctx, f"`{old}` (in shell code)", f"write `{new}`")
        ctx.report((start, end), message, severity=severity, fixes=[_fix(ctx, old, [Edit(start, end, new)])])


def _quoted(code: bytes, begin: int, position: int) -> bool:
    """Whether `position` of a shell line lies inside quotes (the line's shell code starting at
    `begin`, after the Nix string's opening delimiter)."""
    quote = None
    index = begin
    while index < position:
        byte = code[index]
        if quote is not None:
            if byte == quote and (quote == 0x27 or code[index - 1 : index] != b"\\"):
                quote = None
        elif byte in (0x22, 0x27):
            quote = byte
        index += 1
    return quote is not None
