"""A name taken from a CUDA package set that is a package in no CUDA release cudalint knows: a typo
such as `cudaPackages.libcublass` or `cuda_nvccc`.

Flagged: `cudaPackages.X`, `pkgs.cudaPackages_12.X`, `cudaPackagesGoogle.X`, `inherit (cudaPackages) X;`,
`pkgs.cuda.cudatoolkit` (nixpkgs has no set named `cuda`: the fix writes `cudaPackages`), and a bare `X`
under `with cudaPackages;` (only when every `with` around it is a CUDA package set or `lib`, and
`X` looks like an NVIDIA package: `cuda_*`, `libcu*`, `libnv*`, `nsight*`, `cudnn*`, ...). A
selected or inherited name is flagged when it looks like an NVIDIA package or is one letter away
from a known name; other unknown names may be the user's own additions to the set (through
`overrideScope`) and are left alone, as is any name the file itself defines. Not flagged: the
scope's functions and attributes (`flags`, `backendStdenv`, `cudaAtLeast`, `callPackage`,
`overrideScope`, ...), deprecated names (CUDA005 and CUDA104 handle them), per-version packages
(`cudnn_8_9`, `tensorrt_10_x`: a known name with a version suffix), attributes of a package
(`cudaPackages.libcublas.dev`), selections with a default (`cudaPackages.x or null`), and names
under `with` that something else binds.

## Why
A misspelt attribute of the CUDA package set fails evaluation with "attribute 'libcublass'
missing", often only on the machine or configuration that enables CUDA, long after the change was
written. The reference set knows every package of the CUDA releases nixpkgs offered (11.4 to
13.0), so a name in none of them is a mistake; the message names the closest packages.

The fix writes the intended name when exactly one known name is within one edit (a letter added,
dropped, changed or two letters swapped; case and `-`/`_` ignored) and that package exists in the
target CUDA release. It is safe: the misspelt expression could not evaluate, so nothing that
evaluated changes meaning.

## Example
```nix
{ stdenv, cudaPackages }:
stdenv.mkDerivation {
  pname = "gemm";
  version = "1.0";
  nativeBuildInputs = [ cudaPackages.cuda_nvcc ];
  buildInputs = [ cudaPackages.libcublass ];
}
```

## Use instead
```nix
{ stdenv, cudaPackages }:
stdenv.mkDerivation {
  pname = "gemm";
  version = "1.0";
  nativeBuildInputs = [ cudaPackages.cuda_nvcc ];
  buildInputs = [ cudaPackages.libcublas ];
}
```

## References
- https://nixos.org/manual/nixpkgs/unstable/#cuda
- https://github.com/NixOS/nixpkgs/tree/master/pkgs/development/cuda-modules
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import TYPE_CHECKING

from tree_sitter import Node

from cudalint.knowledge import catalog
from cudalint.lint import edits
from cudalint.lint.context import Context
from cudalint.lint.model import Applicability, Fix, FixAvailability, Severity
from cudalint.lint.rule import Rule
from cudalint.nix.syntax import attrpath_names, dotted_name, identifier_name, text
from cudalint.rules._name_sites import NAME_SITES, dispatch, inherited_from_package_set

if TYPE_CHECKING:
    from cudalint.knowledge.reference import ReferenceSet  # loaded on first use, not when the rules load

RULE = Rule(
    code="CUDA003",
    name="unknown-cuda-package",
    severity=Severity.ERROR,
    fix=Applicability.SAFE,
    availability=FixAvailability.SOMETIMES,
    summary="Name in no release of the CUDA package set (a typo such as `libcublass`)",
    node_types=NAME_SITES,
    patterns=(b"cudaPackages", b".cuda."),
)

# NVIDIA's package names (lower case, `_`/`-`): what a bare name under `with cudaPackages;` must
# look like to be judged. camelCase members (`nvccHook`, `cudaNamePrefix`) are the scope's own.
NVIDIA_NAME = re.compile(
    r"^(cuda[_-]|libcu|libnv|libnpp|nsight|cudnn|cutensor|cusparse|cublas|cufft|curand|cusolver|"
    r"nccl|nvjpeg|nvtx|nvrtc|nvcc|nvml|nvpl|nvjitlink|tensorrt|cudss|cutlass|cuquantum|nvcomp)[a-z0-9_-]*$"
)
# `cudnn_8_9`, `tensorrt_10_x`: nixpkgs keeps per-version attributes of some packages.
VERSION_SUFFIX = re.compile(r"^(?P<base>.+?)(_\d+)+(_x)?$")
MAX_SUGGESTIONS = 3


@RULE
def check(node: Node, ctx: Context) -> None:
    dispatch(node, ctx, select=_check_select, variable=_check_with, inherit=_check_inherit)


# ----- what counts as unknown -----------------------------------------------------------------


def _is_accounted_for(ctx: Context, name: str) -> bool:
    """Known packages, per-version packages, scope attributes, deprecated names (other rules)."""
    reference = ctx.reference
    if reference.is_known(name) or name in _scope_names(reference) or reference.deprecation(name) is not None:
        return True
    if catalog.is_package_set_name(name) or catalog.is_runfile_toolkit(name) or name in catalog.HOOKS:
        return True
    versioned = VERSION_SUFFIX.match(name)
    return versioned is not None and reference.is_known(versioned.group("base"))


@lru_cache(maxsize=1)
def _scope_names(reference: ReferenceSet) -> frozenset[str]:
    return catalog.scope_attributes() | catalog.OVERRIDE_FUNCTIONS


def _normal(name: str) -> str:
    return name.lower().replace("-", "_")


def _distance(a: str, b: str, limit: int | None = None) -> int:
    """Edits (insert, delete, substitute, swap of neighbours) from `a` to `b`; with `limit`, a
    distance above it is returned as `limit + 1` (only cells within `limit` of the diagonal can
    stay under it, so only those are computed)."""
    band = max(len(a), len(b)) if limit is None else limit
    if abs(len(a) - len(b)) > band:
        return band + 1
    beyond = band + 1
    previous2: list[int] = []
    previous = [j if j <= band else beyond for j in range(len(b) + 1)]
    for i in range(1, len(a) + 1):
        current = [i if i <= band else beyond] + [beyond] * len(b)
        for j in range(max(1, i - band), min(len(b), i + band) + 1):
            cost = 0 if a[i - 1] == b[j - 1] else 1
            value = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                value = min(value, previous2[j - 2] + 1)
            current[j] = min(value, beyond)
        previous2, previous = previous, current
    return previous[len(b)]


def suggestions(ctx: Context, name: str) -> tuple[tuple[str, ...], str | None]:
    """Up to three close names, closest first, and the one name a fix may write: the only one
    within one edit, ignoring case and `-`/`_`. A name that looks like an NVIDIA package is
    compared with packages only; another one also with the scope's attributes (`cudaAtleast`)."""
    return _suggestions(ctx.reference, name)


