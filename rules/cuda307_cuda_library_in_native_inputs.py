"""CUDA libraries or headers (`cuda_cudart`, `libcublas`, `(lib.getDev libcusparse)`, `cuda_cccl`,
`cudnn`, ...) in `nativeBuildInputs` or `propagatedNativeBuildInputs`.

Flags every way of naming the package (`cudaPackages.libcublas`, `with cudaPackages;`,
`inherit (cudaPackages) ...`, getters and outputs) and let-bound lists that feed the native
inputs. Not flagged: the tools that do belong there (`cuda_nvcc`, `cuda_cuobjdump`, profilers,
`autoAddDriverRunpath` and the other setup hooks), explicit selections of a package's
executables (`(lib.getBin x)`), the runfile `cudatoolkit` (CUDA001 handles it), and attributes
that are not inputs, such as `disallowedRequisites`.

Contexts: a warning in packages and overrides; an info in dev shells (`mkShell` leaves
`strictDeps` off, so headers and libraries are found from either list; the move is tidiness).

## Why
CUDA libraries and headers are used by the code being built, so they are host dependencies:
`buildInputs`. `nativeBuildInputs` is for programs that run on the build machine. With
`strictDeps` the compiler and linker do not search native inputs for headers and libraries, and
when cross-compiling (e.g. for Jetson) a native input is the build machine's variant, the wrong
architecture. Only tools such as `cuda_nvcc` and the setup hooks stay in `nativeBuildInputs`.

The fix moves the package to `buildInputs` (from `propagatedNativeBuildInputs`: to
`propagatedBuildInputs`), keeping a `lib.optionals cudaSupport` guard around it. It is unsafe: it
changes which platform's variant is used and what the build sees.

## Example
```nix
{ stdenv, cudaPackages }:
stdenv.mkDerivation {
  pname = "saxpy";
  version = "1.0";
  nativeBuildInputs = with cudaPackages; [
    cuda_nvcc
    cuda_cudart
    libcublas
  ];
}
```

## Use instead
```nix
{ stdenv, cudaPackages }:
stdenv.mkDerivation {
  pname = "saxpy";
  version = "1.0";
  nativeBuildInputs = [ cudaPackages.cuda_nvcc ];
  buildInputs = with cudaPackages; [
    cuda_cudart
    libcublas
  ];
}
```

## References
- https://nixos.org/manual/nixpkgs/unstable/#ssec-stdenv-dependencies
- https://nixos.org/manual/nixpkgs/unstable/#cuda
- https://github.com/NixOS/nixpkgs/issues/275709
"""

from __future__ import annotations

from tree_sitter import Node

from cudalint.knowledge import catalog
from cudalint.lint import edits
from cudalint.lint.context import Context
from cudalint.lint.model import Applicability, Fix, FixAvailability, Severity
from cudalint.lint.rule import Rule
from cudalint.nix.semantic import CudaRef, InputSite
from cudalint.nix.syntax import text
from cudalint.rules._input_lists import list_choice_severity

RULE = Rule(
    code="CUDA307",
    name="cuda-library-in-native-inputs",
    severity=Severity.WARNING,
    fix=Applicability.UNSAFE,
    availability=FixAvailability.SOMETIMES,
    summary="CUDA library or headers in `nativeBuildInputs` instead of `buildInputs`",
    node_types=("variable_expression",),
    cuda_references_only=True,
    patterns=catalog.CUDA_REFERENCE_PATTERNS,  # it judges `cuda_ref`s
)

# Redistributables that ship programs, not libraries, although the name heuristic says library.
PROGRAMS = frozenset({"cuda_nvprof", "cuda_nvvp", "cuda_sanitizer_api", "cuda_demo_suite", "cuda_documentation", "nsight_compute", "nsight_systems"})


@RULE
def check(node: Node, ctx: Context) -> None:
    semantic = ctx.semantic
    root = semantic.reference_root(node)
    ref = semantic.cuda_ref(root)
    if ref is None or not _is_library(ref):
        return
    site = semantic.input_site(root)
    if site is not None:
        if site.attr in catalog.NATIVE_INPUTS:
            ctx.report(root, _message(root, ref, site.attr), fixes=[_move_fix(ctx, site, ref)], severity=list_choice_severity(root, ctx))
        return
    native = sorted(a for a in semantic.input_attrs(root) if a in catalog.NATIVE_INPUTS)
    if native:
        ctx.report(root, _message(root, ref, native[0], through_let=True), severity=list_choice_severity(root, ctx))


def _is_library(ref: CudaRef) -> bool:
    if ref.package in PROGRAMS or ref.output == "bin" or not catalog.is_cuda_package(ref.package):
        return False  # programs, and scope members such as `cudaPackages.backendStdenv.cc`
    return catalog.role(ref.package) in {"library", "headers"}


def _message(root: Node, ref: CudaRef, attr: str, through_let: bool = False) -> str:
    described = text(root) if len(text(root)) <= 50 else ref.package
    kind = "a CUDA headers package" if catalog.role(ref.package) == "headers" else "a CUDA library"
    where = f"a `let`-bound list that feeds `{attr}`" if through_let else f"`{attr}`"
    return f"`{described}` is {kind} for the code being built but is in {where}: list it in `{catalog.HOST_COUNTERPART[attr]}`"


def _move_fix(ctx: Context, site: InputSite, ref: CudaRef) -> Fix | None:
    target = catalog.HOST_COUNTERPART[site.attr]
    changes = edits.move_element(ctx.source, ctx.semantic, site, target)
    if not changes:
        return None
    return Fix(f"Move `{ref.package}` to `{target}`", Applicability.UNSAFE, tuple(changes))
