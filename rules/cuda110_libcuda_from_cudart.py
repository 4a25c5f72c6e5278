"""A path to `libcuda` inside `cuda_cudart` (or the runfile toolkit): libcuda is the NVIDIA
driver, which no CUDA package ships.

Flagged: an interpolation of `cuda_cudart` (plain, an output, or through a getter) or of the
runfile `cudatoolkit` followed by `/lib/libcuda.so` (`LIBCUDA=${cuda_cudart}/lib/libcuda.so`,
`${lib.getLib cuda_cudart}/lib/libcuda.so.1`, `${cudatoolkit}/lib64/libcuda.so`), and `-L${x}/lib`
where it is the nearest `-L` before a `-lcuda` of its string or shell line
(`-L${cuda_cudart}/lib -lcuda`). Not flagged: a `-lcuda` that follows another `-L`
(`-L${stub}/lib/stubs -lcuda -L${lib.getLib cuda_cudart}/lib -lcudart`),
paths into the stubs (`${lib.getOutput "stubs" cuda_cudart}/lib/stubs`, `${cuda_cudart}/lib/stubs/libcuda.so`),
`-lcudart`, and `libcuda` from the driver directory (`${addDriverRunpath.driverLink}/lib/libcuda.so`).
The same in every context: the path is wrong in a package, a dev shell and a module alike.

## Why
`libcuda.so` is the CUDA driver API, installed with the kernel driver (on NixOS in
`/run/opengl-driver/lib`, `addDriverRunpath.driverLink`). `cuda_cudart` ships only a stub of it,
for linking: in `lib/stubs` of its single output (nixpkgs up to 23.05), of the `lib` output
(PR #275921, which also points `cuda.pc` there) and, once nixpkgs moved the stub to a `stubs`
output, through a `lib/stubs` link the `lib` output keeps (`_cuda/fixups/cuda_cudart.nix`); from
the CUDA 13 rework (25.11) the stub lives only in the `stubs` output
(`packages/cuda_cudart.nix`). `${cuda_cudart}/lib/libcuda.so` names a file that does not exist,
and `-L${cuda_cudart}/lib -lcuda` finds no library there; where a `lib/libcuda.so` link to the
stub did end up in the `lib` output (issue #293320, 2024), linking through it puts the stub's
directory in the RUNPATH, where it shadows the real driver at run time (nixpkgs now strips stub
entries from RUNPATHs, PR #459416). Link against the stub
(`${lib.getOutput "stubs" cuda_cudart}/lib/stubs` in 25.11 and later,
`${lib.getLib cuda_cudart}/lib/stubs` in 24.11 and 25.05, `${cuda_cudart}/lib/stubs` before) and
let the program find the real driver at run time (`autoAddDriverRunpath`); a path loaded at run
time (a wrapper's `--set`, a patched `dlopen`) names `${addDriverRunpath.driverLink}/lib/libcuda.so`.
CUDA202 leaves these paths to this rule: its `lib.getLib` advice would keep pointing at the
runtime library's output.

The fix writes the stub directory of the target's era (link time) or the driver directory (a
path in a wrapper or a source substitution). It is unsafe: the build then links or loads another
file, the right one. There is no fix for the runfile toolkit (CUDA001 replaces it).

## Example
```nix
{ lib, stdenv, cudaPackages }:
stdenv.mkDerivation {
  pname = "driver-api-probe";
  version = "0.3";
  src = ./.;
  nativeBuildInputs = [ cudaPackages.cuda_nvcc ];
  buildInputs = [ cudaPackages.cuda_cudart ];
  env.NIX_LDFLAGS = "-L${lib.getLib cudaPackages.cuda_cudart}/lib -lcuda";
}
```

## Use instead
```nix
{ lib, stdenv, cudaPackages, autoAddDriverRunpath }:
stdenv.mkDerivation {
  pname = "driver-api-probe";
  version = "0.3";
  src = ./.;
  nativeBuildInputs = [ cudaPackages.cuda_nvcc autoAddDriverRunpath ];
  buildInputs = [ cudaPackages.cuda_cudart ];
  env.NIX_LDFLAGS = "-L${lib.getOutput "stubs" cudaPackages.cuda_cudart}/lib/stubs -lcuda";
}
```

## References
- https://github.com/NixOS/nixpkgs/pull/275921
- https://github.com/NixOS/nixpkgs/issues/293320
- https://github.com/NixOS/nixpkgs/pull/459416
- https://github.com/NixOS/nixpkgs/blob/4436175e8fbbe15e8d9b8832d6ad20ddbe6eb3d5/pkgs/development/cuda-modules/_cuda/fixups/cuda_cudart.nix
- https://github.com/NixOS/nixpkgs/blob/024ef1dc3076208119baaee8a2babec574573291/pkgs/development/cuda-modules/packages/cuda_cudart.nix
- https://nixos.org/manual/nixpkgs/unstable/#cuda
"""

from __future__ import annotations

