"""CUDA-only build settings made regardless of the expression's `cudaSupport` switch.

In an expression with a `cudaSupport` switch (the one CUDA304 uses: a formal, a `let` binding
or `inherit (config) cudaSupport;` that the build reads), flags what only a CUDA build needs
when it is set outside a guard on that switch:

- CUDA environment variables as attributes, also in `env`: `CUDAHOSTCXX`, `CUDACXX`,
  `CUDA_HOME`, `CUDA_PATH`, `CUDA_TOOLKIT_ROOT_DIR`, `CUDAToolkit_ROOT`, `CUDAARCHS`,
  `TORCH_CUDA_ARCH_LIST`, `NVCC_*` flags, ...;
- entries of `cmakeFlags`, `mesonFlags`, `configureFlags`, `makeFlags`, `buildFlags`, ... that name
  a CUDA setting (`-DCMAKE_CUDA_ARCHITECTURES=...`, `(lib.cmakeFeature "CUDAToolkit_ROOT" ...)`,
  `--with-cuda=...`, `flags.cmakeCudaArchitecturesString`) or reference a CUDA package
  (`"-DCUDNN_ROOT=${cudaPackages.cudnn}"`);
- `export CUDA_HOME=...` (and the other variables) in a phase's shell text;
- `cudaPackages.backendStdenv.cc` anywhere in the build (CUDA's host compiler).

Guards are those of CUDA304: `lib.optionals cudaSupport [ ... ]`, `lib.optionalAttrs cudaSupport
{ ... }`, `lib.optionalString cudaSupport ''...''`, `if cudaSupport then ... else ...`, conditions
mentioning the switch or a variable derived from it, the body of `assert cudaSupport;`. Not
flagged: expressions without a switch, and CUDA-only packages, which set all of this
unconditionally (as CUDA304 reads them: `meta.broken = !cudaSupport;`, `badPlatforms` or
`platforms` that leave no platform without CUDA, an attribute that throws without CUDA), entries whose value itself follows the switch (`(lib.cmakeBool "USE_CUDA"
cudaSupport)`, `"-DWITH_CUDA=${if cudaSupport then "ON" else "OFF"}"`), settings that do not
name CUDA, and `meta`/`passthru`. CUDA packages in input lists are CUDA304's.

Contexts: packages, overrides and dev shells with a switch alike (the switch makes the same
promise everywhere).

## Why
A `cudaSupport` switch promises that with it off the build neither uses nor depends on CUDA
(nixpkgs' CUDA section: an expression with optional CUDA takes a `cudaSupport` argument). A CUDA
setting outside the guard breaks the promise in a less visible way than an input: `CUDA_HOME =
cudaPackages.cudatoolkit` or `"-DCUDNN_ROOT=${cudnn}"` makes the CPU variant evaluate and
depend on unfree CUDA packages (an `allowUnfree` error for users who never asked for CUDA, a
toolkit in the build closure); `CUDAHOSTCXX = "${backendStdenv.cc}/bin/c++"` drags CUDA's pinned
GCC into every build; `-DCMAKE_CUDA_ARCHITECTURES` and friends make CMake probe for CUDA or
change the derivation of the CPU variant for nothing. The CUDA team tracked down exactly such
packages, which pulled CUDA packages in regardless of `cudaSupport` (PR #274319, 2024-01).

The fix, for a list entry, moves it into `lib.optionals cudaSupport [ ... ]` appended to its
list (joining one already there), as CUDA304 does for inputs; the CUDA build gets the same flags
(the entry moves to the list's end, which matters only if a later flag set the same variable).
It is unsafe: the non-CUDA build changes, which is the point. Attributes and shell text get no
fix: turning `CUDAHOSTCXX = ...;` into `lib.optionalAttrs` or `lib.optionalString` changes the
attrset's shape or leaves an empty variable behind, a choice for the author.

## Example
```nix
{ lib, stdenv, config, cmake, cudaPackages, cudaSupport ? config.cudaSupport }:
stdenv.mkDerivation {
  pname = "demo";
  version = "1.0";
  nativeBuildInputs = [ cmake ] ++ lib.optionals cudaSupport [ cudaPackages.cuda_nvcc ];
  cmakeFlags = [
    (lib.cmakeBool "DEMO_CUDA" cudaSupport)
    (lib.cmakeFeature "CMAKE_CUDA_ARCHITECTURES" cudaPackages.flags.cmakeCudaArchitecturesString)
  ];
}
```

## Use instead
```nix
{ lib, stdenv, config, cmake, cudaPackages, cudaSupport ? config.cudaSupport }:
stdenv.mkDerivation {
  pname = "demo";
  version = "1.0";
  nativeBuildInputs = [ cmake ] ++ lib.optionals cudaSupport [ cudaPackages.cuda_nvcc ];
  cmakeFlags = [
    (lib.cmakeBool "DEMO_CUDA" cudaSupport)
  ]
  ++ lib.optionals cudaSupport [
    (lib.cmakeFeature "CMAKE_CUDA_ARCHITECTURES" cudaPackages.flags.cmakeCudaArchitecturesString)
  ];
}
```

## References
- https://nixos.org/manual/nixpkgs/unstable/#cuda (`doc/languages-frameworks/cuda.section.md`)
- https://github.com/NixOS/nixpkgs/pull/274319 (2024-01)
- https://github.com/NixOS/nixpkgs/pull/224068
"""

