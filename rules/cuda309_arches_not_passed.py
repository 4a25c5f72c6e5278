"""A derivation that compiles CUDA code but never says for which GPU architectures.

Flags a package build (`stdenv.mkDerivation`, any stdenv, `buildPythonPackage`) that has nvcc at
build time (`cuda_nvcc`, the runfile toolkit or a join holding nvcc, in its inputs) and a sign
that it compiles device code (CMake's CUDA language named, nvcc in a phase, `.cu` sources, a
`-DUSE_CUDA=ON`-style switch or an option building CUDA kernels, `FORCE_CUDA`, a torch extension)
but passes no architecture anywhere: no `CMAKE_CUDA_ARCHITECTURES`, `CUDAARCHS`,
`TORCH_CUDA_ARCH_LIST`, `-gencode`/`--generate-code`/`--gpu-architecture`/`-arch=sm_*`,
`CUDA_COMPUTE_CAP`, `SMS=`, `CUDA_ARCH_BIN`, no project option naming a CUDA architecture
(`CYCLES_CUDA_BINARIES_ARCH`, `GPU_TARGETS`), and no use of `cudaPackages.flags` (or the older
`cudaFlags`) or of a `cudaCapabilities` list. Variables kept in a `let` count where the
derivation uses them.

Not flagged: nvcc next to CMake with no other sign (nvcc is also what CMake's `FindCUDAToolkit`
and CUDA-enabled dependencies' CMake configs look for: such a package links CUDA but compiles no
kernels), hand-written lists (CUDA305 judges those), repackaged binaries (`dontBuild`, wheels,
`autoPatchelfHook` over prebuilt files), derivations without nvcc, and everything that is not a
package build: dev shells (a shell compiles nothing itself; the user passes flags to their own
build), NixOS and home-manager modules, and overrides (`overrideAttrs` adding CUDA to a package
whose derivation, and its flags, this file does not show; a derivation that inherits flags or
phases from another, `inherit (base) cmakeFlags;`). The advice follows the build system:
`TORCH_CUDA_ARCH_LIST` from `torch.cudaCapabilities` for a torch extension (a Python package
with torch), `CMAKE_CUDA_ARCHITECTURES` from `flags.cmakeCudaArchitecturesString` for CMake,
`flags.gencodeString` for nvcc run by a Makefile or a script. The names follow the target (the
reference set's vocabulary): before `flags` (PR #256324, 2023-12-07: 23.05, 23.11) it names
`cudaPackages.cudaFlags.cudaCapabilities` (the formats `cmakeCudaArchitecturesString` and
`gencodeString` are not in the 2023 pkgs/development/compilers/cudatoolkit/flags.nix, commit
02492d7a), and `cmakeCudaArchitecturesString` only from PR #301416 (2024-04-18); targets from
before `cudaFlags` existed (PR #205351, in 23.05) have no user's list to pass and get nothing.

## Why
Which GPUs a build targets is the user's choice, made once in `config.cudaCapabilities` and
handed out by `cudaPackages.flags`. nixpkgs does not pass it to builds by itself, in any era:
the CUDA setup hook propagated by `cuda_nvcc` points CMake at the toolkit
(`CUDAToolkit_ROOT`) and at the host compiler (`CMAKE_CUDA_HOST_COMPILER`, `CUDAHOSTCXX`) but
sets neither `CMAKE_CUDA_ARCHITECTURES` nor `CUDAARCHS`. Checked in
pkgs/development/cuda-modules/setup-hooks/setup-cuda-hook.sh (2023, commit b97349c5),
setup-hooks/setup-cuda/setup-cuda.sh (050cd19f), setup-hooks/setup-cuda-hook/setup-cuda-hook.sh
(1ac76213), packages/setupCudaHook/setup-cuda-hook.sh (2025-2026, commits 7e116272 and 35ed05da,
whose package.nix 62b71747/02d562cc substitutes only the compiler) and the 2026 `cuda_nvcc`
setup hook packages/cuda_nvcc/setup-hook.sh (1ac181a1); issue #237761 (build only for the
requested architectures) is still open. So the rule fires for CMake builds in every era.

Without a list, CMake compiles for its compiler's default architecture (one old generation:
kernels then fail with "no kernel image is available" on the user's GPU, or run as slow PTX JIT),
torch's extension builder compiles for every architecture torch knows (long builds, large
outputs), and a Makefile uses whatever its author's GPU was. Reviewers ask for the user's list
(PR #530330: torch's capabilities for a torch extension; PR #535873: the configured capabilities
for Blender's kernels).

No automatic fix: the variable depends on the build system, and some projects read their own
option (`CYCLES_CUDA_BINARIES_ARCH`), which only the project's build files tell.

## Example
```nix
{ lib, stdenv, cmake, cudaPackages }:
stdenv.mkDerivation {
  pname = "saxpy";
  version = "1.0";
  src = ./.;
  nativeBuildInputs = [ cmake cudaPackages.cuda_nvcc ];
  buildInputs = [ cudaPackages.cuda_cudart ];
  cmakeFlags = [ (lib.cmakeBool "SAXPY_USE_CUDA" true) ];
}
```

## Use instead
```nix
{ lib, stdenv, cmake, cudaPackages }:
stdenv.mkDerivation {
  pname = "saxpy";
  version = "1.0";
  src = ./.;
  nativeBuildInputs = [ cmake cudaPackages.cuda_nvcc ];
  buildInputs = [ cudaPackages.cuda_cudart ];
  cmakeFlags = [
    (lib.cmakeBool "SAXPY_USE_CUDA" true)
    (lib.cmakeFeature "CMAKE_CUDA_ARCHITECTURES" cudaPackages.flags.cmakeCudaArchitecturesString)
  ];
}
```

## References
- https://github.com/NixOS/nixpkgs/issues/237761
- https://github.com/NixOS/nixpkgs/pull/530330
- https://github.com/NixOS/nixpkgs/pull/535873
- https://github.com/NixOS/nixpkgs/pull/322070
- https://github.com/NixOS/nixpkgs/pull/205351
- https://github.com/NixOS/nixpkgs/blob/35ed05daf29b0fb0f2199aa716acf386ab9cded3/pkgs/development/cuda-modules/packages/setupCudaHook/setup-cuda-hook.sh
- https://cmake.org/cmake/help/latest/variable/CMAKE_CUDA_ARCHITECTURES.html
- https://nixos.org/manual/nixpkgs/unstable/#cuda
"""

