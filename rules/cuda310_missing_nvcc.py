"""A package that builds against CUDA libraries and compiles or configures CUDA code, with no
CUDA compiler at build time.

Flags a package build (`stdenv.mkDerivation`, any stdenv, `buildPythonPackage`) whose host
inputs hold CUDA libraries or headers (`cuda_cudart`, `libcublas`, `cudnn`, ...) and which shows
a sign of compiling CUDA (CMake among its native inputs, whose `FindCUDAToolkit` and CUDA
language look for nvcc; CMake's CUDA language named; nvcc in a phase or flag; `.cu` sources;
architecture flags; a `-DUSE_CUDA=ON`-style switch; `FORCE_CUDA`; `cudaPackages.flags`), but has
no nvcc: no `cuda_nvcc`, no runfile toolkit (`cudatoolkit`, `cudaPackages.cudatoolkit`) and no
`symlinkJoin` holding either, in any input list or named in its attributes (`"${cuda_nvcc}/bin/nvcc"`).

Not flagged: repackaged binaries (`dontBuild`, wheels with `format = "wheel"`, `autoPatchelfHook`
over prebuilt `.so`/`.deb`/`.run` sources or without a build system), Python packages that only
depend on torch (a torch wheel user links nothing), packages with CUDA libraries and no sign of
compilation (a program that `dlopen`s `libcudart`), and everything that is not a package build:
dev shells (a shell compiles nothing; a user who builds in it adds nvcc to it when they need
it), NixOS and home-manager modules, and overrides (`overrideAttrs` adding CUDA libraries to a
package whose native inputs this file does not show, or a derivation that inherits its input
lists: `inherit (base) nativeBuildInputs;`).

## Why
`cuda_nvcc` is more than the compiler: its setup hook (`setupCudaHook`, propagated by
`cuda_nvcc`) is what points CMake at the split CUDA packages (`CUDAToolkit_ROOT`,
`CUDAToolkit_INCLUDE_DIR`) and at the host compiler. Without it, `find_package(CUDAToolkit)`
finds no toolkit, `enable_language(CUDA)` finds no compiler, and a CMake config of a CUDA-enabled
dependency (OpenCV's) fails: the build stops at configure time with CUDA on (issue #432731, PR
#538995). The library packages carry no nvcc; the runfile toolkit did, which is why old
expressions built with only `cudatoolkit` in `buildInputs`.

The fix adds `cuda_nvcc` to `nativeBuildInputs` under the same condition as the CUDA libraries
(`lib.optionals cudaSupport [ ... ]`), spelled as the file spells its CUDA packages. It is
unsafe: it changes the build (nvcc's hooks run, CMake may now enable CUDA code paths it skipped),
though nvcc stays out of the runtime closure.

## Example
```nix
{ lib, config, stdenv, cmake, cudaPackages, cudaSupport ? config.cudaSupport }:
stdenv.mkDerivation {
  pname = "tracker";
  version = "1.0";
  src = ./.;
  nativeBuildInputs = [ cmake ];
  buildInputs = lib.optionals cudaSupport [ cudaPackages.cuda_cudart ];
  cmakeFlags = [ (lib.cmakeBool "TRACKER_CUDA" cudaSupport) ];
}
```

## Use instead
```nix
{ lib, config, stdenv, cmake, cudaPackages, cudaSupport ? config.cudaSupport }:
stdenv.mkDerivation {
  pname = "tracker";
  version = "1.0";
  src = ./.;
  nativeBuildInputs = [ cmake ] ++ lib.optionals cudaSupport [ cudaPackages.cuda_nvcc ];
  buildInputs = lib.optionals cudaSupport [ cudaPackages.cuda_cudart ];
  cmakeFlags = [
    (lib.cmakeBool "TRACKER_CUDA" cudaSupport)
    (lib.cmakeFeature "CMAKE_CUDA_ARCHITECTURES" cudaPackages.flags.cmakeCudaArchitecturesString)
  ];
}
```

## References
- https://github.com/NixOS/nixpkgs/issues/432731
- https://github.com/NixOS/nixpkgs/pull/538995
- https://github.com/NixOS/nixpkgs/blob/35ed05daf29b0fb0f2199aa716acf386ab9cded3/pkgs/development/cuda-modules/packages/setupCudaHook/setup-cuda-hook.sh
- https://nixos.org/manual/nixpkgs/unstable/#cuda
"""

