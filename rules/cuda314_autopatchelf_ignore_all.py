"""`autoPatchelfIgnoreMissingDeps` that ignores every missing library in a CUDA derivation.

Flags `autoPatchelfIgnoreMissingDeps = true;` (also `"1"`) and a list holding `"*"` in a
derivation (or an `overrideAttrs`) that deals with CUDA: CUDA packages or the driver runpath
hooks among its attributes, or the driver's libraries (`libcuda`, `libnvidia-ml`, ...) named in
its strings or comments. Not flagged: a list of names (`[ "libcuda.so.1" ]`, globs such as
`"libnvidia-*.so.1"`), a value computed from another list (`prevAttrs.autoPatchelfIgnoreMissingDeps
++ [ ... ]`), derivations with nothing to do with CUDA (a proprietary game ignoring its optional
libraries is not this rule's business), and targets older than nixpkgs 22.05, where the list form
did not work (PR #167397 added it on 2022-04-05, PR #168584 fixed it on 2022-04-14): `true` was
the only way there.

Contexts: packages and overrides alike (both run `autoPatchelfHook` in a build). Dev shells and
modules have no `autoPatchelfHook` phase.

## Why
`autoPatchelfHook` fails the build when an ELF file needs a library no input provides: that is
how a package learns it lacks a dependency. CUDA binaries need `libcuda.so.1` (and some
`libnvidia-ml.so.1`, `libnvcuvid.so.1`), which come from the NVIDIA driver at run time
(`/run/opengl-driver/lib`, added to the runpath by `autoAddDriverRunpath`) and can never be
found at build time, so a package has to let those go unresolved. Ignoring *all* missing
libraries for their sake also hides every real one: a missing `libnuma`, a `libcublas` from the
wrong output, a library that appeared in a new release. The build succeeds and the program fails
at run time. The nixpkgs CUDA team asked for the narrow list when the option was first used for
CUDA (PR #167016, 2022-04-04: ignoring everything is "too dangerous"; the list form was added
for this in PR #167397) and again in PR #240498 (2023-08-24: replace the blanket ignore with
`[ "libcuda.so.1" ]` so other missing libraries still fail the build). The hook's docs name
`[ "libcuda.so.1" ... ]` as the example and `[ "*" ]` as the explicit ignore-everything; `true`
is deprecated (PR #195306, 2022-10).

No fix: which other libraries the binaries need, and whether the inputs provide them, is only
known by building. Replace the value by the driver libraries the error lists, add the others to
`buildInputs`.

## Example
```nix
{ stdenv, fetchurl, autoPatchelfHook, cudaPackages }:
stdenv.mkDerivation {
  pname = "demo";
  version = "1.0";
  src = fetchurl { url = "https://example.org/demo-1.0-linux-x86_64.tar.xz"; hash = ""; };
  nativeBuildInputs = [ autoPatchelfHook ];
  buildInputs = [ cudaPackages.cuda_cudart ];
  autoPatchelfIgnoreMissingDeps = true;
}
```

## Use instead
```nix
{ stdenv, fetchurl, autoPatchelfHook, autoAddDriverRunpath, cudaPackages }:
stdenv.mkDerivation {
  pname = "demo";
  version = "1.0";
  src = fetchurl { url = "https://example.org/demo-1.0-linux-x86_64.tar.xz"; hash = ""; };
  nativeBuildInputs = [ autoPatchelfHook autoAddDriverRunpath ];
  buildInputs = [ cudaPackages.cuda_cudart ];
  autoPatchelfIgnoreMissingDeps = [ "libcuda.so.1" ];
}
```

## References
- https://github.com/NixOS/nixpkgs/pull/167016 (review, 2022-04-04)
- https://github.com/NixOS/nixpkgs/pull/167397 (list form, 2022-04-05)
- https://github.com/NixOS/nixpkgs/pull/168584 (list form fixed, 2022-04-14)
- https://github.com/NixOS/nixpkgs/pull/195306 (`[ "*" ]` works, `true` deprecated, 2022-10-10)
- https://github.com/NixOS/nixpkgs/pull/240498 (review, 2023-08-24)
- https://nixos.org/manual/nixpkgs/unstable/#setup-hook-autopatchelfhook
"""

from __future__ import annotations

import re

from tree_sitter import Node

from cudalint.lint.context import Context
from cudalint.lint.model import Applicability, FixAvailability, Severity
from cudalint.lint.rule import Rule
from cudalint.nix.syntax import ATTRSET_TYPES, attrpath_names, binding_value, string_literal, text, unparen

RULE = Rule(
    code="CUDA314",
    name="autopatchelf-ignore-all",
    severity=Severity.WARNING,
    fix=Applicability.NONE,
    availability=FixAvailability.NEVER,
    summary="`autoPatchelfIgnoreMissingDeps` ignores every missing library next to CUDA: list the driver's",
    node_types=("binding",),
    patterns=(b"autoPatchelfIgnoreMissingDeps",),
    attrpath_patterns=(b"autoPatchelfIgnoreMissingDeps",),
)

# The list form works from PR #168584 on.
LIST_FORM_SINCE = "2022-04-14"
# What a derivation that deals with CUDA says somewhere in its attributes or comments.
_CUDA_WORDS = re.compile(rb"cuda|cudnn|nccl|nvidia|libcu\w+|libnv\w+|DriverRunpath|OpenGLRunpath", re.IGNORECASE)
# Driver libraries (from `/run/opengl-driver/lib`) a CUDA binary may need.
_DRIVER_LIBRARIES = re.compile(r"\b(libcuda|libnvidia-ml|libnvcuvid|libnvidia-encode|libnvidia-opticalflow)\.so\.1\b")


@RULE
def check(binding: Node, ctx: Context) -> None:
    if attrpath_names(binding.child_by_field_name("attrpath"))[-1:] != ["autoPatchelfIgnoreMissingDeps"]:
        return
    value = unparen(binding_value(binding))
    if value is None or not _ignores_all(value):
        return
    attrset = binding.parent.parent if binding.parent is not None else None
    if attrset is None or attrset.type not in ATTRSET_TYPES or not _CUDA_WORDS.search(ctx.source.data[attrset.start_byte : attrset.end_byte]):
        return
    place = ctx.place(binding)
    if place.is_shell or place.is_module or not ctx.target.includes(LIST_FORM_SINCE):
        return
    named = sorted(set(_DRIVER_LIBRARIES.findall(text(attrset))) - {"libcuda"})
    wanted = " ".join(f'"{name}.so.1"' for name in ["libcuda", *named])
    ctx.report(value, f"this ignores every missing library: list only the driver's, `[ {wanted} ]`")


def _ignores_all(value: Node) -> bool:
    if text(value) == "true" or string_literal(value) == "1":
        return True
    return value.type == "list_expression" and any(string_literal(item) == "*" for item in value.named_children)