@lru_cache(maxsize=4096)  # a file repeats its typos; the reference set never changes
def _suggestions(reference: ReferenceSet, name: str) -> tuple[tuple[str, ...], str | None]:
    import difflib  # (only an unknown name needs it: not imported by every run)

    candidates = reference.package_names if NVIDIA_NAME.match(name) else reference.package_names | reference.scope_attributes
    wanted = _normal(name)
    within_one: list[str] = []
    scored: list[tuple[bool, float, str]] = []
    for candidate in sorted(candidates):
        normal = _normal(candidate)
        distance = _distance(wanted, normal, limit=2)
        if distance <= 1:
            within_one.append(candidate)
        matcher = difflib.SequenceMatcher(None, wanted, normal)
        close = distance <= 2 or (matcher.real_quick_ratio() >= 0.75 and matcher.quick_ratio() >= 0.75 and matcher.ratio() >= 0.75)
        if close:
            # `cublas` means `libcublas` more likely than `cutlass`, two letters away
            scored.append((normal != f"lib{wanted}", -matcher.ratio(), candidate))
    if len(within_one) == 1:
        return tuple(within_one), within_one[0]
    scored.sort()
    return tuple(candidate for _, _, candidate in scored[:MAX_SUGGESTIONS]), None


def _defined_in_file(ctx: Context, name: str) -> bool:
    """The file binds `name` as an attribute somewhere (an `overrideScope` adding it)."""
    memo = ctx.semantic.memo(__name__)  # the attribute names the file binds, found on its first unknown name
    bound = memo.get("bound names")
    if bound is None:
        names: set[str | None] = set()
        for node in ctx.semantic.nodes_of_type("binding"):
            names.update(attrpath_names(node.child_by_field_name("attrpath")))
        bound = memo["bound names"] = frozenset(n for n in names if n is not None)
    return name in bound


def _judged(ctx: Context, name: str | None, must_look_like_nvidia: bool) -> tuple[tuple[str, ...], str | None] | None:
    """The suggestions for an unknown name worth reporting, else None."""
    if name is None or _is_accounted_for(ctx, name):
        return None
    nvidia = NVIDIA_NAME.match(name) is not None
    if must_look_like_nvidia and not nvidia:
        return None
    close, unique = suggestions(ctx, name)
    if not nvidia and unique is None:
        return None
    if _defined_in_file(ctx, name):
        return None
    return close, unique


