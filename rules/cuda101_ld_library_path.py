"""`LD_LIBRARY_PATH` pointing at CUDA libraries or the NVIDIA driver.

Flags every way of putting CUDA libraries (a CUDA package, `lib.makeLibraryPath [ cuda... ]`,
paths naming cuda) or the driver (`addDriverRunpath.driverLink`, `/run/opengl-driver/lib`,
`nvidia_x11`) on `LD_LIBRARY_PATH`: `makeWrapper`/`wrapProgram` flags `--prefix`, `--suffix`,
`--set` and `--set-default LD_LIBRARY_PATH` (in phases and in `makeWrapperArgs` lists),
`LD_LIBRARY_PATH = ...` and `env.LD_LIBRARY_PATH` attributes, `export LD_LIBRARY_PATH=...`,
`LD_LIBRARY_PATH=... cmd` and `addToSearchPath LD_LIBRARY_PATH ...` in phases and `shellHook`s,
and NixOS/home-manager `environment.variables`, `environment.sessionVariables`,
`home.sessionVariables` (also through `lib.mkMerge`, `lib.mkForce` and lists), numtide devshell
`env = [ { name = "LD_LIBRARY_PATH"; value = ...; } ]` items, and a let-bound string or list
(reported where it is written). Also flagged: an `export LD_LIBRARY_PATH=...` without
`$LD_LIBRARY_PATH` that drops the driver directory an earlier line of the same script set.

What each context gets (`ctx.place`):
- a package or an `overrideAttrs`: a warning, with an unsafe fix that removes the entry and
  adds `autoAddDriverRunpath` to `nativeBuildInputs` (derivation builders only; under the
  condition that set the entry, `lib.optionalString nvidiaSupport ''...''`, else under the file's
  `cudaSupport` switch where it has one, as CUDA304 asks of the hook); a wrapper script
  (`runCommand`, `writeShellScriptBin`, ...) is told to patch the program it wraps, since a
  launcher of arbitrary programs (nixGL) is the one place `LD_LIBRARY_PATH` belongs;
- a dev shell (`mkShell`, FHS environments, `devShells`, numtide `devshells`, `shellHook`,
  `shell.nix`, a devenv module's `env`), and a module option of the user's own: information,
  saying to keep only `${addDriverRunpath.driverLink}/lib` (what pip wheels need) or to use
  nix-ld; silent when the value holds only the driver directory (with libraries that are not
  CUDA's, such as the wheels' `libstdc++`), which is that advice followed;
- a NixOS/home-manager session (`environment.*`, `home.*`, `programs.*`): information, advising
  `programs.nix-ld.libraries` (CUDA redistributables) or RUNPATH for the driver;
- a systemd service: a warning without a fix (package the program with `autoAddDriverRunpath`).

Not flagged: `LD_LIBRARY_PATH` that holds nothing CUDA- or driver-related (a
project's own library directory, `/usr/lib64` in an OCI image), nix-ld's
`NIX_LD_LIBRARY_PATH`, commented-out shell lines, and the driver directory alone in a
derivation's `preCheck`/`checkPhase`/`postCheck`: tests that need a GPU run there, before
`postFixup` where `autoAddDriverRunpath` patches the binaries, so they cannot find the driver
otherwise (the export lasts for the test run only).

## Why
`LD_LIBRARY_PATH` is global state: it is searched before every library's own RUNPATH, for the
wrapped program and everything it starts, so it can load the wrong `libcudart` or driver into
other Nix software, and the dynamic loader ignores it for setuid programs. nixpkgs makes CUDA
programs find their libraries through RUNPATH instead: Nix records the store paths of the CUDA
libraries a binary links, and `autoAddDriverRunpath` in `nativeBuildInputs` adds the driver
directory (`/run/opengl-driver/lib` on NixOS) to every ELF file in `postFixup` (on Jetson,
`autoAddCudaCompatRunpath` after it).

The fix (packages only) removes the `LD_LIBRARY_PATH` attribute, wrapper flag or export and adds
`autoAddDriverRunpath` to `nativeBuildInputs` (on a target before it, 2024-04-01, the CUDA package
set's `cudaPackages.autoAddOpenGLRunpathHook`, which messages name too). A `wrapProgram` left
without flags is removed with the entry (it would wrap for nothing), and an `addDriverRunpath`
formal that only the entry used goes too (renamed to the hook where the fix adds a formal). It
is unsafe: binaries the package does not
patch (prebuilt runners it downloads, programs that `dlopen` libraries by bare name) may then
not find them. Real exceptions exist, such as ollama's unpatched runner binaries and nixGL,
whose whole purpose is `LD_LIBRARY_PATH`: keep them with
`# cudalint: ignore[CUDA101] -- reason`. Dev shells that run prebuilt pip wheels often need
the driver directory on `LD_LIBRARY_PATH`, which is why the rule only informs there.

## Example
```nix
{ stdenv, makeWrapper, addDriverRunpath, cudaPackages }:
stdenv.mkDerivation {
  pname = "gpu-tool";
  version = "1.0";
  src = ./.;
  nativeBuildInputs = [ makeWrapper cudaPackages.cuda_nvcc ];
  buildInputs = [ cudaPackages.cuda_cudart ];
  postInstall = ''
    wrapProgram $out/bin/gpu-tool \
      --prefix LD_LIBRARY_PATH : ${addDriverRunpath.driverLink}/lib
  '';
}
```

## Use instead
```nix
{ stdenv, autoAddDriverRunpath, cudaPackages }:
stdenv.mkDerivation {
  pname = "gpu-tool";
  version = "1.0";
  src = ./.;
  nativeBuildInputs = [
    cudaPackages.cuda_nvcc
    autoAddDriverRunpath
  ];
  buildInputs = [ cudaPackages.cuda_cudart ];
}
```

## References
- https://nixos.org/manual/nixpkgs/unstable/#cuda
- https://github.com/NixOS/nixpkgs/pull/60985
- https://github.com/NixOS/nixpkgs/issues/22760
- https://github.com/NixOS/nixpkgs/issues/232420
- https://github.com/NixOS/nixpkgs/pull/281576
- https://github.com/NixOS/nixpkgs/pull/323249
"""