from __future__ import annotations

import re

from tree_sitter import Node

from cudalint.lint.context import Context
from cudalint.lint.model import Applicability, FixAvailability, Severity
from cudalint.lint.rule import Rule
from cudalint.nix.syntax import ATTRSET_TYPES, STRING_TYPES, attrpath_names, binding_value, descendants, text
from cudalint.rules._cuda_switch import file_switch, guard_fix, in_attribute, is_guarded, mentions_switch

RULE = Rule(
    code="CUDA315",
    name="unguarded-cuda-setting",
    severity=Severity.WARNING,
    fix=Applicability.UNSAFE,
    availability=FixAvailability.SOMETIMES,
    summary="CUDA-only build setting outside the expression's `cudaSupport` guard",
    node_types=("binding", "select_expression"),
    patterns=(b"cudaSupport",),
)

# Environment variables only a CUDA build reads.
CUDA_VARIABLES = frozenset(
    {
        "CUDAHOSTCXX",
        "CUDACXX",
        "CUDA_HOME",
        "CUDA_PATH",
        "CUDA_ROOT",
        "CUDA_TOOLKIT_ROOT_DIR",
        "CUDAToolkit_ROOT",
        "CUDA_NVCC_EXECUTABLE",
        "CUDA_NVCC_FLAGS",
        "CUDAARCHS",
        "CUDA_ARCH_BIN",
        "CUDA_COMPUTE_CAP",
        "TORCH_CUDA_ARCH_LIST",
        "NVCC_FLAGS",
        "NVCC_PREPEND_FLAGS",
        "NVCC_APPEND_FLAGS",
        "NVCC_CCBIN",
    }
)
FLAG_LISTS = frozenset({"cmakeFlags", "mesonFlags", "configureFlags", "makeFlags", "buildFlags", "setupPyBuildFlags", "bazelFlags", "ninjaFlags"})
# A flag that names a CUDA setting.
_CUDA_FLAG = re.compile(
    r"CMAKE_CUDA_\w+|CUDA_TOOLKIT_ROOT_DIR|CUDAToolkit_ROOT|CUDA_HOME|CUDA_PATH|CUDAHOSTCXX|CUDACXX|CUDAARCHS|CUDA_ARCH\w*|"
    r"TORCH_CUDA_ARCH_LIST|CUDA_NVCC_\w+|--with-cuda=|cmakeCudaArchitecturesString|gencodeString|backendStdenv\.cc"
)
_EXPORT = re.compile(r"\bexport\s+(" + "|".join(sorted(CUDA_VARIABLES)) + r")=")
_HOST_COMPILER = re.compile(r"\bbackendStdenv\.cc\b")
_NOT_BUILD = frozenset({"meta", "passthru"})


