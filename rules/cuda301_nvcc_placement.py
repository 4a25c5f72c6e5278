"""`cuda_nvcc`, the CUDA compiler, in `buildInputs` or `propagatedBuildInputs` of a derivation that
does not also list it in `nativeBuildInputs`.

Flags every way of naming the compiler: `cuda_nvcc`, `cudaPackages.cuda_nvcc`,
`(lib.getBin cuda_nvcc)`, `cuda_nvcc` under `with cudaPackages;` or from
`inherit (cudaPackages) cuda_nvcc;`, and a list bound in a `let` that feeds `buildInputs`. Not
flagged: `cuda_nvcc` in both `nativeBuildInputs` and `buildInputs` (before CUDA 13 some packages
need `crt/host_config.h` from it in the host inputs), its headers (`cuda_nvcc.dev`,
`(lib.getDev cuda_nvcc)`) in `buildInputs`, and non-input attributes such as
`disallowedRequisites = [ (lib.getBin cuda_nvcc) ]`.

Contexts: a warning in packages and overrides; an info in dev shells (`mkShell` leaves
`strictDeps` off, so nvcc is on `PATH` from either list; the move is tidiness there).

## Why
`cuda_nvcc` is a compiler that runs on the build machine: in nixpkgs' dependency model it is a
`nativeBuildInputs` entry, like `cmake` or `gcc`. From `buildInputs` it is on `PATH` only by
accident of `strictDeps = false`; with `strictDeps` (the default of many builders) or when
cross-compiling, the build does not find `nvcc` and its setup hook (which pins the host compiler
and sets `CUDAToolkit_ROOT`) is wired for the wrong platform.

The fix moves it to `nativeBuildInputs` (keeping a `lib.optionals cudaSupport` guard around it).
It is safe when `cuda_nvcc` was only in `buildInputs`: the same package is still available to
the build, now at the offset where the compiler belongs. From `propagatedBuildInputs` the fix
moves it to `propagatedNativeBuildInputs` and is unsafe: what dependents receive changes.

## Example
```nix
{ stdenv, cmake, cudaPackages }:
stdenv.mkDerivation {
  pname = "saxpy";
  version = "1.0";
  nativeBuildInputs = [ cmake ];
  buildInputs = [
    cudaPackages.cuda_nvcc
    cudaPackages.cuda_cudart
  ];
}
```

## Use instead
```nix
{ stdenv, cmake, cudaPackages }:
stdenv.mkDerivation {
  pname = "saxpy";
  version = "1.0";
  nativeBuildInputs = [
    cmake
    cudaPackages.cuda_nvcc
  ];
  buildInputs = [ cudaPackages.cuda_cudart ];
}
```

## References
- https://github.com/NixOS/nixpkgs/issues/275709
- https://github.com/NixOS/nixpkgs/pull/224848
- https://nixos.org/manual/nixpkgs/unstable/#ssec-stdenv-dependencies
- https://nixos.org/manual/nixpkgs/unstable/#cuda
"""

from __future__ import annotations

from tree_sitter import Node

from cudalint.knowledge import catalog
from cudalint.lint import edits
from cudalint.lint.context import Context
from cudalint.lint.model import Applicability, Fix, FixAvailability, Severity
from cudalint.lint.rule import Rule
from cudalint.nix.semantic import CudaRef, InputSite
from cudalint.nix.syntax import ATTRSET_TYPES, binding_value, descendants, node_key, text, unparen
from cudalint.rules._input_lists import list_choice_severity

RULE = Rule(
    code="CUDA301",
    preview=True,  # below 0.95 on the corpora: off by default until it passes
    precision="0.67 (4 true of 6 judged findings on the real-world corpora, 2026-11-25; tests/realworld/)",
    name="nvcc-placement",
    severity=Severity.WARNING,
    fix=Applicability.UNSAFE,
    availability=FixAvailability.SOMETIMES,
    summary="`cuda_nvcc` in `buildInputs` instead of `nativeBuildInputs`",
    node_types=("variable_expression",),
    cuda_references_only=True,
    patterns=(b"cuda_nvcc",),
)