import re

from tree_sitter import Node

from cudalint.knowledge import catalog
from cudalint.lint.context import Context
from cudalint.lint.model import Applicability, Edit, Fix, FixAvailability, Severity
from cudalint.lint.rule import Rule
from cudalint.nix.semantic import CudaRef
from cudalint.nix.syntax import flatten_apply, unparen
from cudalint.rules import _driver, _outputs

RULE = Rule(
    code="CUDA110",
    name="libcuda-from-cudart",
    severity=Severity.WARNING,
    fix=Applicability.UNSAFE,
    availability=FixAvailability.SOMETIMES,
    summary="`libcuda` taken from `cuda_cudart` or the toolkit instead of the stubs (link time) or the driver (run time)",
    node_types=("interpolation",),
    patterns=(b"libcuda", b"-lcuda"),
)

# A path used when the program runs, not when it links: wrapper arguments, source substitutions, preloads.
_RUN_TIME = re.compile(rb"makeWrapper|wrapProgram|--set\b|--prefix\b|--suffix\b|substituteInPlace|--replace|LD_PRELOAD|dlopen")
_RUN_TIME_BINDINGS = frozenset({"makeWrapperArgs", "LD_PRELOAD", "preFixup", "postFixup"})


@RULE
def check(interpolation: Node, ctx: Context) -> None:
    expression = next(iter(interpolation.named_children), None)
    ref = ctx.semantic.cuda_ref(expression)
    if ref is None or not (ref.package == "cuda_cudart" or catalog.is_runfile_toolkit(ref.package)):
        return
    found = _driver.libcuda_path(ctx.semantic, interpolation)
    if found is None:
        return
    kind, end = found
    span = (interpolation.start_byte, end)
    written = ctx.source.slice(*span)
    if catalog.is_runfile_toolkit(ref.package):
        ctx.report(span, f"libcuda is the driver, not part of `{written}`: link against the stub in `${{{_package_text(ctx, ref)}}}/lib/stubs` instead")
        return
    if kind == _driver.FILE and _at_run_time(ctx, interpolation):
        _report_run_time(ctx, interpolation, span, written)
        return
    stubs = _stubs_dir(ctx, interpolation, ref)
    replacement = stubs[0] + ("/libcuda.so" if kind == _driver.FILE else "")
    fix = Fix(f"Use `{replacement}`", Applicability.UNSAFE, (Edit(*span, replacement), *stubs[1])) if stubs[2] else None
    ctx.report(span, f"libcuda is the driver, not part of `{written}`: link against the stub, `{replacement}`", fixes=[fix])


def _package_text(ctx: Context, ref: CudaRef) -> str:
    """The package as written, without getter or output: `cudaPackages.cuda_cudart`."""
    node = unparen(ref.node)
    while node is not None and node.type == "apply_expression":
        node = unparen(flatten_apply(node)[1][-1])
    start = node.start_byte if node is not None else ref.name_node.start_byte
    return ctx.source.slice(start, ref.name_node.end_byte)


def _stubs_dir(ctx: Context, at: Node, ref: CudaRef) -> tuple[str, list[Edit], bool]:
    """`${...}/lib/stubs` for the target's era, the edits bringing `lib` into scope, and whether
    the fix can write it."""
    package = _package_text(ctx, ref)
    era = ctx.target.era.id
    if era in {"single-output", "symlink-farm"}:
        return f"${{{package}}}/lib/stubs", [], True
    output = "stubs" if era == "split-redist" else "lib"
    call = _outputs.getter_call(ctx, at, output, package)
    if call is None:
        return f"${{lib.{_outputs.getter(ctx, output)} {package}}}/lib/stubs", [], False
    return f"${{{call[0]}}}/lib/stubs", call[1], True


def _at_run_time(ctx: Context, interpolation: Node) -> bool:
    """The path is loaded by the running program: it stands in a wrapper's arguments, a source
    substitution or a preload."""
    string = interpolation.parent
    if string is None:
        return False
    if set(ctx.semantic.binding_path(string)) & _RUN_TIME_BINDINGS:
        return True
    shell = ctx.semantic.shell_text(string)
    line = shell.line_at(interpolation.start_byte) if shell is not None else None
    return line is not None and _RUN_TIME.search(line.code) is not None


def _report_run_time(ctx: Context, interpolation: Node, span: tuple[int, int], written: str) -> None:
    spelled = _driver.spell_toplevel(ctx, interpolation, _driver.driver_runpath_name(ctx))
    name = spelled[0] if spelled is not None else _driver.driver_runpath_name(ctx)
    replacement = f"${{{name}.driverLink}}/lib/{written.rsplit('/', 1)[-1]}"
    fix = Fix(f"Use `{replacement}`", Applicability.UNSAFE, (Edit(*span, replacement), *spelled[1])) if spelled is not None else None
    ctx.report(span, f"libcuda is the driver, not part of `{written}`: load it from `{replacement}`", fixes=[fix])