@RULE
def check(node: Node, ctx: Context) -> None:
    if node.type == "select_expression":
        _check_host_compiler(node, ctx)
        return
    names = attrpath_names(node.child_by_field_name("attrpath"))
    value = binding_value(node)
    if not names or value is None:
        return
    name = names[-1]
    if name not in CUDA_VARIABLES and name not in FLAG_LISTS and b"export" not in ctx.source.data[value.start_byte : value.end_byte]:
        return
    if _outside_build(node) or file_switch(node, ctx) is None:
        return
    if name in CUDA_VARIABLES:
        if not _switched(node, ctx):
            ctx.report(node.child_by_field_name("attrpath"), f"`{name}` is set even when `cudaSupport` is false: set it under `lib.optionalAttrs cudaSupport {{ ... }}`")
        return
    if name in FLAG_LISTS:
        _check_flags(name, value, ctx)
    for string in descendants(value):
        if string.type in STRING_TYPES and _nearest_binding(string) == node:
            _check_exports(string, ctx)


def _check_flags(name: str, value: Node, ctx: Context) -> None:
    semantic = ctx.semantic
    for element in descendants(value):
        if element.parent is None or element.parent.type != "list_expression" or not element.is_named:
            continue
        site = semantic.input_site(element)
        if site is None or site.attr != name or site.element != element:
            continue
        if not (_CUDA_FLAG.search(text(element)) or _references_cuda(element, ctx)) or _switched(element, ctx):
            continue
        shown = " ".join(text(element).split())
        shown = shown if len(shown) <= 60 else shown[:57] + "..."
        ctx.report(
            element,
            f"`{shown}` is in `{name}` even when `cudaSupport` is false: put it under `lib.optionals cudaSupport [ ... ]`",
            fixes=[guard_fix(element, site, ctx)],
        )


def _check_exports(string: Node, ctx: Context) -> None:
    for fragment in string.named_children:
        if fragment.type != "string_fragment":
            continue
        for found in _EXPORT.finditer(text(fragment)):
            if is_guarded(fragment, ctx):
                return
            start = fragment.start_byte + len(text(fragment)[: found.start()].encode())
            end = fragment.start_byte + len(text(fragment)[: found.end()].encode())
            ctx.report((start, end), f"`export {found.group(1)}` runs even when `cudaSupport` is false: wrap it in `lib.optionalString cudaSupport ''...''`")


def _check_host_compiler(select: Node, ctx: Context) -> None:
    if not _HOST_COMPILER.search(text(select)):
        return
    holder = _nearest_binding(select)
    if holder is None or _outside_build(holder):
        return
    names = attrpath_names(holder.child_by_field_name("attrpath"))
    if names and (names[-1] in CUDA_VARIABLES or names[-1] in FLAG_LISTS):
        return  # reported with its attribute or flag
    if file_switch(select, ctx) is None or _switched(select, ctx):
        return
    ctx.report(select, "CUDA's host compiler is used even when `cudaSupport` is false: choose it under the switch (`if cudaSupport then ... else ...`)")


def _nearest_binding(node: Node) -> Node | None:
    holder = node.parent
    while holder is not None and holder.type != "binding":
        holder = holder.parent
    return holder


def _switched(node: Node, ctx: Context) -> bool:
    """Under a guard on the switch, or following it in its own value."""
    return is_guarded(node, ctx) or mentions_switch(node, ctx)


def _references_cuda(element: Node, ctx: Context) -> bool:
    return any(n.type in {"variable_expression", "select_expression"} and ctx.semantic.cuda_ref(n) is not None for n in descendants(element))


def _outside_build(binding: Node) -> bool:
    """A `let` binding, or in `meta` or `passthru`, which the build never reads."""
    if binding.parent is None or binding.parent.parent is None or binding.parent.parent.type not in ATTRSET_TYPES:
        return True
    return in_attribute(binding, _NOT_BUILD)
