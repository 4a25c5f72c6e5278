"""`CUDAToolkit_ROOT` set by hand in a package whose nvcc is the redistributable `cuda_nvcc`.

Flags, in a package (`stdenv.mkDerivation` and the other derivation builders) that gets nvcc from
`cudaPackages.cuda_nvcc`: a CMake flag `-DCUDAToolkit_ROOT=...` or `lib.cmakeFeature
"CUDAToolkit_ROOT" ...` in `cmakeFlags`, an attribute `CUDAToolkit_ROOT = ...;` or
`env.CUDAToolkit_ROOT = ...;`, and `CUDAToolkit_ROOT=` in a shell phase (`export
CUDAToolkit_ROOT=...` in `preConfigure`), when the root names `cuda_nvcc` and no other CUDA
package. The setup hook `cuda_nvcc` propagates fills it in.

Not flagged: a root listing other CUDA packages (`cuda_cudart`, `libcublas`: the hook collects
only the build's inputs, so such a root may do more) or built where the rule cannot read it (a
`let` variable); a package built with the runfile `cudatoolkit` (or a `symlinkJoin` of the toolkit),
whose old eras had no such hook (only `nvcc-setup-hook.sh`, which sets nvcc's flags); dev
shells, NixOS/home-manager modules and overrides (a shell has no configure phase run by the hook
unless its user runs one); targets before the hook (nixpkgs older than 23.11) and the weeks of
2026-07 when the hook's list missed nvcc under CMake 4.3.4 (see below), when setting it by hand
was a workaround.

Contexts: packages only.

## Why
Since PR #233581 (2023, `cudaPackages.setupCudaHook: init`), `cuda_nvcc` propagates
`setup-cuda-hook.sh`, whose `setupCUDAToolkit_ROOT` pre-configure hook collects every CUDA
package of the build (those marked by `mark-for-cudatoolkit-root-hook`) into `CUDAToolkit_ROOT`
and passes it to CMake as `-DCUDAToolkit_ROOT=...` (pkgs/development/cuda-modules/setup-hooks/
setup-cuda-hook.sh, commit 16ddaa5; later pkgs/development/cuda-modules/packages/setupCudaHook/
setup-cuda-hook.sh). A hand-written root names one package (often `cuda_nvcc`'s `bin` output)
where CMake needs all of them, and the hook's flag comes after it on CMake's command line anyway.
After CMake 4.3.4 (PR #529977) stopped falling back to `PATH` when `CUDAToolkit_ROOT` lacks nvcc,
PR #545542 (2026-07) added `cuda_nvcc` to the hook's list; a reviewer then asked frei0r to drop
its own `CUDAToolkit_ROOT` (PR #549747, 2026-08).

The fix removes the `cmakeFlags` entry. It is unsafe: the derivation changes, and a project that
reads `CUDAToolkit_ROOT` before enabling CUDA could behave differently. Attributes and shell text
get no fix (an exported variable is also extended by the hook: removing it is the author's call).

## Example
```nix
{ lib, config, stdenv, cmake, cudaPackages, cudaSupport ? config.cudaSupport }:
stdenv.mkDerivation {
  pname = "video-filters";
  version = "2.5.1";
  src = ./.;
  nativeBuildInputs = [ cmake ] ++ lib.optionals cudaSupport [ cudaPackages.cuda_nvcc ];
  buildInputs = lib.optionals cudaSupport [ cudaPackages.cuda_cudart ];
  cmakeFlags = lib.optionals cudaSupport [
    (lib.cmakeFeature "CUDAToolkit_ROOT" "${lib.getBin cudaPackages.cuda_nvcc}")
  ];
}
```

## Use instead
```nix
{ lib, config, stdenv, cmake, cudaPackages, cudaSupport ? config.cudaSupport }:
stdenv.mkDerivation {
  pname = "video-filters";
  version = "2.5.1";
  src = ./.;
  nativeBuildInputs = [ cmake ] ++ lib.optionals cudaSupport [ cudaPackages.cuda_nvcc ];
  buildInputs = lib.optionals cudaSupport [ cudaPackages.cuda_cudart ];
}
```

## References
- https://github.com/NixOS/nixpkgs/pull/233581
- https://github.com/NixOS/nixpkgs/pull/545542
- https://github.com/NixOS/nixpkgs/pull/549747
- https://github.com/NixOS/nixpkgs/issues/544701
- https://github.com/NixOS/nixpkgs/blob/16ddaa5cf34f17c8f133577ca7bbedb7edeb109c/pkgs/development/cuda-modules/setup-hooks/setup-cuda-hook.sh
"""

from __future__ import annotations

from tree_sitter import Node

