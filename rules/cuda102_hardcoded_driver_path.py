"""Hardcoded `/run/opengl-driver/lib` instead of `${addDriverRunpath.driverLink}/lib`.

Flags the literal driver directory of NixOS, `/run/opengl-driver/lib` and
`/run/opengl-driver-32/lib`, written in any Nix string: attributes, build flags, phases,
`shellHook`s, wrapper arguments, NixOS options. In build flags (`-L/run/opengl-driver/lib`,
`NIX_LDFLAGS`, `EXTRA_LDFLAGS`, `cmakeFlags`) the message also says that it is an impure host
path at build time. Not flagged: the path in a Nix comment or in a comment of shell code, paths
under another root (`${root}/run/opengl-driver/lib`), `meta` text, the script of a test's
`runCommand` (named `...test...`, in a `tests/` directory, or with `requiredSystemFeatures`:
a test that checks the driver's mount expects the literal path), a script that makes the
directory itself (`mkdir -p /run/opengl-driver/lib`, the target of `ln -s`: a container's own
driver link), and
`${addDriverRunpath.driverLink}/lib` itself. Whether the path belongs on `LD_LIBRARY_PATH` at
all is CUDA101's concern; this rule is only about how it is spelled.

## Why
nixpkgs defines where NixOS exposes the host's driver in one place,
`addDriverRunpath.driverLink` (`/run/opengl-driver`, or `/run/opengl-driver-32` for i686),
and asks packages to use it instead of repeating the path (nixpkgs PR #323249 review), so
that the location can change in one place and 32-bit builds get their own directory. The fix
writes `${addDriverRunpath.driverLink}/lib`, adding `addDriverRunpath` to the file's function
arguments when nothing binds it (or `pkgs.addDriverRunpath` where `pkgs` is in scope). It is
safe: the string is the same. The 32-bit path gets no automatic fix, since `driverLink` only
means it in a package built for i686 (elsewhere write
`${pkgsi686Linux.addDriverRunpath.driverLink}/lib`).

In build flags the path is also wrong in itself: it points the build at the build machine's
driver, which does not exist in the sandbox. Link against the `libcuda.so` stub that
`cuda_cudart` ships (`lib/stubs`) and let `autoAddDriverRunpath` add the driver directory to
the RUNPATH for run time.

## Example
```nix
{ stdenv, makeWrapper }:
stdenv.mkDerivation {
  pname = "gpu-tool";
  version = "1.0";
  src = ./.;
  nativeBuildInputs = [ makeWrapper ];
  postFixup = ''
    patchelf --add-rpath /run/opengl-driver/lib $out/lib/libgpu.so
  '';
}
```

## Use instead
```nix
{ stdenv, makeWrapper, addDriverRunpath }:
stdenv.mkDerivation {
  pname = "gpu-tool";
  version = "1.0";
  src = ./.;
  nativeBuildInputs = [ makeWrapper ];
  postFixup = ''
    patchelf --add-rpath ${addDriverRunpath.driverLink}/lib $out/lib/libgpu.so
  '';
}
```

## References
- https://github.com/NixOS/nixpkgs/pull/323249
- https://github.com/NixOS/nixpkgs/pull/269475
- https://github.com/NixOS/nixpkgs/pull/60985
- https://github.com/NixOS/nixpkgs/issues/141803
"""

from __future__ import annotations

import re

from tree_sitter import Node

from cudalint.lint import edits
from cudalint.lint.context import Context
from cudalint.lint.model import Applicability, Edit, Fix, FixAvailability, Severity
from cudalint.lint.rule import Rule
from cudalint.nix.syntax import STRING_TYPES
from cudalint.rules._driver import DRIVER_DIR, driver_runpath_name, in_shell_comment, in_shell_message, is_host_path, spell_toplevel, stray_32bit_dir
from cudalint.rules._test_code import in_test_script

RULE = Rule(
    code="CUDA102",
    name="hardcoded-driver-path",
    severity=Severity.WARNING,
    fix=Applicability.SAFE,
    availability=FixAvailability.SOMETIMES,
    summary="Hardcoded `/run/opengl-driver/lib` instead of `${addDriverRunpath.driverLink}/lib`",
    node_types=("string_fragment",),
    patterns=(DRIVER_DIR.encode(),),
)