from __future__ import annotations

import re

from tree_sitter import Node

from cudalint.lint import edits
from cudalint.lint.context import Context
from cudalint.lint.model import Applicability, Edit, Fix, FixAvailability, Severity
from cudalint.lint.rule import Rule
from cudalint.nix.places import WRAPPER_BUILDERS, Kind, Place
from cudalint.nix.shell import Command, ShellText, Word
from cudalint.nix.syntax import ATTRSET_TYPES, attrpath_names, binding_value, string_literal, text
from cudalint.rules._cuda_switch import switch_guard
from cudalint.rules._driver import CUDA, DRIVER, LD, LINK, OTHER, SELF_REFERENCE, classify_expression, classify_shell_word, describe, driver_runpath_name, fixable_call
from cudalint.rules._runpath_hooks import ADD_FUNCTIONS, DRIVER_HOOKS, driver_hook, elements_of, formals_isolation, hook_isolation, hook_reference

RULE = Rule(
    code="CUDA101",
    name="ld-library-path",
    severity=Severity.WARNING,
    fix=Applicability.UNSAFE,
    availability=FixAvailability.SOMETIMES,
    summary="`LD_LIBRARY_PATH` pointing at CUDA libraries or the NVIDIA driver",
    node_types=("binding", "string_expression", "indented_string_expression"),
    patterns=(b"LD_LIBRARY_PATH",),
)

_LD = LD.encode()
_FLAGGED = frozenset({CUDA, DRIVER, LINK})
# what numtide devshell's `env` items put into the variable
_ENV_ITEM_VALUES = ("value", "prefix", "eval")
_WRAPPER_FLAG = re.compile(rb"--(?:prefix|suffix|set|set-default)\s+[\"']?LD_LIBRARY_PATH\b")
_PREFIX_FLAGS = frozenset({b"--prefix", b"--suffix"})
_SET_FLAGS = frozenset({b"--set", b"--set-default"})
_BUILTINS = frozenset({b"export", b"local", b"declare", b"readonly", b"typeset"})
_ASSIGNMENT = re.compile(rb"^([A-Za-z_][A-Za-z0-9_]*)(\+?=)")
# phases that run before `fixupPhase`, where `autoAddDriverRunpath` patches RUNPATH: test binaries
# run there unpatched, so pointing them at the driver is the only way (and lasts for the tests)
_CHECK_PHASES = frozenset({"preCheck", "checkPhase", "postCheck"})


@RULE
def check(node: Node, ctx: Context) -> None:
    if node.type == "binding":
        _check_binding(node, ctx)
    else:
        _check_string(node, ctx)


# ----- LD_LIBRARY_PATH = ...; -------------------------------------------------------------------


