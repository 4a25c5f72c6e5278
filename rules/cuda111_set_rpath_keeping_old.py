"""`patchelf --set-rpath "NEW:$(patchelf --print-rpath FILE)" FILE`, which `patchelf --add-rpath NEW FILE` says directly.

Flags, in the shell text of a package's phases (`postFixup`, `preFixup`, `installPhase`, ...),
a `patchelf` command whose `--set-rpath` value is the file's current runpath read by `patchelf
--print-rpath` on the same file, joined by `:` before or after the new entries: directly
(`"$(patchelf --print-rpath "$f"):${lib.makeLibraryPath [ ... ]}"`) or through a variable
assigned just that (`rp=$(patchelf --print-rpath "$f")`, then `--set-rpath "$rp:..."`), in a
file that uses CUDA packages or the driver's library path.

Not flagged: a runpath rebuilt from the old one (entries filtered, dropped or reordered, as
`read -ra RP <<< $(patchelf --print-rpath ...)` followed by a join does); the old runpath of
another file; a `--set-rpath` that replaces the runpath; targets before nixpkgs 22.05 (patchelf
0.14, which added `--add-rpath`, is in 22.05).

Contexts: every context with shell text gets the finding; the fix only applies to the direct
form (the variable's assignment stays the author's to remove).

## Why
Reviewers of CUDA packages (the driver's `/run/opengl-driver/lib`, the toolkit's libraries added
to prebuilt binaries and wheels) ask for `patchelf --add-rpath`, which appends to the existing
runpath, instead of reading it back with `--print-rpath` and setting it again: the round trip
is longer, runs patchelf twice per file, and leaves an empty entry (`:NEW`, which the loader
reads as the current directory) when the file had no runpath. `addDriverRunpath` itself uses
`--add-rpath` since PR #292644 (2024), and autoAddDriverRunpath (PR #287211) the same.

The fix rewrites the command to `patchelf --add-rpath NEW FILE`. It is unsafe: when the new
entries came first, they now come after the old ones (the loader's search order changes), and an
empty runpath no longer gains an empty entry.

## Example
```nix
{ lib, stdenv, cudaPackages }:
stdenv.mkDerivation {
  pname = "prebuilt-solver";
  version = "5.0";
  src = ./.;
  dontBuild = true;
  installPhase = "install -Dm755 solver $out/bin/solver";
  postFixup = ''
    patchelf --set-rpath "${lib.makeLibraryPath [ cudaPackages.libcublas ]}:$(patchelf --print-rpath $out/bin/solver)" $out/bin/solver
  '';
}
```

## Use instead
```nix
{ lib, stdenv, cudaPackages }:
stdenv.mkDerivation {
  pname = "prebuilt-solver";
  version = "5.0";
  src = ./.;
  dontBuild = true;
  installPhase = "install -Dm755 solver $out/bin/solver";
  postFixup = ''
    patchelf --add-rpath "${lib.makeLibraryPath [ cudaPackages.libcublas ]}" $out/bin/solver
  '';
}
```

## References
- https://github.com/NixOS/patchelf/releases/tag/0.14
- https://github.com/NixOS/nixpkgs/pull/292644
- https://github.com/NixOS/nixpkgs/pull/287211
"""

from __future__ import annotations

import re

from tree_sitter import Node

from cudalint.lint.context import Context
from cudalint.lint.model import Applicability, Edit, Fix, FixAvailability, Severity
from cudalint.lint.rule import Rule
from cudalint.nix.shell import Command, Word

# `$(patchelf --print-rpath FILE)` (FILE one word, quoted or not)
_PRINT = rb"\$\(\s*patchelf\s+--print-rpath\s+(\"[^\"()]+\"|'[^'()]+'|[^\s\"'()]+)\s*\)"
_PRINT_ONLY = re.compile(rb"^\"?" + _PRINT + rb"\"?$")
_DRIVER = (b"opengl-driver", b"driverLink", b"addDriverRunpath", b"addOpenGLRunpath")
# patchelf 0.14 (`--add-rpath`) is in nixpkgs 22.05
_ADD_RPATH_RELEASE = "22.05"

