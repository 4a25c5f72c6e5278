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
it any more). It is unsafe: every ELF file is now patched, not only the listed ones.

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
from dataclasses import dataclass, field

from tree_sitter import Node

from cudalint.knowledge import catalog
from cudalint.lint import edits
from cudalint.lint.context import Context
from cudalint.lint.model import Applicability, Edit, Fix, FixAvailability, Rule, Severity
from cudalint.nix.shell import ShellText
from cudalint.nix.syntax import STRING_TYPES, attrpath_names, binding_value, bindings_of, descendants, flatten_apply, last_name, node_key, outermost_apply, unparen

from cudalint.rules._runpath_hooks import (
    ADD_FUNCTIONS,
    DISABLE_FLAGS,
    DRIVER_HOOKS,
    elements_of,
    fixup_runs,
    formals_isolation,
    function_calls,
    hook_reference,
    replace_element_with,
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
AUTO = "autoAddDriverRunpath"

_SPACE = b" \t\r\n\\"
_FUNCTION = rb"(addDriverRunpath|addOpenGLRunpath)"
_AT_COMMAND = re.compile(rb"(?:^|[;&|(!]\s*|\b(?:do|then|else)\s+)" + _FUNCTION + rb"(?![\w-])")
_LOOP_HEAD = re.compile(rb"^(?:for|while|until|select)\b|\|\s*(?:while|until)\b")
_FIND_EXEC = re.compile(rb"(?:-exec(?:dir)?\s+|\bxargs\b[^|;]*?\s)(?:\S*/)?" + _FUNCTION + rb"(?![\w-])")
_GUARD = rb"(?:isELF|\[\[?|test|patchelf|file|grep|!)\b"
_ALLOWED_IN_LOOP = [
    re.compile(rb"^" + _FUNCTION + rb"(?:\s.*)?$", re.S),  # the call itself
    re.compile(rb"^" + _GUARD + rb".*\|\|\s*continue$", re.S),  # isELF "$f" || continue
    re.compile(rb"^" + _GUARD + rb".*&&\s*" + _FUNCTION + rb"(?:\s.*)?$", re.S),  # isELF "$f" && addDriverRunpath "$f"
    re.compile(rb"^if\s+" + _GUARD, re.S),
    re.compile(rb"^(?:fi|continue|:|true)$"),
    re.compile(rb"^echo\b", re.S),
]
_GLOB = re.compile(rb"[*?\[{]|\$\(|`")


@dataclass
class Segment:
    start: int  # absolute offsets of the command text (leading keywords included)
    end: int
    keyword: bytes  # leading do/then/else, or b""
    command: bytes  # the command after that keyword (masked, no comment)
    stack_depth: int = 0  # open if/loop/case constructs when it starts


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
    attrset, phase = _phase_of(string, ctx)
    if attrset is None:
        return
    analysis = _analyse(attrset, ctx)
    key = node_key(string)
    for construct in analysis.constructs:
        if node_key(construct.string) != key:
            continue
        message = _message(construct, analysis)
        if not construct.removable:
            message += " (by hand: the loop does more than patch)"
        ctx.report((construct.start, construct.end), message, fixes=[analysis.fix if construct.removable else None])


def _message(construct: Construct, analysis: Analysis) -> str:
    function = construct.function
    instead = f"list `{AUTO}` in `nativeBuildInputs` instead"
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
    return attrset, names[0]  # type: ignore[return-value]


# ----- analysis of one derivation --------------------------------------------------------------


def _analyse(attrset: Node, ctx: Context) -> Analysis:
    cache = ctx.semantic.__dict__.setdefault("_cuda105_cache", {})
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
                strings.append((node, names[0], binding))  # type: ignore[arg-type]
    direct: list[Construct] = []
    for string, phase, _ in strings:
        for construct in _constructs(ctx.semantic.shell_text(string), string, phase):  # type: ignore[arg-type]
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


def _segments(shell: ShellText) -> list[Segment]:
    """Commands of the shell text split at newlines and unquoted `;`, with absolute offsets."""
    result: list[Segment] = []
    children = shell.node.children
    if len(children) < 2:
        return result
    content_start, content_end = children[0].end_byte, children[-1].start_byte
    nix_escapes = shell.node.type == "string_expression"  # `\\;` in "..." is the shell's `\;`
    for line in shell.lines():
        first = max(line.start, content_start) - line.start
        last = min(line.start + len(line.code), content_end) - line.start
        if first >= last:
            continue
        code = line.code[:last]
        quote, depth, start, index = None, 0, first, first
        while index < len(code):
            byte = code[index]
            if quote is not None:
                if byte == quote and (quote == 0x27 or code[index - 1] != 0x5C):
                    quote = None
            elif byte in (0x22, 0x27):
                quote = byte
            elif byte == 0x5C:
                index += 3 if nix_escapes and code[index + 1 : index + 2] == b"\\" else 2
                continue
            elif byte == 0x28:  # (
                depth += 1
            elif byte == 0x29 and depth:  # )
                depth -= 1
            elif byte == 0x3B and depth == 0:  # ;
                _add_segment(result, code, line.start, start, index)
                if code[index + 1 : index + 2] == b";":
                    index += 1
                start = index + 1
            index += 1
        _add_segment(result, code, line.start, start, len(code))
    return result


def _add_segment(result: list[Segment], code: bytes, offset: int, start: int, end: int) -> None:
    while start < end and code[start] in _SPACE:
        start += 1
    while end > start and code[end - 1] in _SPACE:
        end -= 1
    if start == end:
        return
    raw = code[start:end]
    keyword = b""
    match = re.match(rb"(do|then|else)(?:\s+|$)", raw)
    if match:
        keyword, raw = match.group(1), raw[match.end() :]
    result.append(Segment(offset + start, offset + end, keyword, raw))


def _constructs(shell: ShellText, string: Node, phase: str) -> list[Construct]:
    segments = _segments(shell)
    found: list[Construct] = []
    stack: list[tuple[str, int]] = []  # open (kind, index of its first segment)
    for index, segment in enumerate(segments):
        command = segment.command
        if stack and stack[-1][0] == "case":
            command = re.sub(rb"^[^()\s]*\)\s*", b"", command)  # a case pattern `x86_64-linux)`
        first = command.split(None, 1)[0] if command.strip() else b""
        if first in (b"done", b"fi", b"esac"):
            kind = {b"done": "loop", b"fi": "if", b"esac": "case"}[first]
            while stack and stack[-1][0] != kind:
                stack.pop()  # tolerate unbalanced text
            if not stack:
                continue
            _, opened = stack.pop()
            if kind == "loop" and not any(k == "loop" for k, _ in stack):
                construct = _loop(shell, segments[opened : index + 1], string, phase, nested=segments[opened].stack_depth > 0)
                if construct is not None:
                    found.append(construct)
            continue
        segment.stack_depth = len(stack)
        if first == b"if":
            stack.append(("if", index))
        elif first == b"case":
            stack.append(("case", index))
        elif _LOOP_HEAD.search(command):
            stack.append(("loop", index))
        elif not any(kind == "loop" for kind, _ in stack):
            construct = _single(segment, string, phase, top=not stack and not segment.keyword)
            if construct is not None:
                found.append(construct)
    return found


def _loop(shell: ShellText, segments: list[Segment], string: Node, phase: str, nested: bool) -> Construct | None:
    calls = [m.group(1) for s in segments for m in _AT_COMMAND.finditer(s.command)]
    forced = any(b"--force-rpath" in s.command for s in segments if _AT_COMMAND.search(s.command))
    for interpolation in shell.interpolations_in(segments[0].start, segments[-1].end):
        # `${lib.optionalString cudaSupport ''addDriverRunpath "$lib"''}` inside the loop
        inner = interpolation.text or b""
        for line in inner.splitlines():
            match = _AT_COMMAND.search(line.strip().lstrip(b"'\"").strip())
            if match is not None:
                calls.append(match.group(1))
                forced = forced or b"--force-rpath" in line
    if not calls or forced:
        return None
    body = [s.command for s in segments[1:-1] if s.command]
    removable = not nested and not segments[0].keyword and all(any(p.match(c) for p in _ALLOWED_IN_LOOP) for c in body)
    return Construct("loop", string, phase, segments[0].start, segments[-1].end, calls[0].decode(), removable)


def _single(segment: Segment, string: Node, phase: str, top: bool) -> Construct | None:
    command = segment.command
    found = _FIND_EXEC.search(command)
    if found is not None:
        if b"--force-rpath" in command:
            return None
        simple = top and b"&&" not in command and b"||" not in command
        return Construct("find", string, phase, segment.start, segment.end, found.group(1).decode(), simple)
    call = _AT_COMMAND.search(command)
    if call is None:
        return None
    arguments = re.split(rb"\s*(?:&&|\|\||\|)\s*", command[call.end(1) :], maxsplit=1)[0].split()
    if any(a.startswith(b"--") for a in arguments):
        return None  # --force-rpath and friends: a deliberate DT_RPATH
    files = len(arguments)
    if files == 0:
        return None
    glob = any(_GLOB.search(a) for a in arguments)
    removable = top and call.start(1) == 0 and command[call.end(1) :].find(b"&&") == -1 and command[call.end(1) :].find(b"||") == -1 and b"|" not in command
    return Construct("call", string, phase, segment.start, segment.end, call.group(1).decode(), removable, files, glob)


# ----- the fix -----------------------------------------------------------------------------------


def _fix(attrset: Node, constructs: list[Construct], strings: list[tuple[Node, str, Node]], ctx: Context) -> Fix | None:
    source = ctx.source
    removed: dict[tuple[int, int, str], list[Edit]] = {}
    for construct in constructs:
        if construct.removable:
            removed.setdefault(node_key(construct.string), []).append(_removal(source, construct.start, construct.end))
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
        whole = _remove_piece(source, string, binding, phase) if _is_emptied(source, string, spans) else None
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
    return Fix(f"Remove the manual patching and use `{AUTO}`", Applicability.UNSAFE, tuple(changes), isolation=formals_isolation(ctx, changes))


def _depth(node: Node) -> int:
    depth, parent = 0, node.parent
    while parent is not None:
        depth += 1
        parent = parent.parent
    return depth


def _removal(source, start: int, end: int) -> Edit:
    """The edit deleting a shell construct: its whole lines, or it with one adjacent `;`."""
    data = source.data
    first, last = source.line_of(start), source.line_of(end)
    line_start, line_end = source.line_start(first), source.line_end(last)
    if not data[line_start:start].strip() and not data[end:line_end].strip():
        stop = source.line_start(last + 1) if last + 1 < source.line_count else line_end
        return Edit(line_start, stop, "")
    after = end
    while after < len(data) and data[after : after + 1] in (b" ", b"\t"):
        after += 1
    if data[after : after + 1] == b";":
        after += 1
        while after < len(data) and data[after : after + 1] in (b" ", b"\t"):
            after += 1
        return Edit(start, after, "")
    before = start
    while before > 0 and data[before - 1 : before] in (b" ", b"\t"):
        before -= 1
    if data[before - 1 : before] == b";":
        return Edit(before - 1, end, "")
    return Edit(start, end, "")


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


def _remove_piece(source, string: Node, binding: Node, phase: str) -> tuple[Edit, Node | None] | None:
    """Remove an emptied phase string with what only exists for it: the binding, a `+` operand,
    an `optionalString cond` around it, or the interpolation holding it (then the Node returned
    is the outer string, whose emptiness is judged next). A whole `installPhase`/`fixupPhase`
    stays (empty): without it the default phase would run."""
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
            return _removal(source, parent.start_byte, parent.end_byte), outer
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


def _input_edits(attrset: Node, removals: list[Edit], ctx: Context) -> list[Edit] | None:
    """Make `autoAddDriverRunpath` a native input; drop or replace `addDriverRunpath` there
    when no call of the function is left."""
    native = elements_of(ctx, attrset, "nativeBuildInputs", ADD_FUNCTIONS | DRIVER_HOOKS)
    has_auto = any(e.name in DRIVER_HOOKS for e in native)
    function = next((e for e in native if e.name in ADD_FUNCTIONS), None)
    calls_left = any(
        not any(r.start <= start and end <= r.end for r in removals)
        and (attrset.start_byte <= start < attrset.end_byte or ctx.semantic.enclosing_call(string) is None)
        for start, end, _, string in function_calls(ctx)
    )  # calls in this derivation, or in scripts outside any derivation that may end up in it
    if has_auto:
        if function is not None and not calls_left and function.site.list_node is not None:
            return [edits.delete_element(ctx.source, function.site.element)]
        return []
    if function is not None:
        if not calls_left:
            return replace_element_with(ctx, function, AUTO, keep_formal=False)
        spelled = hook_reference(ctx, function.node, AUTO, like=function.node)
        if spelled is None:
            return None
        if function.site.list_node is not None:
            edit = edits.append_to_list(ctx.source, function.site.list_node, [spelled[0]])
            return ([edit] if edit is not None else []) + spelled[1]
        return edits.add_to_input(ctx.source, attrset, "nativeBuildInputs", [spelled[0]]) + spelled[1]
    call = ctx.semantic.enclosing_call(attrset.children[0])
    if call is not None and call.name in catalog.OVERRIDE_FUNCTIONS and edits.find_binding(attrset, "nativeBuildInputs") is None:
        return None  # a new binding would replace the inputs the override starts from
    spelled = hook_reference(ctx, attrset, AUTO)
    if spelled is None:
        return None
    return edits.add_to_input(ctx.source, attrset, "nativeBuildInputs", [spelled[0]]) + spelled[1]