def _check_binding(binding: Node, ctx: Context) -> None:
    if ctx.source.data.find(_LD, binding.start_byte, binding.end_byte) < 0:
        return  # (both cases below spell it in the binding: the bytes first)
    attrpath = binding.child_by_field_name("attrpath")
    names = attrpath_names(attrpath)
    owner = binding.parent.parent if binding.parent is not None else None
    value = binding_value(binding)
    if owner is None or owner.type not in ATTRSET_TYPES or value is None or not names:
        return
    if names == ["name"] and string_literal(value) == LD:
        _check_env_item(ctx, owner, value)
        return
    if names[-1] != LD:
        return
    path = ctx.semantic.binding_path(value)
    if "passthru" in path or "meta" in path:
        return
    classes = classify_expression(ctx.semantic, value)
    if not classes & _FLAGGED:
        return
    _report(ctx, (attrpath.start_byte, attrpath.end_byte), value, f"`{LD}`", classes, [edits.delete_element(ctx.source, binding)])


def _check_env_item(ctx: Context, item: Node, name: Node) -> None:
    """numtide devshell's `env = [ { name = "LD_LIBRARY_PATH"; value = ...; } ]` (also `prefix`,
    `eval`)."""
    values = [v for attr in _ENV_ITEM_VALUES if (b := edits.find_binding(item, attr)) is not None and (v := binding_value(b)) is not None]
    classes: set[str] = set()
    for value in values:
        classes |= classify_expression(ctx.semantic, value)
    if classes & _FLAGGED:
        _report(ctx, (name.start_byte, name.end_byte), name, f"`{LD}` in `env`", classes, [])


# ----- shell text and wrapper arguments ---------------------------------------------------------


def _check_string(string: Node, ctx: Context) -> None:
    if _LD not in (string.text or b""):
        return
    shell = ctx.semantic.shell_text(string)
    flags_only = False
    if shell is None:
        if _list_form(string, ctx):
            return
        if not _WRAPPER_FLAG.search(string.text or b""):
            return
        shell = ShellText(string, ctx.source)  # `"--prefix LD_LIBRARY_PATH : ${...}"` in makeWrapperArgs
        flags_only = True
    settings: list[tuple[Word, int, set[str]]] = []
    for command in shell.commands():
        _check_flags(ctx, string, shell, command, flags_only)
        if not flags_only:
            _check_assignments(ctx, string, shell, command, settings)
    _check_dropped(ctx, shell, settings)


def _check_dropped(ctx: Context, shell: ShellText, settings: list[tuple[Word, int, set[str]]]) -> None:
    """`export LD_LIBRARY_PATH=...` without `$LD_LIBRARY_PATH` after one that set the driver
    directory: the later one drops it (reported when nothing else reports it)."""
    for index, (word, value_start, classes) in enumerate(settings):
        if classes & _FLAGGED or SELF_REFERENCE.search(shell.masked[value_start - shell.offset : word.end - shell.offset]):
            continue
        earlier = next((w for w, _, c in reversed(settings[:index]) if c & {DRIVER, LINK}), None)
        if earlier is not None:
            line = ctx.source.line_of(earlier.start) + 1
            ctx.report(
                (word.start, word.end),
                f"this `{LD}` replaces the one of line {line}, dropping the driver directory: append `:${LD}`",
            )


def _check_flags(ctx: Context, string: Node, shell: ShellText, command: Command, flags_only: bool) -> None:
    words = command.words
    index = 0
    while index < len(words):
        word = words[index].plain
        value = None
        if word in _PREFIX_FLAGS and index + 3 < len(words) and words[index + 1].plain == _LD:
            value = index + 3
        elif word in _SET_FLAGS and index + 2 < len(words) and words[index + 1].plain == _LD:
            value = index + 2
        if value is None:
            index += 1
            continue
        flag, end = words[index], words[value]
        classes = classify_shell_word(ctx.semantic, shell, end.start, end.end)
        if classes & _FLAGGED:
            removal = _remove_flag(ctx, string, shell, command, index, value, flags_only)
            span = (_span_start(ctx, command, flag.start), end.end)
            _report(ctx, span, string, f"`{word.decode()} LD_LIBRARY_PATH`", classes, removal)
        index = value + 1


