"""`cuda_nvcc`'s `bin` output (`lib.getBin cuda_nvcc`, `cuda_nvcc.bin`) in `nativeBuildInputs`, which leaves out nvcc's setup hook.

Flags, in `nativeBuildInputs`, `propagatedNativeBuildInputs` or a dev shell's `packages`, an element
that selects `cuda_nvcc`'s `bin` output: `(lib.getBin cudaPackages.cuda_nvcc)`,
`cudaPackages.cuda_nvcc.bin`, `lib.getOutput "bin" cuda_nvcc`, under `with cudaPackages;` too, when
every judged CUDA release of the target gives `cuda_nvcc` a `bin` output (nixpkgs 23.11 to 25.05).

Not flagged: targets where `cuda_nvcc` has no `bin` output (nixpkgs 23.05 and older, where
`lib.getBin` falls back to the one output; and the split-redist packages of 25.11 on, where it
returns `out`, which holds nvcc and its hook; there `cuda_nvcc.bin` is CUDA004's business); the
`bin` output in a string (`"${lib.getBin cuda_nvcc}/bin/nvcc"`, which names the program and
does not need the hook), in `buildInputs`, or behind a `let` variable.

Contexts: packages and dev shells get the finding and the fix alike (a dev shell's `packages`
source the same setup hooks).

## Why
From nixpkgs 23.11 (the manifest builder) to 25.05, `cuda_nvcc` has the outputs `out`, `bin`,
`dev` and `static`. The setup hook that points nvcc at `backendStdenv.cc` (`-ccbin`), compresses
fat binaries and lets CMake find `cuda_cudart` (`setupCudaHook`, PR #233581, later `nvccHook`)
is in `cuda_nvcc`'s `propagatedBuildInputs`, which stdenv records in the `dev` output's
`nix-support`; `out` propagates the other outputs, `bin` propagates nothing. So listing the
`bin` output puts nvcc on `PATH` without its hook: nvcc uses whatever `gcc` comes first (often
one it rejects) and CMake's CUDA compiler test fails to find `cudart`. Reviewers ask for plain
`cuda_nvcc` in `nativeBuildInputs` (PR #404973 discusses why the hook must stay in
`propagatedBuildInputs` to reach dependents).

The fix writes the package without the output. It is unsafe: the hook now runs, which changes
the build's flags (that is what the package needed).

## Example
```nix
# fixture-target: nixpkgs=24.11
{ lib, stdenv, cmake, cudaPackages }:
stdenv.mkDerivation {
  pname = "sparse-kernels";
  version = "3.1.0";
  src = ./.;
  nativeBuildInputs = [ cmake (lib.getBin cudaPackages.cuda_nvcc) ];
  buildInputs = [ cudaPackages.cuda_cudart ];
}
```

## Use instead
```nix
# fixture-target: nixpkgs=24.11
{ lib, stdenv, cmake, cudaPackages }:
stdenv.mkDerivation {
  pname = "sparse-kernels";
  version = "3.1.0";
  src = ./.;
  nativeBuildInputs = [ cmake cudaPackages.cuda_nvcc ];
  buildInputs = [ cudaPackages.cuda_cudart ];
}
```

## References
- https://github.com/NixOS/nixpkgs/pull/233581
- https://github.com/NixOS/nixpkgs/pull/404973
- https://github.com/NixOS/nixpkgs/blob/master/pkgs/stdenv/generic/setup.sh
"""

from __future__ import annotations

from tree_sitter import Node

from cudalint.knowledge import catalog
from cudalint.lint import edits
from cudalint.lint.context import Context
from cudalint.lint.model import Applicability, Fix, FixAvailability, Severity
from cudalint.lint.rule import Rule
from cudalint.nix.semantic import CudaRef
from cudalint.nix.syntax import flatten_apply, text, unparen
from cudalint.rules._outputs import in_every, judged_outputs

PACKAGE = "cuda_nvcc"
_INPUTS = catalog.NATIVE_INPUTS | {"packages"}

RULE = Rule(
    code="CUDA319",
    name="nvcc-bin-output-in-inputs",
    severity=Severity.WARNING,
    fix=Applicability.UNSAFE,
    availability=FixAvailability.SOMETIMES,
    summary="`cuda_nvcc`'s `bin` output in `nativeBuildInputs`, which leaves out nvcc's setup hook",
    node_types=("variable_expression",),
    cuda_references_only=True,
    patterns=(PACKAGE.encode(),),
    preview=True,
)


@RULE
def check(node: Node, ctx: Context) -> None:
    semantic = ctx.semantic
    root = semantic.reference_root(node)
    ref = semantic.cuda_ref(root)
    if ref is None or ref.package != PACKAGE or ref.output != "bin" or ref.via == "let":
        return
    site = semantic.input_site(root)
    if site is None or site.attr not in _INPUTS:
        return
    outputs = judged_outputs(ctx, PACKAGE)
    if outputs is None or not in_every(outputs, "bin"):
        return  # no `bin` output: `lib.getBin` returns the one that has the hook
    target = root.parent if root.parent is not None and root.parent.type == "parenthesized_expression" and site.list_node is not None else root
    plain = _plain(ref)
    fix = Fix(f"Write `{plain}`", Applicability.UNSAFE, (edits.replace(target, plain),)) if plain else None
    message = f"`{text(root)}` leaves out nvcc's setup hook (it comes with the default output): list `{plain or PACKAGE}`"
    if len(text(root)) > 50:
        message = f"`cuda_nvcc`'s `bin` output leaves out nvcc's setup hook (it comes with the default output): list `{plain or PACKAGE}`"
    ctx.report(root, message, fixes=[fix])


def _plain(ref: CudaRef) -> str | None:
    """The reference without its output: the getter's argument, or the selection without `.bin`."""
    node = unparen(ref.node)
    if node is None:
        return None
    if node.type == "apply_expression":
        _, arguments = flatten_apply(node)
        inner = unparen(arguments[-1]) if arguments else None
        return text(inner) if inner is not None and inner.type in ("variable_expression", "select_expression") else None
    spelled = text(node)
    return spelled.removesuffix(".bin") if spelled.endswith(".bin") else None
