"""The whole CUDA toolkit (or all of `cuda_nvcc`) written where it stays in the runtime closure.

Flags `${cudatoolkit}` (any spelling of the runfile toolkit, versioned ones and its outputs
included) in a wrapper (`makeWrapper`/`wrapProgram` arguments, `makeWrapperArgs`), in an RPATH
(`patchelf --set-rpath`/`--add-rpath`, `-Wl,-rpath,`), or in an installed file (a line that
writes into `$out`, the text of `writeShellScriptBin` and friends), and `${cuda_nvcc}` or
`${cuda_nvcc}/bin` (the whole compiler package) in a wrapper or RPATH. Not flagged: build-time
uses (inputs, flags, `CUDA_HOME` for the build: CUDA001 reports the toolkit there), one named
file of `cuda_nvcc` (`${cuda_nvcc}/bin/ptxas`, chosen on purpose by JIT compilers such as
triton), and references inside shell comments. CUDA001 leaves the toolkit in these places to
this rule: one finding per construct.

## Why
A store path written into a wrapper, an RPATH or an installed file is a runtime dependency: Nix
keeps it in the package's closure, so every user downloads it. For the runfile toolkit that is
every static library, tool, sample and header of CUDA (3-6 GB), where the program needs a few
shared libraries; for `cuda_nvcc` it is the compiler with its headers and `nvvm`, where a
program that JIT-compiles needs at most one tool. Point at what runs: the shared libraries'
packages (`${lib.getLib cudaPackages.libcublas}/lib`, or list them in `buildInputs` and let
`autoPatchelfHook` write the RPATH), the one tool a program calls, and the driver through
`autoAddDriverRunpath`. There is no automatic fix: which libraries a program loads is not in
the expression. Same family as CUDA201 (static libraries in the runtime closure).

## Example
```nix
{ stdenv, makeWrapper, cudatoolkit }:
stdenv.mkDerivation {
  pname = "trainer";
  version = "1.0";
  src = ./.;
  nativeBuildInputs = [ makeWrapper ];
  postInstall = ''
    wrapProgram $out/bin/trainer --set CUDA_PATH ${cudatoolkit}
  '';
}
```

## Use instead
```nix
{ stdenv, lib, makeWrapper, cudaPackages }:
stdenv.mkDerivation {
  pname = "trainer";
  version = "1.0";
  src = ./.;
  nativeBuildInputs = [ makeWrapper ];
  postInstall = ''
    wrapProgram $out/bin/trainer \
      --prefix LD_LIBRARY_PATH : ${lib.makeLibraryPath [ cudaPackages.libcublas ]}
  '';
}
```

## References
- https://nixos.org/manual/nixpkgs/unstable/#cuda
- https://github.com/NixOS/nixpkgs/issues/232501
- https://github.com/NixOS/nixpkgs/pull/253951
"""

from __future__ import annotations

import re

from tree_sitter import Node

from cudalint.knowledge import catalog
from cudalint.lint.context import Context
from cudalint.lint.model import Applicability, FixAvailability, Severity
from cudalint.lint.rule import Rule
from cudalint.nix.syntax import descendants, text
from cudalint.rules._runtime_closure import runtime_use

RULE = Rule(
    code="CUDA204",
    name="toolkit-in-runtime-closure",
    severity=Severity.WARNING,
    fix=Applicability.NONE,
    availability=FixAvailability.NEVER,
    summary="The whole CUDA toolkit (or `cuda_nvcc`) referenced from a wrapper, an RPATH or an installed file",
    node_types=("interpolation",),
    patterns=(b"cudatoolkit", b"cuda_nvcc"),
)

# What follows `${cuda_nvcc}` when the whole package (or its whole `bin`) is meant.
_WHOLE_DIRECTORY = re.compile(rb"(?:/bin)?/?(?![\w.+/-])")


@RULE
def check(interpolation: Node, ctx: Context) -> None:
    found = _finding(interpolation, ctx)
    if found is None:
        return
    # one finding per line of a wrapper call (`--set CUDA_PATH ${t} --prefix PATH : ${t}/bin`)
    line = ctx.source.line_of(interpolation.start_byte)
    same_line = [i for i in interpolation.parent.children if i.type == "interpolation" and ctx.source.line_of(i.start_byte) == line and _finding(i, ctx) == found]
    if same_line and same_line[0] != interpolation:
        return
    toolkit, where, shown = found
    span = (interpolation.start_byte, same_line[-1].end_byte if same_line else interpolation.end_byte)
    if toolkit:
        ctx.report(span, f"`{shown}` in {_PLACES[where]} keeps the whole CUDA toolkit at run time: reference the libraries or tool the program uses")
    else:
        ctx.report(span, f"`{shown}` in {_PLACES[where]} keeps all of nvcc at run time: name the one tool the program runs (`.../bin/ptxas`)", severity=Severity.INFO)


_PLACES = {"wrapper": "a wrapper", "RPATH": "an RPATH", "installed file": "an installed file"}


def _finding(interpolation: Node, ctx: Context) -> tuple[bool, str, str] | None:
    """(whether it is the toolkit, where it is kept, how to show it) for a reported interpolation."""
    expression = next(iter(interpolation.named_children), None)
    if expression is None:
        return None
    for candidate in _references(expression, ctx):
        ref = ctx.semantic.cuda_ref(candidate)
        if ref is None or ref.output in {"version", "name", "pname", "majorVersion", "majorMinorVersion"}:
            continue
        toolkit = catalog.is_runfile_toolkit(ref.package)
        whole_nvcc = ref.package == "cuda_nvcc" and (candidate != expression or _WHOLE_DIRECTORY.match(ctx.source.data, interpolation.end_byte))
        if not toolkit and not whole_nvcc:
            continue
        where = runtime_use(candidate, ctx)
        if where is not None:
            shown = text(candidate) if len(text(candidate)) <= 40 else ref.package
            return toolkit, where, f"${{{shown}}}" if candidate == expression else shown
    return None


def _references(expression: Node, ctx: Context) -> list[Node]:
    """The interpolated expression, or the elements of the search path it builds."""
    if ctx.semantic.cuda_ref(expression) is not None:
        return [expression]
    return [
        root
        for node in descendants(expression)
        if node.type == "variable_expression" and (root := ctx.semantic.reference_root(node)) is not None and ctx.semantic.search_path_call(root, through_if=False) is not None
    ]