def _remove_flag(ctx: Context, string: Node, shell: ShellText, command: Command, index: int, value: int, flags_only: bool) -> list[Edit]:
    flag, end = command.words[index], command.words[value]
    if flags_only and (index, value) == (0, len(command.words) - 1) and not _rest_of_string(string, flag.start, end.end):
        # the flag and its value are all the string holds: the string goes
        parent = string.parent
        while parent is not None and parent.type == "parenthesized_expression":
            parent = parent.parent
        if parent is not None and parent.type == "list_expression":
            return [edits.delete_element(ctx.source, _list_element(string))]
        return [Edit(flag.start, end.end, "")]
    if command.name in _PROGRAM_WRAPPERS and command.name_index is not None and index == command.name_index + 2 and value == len(command.words) - 1:
        return [_remove_command(shell, command)]  # `wrapProgram $out/bin/x` alone would wrap for nothing
    return [edits.remove_shell(shell, flag.start, end.end)]


# Wrappers that only rewrite a program in place: without flags they do nothing.
_PROGRAM_WRAPPERS = frozenset({b"wrapProgram", b"wrapProgramShell", b"wrapProgramBinary"})


def _rest_of_string(string: Node, start: int, end: int) -> bool:
    """Whether the string has content besides [start, end)."""
    content_start, content_end = string.children[0].end_byte, string.children[-1].start_byte
    data = string.text or b""
    offset = string.start_byte
    return bool(data[content_start - offset : start - offset].strip() or data[end - offset : content_end - offset].strip())


def _list_element(node: Node) -> Node:
    while node.parent is not None and node.parent.type == "parenthesized_expression":
        node = node.parent
    return node


def _check_assignments(ctx: Context, string: Node, shell: ShellText, command: Command, settings: list[tuple[Word, int, set[str]]]) -> None:
    """`export LD_LIBRARY_PATH=...`, `LD_LIBRARY_PATH=... cmd`, `addToSearchPath`; the values that
    stay set for the rest of the script are added to `settings`."""
    words = command.words
    first = words[0]
    if command.name == b"addToSearchPath" and len(words) >= 3 and words[1].plain == _LD:
        value = words[2]
        classes = classify_shell_word(ctx.semantic, shell, value.start, value.end)
        if classes & _FLAGGED:
            _report(ctx, (first.start, value.end), string, "`addToSearchPath LD_LIBRARY_PATH`", classes, [_remove_command(shell, command)])
        return
    builtin = first.plain if first.plain in _BUILTINS or first.plain == b"env" else None
    index = 1 if builtin is not None else 0
    while builtin in _BUILTINS and index < len(words) and words[index].plain.startswith(b"-"):
        index += 1
    options_end = index
    while index < len(words):
        word = words[index]
        match = _ASSIGNMENT.match(word.raw)
        if match is None:
            if builtin is None or builtin == b"env":
                return  # the command word: no assignments after it
            index += 1
            continue
        if match.group(1) == _LD and word.end > word.start + match.end():
            classes = classify_shell_word(ctx.semantic, shell, word.start + match.end(), word.end)
            if builtin in _BUILTINS or (builtin is None and command.name_index is None):
                settings.append((word, word.start + match.end(), classes))
            if classes & _FLAGGED:
                alone = options_end == len(words) - 1 == index
                removal = _remove_command(shell, command) if alone and builtin != b"env" else edits.remove_shell(shell, word.start, word.end)
                start = first.start if builtin in _BUILTINS and alone else word.start
                form = "`export LD_LIBRARY_PATH`" if builtin == b"export" else "`LD_LIBRARY_PATH=`"
                _report(ctx, (_span_start(ctx, command, start), word.end), string, form, classes, [removal])
        index += 1


def _remove_command(shell: ShellText, command: Command) -> Edit:
    return edits.remove_shell(shell, *shell.absolute(command.node))


def _span_start(ctx: Context, command: Command, start: int) -> int:
    """Findings on a continuation line start with their command, where a suppression comment
    can go."""
    command_start = command.words[0].start
    return command_start if ctx.source.line_of(command_start) != ctx.source.line_of(start) else start


