"""`NVCC_PREPEND_FLAGS` or `NVCC_APPEND_FLAGS` overwritten in a phase where nvcc's setup hook has set them.

Flags, in the shell text of a package's phases from configure on (`preConfigure`,
`configurePhase`, `preBuild`, `buildPhase`, `installPhase`, ...), an assignment that replaces the
variable, `export NVCC_PREPEND_FLAGS="..."`, `export NVCC_APPEND_FLAGS=...` or a lone
`NVCC_APPEND_FLAGS="..."`, when the package gets nvcc from `cudaPackages.cuda_nvcc` (or the
runfile `cudatoolkit`), whose propagated setup hook fills these variables in.

Not flagged: appending (`export NVCC_APPEND_FLAGS+=" ..."`, `NVCC_APPEND_FLAGS="$NVCC_APPEND_FLAGS
..."`, `''${NVCC_APPEND_FLAGS:-}`); an assignment for one command (`NVCC_APPEND_FLAGS=... make`);
the derivation attributes `NVCC_PREPEND_FLAGS = ...;` and `env.NVCC_APPEND_FLAGS = ...;` (they are
the environment the hook starts from, and the hook appends to them: nothing is lost); phases that
run before configure (`postPatch`, `preHook`), which the hooks of 2025 on (they append in a
pre-configure hook) follow; dev shells, modules and overrides (a shell runs no configure phase);
a package without nvcc from the CUDA package set; `CUDAFLAGS`, which none of nixpkgs' CUDA setup
hooks sets; targets older than nixpkgs 23.11 (before the shared setup hook).

Contexts: packages only.

## Why
Since PR #233581 (2023, `cudaPackages.setupCudaHook: init`), `cuda_nvcc` and `cudatoolkit`
propagate a setup hook that appends to `NVCC_PREPEND_FLAGS` the host compiler nvcc must use
(`--compiler-bindir=`/`-ccbin` pointing at `backendStdenv.cc`) and `-Xfatbin=-compress-all`, and to
`NVCC_APPEND_FLAGS` the `-L`/`-I` flags CMake's CUDA compiler test needs to find `cuda_cudart`.
The later hooks (`nvccHook`, 2025) export both variables first and, in a pre-configure hook,
append `--compiler-bindir=` to `NVCC_APPEND_FLAGS` and `-Xfatbin=-compress-all` to
`NVCC_PREPEND_FLAGS` (the package set's own tests check that the configure phase sees the latter).
A phase that assigns the variable instead of appending drops these flags: nvcc then picks the
default `gcc`, which may be a version nvcc rejects, and fat binaries grow past what links.
Packages in nixpkgs append (`export NVCC_APPEND_FLAGS+=" ..."`, as nccl and the CUDA tests do).

The fix turns the assignment into `+=` with a leading space in the quoted value. It is unsafe:
the flags the hook set now reach nvcc, which changes the build (that is the point, but a package
that meant to replace the host compiler would now get two `-ccbin`, and nvcc keeps the last one).
An unquoted value gets no fix.

## Example
```nix
{ lib, stdenv, cmake, cudaPackages }:
stdenv.mkDerivation {
  pname = "stencil-bench";
  version = "0.4.0";
  src = ./.;
  nativeBuildInputs = [ cmake cudaPackages.cuda_nvcc ];
  buildInputs = [ cudaPackages.cuda_cudart ];
  preConfigure = ''
    export NVCC_APPEND_FLAGS="--expt-relaxed-constexpr"
  '';
}
```

## Use instead
```nix
{ lib, stdenv, cmake, cudaPackages }:
stdenv.mkDerivation {
  pname = "stencil-bench";
  version = "0.4.0";
  src = ./.;
  nativeBuildInputs = [ cmake cudaPackages.cuda_nvcc ];
  buildInputs = [ cudaPackages.cuda_cudart ];
  preConfigure = ''
    export NVCC_APPEND_FLAGS+=" --expt-relaxed-constexpr"
  '';
}
```

## References
- https://github.com/NixOS/nixpkgs/pull/233581
- https://docs.nvidia.com/cuda/cuda-compiler-driver-nvcc/index.html#nvcc-environment-variables
"""

from __future__ import annotations

from tree_sitter import Node

from cudalint.lint.context import Context
from cudalint.lint.model import Applicability, Edit, Fix, FixAvailability, Severity
from cudalint.lint.rule import Rule
from cudalint.nix.places import DERIVATION_BUILDERS
from cudalint.nix.shell import Command, Word
from cudalint.rules._cuda_compilation import nvcc_sources

VARIABLES = (b"NVCC_PREPEND_FLAGS", b"NVCC_APPEND_FLAGS")
# Phases that run before configure, where the hooks of 2025 on have not appended yet.
_BEFORE_CONFIGURE = frozenset({"preHook", "postHook", "preUnpack", "unpackPhase", "postUnpack", "prePatch", "patchPhase", "postPatch"})
# The shared hook's first release: PR #233581 (2023-07) is in 23.11.
_HOOK_RELEASE = "23.11"

RULE = Rule(
    code="CUDA318",
    name="nvcc-flags-overwritten",
    severity=Severity.WARNING,
    fix=Applicability.UNSAFE,
    availability=FixAvailability.SOMETIMES,
    summary="`NVCC_PREPEND_FLAGS`/`NVCC_APPEND_FLAGS` assigned in a phase, dropping what nvcc's setup hook put there",
    node_types=("string_expression", "indented_string_expression"),
    patterns=VARIABLES,
    preview=True,
)


@RULE
def check(string: Node, ctx: Context) -> None:
    data = string.text or b""
    if not any(v in data for v in VARIABLES):
        return
    path = ctx.semantic.binding_path(string)
    if len(path) != 1 or path[0] in _BEFORE_CONFIGURE:
        return
    shell = ctx.semantic.shell_text(string)
    if shell is None or not ctx.place(string).is_package:
        return
    call = ctx.semantic.enclosing_call(string)
    if call is None or call.name not in DERIVATION_BUILDERS or call.attrset is None:
        return
    if not nvcc_sources(call.attrset, ctx) or not ctx.target.includes(ctx.reference.release_branch_offs[_HOOK_RELEASE]):
        return
    for command in shell.commands():
        for word in _assignments(command):
            name, _, value = word.raw.partition(b"=")
            if name.endswith(b"+") or name in value:
                continue  # `X+=...`, `X="$X ..."`
            message = f'This replaces the flags nvcc\'s setup hook put in `{name.decode()}`: append with `{name.decode()}+=" ..."`'
            ctx.report((word.start, word.start + len(name) + 1), message, fixes=[_append(name, value, word)])


def _assignments(command: Command) -> list[Word]:
    """`export X=...`/`declare -x X=...` and lone `X=...` of the variables (not `X=... cmd`)."""
    if command.name_index is None:
        candidates = command.words
    elif command.name in (b"export", b"declare", b"typeset"):
        candidates = command.arguments()
    else:
        return []
    return [w for w in candidates if w.raw.partition(b"=")[0].rstrip(b"+") in VARIABLES and b"=" in w.raw]


def _append(name: bytes, value: bytes, word: Word) -> Fix | None:
    """`X="a b"` -> `X+=" a b"`; an unquoted value has no mechanical rewrite."""
    if value[:1] not in (b'"', b"'"):
        return None
    at = word.start + len(name)
    edits = [Edit(at, at, "+")]
    if value[1:2] not in (b" ", value[:1]):
        edits.append(Edit(at + 2, at + 2, " "))
    return Fix(f"Append to `{name.decode()}` with `+=`", Applicability.UNSAFE, tuple(edits))