RULE = Rule(
    code="CUDA111",
    name="set-rpath-keeping-old",
    severity=Severity.INFO,
    fix=Applicability.UNSAFE,
    availability=FixAvailability.SOMETIMES,
    summary="`patchelf --set-rpath` of the old runpath plus new entries, where `--add-rpath` is meant",
    node_types=("string_expression", "indented_string_expression"),
    patterns=(b"--print-rpath",),
    preview=True,
)


@RULE
def check(string: Node, ctx: Context) -> None:
    data = string.text or b""
    if b"--set-rpath" not in data or b"--print-rpath" not in data:
        return
    shell = ctx.semantic.shell_text(string)
    if shell is None or not ctx.target.includes(ctx.reference.release_branch_offs[_ADD_RPATH_RELEASE]):
        return
    if not any(d in data for d in _DRIVER) and next(iter(ctx.semantic.cuda_refs()), None) is None:
        return
    saved: dict[bytes, bytes] = {}  # variable -> the file whose runpath it holds
    for command in shell.commands():
        _remember(command, saved)
        if command.name != b"patchelf":
            continue
        arguments = command.arguments()
        for index, word in enumerate(arguments[:-2]):
            if word.plain == b"--set-rpath":
                _check_value(ctx, arguments, index, saved)


def _remember(command: Command, saved: dict[bytes, bytes]) -> None:
    """`rp=$(patchelf --print-rpath FILE)` (also after `local`/`export`): rp holds FILE's runpath."""
    if command.name_index is not None and command.name not in (b"local", b"export", b"declare"):
        return
    for word in command.words if command.name_index is None else command.arguments():
        name, equals, value = word.raw.partition(b"=")
        if equals and re.fullmatch(rb"\w+", name):
            match = _PRINT_ONLY.match(value)
            if match:
                saved[name] = _unquote(match.group(1))
            else:
                saved.pop(name, None)


def _check_value(ctx: Context, arguments: tuple[Word, ...], index: int, saved: dict[bytes, bytes]) -> None:
    flag, value, target = arguments[index], arguments[index + 1], arguments[-1]
    file = _unquote(target.raw)
    raw = ctx.source.data[value.start : value.end]
    quote = raw[:1] if raw[:1] in (b'"', b"'") and raw[-1:] == raw[:1] and len(raw) > 1 else b""
    inner = raw[len(quote) : len(raw) - len(quote)]
    old: str | None = None
    new = b""
    match = re.fullmatch(rb"(" + _PRINT + rb"):(.+)|(.+):(" + _PRINT + rb")", inner, re.S)
    direct = False
    if match:
        if match.group(1) and _unquote(match.group(2)) == file:
            old, new, direct = "start", match.group(3), True
        elif match.group(5) and _unquote(match.group(6)) == file:
            old, new, direct = "end", match.group(4), True
    if old is None:
        for name, holder in saved.items():
            if holder != file:
                continue
            spelled = rb"(?:''|\\)?\$(?:\{" + re.escape(name) + rb"\}|" + re.escape(name) + rb"\b)"
            variable = re.fullmatch(rb"(" + spelled + rb"):(.+)|(.+):(" + spelled + rb")", inner, re.S)
            if variable:
                old, new = ("start", variable.group(2)) if variable.group(1) else ("end", variable.group(3))
                break
    if old is None:
        return
    message = "This appends to the runpath it reads back: write `patchelf --add-rpath NEW FILE`"
    fix = None
    if direct:
        edits = (Edit(flag.start, flag.end, "--add-rpath"), Edit(value.start, value.end, (quote + new + quote).decode()))
        fix = Fix("Use `patchelf --add-rpath`", Applicability.UNSAFE, edits)
    ctx.report((flag.start, value.end), message, fixes=[fix])


def _unquote(word: bytes) -> bytes:
    return word.replace(b'"', b"").replace(b"'", b"")