from __future__ import annotations

import re

from tree_sitter import Node

from cudalint.lint.context import Context
from cudalint.lint.model import Applicability, FixAvailability, Severity
from cudalint.lint.rule import Rule
from cudalint.nix.syntax import attrpath_names, last_name, text
from cudalint.rules._cuda_compilation import (
    TORCH,
    builder_label,
    builds_with_cmake,
    compiles_device_code,
    inherited_names,
    is_python_builder,
    nvcc_sources,
    package_build,
    reachable,
    repackages,
    spells,
)

RULE = Rule(
    code="CUDA309",
    preview=True,  # below 0.95 on the corpora: off by default until it passes
    precision="0.92 (12 true of 13 judged findings on the real-world corpora, 2026-11-25; tests/realworld/)",
    name="arches-not-passed",
    severity=Severity.WARNING,
    fix=Applicability.NONE,
    availability=FixAvailability.NEVER,
    summary="CUDA compiled without the user's GPU architectures",
    node_types=("apply_expression",),
    patterns=(b"cuda_nvcc", b"cudatoolkit", b"cudaPackages"),
)

# Text that passes architectures, by hand or from the user's list (strings and attribute names).
_ARCHES = re.compile(
    r"CUDA\w*ARCH|ARCHITECTURES|CUDAARCHS|gencode|--generate-code|--gpu-architecture|--gpu-code|(?<![\w-])-arch[= ]"
    r"|\b(?:sm|compute)_\d|COMPUTE_CAP|(?<![\w])SMS=|GPU_TARGETS|GPU_ARCH|NVCC_ARCH|[Cc]apabilities|(?i:cuda_?arch)|realArches|virtualArches",
)
# The package set's attribute that formats the user's list.
_FLAG_SETS = frozenset({"flags", "cudaFlags"})
# Inherited attributes that cannot carry architectures.
_METADATA = frozenset({"pname", "version", "name", "src", "meta", "passthru", "patches", "nativeBuildInputs", "buildInputs", "dependencies"})
_CMAKE_LANGUAGE = re.compile(r"CMAKE_CUDA_|enable_language\(\s*CUDA|LANGUAGES[^\n]*\bCUDA\b")


