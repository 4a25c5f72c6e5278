"""A CUDA package that some CUDA release the file is judged against does not have, used without a
guard on the release.

Flagged: a reference to a package of a CUDA package set (`cudaPackages.cuda_crt`,
`(lib.getOutput "include" cuda_crt)` under `with cudaPackages;` or after
`inherit (cudaPackages) cuda_crt;`, `cudaPackages_12_8.libnvjitlink`) that is missing from one of
the releases it can be evaluated in. Those releases are the judged ones (the configured `cuda`
releases, else every release the target nixpkgs offers; only the target's default release for
`pkgs.cudaPackages.x`, `final.cudaPackages.x`: the instance's own set, which no caller
replaces), narrowed by the set's own name
(`cudaPackages_12_8` is 12.8, `cudaPackages_13` the 13.x releases) and by the conditions the
reference stands under: `lib.optionals (cudaAtLeast "13.0")`, `if cudaOlder "12.0" then ... else`,
`lib.versionAtLeast cudaPackages.cudaMajorMinorVersion "13.0"`, `cudaMajorVersion == "13"`,
`cudaPackages ? cuda_crt`, `cuda_crt != null`, `cuda_crt.meta.available`, combined with `&&`, `||`
and `!`, also through a let-bound condition (`hasCrt = cudaAtLeast "13.0";`). A package held by a
`let` binding (`crt = cudaPackages.cuda_crt;`, `extra = [ cudaPackages.cuda_crt ];`) is judged
under the conditions of the places that use the binding. Which release has which package comes
from the reference set (NVIDIA's manifests for 11.4 to 13.0): `cuda_crt`, `libnvvm`,
`cuda_culibos` exist from 13.0, `libnvjitlink` and `cuda_opencl` from 12.0, `libnvfatbin` from
12.4; `cuda_nvprof`, `cuda_nvvp` and `cuda_demo_suite` end with 12.9, `cuda_memcheck` and
`nsight_nvtx` with 11.8.

Not flagged: packages every judged release has (`cuda_cudart`, `libcublas`, `cuda_cccl`), scope
members built from source or from products of their own (`nccl`, `cudnn`, `cutlass`), selections
with a default (`cudaPackages.cuda_crt or null`), the fallback of one
(`cudaPackages.cuda_profiler_api or cudaPackages.cuda_nvprof`: evaluated only in the releases that
lack the first, judged there), a package formal with a default (`cuda_crt ? null`), a package
tested rather than used (`cuda_compat != null`, `cuda_compat.meta.available`, also `or false`
and through a `let` name: `enable = cuda_compat.meta.available or false;` guards
`lib.optionalString enable "${cuda_compat}/compat"`), releases in which the package marks itself
broken (`meta.broken = !(lib.versionAtLeast cudaVersion "12.1")`: refused there before its inputs
are evaluated), the files of the CUDA package set itself on split-redist targets (a file taking
`buildRedist`, `backendStdenv`, `cudaAtLeast`, ... as arguments: the set defines every package in
every release, unavailable where the release lacks it, so the siblings it takes always evaluate,
and nixpkgs builds some for releases whose NVIDIA manifests lack them, `cuda_crt` from
`cuda_nvcc`'s archive for CUDA 12), and names the reference set does not know (CUDA003). Contexts: the same in
packages, overrides, dev shells and modules, since an attribute a release lacks fails evaluation
anywhere. Error when a release the target builds by default (or a configured one) lacks the
package, warning when only another release that nixpkgs offers does (a warning that suggests `--nixpkgs` where the file's pin is a commit nothing dates).

## Why
A CUDA package set has the packages of its CUDA release. When NVIDIA splits a component out
(the CRT headers became `cuda_crt` in CUDA 13.0; before, they ship with `cuda_nvcc`), adds one
(`libnvjitlink` in 12.0) or drops one (`cuda_nvprof` after 12.9), a package that names it
without a condition evaluates with one release and fails with the others: the missing
attribute, or (in the split-redist era, where every release's scope defines every package) an
unavailable derivation, breaks evaluation for everyone who builds with that release, including
a user who only overrides `cudaPackages`. nixpkgs guards such inputs on the release, as its own
`cuda_cudart` does for `cuda_crt` (`lib.optionals (cudaAtLeast "13.0")`). There is no fix: what
the older releases need instead (`cuda_nvcc`'s headers, nothing at all) is the author's call.

## Example
```nix
{ buildPythonPackage, torch }:
let
  inherit (torch) cudaPackages;
in
buildPythonPackage {
  pname = "expert-kernels";
  version = "1.0";
  src = ./.;
  nativeBuildInputs = [ cudaPackages.cuda_nvcc ];
  buildInputs = [
    cudaPackages.cuda_cudart
    cudaPackages.cuda_crt
  ];
}
```

## Use instead
```nix
{ lib, buildPythonPackage, torch }:
let
  inherit (torch) cudaPackages;
in
buildPythonPackage {
  pname = "expert-kernels";
  version = "1.0";
  src = ./.;
  nativeBuildInputs = [ cudaPackages.cuda_nvcc ];
  buildInputs = [
    cudaPackages.cuda_cudart
  ]
  ++ lib.optionals (cudaPackages.cudaAtLeast "13.0") [ cudaPackages.cuda_crt ];
}
```

## References
- https://github.com/NixOS/nixpkgs/pull/512796
- https://github.com/NixOS/nixpkgs/blob/024ef1dc3076208119baaee8a2babec574573291/pkgs/development/cuda-modules/packages/cuda_cudart.nix
- https://nixos.org/manual/nixpkgs/unstable/#cuda
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from tree_sitter import Node

from cudalint.knowledge import catalog
from cudalint.lint.context import Context
from cudalint.lint.model import Applicability, FixAvailability, Severity
from cudalint.lint.rule import Rule
from cudalint.nix.semantic import CudaRef
from cudalint.nix.syntax import attrpath_names, binding_value, flatten_apply, last_name, string_literal, text, unparen

RULE = Rule(
    code="CUDA316",
    name="unguarded-release-package",
    severity=Severity.ERROR,
    fix=Applicability.NONE,
    availability=FixAvailability.NEVER,
    summary="CUDA package that some judged CUDA release lacks, used without a guard on the release",
    node_types=("variable_expression",),
    cuda_references_only=True,
    patterns=catalog.CUDA_REFERENCE_PATTERNS,
    removals=True,
)

_MAX_DEPTH = 6
# `cudaPackages_12_8`, `cudaPackages_13`: the releases a versioned set stands for
_VERSIONED_SET = re.compile(r"^cudaPackages_(\d+)(?:_(\d+))?$")
# names whose value is the release as `major.minor` (or longer), and as `major`
_RELEASE_NAMES = frozenset({"cudaMajorMinorVersion", "cudaVersion", "cudaMajorMinorPatchVersion"})
_MAJOR_NAMES = frozenset({"cudaMajorVersion"})
_COMPARISONS = {"cudaAtLeast": True, "cudaOlder": False, "versionAtLeast": True, "versionOlder": False}
# Arguments only a file of the CUDA package set itself takes (its scope's own members).
_SET_OWN_ARGUMENTS = frozenset({"buildRedist", "backendStdenv", "cudaAtLeast", "cudaOlder", "cudaMajorMinorVersion", "cudaMajorVersion", "cudaNamePrefix", "manifests", "cudaLib"})


@dataclass(frozen=True)
class _Truth:
    """The releases in which a condition may be true, and those in which it may be false."""

    true: frozenset[str]
    false: frozenset[str]

    def negated(self) -> _Truth:
        return _Truth(self.false, self.true)


@RULE
def check(node: Node, ctx: Context) -> None:
    semantic = ctx.semantic
    root = semantic.reference_root(node)
    if _first_variable(root) != node:
        return  # one finding per reference, from its leftmost name
    ref = semantic.cuda_ref(root)
    if ref is None or ref.via == "let" or ref.output == "meta" or not ctx.reference.is_known(ref.package):
        return  # `x.meta.available` asks whether the release has it
    if ref.via == "formal" and (_formal_has_default(semantic, ref) or _in_own_package_set(ctx)):
        return
    if _tested_for_null(root):
        return  # `cuda_compat != null` asks whether the release has it
    every = frozenset(ctx.reference.releases)
    have = frozenset(ctx.reference.available_in(ref.package))
    if have >= every:
        return
    judged = frozenset(ctx.reference.judged_releases(ctx.target)) & _set_releases(ref.set_name, every) & _not_broken_in(ctx, every)
    if _through_instance(root, ref):
        judged &= frozenset(ctx.target.releases)
    evaluated = judged & _reached(ctx, root, every, 0)
    missing = evaluated - have
    if not missing:
        return
    default = frozenset(ctx.target.releases)
    severity = Severity.ERROR if missing & default or not judged - missing else Severity.WARNING
    ctx.report(root, _message(ctx, ref, missing, have, evaluated), severity=severity)


def _first_variable(root: Node) -> Node | None:
    """The variable a reference starts with (`cudaPackages` of `cudaPackages.x`, `x` of
    `lib.getDev x`)."""
    node = unparen(root)
    while node is not None:
        if node.type == "variable_expression":
            return node
        if node.type == "select_expression":
            node = unparen(node.child_by_field_name("expression"))
        elif node.type == "apply_expression":
            arguments = flatten_apply(node)[1]
            node = unparen(arguments[-1]) if arguments else None
        else:
            return None
    return None


def _formal_has_default(semantic, ref: CudaRef) -> bool:
    binding = semantic.resolve_name(ref.package, ref.node)
    return binding.node is not None and binding.node.type == "formal" and binding.node.child_by_field_name("default") is not None


def _through_instance(root: Node, ref: CudaRef) -> bool:
    """`pkgs.cudaPackages.x` (`final.`, `prev.`): the set of the nixpkgs instance at hand, which
    has the target's release (the configured one, else its default), not any release a caller
    could pass as a `cudaPackages` argument."""
    first = _first_variable(root)
    return ref.via == "select" and ref.set_name == "cudaPackages" and first is not None and text(first) in catalog.TOP_LEVEL_VARIABLES


def _in_own_package_set(ctx: Context) -> bool:
    """A file of the CUDA package set itself (it takes the set's own members as arguments:
    `buildRedist`, `backendStdenv`, `cudaAtLeast`, ...) on a split-redist target: there the set
    defines every package in every release (unavailable where the release lacks it), so a
    sibling taken as an argument always evaluates, and nixpkgs builds some packages for releases
    whose NVIDIA manifests lack them (`cuda_crt` from `cuda_nvcc`'s archive for CUDA 12)."""
    memo = ctx.semantic.memo(__name__)
    if "own set" not in memo:
        function = ctx.semantic.top_function()
        formals = function.child_by_field_name("formals") if function is not None else None
        names = {text(f.child_by_field_name("name")) for f in formals.children_by_field_name("formal")} if formals is not None else set()
        memo["own set"] = ctx.target.era.id == "split-redist" and bool(names & _SET_OWN_ARGUMENTS)
    return memo["own set"]


def _tested_for_null(root: Node) -> bool:
    """`root` is an operand of `== null` / `!= null`: a test of the package, not a use."""
    node = root
    while node.parent is not None and node.parent.type == "parenthesized_expression":
        node = node.parent
    parent = node.parent
    if parent is None or parent.type != "binary_expression" or text(parent.child_by_field_name("operator")) not in {"==", "!="}:
        return False
    other = parent.child_by_field_name("right") if parent.child_by_field_name("left") == node else parent.child_by_field_name("left")
    return text(unparen(other)) == "null"


def _not_broken_in(ctx: Context, every: frozenset[str]) -> frozenset[str]:
    """The releases in which the package's `meta.broken` may be false: a package that marks
    itself broken on other releases (`broken = !(lib.versionAtLeast cudaVersion "12.1")`) is
    refused there before anything it lists is evaluated."""
    memo = ctx.semantic.memo(__name__)
    if "not broken" not in memo:
        allowed = every
        for binding in ctx.semantic.nodes_of_type("binding"):
            names = attrpath_names(binding.child_by_field_name("attrpath"))
            value = binding_value(binding)
            if names[-1:] == ["broken"] and value is not None and (names[:1] == ["meta"] or "meta" in ctx.semantic.binding_path(binding)):
                allowed &= _truth(ctx, value, every, 0).false
        memo["not broken"] = allowed
    return memo["not broken"]


def _set_releases(set_name: str | None, every: frozenset[str]) -> frozenset[str]:
    match = _VERSIONED_SET.match(set_name or "")
    if match is None:
        return every
    major, minor = match.group(1), match.group(2)
    return frozenset(r for r in every if r == f"{major}.{minor}" or (minor is None and r.split(".")[0] == major))


def _reached(ctx: Context, node: Node, every: frozenset[str], depth: int) -> frozenset[str]:
    """The releases in which `node` may be evaluated, by the conditions it stands under; for a
    value held by a `let` binding, the union over the binding's uses."""
    allowed = every
    for guard in ctx.semantic.guards(node):
        truth = _truth(ctx, guard.condition, every, 0)
        allowed &= truth.true if guard.positive else truth.false
    allowed &= _fallback_releases(ctx, node, every)
    binding = ctx.semantic.let_binding_holding(node)
    if binding is None or depth >= _MAX_DEPTH:
        return allowed
    name = attrpath_names(binding.child_by_field_name("attrpath"))[0]
    uses = ctx.semantic.uses(name, binding) if name is not None else []
    if not uses:
        return allowed
    through_uses: frozenset[str] = frozenset()
    for use in uses:
        through_uses |= _reached(ctx, ctx.semantic.reference_root(use), every, depth + 1)
    return allowed & through_uses


def _fallback_releases(ctx: Context, node: Node, every: frozenset[str]) -> frozenset[str]:
    """For the fallback of `cudaPackages.cuda_profiler_api or cudaPackages.cuda_nvprof`, the
    releases that lack the package it stands in for (it is evaluated only there)."""
    allowed = every
    child, parent = node, node.parent
    while parent is not None:
        if parent.type == "select_expression" and parent.child_by_field_name("default") == child:
            names = attrpath_names(parent.child_by_field_name("attrpath"))
            base = parent.child_by_field_name("expression")
            if len(names) == 1 and names[0] is not None and ctx.semantic.package_set_name(base) is not None:
                allowed &= _availability(ctx, names[0], every).false
        child, parent = parent, parent.parent
    return allowed


def _truth(ctx: Context, condition: Node | None, every: frozenset[str], depth: int) -> _Truth:
    """In which releases `condition` may be true or false (both everywhere when it does not
    depend on the release as far as the file says)."""
    unknown = _Truth(every, every)
    node = unparen(condition)
    if node is None or depth > _MAX_DEPTH:
        return unknown
    kind = node.type
    if kind == "unary_expression" and text(node).lstrip().startswith("!"):
        return _truth(ctx, node.child_by_field_name("argument"), every, depth + 1).negated()
    if kind == "binary_expression":
        operator = text(node.child_by_field_name("operator"))
        left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
        if operator in {"&&", "||"}:
            a, b = _truth(ctx, left, every, depth + 1), _truth(ctx, right, every, depth + 1)
            if operator == "&&":
                return _Truth(a.true & b.true, a.false | b.false)
            return _Truth(a.true | b.true, a.false & b.false)
        if operator in {"==", "!="}:
            found = _equality(ctx, left, right, every)
            if found is None:
                return unknown
            return found if operator == "==" else found.negated()
        return unknown
    if kind == "has_attr_expression":
        names = attrpath_names(node.child_by_field_name("attrpath"))
        base = node.child_by_field_name("expression")
        if len(names) == 1 and names[0] is not None and ctx.semantic.package_set_name(base) is not None:
            return _availability(ctx, names[0], every)
        return unknown
    default = node.child_by_field_name("default") if kind == "select_expression" else None
    if kind == "select_expression" and (default is None or text(default) == "false"):  # `x.meta.available or false`
        package = _package_before_meta(ctx, node)
        return _availability(ctx, package, every) if package is not None else unknown
    if kind == "apply_expression":
        return _comparison(ctx, node, every)
    if kind == "variable_expression":
        binding = ctx.semantic.resolve(node)
        if binding.kind in {"let", "rec"} and binding.value is not None:
            return _truth(ctx, binding.value, every, depth + 1)
    return unknown


def _package_before_meta(ctx: Context, select: Node) -> str | None:
    """The package of `cudaPackages.cuda_crt.meta.available` or `cuda_crt.meta.available`."""
    names = attrpath_names(select.child_by_field_name("attrpath"))
    if names[-2:] != ["meta", "available"]:
        return None
    base = unparen(select.child_by_field_name("expression"))
    if len(names) == 2:
        ref = ctx.semantic.cuda_ref(base)
        return ref.package if ref is not None and ref.output is None else None
    if len(names) == 3 and ctx.semantic.package_set_name(base) is not None:
        return names[0]
    return None


def _availability(ctx: Context, package: str, every: frozenset[str]) -> _Truth:
    if not ctx.reference.is_known(package):
        return _Truth(every, every)
    have = frozenset(ctx.reference.available_in(package)) & every
    return _Truth(have, every - have)


def _comparison(ctx: Context, call: Node, every: frozenset[str]) -> _Truth:
    """`cudaAtLeast "13.0"`, `lib.versionOlder cudaPackages.cudaMajorMinorVersion "12.0"`."""
    function, arguments = flatten_apply(call)
    name = last_name(function)
    if name not in _COMPARISONS:
        return _Truth(every, every)
    at_least = _COMPARISONS[name]
    if name.startswith("cuda"):
        if len(arguments) != 1:
            return _Truth(every, every)
        bound, major_only = string_literal(arguments[0]), False
    else:
        if len(arguments) != 2:
            return _Truth(every, every)
        operand, bound = _release_operand(ctx, arguments[0]), string_literal(arguments[1])
        if operand is None:
            return _Truth(every, every)
        major_only = operand == "major"
    limit = _version(bound)
    if limit is None:
        return _Truth(every, every)
    holds = frozenset(r for r in every if (_release_value(r, major_only) >= limit) == at_least)
    return _Truth(holds, every - holds)


def _equality(ctx: Context, left: Node | None, right: Node | None, every: frozenset[str]) -> _Truth | None:
    """`cudaMajorVersion == "13"`, `cudaPackages.cudaMajorMinorVersion == "12.8"`, `x != null`."""
    for value, other in ((left, right), (right, left)):
        inner = unparen(value)
        if inner is None:
            continue
        literal = string_literal(unparen(other))
        operand = _release_operand(ctx, inner)
        if literal is not None and operand is not None and _version(literal) is not None:
            major_only = operand == "major"
            holds = frozenset(r for r in every if _release_value(r, major_only) == _version(literal))
            return _Truth(holds, every - holds)
        if text(unparen(other)) == "null" and (ref := ctx.semantic.cuda_ref(inner)) is not None and ref.output is None:
            return _availability(ctx, ref.package, every).negated()
    return None


def _release_operand(ctx: Context, node: Node | None, depth: int = 0) -> str | None:
    """ "release" for an expression holding the CUDA release (`cudaPackages.cudaMajorMinorVersion`,
    `cudaVersion`, a let-bound name for either), "major" for `cudaMajorVersion`, else None."""
    node = unparen(node)
    name = last_name(node)
    if name in _RELEASE_NAMES:
        return "release"
    if name in _MAJOR_NAMES:
        return "major"
    if node is not None and node.type == "variable_expression" and depth < _MAX_DEPTH:
        binding = ctx.semantic.resolve(node)
        if binding.kind in {"let", "rec"}:
            return _release_operand(ctx, binding.value, depth + 1)
    return None


def _version(value: str | None) -> tuple[int, ...] | None:
    if value is None or not re.fullmatch(r"\d+(?:\.\d+)*", value):
        return None
    return tuple(int(part) for part in value.split("."))


def _release_value(release: str, major_only: bool) -> tuple[int, ...]:
    parts = tuple(int(part) for part in release.split("."))
    return parts[:1] if major_only else parts


def _message(ctx: Context, ref: CudaRef, missing: frozenset[str], have: frozenset[str], evaluated: frozenset[str]) -> str:
    order = list(ctx.reference.releases)
    lacking = ", ".join(sorted(missing, key=order.index))
    present = sorted(have, key=order.index)
    span = present[0] if len(present) == 1 else f"{present[0]} to {present[-1]}"
    if _VERSIONED_SET.match(ref.set_name or ""):
        return f"`{ref.set_name}` has no `{ref.package}` (it exists in CUDA {span}): take another release or drop it"
    if not evaluated & have:
        return f"`{ref.package}` exists only in CUDA {span}, not in {lacking}: drop it or guard it on the release"
    scope = f"{ref.set_name}." if ref.set_name is not None else ""
    if order[order.index(present[0]) :] == present:
        guard = f'{scope}cudaAtLeast "{present[0]}"'
    elif order[: order.index(present[-1]) + 1] == present:
        guard = f'{scope}cudaOlder "{order[order.index(present[-1]) + 1]}"'
    else:
        guard = f"{ref.set_name or 'cudaPackages'} ? {ref.package}"
    return f"`{ref.package}` does not exist in CUDA {lacking}: add it under `lib.optionals ({guard})`"