def _message(ctx: Context, subject: str, close: tuple[str, ...]) -> str:
    """`subject` names what was written (`` `cudaPackages.libcublass` ``)."""
    releases = ctx.reference.releases
    first = f"{subject} is in no release of the CUDA package set (CUDA {releases[0]} to {releases[-1]})"
    if not close:
        return f"{first}; check the spelling against `nix eval --json nixpkgs#cudaPackages --apply builtins.attrNames`"
    if len(close) == 1:
        return f"{first}; did you mean `{close[0]}`?"
    listed = ", ".join(f"`{c}`" for c in close[:-1]) + f" or `{close[-1]}`"
    return f"{first}; did you mean {listed}?"


def _fix(ctx: Context, node: Node, unique: str | None) -> Fix | None:
    if unique is None:
        return None
    if unique not in ctx.reference.scope_attributes and not ctx.reference.exists(unique, ctx.target):
        return None  # only write what the target CUDA release has
    return Fix(f"Use `{unique}`", Applicability.SAFE, (edits.replace(node, unique),))


# ----- `cudaPackages.X`, `pkgs.cudaPackages_12.X` -------------------------------------------------


def _check_select(select: Node, ctx: Context) -> None:
    if select.child_by_field_name("default") is not None:
        return  # `cudaPackages.x or null` expects that `x` may be missing
    attrpath = select.child_by_field_name("attrpath")
    components = attrpath.children_by_field_name("attr") if attrpath is not None else []
    names = [identifier_name(c) for c in components]
    base = select.child_by_field_name("expression")
    _check_no_such_set(select, components, names, base, ctx)
    for index, name in enumerate(names):
        through_set = ctx.semantic.package_set_name(base) is not None if index == 0 else catalog.is_package_set_name(names[index - 1])
        if not through_set:
            continue
        judged = _judged(ctx, name, must_look_like_nvidia=False)
        if judged is not None:
            close, unique = judged
            component = components[index]
            written = ctx.source.slice(select.start_byte, component.end_byte)
            ctx.report(component, _message(ctx, f"`{written}`", close), fixes=[_fix(ctx, component, unique)])
        return  # only the member right after the set: `cudaPackages.x.y` is about `x`


def _check_no_such_set(select: Node, components: list[Node], names: list[str | None], base: Node | None, ctx: Context) -> None:
    """`pkgs.cuda.cudatoolkit`: nixpkgs has no set named `cuda`; a CUDA package after it means
    `cudaPackages`."""
    base_name = text(base.child_by_field_name("name")) if base is not None and base.type == "variable_expression" else None
    for index, name in enumerate(names[:-1]):
        if name != "cuda" or not catalog.reaches_top_level(names, index, base_name):
            continue
        member = names[index + 1]
        if member is not None and (ctx.reference.is_known(member) or catalog.is_runfile_toolkit(member)):
            written = ctx.source.slice(select.start_byte, components[index + 1].end_byte)
            fix = Fix("Write `cudaPackages`", Applicability.SAFE, (edits.replace(components[index], "cudaPackages"),))
            ctx.report(components[index], f"`{written}`: nixpkgs has no package set `cuda`; write `cudaPackages.{member}`", fixes=[fix])


# ----- `with cudaPackages; [ X ]` ------------------------------------------------------------------


def _check_with(variable: Node, ctx: Context) -> None:
    name = text(variable.child_by_field_name("name"))
    if NVIDIA_NAME.match(name) is None:
        return
    binding = ctx.semantic.resolve(variable)
    if binding.kind != "with":
        return
    # an unknown name falls through to every other `with`: judge it only when all of them are
    # CUDA package sets (or `lib`, which holds no packages)
    sets = [w for w in binding.withs if ctx.semantic.package_set_name(w) is not None]
    if not sets or any(w not in sets and not _is_lib(w) for w in binding.withs):
        return
    judged = _judged(ctx, name, must_look_like_nvidia=True)
    if judged is None:
        return
    close, unique = judged
    subject = f"`{name}` (from `with {text(sets[0])};`)"
    ctx.report(variable, _message(ctx, subject, close), fixes=[_with_fix(ctx, variable, unique)])


def _is_lib(environment: Node) -> bool:
    written = dotted_name(environment) or ""
    return written in {"lib", "builtins"} or written.startswith("lib.")


def _with_fix(ctx: Context, variable: Node, unique: str | None) -> Fix | None:
    if unique is None or ctx.semantic.resolve_name(unique, variable).kind != "with":
        return None  # the new name must reach the same `with`, not a binding of the file
    return _fix(ctx, variable, unique)


# ----- `inherit (cudaPackages) X;` -----------------------------------------------------------------


def _check_inherit(attrs: Node, ctx: Context) -> None:
    inherited = inherited_from_package_set(attrs, ctx)
    if inherited is None:
        return
    _, source_node, names = inherited
    for attr, name in names:
        judged = _judged(ctx, name, must_look_like_nvidia=False)
        if judged is None:
            continue
        close, _ = judged
        # no fix: renaming the inherited name would rename the binding and every use of it
        ctx.report(attr, _message(ctx, f"`{text(source_node)}.{text(attr)}`", close))