from cudalint.lint import edits
from cudalint.lint.context import Context
from cudalint.lint.model import Applicability, Fix, FixAvailability, Severity
from cudalint.lint.rule import Rule
from cudalint.nix.places import DERIVATION_BUILDERS
from cudalint.nix.syntax import STRING_TYPES, attrpath_names, binding_value, descendants, flatten_apply, last_name, string_literal, text, unparen
from cudalint.rules._cuda_compilation import nvcc_sources

VARIABLE = "CUDAToolkit_ROOT"

_PHASES = frozenset({"preConfigure", "configurePhase", "postConfigure", "preBuild", "shellHook", "postPatch", "prePatch"})

RULE = Rule(
    code="CUDA317",
    name="redundant-cuda-toolkit-root",
    severity=Severity.INFO,
    fix=Applicability.UNSAFE,
    availability=FixAvailability.SOMETIMES,
    summary="`CUDAToolkit_ROOT` set by hand where `cuda_nvcc`'s setup hook already sets it",
    node_types=("binding",),
    patterns=(b"CUDAToolkit_ROOT",),
    attrpath_patterns=(b"cmakeFlags", VARIABLE.encode(), *(phase.encode() for phase in _PHASES)),
)

# The hook's first release: PR #233581 (2023-07) is in 23.11.
_HOOK_RELEASE = "23.11"
# CMake 4.3.4 (PR #529977, failing builds reported 2026-07-22 in issue #544701) until PR #545542
# (cited as merged by the review of 2026-08-06): the hook's root lacked nvcc.
_NVCC_MISSING = ("2026-07-01", "2026-08-06")
_MESSAGE = "`cuda_nvcc`'s setup hook already sets `CUDAToolkit_ROOT` for CMake: remove this setting"


@RULE
def check(binding: Node, ctx: Context) -> None:
    names = attrpath_names(binding.child_by_field_name("attrpath"))
    if names not in (["cmakeFlags"], [VARIABLE], ["env", VARIABLE]) and not (len(names) == 1 and names[0] in _PHASES):
        return
    call = ctx.semantic.enclosing_call(binding)
    attrset = binding.parent.parent if binding.parent is not None else None
    if call is None or call.attrset != attrset or call.name not in DERIVATION_BUILDERS or not ctx.place(binding).is_package:
        return
    value = binding_value(binding)
    if value is None or (VARIABLE not in names and VARIABLE not in text(value)) or not _hook_sets_root(ctx):
        return
    sources = {kind for kind, _ in nvcc_sources(attrset, ctx)}
    if sources != {"redist"}:
        return  # the runfile toolkit or a join: no hook, or not only the hook's packages
    if names == ["cmakeFlags"]:
        for element in _root_flags(value):
            if not _names_only_nvcc(element, ctx):
                continue
            fix = Fix("Remove the `CUDAToolkit_ROOT` flag", Applicability.UNSAFE, (edits.delete_element(ctx.source, element),))
            ctx.report(element, _MESSAGE, fixes=[fix])
    elif _names_only_nvcc(value, ctx) and (names[0] not in _PHASES or f"{VARIABLE}=" in text(value)):
        ctx.report(binding.child_by_field_name("attrpath") or binding, _MESSAGE)


def _names_only_nvcc(node: Node, ctx: Context) -> bool:
    """The root names `cuda_nvcc` and no other CUDA package: a root listing libraries the inputs
    may lack (`cuda_cudart`, `libcublas`), or built in a `let` the rule does not follow, does
    more than the hook."""
    packages = {ref.package for n in descendants(node) if (ref := ctx.semantic.cuda_ref(n)) is not None and ref.node == n}
    return packages == {"cuda_nvcc"}


def _hook_sets_root(ctx: Context) -> bool:
    nvcc_missing = ctx.target.includes(_NVCC_MISSING[0]) and not ctx.target.includes(_NVCC_MISSING[1])
    return ctx.target.includes(ctx.reference.release_branch_offs[_HOOK_RELEASE]) and not nvcc_missing


def _root_flags(value: Node) -> list[Node]:
    """List elements that set the root: `"-DCUDAToolkit_ROOT=..."`, `(lib.cmakeFeature "CUDAToolkit_ROOT" ...)`."""
    found = []
    for node in descendants(value):
        if node.type != "list_expression":
            continue
        for element in node.named_children:
            inner = unparen(element)
            if inner is None:
                continue
            if inner.type in STRING_TYPES and text(inner).lstrip("\"'").startswith(f"-D{VARIABLE}"):
                found.append(element)
            elif inner.type == "apply_expression":
                function, arguments = flatten_apply(inner)
                if last_name(function) in ("cmakeFeature", "cmakeOptionType") and any(string_literal(a) == VARIABLE for a in arguments[:2]):
                    found.append(element)
    return found