@RULE
def check(apply: Node, ctx: Context) -> None:
    call = package_build(apply, ctx)
    if call is None:
        return
    function, attrset = call
    if ctx.reference.idiom("capabilityFlags", ctx.target) is None:
        return  # before `cudaFlags` (PR #205351, in 23.05) nixpkgs had no user's list to pass
    if not nvcc_sources(attrset, ctx) or repackages(attrset, ctx) or _passes_arches(attrset, ctx):
        return
    if inherited_names(attrset) - _METADATA:
        return  # flags or phases written elsewhere (`inherit (base) cmakeFlags;`) may pass them
    if not compiles_device_code(attrset, function, ctx):
        return  # nvcc for CMake's `FindCUDAToolkit` alone (a CUDA-enabled dependency's config) compiles no kernels
    cmake = builds_with_cmake(attrset, ctx)
    ctx.report(function, f"`{builder_label(function)}` compiles CUDA but passes no GPU architectures: {_advice(attrset, function, cmake, ctx)}")


def _passes_arches(attrset: Node, ctx: Context) -> bool:
    for node in reachable(attrset, ctx):
        if spells(node, _ARCHES):
            return True
        if node.type == "select_expression":
            names = attrpath_names(node.child_by_field_name("attrpath"))
            base = last_name(node.child_by_field_name("expression"))
            if any(n in _FLAG_SETS for n in [base, *names[:-1]]) or any(n is not None and _ARCHES.search(n) for n in names):
                return True
        if node.type == "variable_expression" and _ARCHES.search(text(node)):
            return True  # `cmakeCudaArchitecturesString` from `inherit (flags) ...`, a `cudaCapabilities` formal
    return False


def _advice(attrset: Node, function: Node, cmake: bool, ctx: Context) -> str:
    flags = _flags_spelling(attrset, ctx)
    has = ctx.reference.has
    if is_python_builder(function) and _uses_torch(attrset, ctx):
        return 'set `TORCH_CUDA_ARCH_LIST = lib.concatStringsSep ";" torch.cudaCapabilities`'
    if cmake or any(n.type == "string_fragment" and _CMAKE_LANGUAGE.search(text(n)) for n in reachable(attrset, ctx)):
        if flags.endswith("cudaFlags") or not has("cudaPackages.flags.cmakeCudaArchitecturesString", ctx.target):
            return f"set `CMAKE_CUDA_ARCHITECTURES` from `{flags}.cudaCapabilities` (dots dropped) in `cmakeFlags`"
        return f'add `(lib.cmakeFeature "CMAKE_CUDA_ARCHITECTURES" {flags}.cmakeCudaArchitecturesString)` to `cmakeFlags`'
    if flags.endswith("cudaFlags"):
        return f"pass nvcc `-gencode` flags built from `{flags}.cudaCapabilities` (the build's architectures)"
    return f"pass `{flags}.gencodeString` to nvcc (the build's architecture flags)"


def _uses_torch(attrset: Node, ctx: Context) -> bool:
    return any(n.type in ("variable_expression", "select_expression") and last_name(n) in TORCH for n in reachable(attrset, ctx))


def _flags_spelling(attrset: Node, ctx: Context) -> str:
    """How the file reaches the formatted capabilities: `flags` when bound (`inherit (cudaPackages)
    flags;`), else through the package set; `cudaFlags` on targets before `flags` (2023-12)."""
    idiom = ctx.reference.idiom("capabilityFlags", ctx.target) or "cudaPackages.flags"
    name = idiom.rsplit(".", 1)[-1]
    if ctx.semantic.resolve_name(name, attrset).lexical:
        return name
    for _, node in nvcc_sources(attrset, ctx):
        ref = ctx.semantic.cuda_ref(node)
        if ref is not None and ref.set_name is not None and ctx.semantic.resolve_name(ref.set_name, attrset).lexical:
            return f"{ref.set_name}.{name}"
    return f"cudaPackages.{name}"