def _list_form(string: Node, ctx: Context) -> bool:
    """`makeWrapperArgs = [ "--prefix" "LD_LIBRARY_PATH" ":" value ]`: checked at the
    `"LD_LIBRARY_PATH"` element. True when `string` is such an element."""
    if string_literal(string) != LD:
        return False
    element = _list_element(string)
    list_node = element.parent
    if list_node is None or list_node.type != "list_expression":
        return False
    elements = edits.list_elements(list_node)
    position = next((i for i, e in enumerate(elements) if e == element), None)
    if position is None or position == 0:
        return True
    flag = (string_literal(elements[position - 1]) or "").encode()
    if flag in _PREFIX_FLAGS and position + 2 < len(elements):
        value = position + 2
    elif flag in _SET_FLAGS and position + 1 < len(elements):
        value = position + 1
    else:
        return True
    classes = classify_expression(ctx.semantic, elements[value])
    if classes & _FLAGGED:
        span = (elements[position - 1].start_byte, elements[value].end_byte)
        _report(ctx, span, string, f'`"{flag.decode()}" "LD_LIBRARY_PATH"`', classes, [edits.delete_span(ctx.source, *span)])
    return True


# ----- reporting and the fix --------------------------------------------------------------------

# module options that set every session's environment, and those that set one service's
_SESSION_ROOTS = ("environment.", "home.", "programs.")
_SERVICE_ROOTS = ("systemd.",)


def _report(ctx: Context, span: tuple[int, int], at: Node, form: str, classes: set[str], removal: list[Edit]) -> None:
    place = ctx.place(at)
    cuda = CUDA in classes
    hook = driver_hook(ctx) or "autoAddDriverRunpath"  # the target's name for the hook
    if place.is_module and place.detail.startswith(_SESSION_ROOTS):
        instead = (
            "give prebuilt programs the redistributables through `programs.nix-ld.libraries`" if cuda else "Nix-built programs find the driver through RUNPATH, prebuilt ones through `programs.nix-ld`"
        )
        ctx.report(span, f"{form} with {describe(classes)} for every session: remove it; {instead}", severity=Severity.INFO)
        return
    if place.is_module and place.detail.startswith(_SERVICE_ROOTS):
        ctx.report(span, f"{form} with {describe(classes)} in a service: run a program packaged with `{hook}` instead")
        return
    if place.is_shell or place.is_module:  # a dev shell, or an option of the user's own (a shell's, mostly)
        if not classes & {CUDA, DRIVER}:
            return  # the driver directory (with the libraries wheels need): the shell idiom
        ctx.report(
            span,
            f"{form} with {describe(classes)}: keep only `${{{driver_runpath_name(ctx)}.driverLink}}/lib` there (for pip wheels) or use nix-ld",
            severity=Severity.INFO,
        )
        return
    if place.kind is Kind.PACKAGE and classes <= {DRIVER, LINK} and ctx.semantic.binding_path(at)[:1] in {(p,) for p in _CHECK_PHASES}:
        return  # GPU tests before fixup: nothing is patched yet
    if place.is_package and place.detail in WRAPPER_BUILDERS:
        instead = f"patch the wrapped program with `{hook}` instead (a launcher such as nixGL: suppress)"
    elif cuda:
        instead = f"link them (RUNPATH) and add `{hook}` to `nativeBuildInputs`"
    else:
        instead = f"add `{hook}` to `nativeBuildInputs` instead"
    ctx.report(span, f"{form} with {describe(classes)}: {instead}", fixes=[_fix(ctx, place, at, classes, removal)])


def _fix(ctx: Context, place: Place, at: Node, classes: set[str], removal: list[Edit]) -> Fix | None:
    fixable = fixable_call(place)
    hook = driver_hook(ctx)  # the target's hook (before 2024-04 the CUDA set's `autoAddOpenGLRunpathHook`)
    if fixable is None or OTHER in classes or not removal or hook is None:
        return None  # something else on the path would be lost with the entry
    call_node, builder = fixable
    call = ctx.semantic.enclosing_call(at)
    if call is None or call.node != call_node:
        return None
    addition = _add_hook(ctx, call.attrset, builder, hook, at)
    if addition is None:
        return None
    changes = edits.merge_edits([*removal, *_formal_edits(ctx, removal, addition, hook)])
    if any(b.start < a.end for a, b in zip(changes, changes[1:])):
        return None
    # only a fix that adds the hook must be alone in its pass; once the hook is there, the
    # removals of every entry go together (thousands of entries: one more pass, not thousands)
    isolation = hook_isolation(ctx, call.attrset, changes) if addition else formals_isolation(ctx, changes)
    return Fix(f"Remove the `LD_LIBRARY_PATH` entry and add `{hook}` to `nativeBuildInputs`", Applicability.UNSAFE, tuple(changes), isolation)