from __future__ import annotations

from tree_sitter import Node

from cudalint.knowledge import catalog
from cudalint.lint import edits
from cudalint.lint.context import Context
from cudalint.lint.model import Applicability, Fix, FixAvailability, Severity
from cudalint.lint.rule import Rule
from cudalint.rules._cuda_compilation import (
    NVCC_INPUTS,
    builder_label,
    builds_with_cmake,
    compiles_device_code,
    cuda_libraries,
    inherited_names,
    nvcc_sources,
    package_build,
    reachable,
    repackages,
)
from cudalint.rules.cuda001_runfile_toolkit import companion_edits

RULE = Rule(
    code="CUDA310",
    name="missing-nvcc",
    severity=Severity.WARNING,
    fix=Applicability.UNSAFE,
    availability=FixAvailability.SOMETIMES,
    summary="CUDA libraries and CUDA compilation without `cuda_nvcc` at build time",
    node_types=("apply_expression",),
    patterns=catalog.CUDA_REFERENCE_PATTERNS,
)

NVCC = "cuda_nvcc"


@RULE
def check(apply: Node, ctx: Context) -> None:
    call = package_build(apply, ctx)
    if call is None:
        return
    function, attrset = call
    if nvcc_sources(attrset, ctx) or _names_compiler(attrset, ctx):
        return
    if inherited_names(attrset) & NVCC_INPUTS:
        return  # the inputs are written elsewhere (`inherit (base) nativeBuildInputs;`)
    libraries = cuda_libraries(attrset, ctx)
    if not libraries or repackages(attrset, ctx):
        return
    if not (builds_with_cmake(attrset, ctx) or compiles_device_code(attrset, function, ctx, torch_alone=False)):
        return
    fix = _fix(attrset, libraries, ctx)
    condition = ", under the same condition as the CUDA libraries" if ctx.semantic.guards(libraries[0]) else ""
    ctx.report(function, f"`{builder_label(function)}` builds CUDA code without nvcc: add `{NVCC}` to `nativeBuildInputs`{condition}", fixes=[fix])


def _names_compiler(attrset: Node, ctx: Context) -> bool:
    """nvcc reached by path rather than as an input (`NVCC = "${cuda_nvcc}/bin/nvcc"`,
    `-DCUDA_TOOLKIT_ROOT_DIR=${cudatoolkit}`)."""
    for node in reachable(attrset, ctx):
        if node.type != "variable_expression":
            continue
        ref = ctx.semantic.cuda_ref(ctx.semantic.reference_root(node))
        if ref is not None and (ref.package == NVCC or catalog.is_runfile_toolkit(ref.package)):
            return True
    return False


def _fix(attrset: Node, libraries: list[Node], ctx: Context) -> Fix | None:
    """`cuda_nvcc` in `nativeBuildInputs`, next to the first library whose list is the
    derivation's own, under that list's guard."""
    for root in libraries:
        site = ctx.semantic.input_site(root)
        ref = ctx.semantic.cuda_ref(root)
        if site is None or ref is None or site.binding is None or site.binding.parent is None or site.binding.parent.parent != attrset:
            continue
        changes = companion_edits(ref, site, ctx, "nativeBuildInputs", [NVCC])
        if not changes:
            return None
        # the edit binding the name where nothing does (a `cuda_nvcc` formal in a file the CUDA set calls)
        _, binding = edits.package_reference(ctx.source, ctx.semantic, ref, NVCC)
        changes = edits.merge_edits(list(dict.fromkeys([*changes, *binding])))
        return Fix(f"Add `{NVCC}` to `nativeBuildInputs`", Applicability.UNSAFE, tuple(changes))
    return None
