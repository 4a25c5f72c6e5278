"""Files patched one by one with `addDriverRunpath` where `autoAddDriverRunpath` does it all.

Flags, in the install and fixup phases of a derivation (`installPhase`, `postInstall`,
`preFixup`, `fixupPhase`, `postFixup`), shell loops that call `addDriverRunpath` or the old
`addOpenGLRunpath` on files (`for f in $out/lib/*.so; do addDriverRunpath "$f"; done`,
`find ... | while read f; do ... done`, `while ...; do ... done < <(find ...)`),
`find ... -exec addDriverRunpath {} \\;` and `xargs addDriverRunpath`, and direct calls that
patch several files (two or more calls or file arguments, globs such as `$out/lib/*.so`,
`$(find ...)`). Not flagged: one call on one file (a deliberate choice), calls with
`--force-rpath` (they set `DT_RPATH`, which the hook does not), calls in other phases (a
`preCheck` patching test binaries of the build tree), derivations that disable the hook
(`dontUseAutoAddDriverRunpath`) or never run the postFixup hooks (`runCommand`, `buildCommand`,
`dontFixup = true`, `phases` without `fixupPhase`, a `fixupPhase` of their own without
`runHook postFixup`), and commented-out lines. Loops inside `if`/`case` or doing more than
patching are reported without a fix; an emptied `installPhase`/`fixupPhase` is kept (empty), as
deleting it would bring back the default phase.

## Why
Manual patching misses files: a new library in the next release, another output, a binary
under `libexec`. nixpkgs replaced these loops with the `autoAddDriverRunpath` hook, which runs
`addDriverRunpath` on every dynamically linked ELF file of every output at the end of
`postFixup` (issues #220340, #232420). Calls in `installPhase`, `postInstall` or `preFixup`
are also undone by the fixup phase, which shrinks `DT_RUNPATH` to directories that exist at
build time.

The fix deletes the loops and calls (the whole phase when nothing else is left in it), and puts
`autoAddDriverRunpath` in `nativeBuildInputs` (in place of `addDriverRunpath` when nothing calls
it any more). Where the file lists the hook already, but under a condition the calls do not
have (`optional cudaSupport autoAddDriverRunpath` while every Linux build runs the calls), no fix
is offered: the other builds would lose the driver's runpath. It is unsafe: every ELF file is
now patched, not only the listed ones. On a target
before `autoAddDriverRunpath` (2024-04-01, PR #297212) the hook is the CUDA package set's
`cudaPackages.autoAddOpenGLRunpathHook` (from 2022-04, PR #167016); before that there was no such
hook, and the rule is silent.

## Example
```nix
{ stdenv, addDriverRunpath }:
stdenv.mkDerivation {
  pname = "cuda-app";
  version = "1.0";
  nativeBuildInputs = [ addDriverRunpath ];
  postFixup = ''
    for lib in $out/lib/*.so; do
      addDriverRunpath "$lib"
    done
  '';
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
- https://github.com/NixOS/nixpkgs/issues/220340
- https://github.com/NixOS/nixpkgs/issues/232420
- https://github.com/NixOS/nixpkgs/pull/297212
- https://nixos.org/manual/nixpkgs/unstable/#cuda
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field

from tree_sitter import Node

from cudalint.knowledge import catalog
from cudalint.lint import edits
from cudalint.lint.context import Context
from cudalint.lint.model import Applicability, Edit, Fix, FixAvailability, Severity
from cudalint.lint.rule import Rule
from cudalint.nix.shell import LOOPS, Command, ShellText
from cudalint.nix.syntax import STRING_TYPES, attrpath_names, binding_value, bindings_of, descendants, flatten_apply, last_name, node_key, outermost_apply, unparen
from cudalint.rules._runpath_hooks import (
    ADD_FUNCTIONS,
    DISABLE_FLAGS,
    DRIVER_HOOKS,
    driver_hook,
    elements_of,
    fixup_runs,
    function_calls,
    hook_isolation,
    hook_reference,
    replace_element_with,
    shell_view,
)

RULE = Rule(
    code="CUDA105",
    name="manual-runpath-loop",
    severity=Severity.INFO,
    fix=Applicability.UNSAFE,
    availability=FixAvailability.SOMETIMES,
    summary="Files patched one by one with `addDriverRunpath` instead of `autoAddDriverRunpath`",
    node_types=tuple(sorted(STRING_TYPES)),
    patterns=(b"addDriverRunpath", b"addOpenGLRunpath"),
)

PHASES = frozenset({"installPhase", "postInstall", "preFixup", "fixupPhase", "postFixup"})
SHELLS = frozenset({"mkShell", "mkShellNoCC"})

_FUNCTION = rb"(addDriverRunpath|addOpenGLRunpath)"
_AT_COMMAND = re.compile(rb"(?:^|[;&|(!]\s*|\b(?:do|then|else)\s+)" + _FUNCTION + rb"(?![\w-])")
_FIND_EXEC = re.compile(rb"(?:-exec(?:dir)?\s+|\bxargs\b[^|;]*?\s)(?:\S*/)?" + _FUNCTION + rb"(?![\w-])")
_FUNCTIONS = frozenset({b"addDriverRunpath", b"addOpenGLRunpath"})
_GUARD = rb"(?:isELF|\[\[?|test|patchelf|file|grep|!)\b"
_ALLOWED_IN_LOOP = [
    re.compile(rb"^" + _FUNCTION + rb"(?:\s.*)?$", re.S),  # the call itself
    re.compile(rb"^" + _GUARD + rb".*\|\|\s*continue$", re.S),  # isELF "$f" || continue
    re.compile(rb"^" + _GUARD + rb".*&&\s*" + _FUNCTION + rb"(?:\s.*)?$", re.S),  # isELF "$f" && addDriverRunpath "$f"
    re.compile(rb"^(?:continue|:|true)$"),
    re.compile(rb"^echo\b", re.S),
]
_GUARDED_IF = re.compile(rb"^if\s+" + _GUARD, re.S)
# statements holding others (their commands are checked, not removed)
_BLOCKS = frozenset({"if_statement", "case_statement", "compound_statement", "subshell", "function_definition"})
_GLOB = re.compile(rb"[*?\[{]|\$\(|`")


@dataclass
class Construct:
    kind: str  # loop | find | call
    string: Node
    phase: str
    start: int
    end: int
    function: str
    removable: bool
    files: int = 1  # file arguments of a direct call
    glob: bool = False  # a direct call on a glob or `$(...)` of files


@dataclass
class Analysis:
    constructs: list[Construct] = field(default_factory=list)
    fix: Fix | None = None


@RULE
def check(string: Node, ctx: Context) -> None:
    hook = driver_hook(ctx)
    if hook is None:
        return  # before the hook (2022-04), patching file by file is the way
    attrset, phase = _phase_of(string, ctx)
    if attrset is None:
        return
    analysis = _analyse(attrset, ctx)
    key = node_key(string)
    for construct in analysis.constructs:
        if node_key(construct.string) != key:
            continue
        message = _message(construct, analysis, hook)
        if not construct.removable:
            message += " (by hand: the loop does more than patch)"
        ctx.report((construct.start, construct.end), message, fixes=[analysis.fix if construct.removable else None])


def _message(construct: Construct, analysis: Analysis, hook: str) -> str:
    function = construct.function
    instead = f"list `{hook}` in `nativeBuildInputs` instead"
    if construct.kind == "loop":
        return f"`{function}` called in a loop over files in `{construct.phase}`: {instead}"
    if construct.kind == "find":
        return f"`{function}` run by `find -exec`/`xargs` in `{construct.phase}` (they cannot run a shell function): {instead}"
    count = sum(c.files for c in analysis.constructs if c.kind == "call")
    many = "a glob of files" if construct.glob else f"{count} files one by one"
    return f"`{function}` patches {many} in `{construct.phase}`: {instead}"


def _phase_of(string: Node, ctx: Context) -> tuple[Node | None, str]:
    """The derivation attrset and phase name of a shell string in one of the phases."""
    binding = ctx.semantic.enclosing_binding(string)
    if binding is None:
        return None, ""
    names = attrpath_names(binding.child_by_field_name("attrpath"))
    if len(names) != 1 or names[0] not in PHASES or ctx.semantic.shell_text(string) is None:
        return None, ""
    attrset = binding.parent.parent if binding.parent is not None else None
    if attrset is None or not edits.is_attrset(attrset):
        return None, ""
    return attrset, names[0]


# ----- analysis of one derivation --------------------------------------------------------------


def _analyse(attrset: Node, ctx: Context) -> Analysis:
    cache = ctx.semantic.memo(__name__).setdefault("analyses", {})
    key = node_key(attrset)
    if key not in cache:
        cache[key] = _compute(attrset, ctx)
    return cache[key]


def _compute(attrset: Node, ctx: Context) -> Analysis:
    analysis = Analysis()
    call = ctx.semantic.enclosing_call(attrset.children[0])
    if (call is not None and call.name in SHELLS) or not fixup_runs(ctx, attrset):
        return analysis
    if any(edits.find_binding(attrset, flag) is not None for flag in DISABLE_FLAGS):
        return analysis
    strings: list[tuple[Node, str, Node]] = []  # (string, phase, binding)
    for binding in bindings_of(attrset):
        if binding.type != "binding":
            continue
        names = attrpath_names(binding.child_by_field_name("attrpath"))
        if len(names) != 1 or names[0] not in PHASES:
            continue
        for node in descendants(binding):
            if node.type in STRING_TYPES and ctx.semantic.shell_text(node) is not None:
                strings.append((node, names[0], binding))
    direct: list[Construct] = []
    for string, phase, _ in strings:
        for construct in _constructs(ctx.semantic.shell_text(string), string, phase):
            (direct if construct.kind == "call" else analysis.constructs).append(construct)
    # a call in a string interpolated into a loop (`${lib.optionalString cudaSupport "..."}`) is the loop's
    loops = [(c.start, c.end) for c in analysis.constructs if c.kind == "loop"]
    direct = [c for c in direct if not any(start <= c.start < end for start, end in loops)]
    if sum(c.files for c in direct) >= 2 or any(c.glob for c in direct):
        analysis.constructs.extend(direct)
    analysis.constructs.sort(key=lambda c: c.start)
    if analysis.constructs:
        analysis.fix = _fix(attrset, analysis.constructs, strings, ctx)
    return analysis


def _constructs(shell: ShellText, string: Node, phase: str) -> list[Construct]:
    """The loops, `find -exec`/`xargs` runs and direct calls of a phase, outermost loops only."""
    found: list[Construct] = []

    def visit(sequence: Node | None, nested: bool) -> None:
        for index, statement in enumerate(shell.statements(sequence)):
            if statement.type in _BLOCKS:
                for block in _blocks(statement):
                    visit(block, nested=True)
                continue
            if any(node.type in LOOPS for node in _descendants(statement)):
                construct = _loop(shell, statement, string, phase, nested=nested or _loop_of(statement) is None)
            else:
                construct = _single(shell, statement, string, phase, top=not nested)
            if construct is not None and index == 0 and sequence is not None and sequence.type == "case_item":
                construct.start = shell.absolute(sequence)[0]  # `x86_64) for ...`: from the pattern on
            if construct is not None:
                found.append(construct)

    visit(None, nested=False)
    return found


def _loop_of(statement: Node) -> Node | None:
    """The loop a statement is: `for ...; done`, `find | while ...; done`, `while ...; done < <(...)`."""
    node = statement
    while node.type in {"redirected_statement", "pipeline"}:
        node = node.child_by_field_name("body") if node.type == "redirected_statement" else node.named_children[-1]
        if node is None:
            return None
    return node if node.type in LOOPS else None


def _blocks(statement: Node) -> list[Node]:
    """The statement sequences of an `if`, `case`, `{ }`, `( )` or function."""
    if statement.type == "if_statement":
        return [statement, *(c for c in statement.named_children if c.type in {"elif_clause", "else_clause"})]
    if statement.type == "case_statement":
        return [c for c in statement.named_children if c.type == "case_item"]
    if statement.type == "function_definition":
        body = statement.child_by_field_name("body")
        return [body] if body is not None else []
    return [statement]


def _descendants(node: Node) -> Iterator[Node]:
    yield node
    for child in node.named_children:
        yield from _descendants(child)


def _calls(shell: ShellText, node: Node) -> list[Command]:
    return [c for c in shell.commands_in(node) if c.name in _FUNCTIONS]


def _loop(shell: ShellText, statement: Node, string: Node, phase: str, nested: bool) -> Construct | None:
    calls = _calls(shell, statement)
    names = [c.name for c in calls]
    forced = any(w.raw == b"--force-rpath" for c in calls for w in c.arguments())
    start, end = shell.absolute(statement)
    for interpolation in shell.interpolations_in(start, end):
        # `${lib.optionalString cudaSupport ''addDriverRunpath "$lib"''}` inside the loop
        inner = interpolation.text or b""
        for line in inner.splitlines():
            match = _AT_COMMAND.search(line.strip().lstrip(b"'\"").strip())
            if match is not None:
                names.append(match.group(1))
                forced = forced or b"--force-rpath" in line
    if not names or forced:
        return None
    loop = _loop_of(statement)
    body = loop.child_by_field_name("body") if loop is not None else None
    removable = not nested and body is not None and _only_patches(shell, body)
    return Construct("loop", string, phase, start, end, names[0].decode(), removable)


def _only_patches(shell: ShellText, sequence: Node) -> bool:
    """Whether a loop body does nothing but patch: calls, ELF guards, `continue`, `echo`."""
    for statement in shell.statements(sequence):
        if statement.type == "if_statement":
            condition = statement.child_by_field_name("condition")
            head = _code(shell, statement.start_byte, condition.end_byte if condition is not None else statement.end_byte)
            if not _GUARDED_IF.match(head) or not all(_only_patches(shell, b) for b in _blocks(statement) if b.type != "elif_clause"):
                return False
            if any(c.type == "elif_clause" for c in statement.named_children):
                return False
        elif not any(p.match(_code(shell, statement.start_byte, statement.end_byte)) for p in _ALLOWED_IN_LOOP):
            return False
    return True


def _code(shell: ShellText, start: int, end: int) -> bytes:
    """The masked shell code between two offsets of the shell tree."""
    return shell.masked[start:end]


def _single(shell: ShellText, statement: Node, string: Node, phase: str, top: bool) -> Construct | None:
    code = _code(shell, statement.start_byte, statement.end_byte)
    start, end = shell.absolute(statement)
    found = _FIND_EXEC.search(code)
    if found is not None:
        if b"--force-rpath" in code:
            return None
        simple = top and b"&&" not in code and b"||" not in code
        return Construct("find", string, phase, start, end, found.group(1).decode(), simple)
    call = next(iter(_calls(shell, statement)), None)
    if call is None:
        return None
    arguments = call.arguments()
    if any(a.raw.startswith(b"--") for a in arguments):
        return None  # --force-rpath and friends: a deliberate DT_RPATH
    if not arguments:
        return None
    glob = any(_GLOB.search(a.raw) for a in arguments)
    alone = call.node == statement or (statement.type == "redirected_statement" and statement.child_by_field_name("body") == call.node)
    return Construct("call", string, phase, start, end, call.name.decode(), top and alone, len(arguments), glob)


# ----- the fix -----------------------------------------------------------------------------------


def _fix(attrset: Node, constructs: list[Construct], strings: list[tuple[Node, str, Node]], ctx: Context) -> Fix | None:
    source = ctx.source
    removed: dict[tuple[int, int, str], list[Edit]] = {}
    for construct in constructs:
        if construct.removable:
            removed.setdefault(node_key(construct.string), []).append(edits.remove_shell(shell_view(ctx, construct.string), construct.start, construct.end))
    if not removed:
        return None
    changes: list[Edit] = []
    extra_removals: dict[tuple[int, int, str], list[Edit]] = {}
    # innermost strings first: an emptied string nested in another one empties its interpolation
    for string, phase, binding in sorted(strings, key=lambda item: -_depth(item[0])):
        key = node_key(string)
        spans = removed.get(key, []) + extra_removals.get(key, [])
        if not spans:
            continue
        whole = _remove_piece(ctx, string, binding, phase) if _is_emptied(source, string, spans) else None
        if whole is None:
            changes.extend(spans)
        elif whole[1] is not None:
            extra_removals.setdefault(node_key(whole[1]), []).append(whole[0])
        else:
            changes.append(whole[0])
    changes = _outermost(changes)
    inputs = _input_edits(attrset, changes, ctx)
    if inputs is None:
        return None
    changes = edits.merge_edits(changes + inputs)
    for first, second in zip(changes, changes[1:]):
        if second.start < first.end:
            return None
    return Fix(f"Remove the manual patching and use `{driver_hook(ctx)}`", Applicability.UNSAFE, tuple(changes), isolation=hook_isolation(ctx, attrset, changes))


def _depth(node: Node) -> int:
    depth, parent = 0, node.parent
    while parent is not None:
        depth += 1
        parent = parent.parent
    return depth


def _is_emptied(source, string: Node, spans: list[Edit]) -> bool:
    children = string.children
    if len(children) < 2:
        return False
    start, end = children[0].end_byte, children[-1].start_byte
    data = bytearray(source.data[start:end])
    for span in spans:
        a, b = max(span.start, start) - start, min(span.end, end) - start
        if a < b:
            data[a:b] = b" " * (b - a)
    return not bytes(data).strip()


def _remove_piece(ctx: Context, string: Node, binding: Node, phase: str) -> tuple[Edit, Node | None] | None:
    """Remove an emptied phase string with what only exists for it: the binding, a `+` operand,
    an `optionalString cond` around it, or the interpolation holding it (then the Node returned
    is the outer string, whose emptiness is judged next). A whole `installPhase`/`fixupPhase`
    stays (empty): without it the default phase would run."""
    source = ctx.source
    piece = string
    while True:
        parent = piece.parent
        if parent is None:
            return None
        if parent.type == "parenthesized_expression":
            piece = parent
            continue
        if parent.type == "apply_expression" and parent.child_by_field_name("argument") == piece:
            outer = outermost_apply(parent)
            function, arguments = flatten_apply(outer)
            if last_name(function) in {"optionalString", "optionalDrvAttr"} and arguments and arguments[-1] == piece:
                piece = outer
                continue
            return None
        break
    value = binding_value(binding)
    if value is not None and (piece == value or unparen(value) == piece):
        return None if phase.endswith("Phase") else (_delete_binding(source, binding), None)
    parent = piece.parent
    if parent is not None and parent.type == "binary_expression" and parent.child_by_field_name("operator").type == "+":
        left, right = parent.child_by_field_name("left"), parent.child_by_field_name("right")
        if right == piece:
            return Edit(left.end_byte, piece.end_byte, ""), None
        return Edit(piece.start_byte, right.start_byte, ""), None
    if parent is not None and parent.type == "interpolation":
        outer = parent.parent
        if outer is not None and outer.type in STRING_TYPES:
            return edits.remove_shell(shell_view(ctx, outer), parent.start_byte, parent.end_byte), outer
    return None


def _delete_binding(source, binding: Node) -> Edit:
    """Delete a binding; a blank line it leaves doubled (or before the closing brace) goes too."""
    edit = edits.delete_element(source, binding)
    first = source.line_of(binding.start_byte)
    following = source.line_of(edit.end)
    if edit.start != source.line_start(first) or first == 0 or edit.end != source.line_start(following):
        return edit
    if source.line_bytes(first - 1).strip():
        return edit
    after = source.line_bytes(following).strip() if following < source.line_count else b""
    if not after and following + 1 < source.line_count:
        return Edit(edit.start, source.line_start(following + 1), "")
    if after.startswith(b"}"):
        return Edit(source.line_start(first - 1), edit.end, "")
    return edit


def _outermost(changes: list[Edit]) -> list[Edit]:
    """Drop edits inside the span another edit deletes (nested strings, removed bindings)."""
    result = []
    for edit in changes:
        if any(o is not edit and o.start <= edit.start and edit.end <= o.end and (o.start, o.end) != (edit.start, edit.end) and o.end > o.start for o in changes):
            continue
        if edit in result:
            continue
        result.append(edit)
    return result


def _covers(ctx: Context, hook: Node, calls: list[Node]) -> bool:
    """The hook runs wherever the removed calls ran: each condition it sits under also guards
    every call (`optional cudaSupport autoAddDriverRunpath` covers calls under `cudaSupport`, not
    calls every Linux build makes)."""
    needed = {" ".join(g.text.split()) for g in ctx.semantic.guards(hook) if g.positive}
    return all(needed <= {" ".join(g.text.split()) for g in ctx.semantic.guards(call) if g.positive} for call in calls)


def _input_edits(attrset: Node, removals: list[Edit], ctx: Context) -> list[Edit] | None:
    """Make `autoAddDriverRunpath` a native input; drop or replace `addDriverRunpath` there
    when no call of the function is left."""
    hook = driver_hook(ctx)
    if hook is None:
        return None
    native = elements_of(ctx, attrset, "nativeBuildInputs", ADD_FUNCTIONS | DRIVER_HOOKS)
    has_auto = any(e.name in DRIVER_HOOKS for e in native)
    function = next((e for e in native if e.name in ADD_FUNCTIONS), None)
    calls_left = any(
        not any(r.start <= start and end <= r.end for r in removals) and (attrset.start_byte <= start < attrset.end_byte or ctx.semantic.enclosing_call(string) is None)
        for start, end, _, string in function_calls(ctx)
    )  # calls in this derivation, or in scripts outside any derivation that may end up in it
    if has_auto:
        removed_calls = [string for start, end, _, string in function_calls(ctx) if any(r.start <= start and end <= r.end for r in removals)]
        if not any(_covers(ctx, e.node, removed_calls) for e in native if e.name in DRIVER_HOOKS):
            return None  # the hook runs under a condition the calls do not have (`optional cudaSupport`)
        if function is not None and not calls_left and function.site.list_node is not None:
            return [edits.delete_element(ctx.source, function.site.element)]
        return []
    if function is not None:
        if not calls_left:
            return replace_element_with(ctx, function, hook, keep_formal=False)
        spelled = hook_reference(ctx, function.node, hook, like=function.node)
        if spelled is None:
            return None
        if function.site.list_node is not None:
            edit = edits.append_to_list(ctx.source, function.site.list_node, [spelled[0]])
            return ([edit] if edit is not None else []) + spelled[1]
        return edits.add_to_input(ctx.source, attrset, "nativeBuildInputs", [spelled[0]]) + spelled[1]
    call = ctx.semantic.enclosing_call(attrset.children[0])
    if call is not None and call.name in catalog.OVERRIDE_FUNCTIONS and edits.find_binding(attrset, "nativeBuildInputs") is None:
        return None  # a new binding would replace the inputs the override starts from
    spelled = hook_reference(ctx, attrset, hook)
    if spelled is None:
        return None
    return edits.add_to_input(ctx.source, attrset, "nativeBuildInputs", [spelled[0]]) + spelled[1]