def _formal_edits(ctx: Context, removal: list[Edit], addition: list[Edit], hook: str) -> list[Edit]:
    """The hook's addition, and the formals only the removed text used removed; where the
    addition writes a new formal, the first unused one is renamed to the hook instead (one
    edit in the formals, not two that touch)."""
    unused = _unused_formals(ctx, removal)
    if not unused:
        return addition
    formals = unused[0].parent
    inserted = [e for e in addition if e.start == e.end and formals is not None and formals.start_byte <= e.start <= formals.end_byte and hook in e.content]
    if not inserted or "." in hook:
        return [*addition, *(edits.remove_formal(ctx.source, f) for f in unused)]
    name = unused[0].child_by_field_name("name")
    assert name is not None
    kept = [e for e in addition if e not in inserted]
    return [*kept, edits.replace(name, hook), *(edits.remove_formal(ctx.source, f) for f in unused[1:])]


def _unused_formals(ctx: Context, removal: list[Edit]) -> list[Node]:
    """`addDriverRunpath` (or `addOpenGLRunpath`) formals that only the removed text used
    (`${addDriverRunpath.driverLink}/lib`)."""
    found: list[Node] = []
    seen: set[tuple[int, int]] = set()
    for cut in removal:
        for variable in ctx.semantic.nodes_of_type("variable_expression"):
            if not (cut.start <= variable.start_byte and variable.end_byte <= cut.end):
                continue
            binding = ctx.semantic.resolve(variable)
            formal = binding.node
            if binding.kind != "formal" or formal is None or formal.type != "formal" or (formal.start_byte, formal.end_byte) in seen:
                continue
            if text(variable) not in ADD_FUNCTIONS:
                continue  # only the driver-path function's formal goes with its `driverLink`
            uses = ctx.semantic.uses(text(variable), formal)
            if all(any(c.start <= u.start_byte and u.end_byte <= c.end for c in removal) for u in uses):
                seen.add((formal.start_byte, formal.end_byte))
                found.append(formal)
    return found


def _entry_guard(ctx: Context, at: Node, attrset: Node) -> str | None:
    """`lib.optionals c ` for an entry that only a condition of the derivation sets
    (`postInstall = lib.optionalString nvidiaSupport ''...''`): the hook replacing it goes
    under the same condition."""
    inner = [g for g in ctx.semantic.guards(at) if attrset.start_byte <= g.condition.start_byte < attrset.end_byte]
    if len(inner) != 1 or not inner[0].positive or not edits.is_bound(ctx.semantic, attrset, "lib"):
        return None
    condition = " ".join(text(inner[0].condition).split())
    return f"lib.optionals {condition if inner[0].condition.type in {'variable_expression', 'select_expression', 'parenthesized_expression'} else f'({condition})'} "


def _add_hook(ctx: Context, attrset: Node, builder: str | None, hook: str, at: Node) -> list[Edit] | None:
    binding = edits.find_binding(attrset, "nativeBuildInputs")
    if binding is not None and elements_of(ctx, attrset, "nativeBuildInputs", DRIVER_HOOKS):
        return []
    spelled = hook_reference(ctx, attrset, hook)
    if spelled is None:
        return None
    name, formal = spelled
    if binding is None and builder in {"overrideAttrs", "overridePythonAttrs"}:
        previous = _override_parameter(attrset)
        if previous is None:
            return None  # a new list would replace the package's own nativeBuildInputs
        return [edits.insert_binding(ctx.source, attrset, f"nativeBuildInputs = ({previous}.nativeBuildInputs or [ ]) ++ [ {name} ];"), *formal]
    guard = _entry_guard(ctx, at, attrset) or switch_guard(attrset, ctx)
    if guard is not None:  # under the entry's condition, else the file's switch (as CUDA304 asks of the hook)
        added = edits.add_guarded_input(ctx.source, attrset, "nativeBuildInputs", name, guard)
        return None if added is None else [*added, *formal]
    return [*edits.add_to_input(ctx.source, attrset, "nativeBuildInputs", [name]), *formal]


def _override_parameter(attrset: Node) -> str | None:
    """`old` in `overrideAttrs (old: { ... })`."""
    holder = attrset
    parent = holder.parent
    while parent is not None and parent.type == "parenthesized_expression":
        holder, parent = parent, parent.parent
    if parent is None or parent.type != "function_expression" or parent.child_by_field_name("body") != holder:
        return None
    universal = parent.child_by_field_name("universal")
    if universal is None or parent.child_by_field_name("formals") is not None:
        return None
    return text(universal)