_PATH = re.compile(rb"/run/opengl-driver(-32)?/lib(?![\w.+-])")
# where a path that follows is part of a build flag: `-L`, `-Wl,-L`, `-rpath-link,`, `-DVAR=`
_FLAG_BEFORE = re.compile(rb"(?:(?<![\w-])-L|-rpath-link[,=]|(?<![\w-])-D[A-Za-z_][A-Za-z0-9_]*(?::\w+)?=)$")
# run-time search paths written at build time are not build-time lookups
_RPATH_BEFORE = re.compile(rb"(?:-rpath[,= ]|--add-rpath |--set-rpath |rpath )$")
_FLAG_ATTRIBUTE = re.compile(r"^(?:\w*LDFLAGS|\w*CFLAGS\w*|\w*CXXFLAGS|NVCC_\w*FLAGS|cmakeFlags|mesonFlags|configureFlags|makeFlags|buildFlags|ninjaFlags)$")
_FLAG_LINE = re.compile(rb"LDFLAGS|\b(?:cmake|meson|configure|make)Flags\b|-DCMAKE_")


@RULE
def check(node: Node, ctx: Context) -> None:
    string = node.parent
    if string is None or string.type not in STRING_TYPES:
        return
    data = node.text or b""
    if DRIVER_DIR.encode() not in data:
        return
    path = ctx.semantic.binding_path(string)
    if "meta" in path or in_test_script(string, ctx):
        return  # a test checking the driver's mount expects the literal path
    shell = ctx.semantic.shell_text(string)
    for match in _PATH.finditer(data):
        start = node.start_byte + match.start()
        end = node.start_byte + match.end()
        if not is_host_path(ctx.source.data, start) or in_shell_comment(shell, start) or in_shell_message(shell, start) or _made_here(shell, start):
            continue
        before = _word_before(ctx.source.data, string, start)
        build_flag = _is_build_flag(before, path, shell, start)
        if match.group(1):
            _report_32(ctx, string, (start, end), build_flag)
        else:
            _report(ctx, string, (start, end), build_flag)


def _made_here(shell, start: int) -> bool:
    """The path is the directory a script makes: `mkdir -p /run/opengl-driver/lib`, or the target
    of `ln -s ... /run/opengl-driver/lib` (`ln -t DIR`): a container's own driver link."""
    command = shell.command_at(start) if shell is not None else None
    if command is None or command.name not in {b"mkdir", b"ln"}:
        return False
    words = command.words
    at = next((i for i, w in enumerate(words) if w.start <= start < w.end), None)
    if at is None:
        return False
    if command.name == b"mkdir":
        return True
    return at == len(words) - 1 or words[at - 1].plain in {b"-t", b"--target-directory"}


def _word_before(data: bytes, string: Node, start: int) -> bytes:
    """The text of the word (flag) right before the path, within the string."""
    low = string.children[0].end_byte if string.children else string.start_byte
    begin = start
    while begin > low and data[begin - 1 : begin] not in (b"\n", b'"', b"'"):
        begin -= 1
    return data[begin:start]


def _is_build_flag(before: bytes, path: tuple[str, ...], shell, start: int) -> bool:
    if _RPATH_BEFORE.search(before):
        return False
    if _FLAG_BEFORE.search(before):
        return True
    if any(_FLAG_ATTRIBUTE.search(p) for p in path):
        return True
    line = shell.line_at(start) if shell is not None else None
    return line is not None and _FLAG_LINE.search(line.code) is not None


_BUILD_FLAG_NOTE = "; as a build flag, link the `libcuda.so` stub from `cuda_cudart` instead"


def _report(ctx: Context, string: Node, span: tuple[int, int], build_flag: bool) -> None:
    name = driver_runpath_name(ctx)
    message = f"hardcoded driver directory `/run/opengl-driver/lib`: write `${{{name}.driverLink}}/lib`"
    if build_flag:
        message += _BUILD_FLAG_NOTE
    fix = None
    spelled = spell_toplevel(ctx, string, name)
    if spelled is not None:
        written, extra = spelled
        prefix_end = span[0] + len(DRIVER_DIR)
        changes = edits.merge_edits([Edit(span[0], prefix_end, f"${{{written}.driverLink}}"), *extra])
        fix = Fix(f"Use `${{{written}.driverLink}}/lib`", Applicability.SAFE, tuple(changes))
    ctx.report(span, message, fixes=[fix])


def _report_32(ctx: Context, string: Node, span: tuple[int, int], build_flag: bool) -> None:
    if stray_32bit_dir(ctx, string):
        return  # standing for the 64-bit directory: CUDA109
    message = f"hardcoded 32-bit driver directory `/run/opengl-driver-32/lib`: write `${{pkgsi686Linux.{driver_runpath_name(ctx)}.driverLink}}/lib`"
    if build_flag:
        message += _BUILD_FLAG_NOTE
    ctx.report(span, message)
