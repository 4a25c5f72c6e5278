"""A misspelled NVIDIA driver directory: a path that looks like `/run/opengl-driver` but is not.

Flags, in any Nix string (attributes, phases, `shellHook`s, wrapper arguments, NixOS and
home-manager options), paths under `/run/` that name the driver directory wrongly:
`/run/open-gl-driver`, `/run/opengl-drivers`, `/run/opengl_driver`, `/run/openGL-driver` and
the like; `/run/opengl-driver/lib64` (the directory has only `lib`); and `/run/opengl-driver-32`
where it stands for the 64-bit directory, that is alone in a file that builds or runs nothing
32-bit. Not flagged: the correct spellings (`/run/opengl-driver/lib`, that is CUDA102's),
`/run/opengl-driver-32/lib` next to `/run/opengl-driver/lib` in the same value (NixOS's own
`LD_LIBRARY_PATH` for 32-bit graphics), `-32` in a file that mentions `pkgsi686Linux`, `i686`,
`enable32Bit`/`driSupport32Bit`, FHS `multiPkgs`, Steam or Wine, paths under another root
(`$out/run/...`), commented-out shell lines and `echo`/`printf` text.

## Why
NixOS exposes the host's driver at exactly one place, `addDriverRunpath.driverLink`:
`"/run/opengl-driver" + lib.optionalString stdenv.hostPlatform.isi686 "-32"` (nixpkgs
`pkgs/by-name/ad/addDriverRunpath/package.nix`). The graphics module links
`/run/opengl-driver-32` to the 32-bit drivers only when `hardware.graphics.enable32Bit` is on,
and removes it otherwise (`nixos/modules/hardware/graphics.nix`). A misspelled directory does
not exist, so nothing fails at build time: the program later runs without the driver
(`CUDA driver version is insufficient`, `libcuda.so.1: cannot open shared object file`), and a
64-bit program never loads the 32-bit libraries.

In a package or dev shell the error is the same in every context; the fix writes
`${addDriverRunpath.driverLink}/lib` (adding `addDriverRunpath`, or `pkgs` in a module, to the
file's arguments when nothing binds it), and for a misspelled 32-bit directory the 32-bit
package set's `${pkgsi686Linux.addDriverRunpath.driverLink}/lib` (a literal path would be
CUDA102's finding). It is unsafe: the program will load the driver it did not load before.

## Example
```nix
{ pkgs, ... }:
{
  home.sessionVariables.LD_LIBRARY_PATH = "/run/opengl-drivers/lib";
}
```

## Use instead
```nix
{ pkgs, ... }:
{
  home.sessionVariables.LD_LIBRARY_PATH = "${pkgs.addDriverRunpath.driverLink}/lib";
}
```

## References
- https://github.com/NixOS/nixpkgs/blob/04e8a1744818d111e65595b1f8eb7476abccc558/pkgs/by-name/ad/addDriverRunpath/package.nix
- https://github.com/NixOS/nixpkgs/blob/master/nixos/modules/hardware/graphics.nix
- https://github.com/NixOS/nixpkgs/pull/269475
"""

from __future__ import annotations

import re

from tree_sitter import Node

from cudalint.lint import edits
from cudalint.lint.context import Context
from cudalint.lint.model import Applicability, Edit, Fix, FixAvailability, Severity
from cudalint.lint.rule import Rule
from cudalint.nix.syntax import STRING_TYPES
from cudalint.rules._driver import (
    driver_runpath_name,
    in_shell_comment,
    in_shell_message,
    is_host_path,
    spell_toplevel,
    stray_32bit_dir,
)

RULE = Rule(
    code="CUDA109",
    name="driver-path-typo",
    severity=Severity.ERROR,
    fix=Applicability.UNSAFE,
    availability=FixAvailability.SOMETIMES,
    summary="A misspelled driver directory (`/run/opengl-drivers`, `/run/opengl-driver/lib64`, a stray `-32`)",
    node_types=("string_fragment",),
    patterns=(b"/run/open", b"/run/Open", b"/run/OPEN"),
)

_CORRECT = b"opengl-driver"
# `/run/` + something that reads as "opengl driver(s)" + an optional `-32` + an optional lib dir
_CANDIDATE = re.compile(rb"/run/(open[-_ ]?gl[-_ ]?drivers?)(-32)?(/lib(?:64|32)?)?(?![\w.+-])", re.I)


@RULE
def check(node: Node, ctx: Context) -> None:
    string = node.parent
    if string is None or string.type not in STRING_TYPES or "meta" in ctx.semantic.binding_path(string):
        return
    shell = ctx.semantic.shell_text(string)
    data = node.text or b""
    for match in _CANDIDATE.finditer(data):
        start, end = node.start_byte + match.start(), node.start_byte + match.end()
        if not is_host_path(ctx.source.data, start) or in_shell_comment(shell, start) or in_shell_message(shell, start):
            continue
        name, bits, lib = match.group(1), match.group(2), match.group(3)
        misspelled = name != _CORRECT
        lib64 = lib is not None and lib != b"/lib"
        stray = bits is not None and stray_32bit_dir(ctx, string)
        if not (misspelled or lib64 or stray):
            continue
        found = match.group(0).decode()
        name_of = driver_runpath_name(ctx)
        if bits is not None and not stray:
            # a 32-bit directory, misspelled: the 32-bit package set's `driverLink` (the literal
            # path is CUDA102's finding)
            right = f"${{pkgsi686Linux.{name_of}.driverLink}}{'/lib' if lib else ''}"
            ctx.report((start, end), f"misspelled driver directory `{found}`: write `{right}`", fixes=[_fix(ctx, string, start, end, lib is not None, name_of, bits32=True)])
            continue
        right = f"${{{name_of}.driverLink}}{'/lib' if lib else ''}"
        if stray and not misspelled and not lib64:
            message = f"`{found}` is the 32-bit driver directory and nothing here is 32-bit: write `{right}`"
        else:
            message = f"misspelled driver directory `{found}`: write `{right}`"
        ctx.report((start, end), message, fixes=[_fix(ctx, string, start, end, lib is not None, name_of)])


def _fix(ctx: Context, string: Node, start: int, end: int, lib: bool, name: str, bits32: bool = False) -> Fix | None:
    spelled = spell_toplevel(ctx, string, "pkgsi686Linux" if bits32 else name)
    if spelled is None:
        return None
    written, extra = spelled
    if bits32:
        written = f"{written}.{name}"
    replacement = f"${{{written}.driverLink}}{'/lib' if lib else ''}"
    return Fix(f"Write `{replacement}`", Applicability.UNSAFE, tuple(edits.merge_edits([Edit(start, end, replacement), *extra])))