NVCC = "cuda_nvcc"
# The compiler itself; `dev`/`include` are headers (`crt/host_config.h`), legitimately host inputs.
COMPILER_OUTPUTS = frozenset({None, "out", "bin"})


@RULE
def check(node: Node, ctx: Context) -> None:
    semantic = ctx.semantic
    root = semantic.reference_root(node)
    ref = semantic.cuda_ref(root)
    if ref is None or ref.package != NVCC or ref.output not in COMPILER_OUTPUTS:
        return
    site = semantic.input_site(root)
    if site is not None:
        if site.attr not in catalog.HOST_INPUTS:
            return
        owner = site.binding.parent.parent if site.binding.parent is not None else None
        if owner is not None and owner.type in ATTRSET_TYPES and _in_native_inputs(ctx, owner):
            return
        ctx.report(root, _message(root, site.attr), fixes=[_move_fix(ctx, site, ref)], severity=list_choice_severity(root, ctx))
        return
    # a let-bound list that flows into buildInputs (`deps = [ cuda_nvcc ]; buildInputs = deps;`)
    attrs = semantic.input_attrs(root)
    host = sorted(a for a in attrs if a in catalog.HOST_INPUTS)
    if not host or any(a in catalog.NATIVE_INPUTS for a in attrs) or _native_anywhere(ctx):
        return
    ctx.report(root, _message(root, host[0], through_let=True), severity=list_choice_severity(root, ctx))


def _message(root: Node, attr: str, through_let: bool = False) -> str:
    described = text(root) if len(text(root)) <= 50 else NVCC
    where = f"a `let`-bound list that feeds `{attr}`" if through_let else f"`{attr}`"
    return f"`{described}` is a build-time compiler but is in {where}: list it in `{catalog.NATIVE_COUNTERPART[attr]}`"


def _move_fix(ctx: Context, site: InputSite, ref: CudaRef) -> Fix | None:
    changes = edits.move_element(ctx.source, ctx.semantic, site, catalog.NATIVE_COUNTERPART[site.attr])
    if not changes:
        return None
    applicability = Applicability.SAFE if site.attr == "buildInputs" else Applicability.UNSAFE
    return Fix(f"Move `{NVCC}` to `{catalog.NATIVE_COUNTERPART[site.attr]}`", applicability, tuple(changes))


def _in_native_inputs(ctx: Context, attrset: Node) -> bool:
    """Whether the derivation's native inputs (also through let-bound lists) name `cuda_nvcc`
    (once per derivation: each `cuda_nvcc` of its host inputs asks)."""
    memo = ctx.semantic.memo(__name__)
    key = ("native nvcc", node_key(attrset))
    if key not in memo:
        memo[key] = _native_inputs_mention_nvcc(ctx, attrset)
    return memo[key]


def _native_inputs_mention_nvcc(ctx: Context, attrset: Node) -> bool:
    for attr in sorted(catalog.NATIVE_INPUTS):
        binding = edits.find_binding(attrset, attr)
        value = binding_value(binding) if binding is not None else None
        if value is not None and _mentions_nvcc(ctx, value, set()):
            return True
    return False


def _mentions_nvcc(ctx: Context, expression: Node, seen: set[tuple[int, int, str]]) -> bool:
    key = node_key(expression)
    if key in seen or len(seen) > 16:
        return False
    seen.add(key)
    semantic = ctx.semantic
    for variable in descendants(expression):
        if variable.type != "variable_expression":
            continue
        ref = semantic.cuda_ref(semantic.reference_root(variable))
        if ref is not None and ref.package == NVCC:
            return True
        binding = semantic.resolve(variable)
        if binding.kind in {"let", "rec"} and binding.value is not None and _mentions_nvcc(ctx, binding.value, seen):
            return True
    return False


def _native_anywhere(ctx: Context) -> bool:
    """For references the rule cannot tie to one derivation: any `cuda_nvcc` native input."""
    for ref in ctx.semantic.cuda_refs():
        if ref.package == NVCC and any(a in catalog.NATIVE_INPUTS for a in ctx.semantic.input_attrs(unparen(ref.node) or ref.node)):
            return True
    return False
