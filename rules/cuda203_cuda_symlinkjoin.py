"""`symlinkJoin` or `buildEnv` over CUDA packages: the "cuda-merged" / `cudatoolkit_joined` pattern
that rebuilds a monolithic toolkit out of the split redistributables.

Reported once per call, on the builder's name, when its `paths` (a list, `with cudaPackages; [...]`,
`lib.optionals`, `++`, a `let`-bound list or `inherit paths;`) contain CUDA packages or outputs.
Not flagged: joins of other packages, CUDA packages listed directly as inputs, and joins that
stand in a dev shell or a NixOS/home-manager module (a shell that needs one CUDA root, such as
`CUDA_HOME` for a pip-built extension, has no better answer there; CUDA202 still checks that
the join names the outputs it needs), and a join that names the outputs it needs (getters,
`x.dev`, packages whose only output is `out`) and is used only as one directory: in strings
(`CUDA_HOME = "${join}"`, `-I${join}/include`, a path patched into the sources) or as the value
of a root setting (`CUDA_PATH = join;`), in `lib.makeLibraryPath`, or as a part of another
such join, also through the `let` binding that holds it (from the multi-output era on a plain
package there is CUDA202's finding, not this one's). That is
the answer this rule gives where a single root is needed. Packages and overrides get the finding.

## Why
A join is a tree of symlinks, not the packages: it loses the redistributables' `nix-support`
files, so their setup hooks (`cuda_nvcc`'s host-compiler pinning, the hook that sets
`CUDAToolkit_ROOT`) and their propagated inputs do not apply. It exists to imitate the old
runfile layout for build systems that want one `CUDA_HOME`. Prefer listing the redistributables
in `nativeBuildInputs` (`cuda_nvcc`) and `buildInputs` (`cuda_cudart`, the libraries): CMake's
FindCUDAToolkit and most build systems find them through the setup hooks. Where a single root
is truly needed, join only the outputs used.

What joining a whole package brings depends on the era. Until PR #323056 (nixpkgs 24.11) a
package's `out` held every file (one output) or linked every output (the symlink farm of PR
#240498), so the join, and whatever references it, kept all of them, static libraries of
hundreds of MB included: the message says so in these eras. Since then `out` is nearly empty and
a join of a plain package misses its headers and libraries instead, which CUDA202 reports.
There is no automatic fix: the replacement depends on how the build uses the join.

## Example
```nix
{ symlinkJoin, cudaPackages }:
symlinkJoin {
  name = "cuda-merged";
  paths = with cudaPackages; [
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
  pname = "uses-cuda";
  version = "1.0";
  nativeBuildInputs = [ cudaPackages.cuda_nvcc ];
  buildInputs = with cudaPackages; [
    cuda_cudart
    libcublas
  ];
}
```

## References
- https://nixos.org/manual/nixpkgs/unstable/#cuda
- https://github.com/NixOS/nixpkgs/pull/240498
- https://github.com/NixOS/nixpkgs/issues/232501
- https://github.com/NixOS/nixpkgs/pull/323056
"""

from __future__ import annotations

from collections.abc import Iterator

from tree_sitter import Node

from cudalint.knowledge import catalog, sizes
from cudalint.lint.context import Context
from cudalint.lint.model import Applicability, FixAvailability, Severity
from cudalint.lint.rule import Rule
from cudalint.nix.semantic import CONDITIONAL_FUNCTIONS, LIST_PASSTHROUGH_FUNCTIONS
from cudalint.nix.syntax import attrpath_names, binding_value, flatten_apply, identifier_name, last_name, unparen
from cudalint.rules import _outputs

RULE = Rule(
    code="CUDA203",
    preview=True,  # below 0.95 on the corpora: off by default until it passes
    precision="0.80 (4 true of 5 judged findings on the real-world corpora, 2026-11-25; tests/realworld/)",
    name="cuda-symlinkjoin",
    severity=Severity.INFO,
    fix=Applicability.NONE,
    availability=FixAvailability.NEVER,
    summary="`symlinkJoin`/`buildEnv` over CUDA packages",
    node_types=("binding", "inherit"),
    patterns=(b"symlinkJoin", b"buildEnv"),
    attrpath_patterns=(b"paths",),
)

_MAX_DEPTH = 4


@RULE
def check(node: Node, ctx: Context) -> None:
    semantic = ctx.semantic
    owner = node.parent.parent if node.parent is not None else None
    if owner is None:
        return
    if node.type == "binding":
        if attrpath_names(node.child_by_field_name("attrpath")) != ["paths"]:
            return
        value = binding_value(node)
    else:
        attrs = node.child_by_field_name("attrs")
        if attrs is None or "paths" not in [identifier_name(a) for a in attrs.children_by_field_name("attr")]:
            return
        value = semantic.resolve_name("paths", owner).value  # `inherit paths;` takes it from the scope around
    call = semantic.enclosing_call(node)
    if call is None or call.name not in catalog.JOIN_BUILDERS or call.attrset != owner or value is None:
        return
    packages: list[str] = []
    whole = False  # a package joined without choosing outputs brings all of them
    unnamed = False  # ... and one whose outputs matter (not an `out`-only package)
    for element in _elements(ctx, value, 0):
        ref = semantic.cuda_ref(element)
        if ref is not None and catalog.is_cuda_package(ref.package):  # not `backendStdenv.cc`
            whole = whole or ref.output is None
            unnamed = unnamed or (ref.output is None and not _only_out(ctx, ref.package) and ctx.target.era.id in _WHOLE_OUT)
            if ref.package not in packages:
                packages.append(ref.package)
    if not packages:
        return
    place = ctx.place(call.node)
    if place.is_shell or place.is_module:
        return  # one CUDA root for a shell or a profile (`CUDA_HOME`) has no better answer
    if not unnamed and _only_a_root(call.node, ctx, 0):
        return  # names the outputs it needs and serves as one `CUDA_HOME`: the answer CUDA203 gives
    function, _ = flatten_apply(call.node)
    named = ", ".join(f"`{p}`" for p in packages[:3]) + (", ..." if len(packages) > 3 else "")
    # until PR #323056 a package's `out` held (or linked) every output; since, CUDA202 reports the
    # bare packages, whose `out` is nearly empty
    ships_all = whole and ctx.target.era.id in {"single-output", "symlink-farm"}
    closure = " and ships all their outputs, static included" if ships_all else ""
    archives = sizes.archives_note(ctx.reference, ctx.target, packages) if whole else ""
    ctx.report(function, f"`{call.name}` of CUDA packages ({named}) loses their setup hooks and propagated inputs{closure}; list them as inputs{archives}")


def _elements(ctx: Context, expression: Node | None, depth: int) -> Iterator[Node]:
    """The elements of a list-valued expression, through list-building syntax and let-bound lists."""
    expression = unparen(expression)
    if expression is None or depth > _MAX_DEPTH:
        return
    kind = expression.type
    if kind == "list_expression":
        yield from expression.children_by_field_name("element")
    elif kind == "binary_expression" and expression.child_by_field_name("operator").type == "++":
        yield from _elements(ctx, expression.child_by_field_name("left"), depth + 1)
        yield from _elements(ctx, expression.child_by_field_name("right"), depth + 1)
    elif kind in {"with_expression", "let_expression"}:
        yield from _elements(ctx, expression.child_by_field_name("body"), depth + 1)
    elif kind == "if_expression":
        yield from _elements(ctx, expression.child_by_field_name("consequence"), depth + 1)
        yield from _elements(ctx, expression.child_by_field_name("alternative"), depth + 1)
    elif kind == "apply_expression":
        function, arguments = flatten_apply(expression)
        name = last_name(function)
        if arguments and name in CONDITIONAL_FUNCTIONS | LIST_PASSTHROUGH_FUNCTIONS:
            if name == "optional":
                yield arguments[-1]
            else:
                yield from _elements(ctx, arguments[-1], depth + 1)
    elif kind == "variable_expression":
        binding = ctx.semantic.resolve(expression)
        if binding.kind in {"let", "rec"} and binding.value is not None:
            yield from _elements(ctx, binding.value, depth + 1)


# Variables and settings that want one CUDA root directory.
_ROOT_NAMES = frozenset({"CUDA_PATH", "CUDA_HOME", "CUDA_ROOT", "CUDAToolkit_ROOT", "CUDA_TOOLKIT_ROOT_DIR", "CUDA_TOOLKIT_PATH", "CUDA_DIR", "cudaPath", "cudaHome", "cudaRoot"})


def _only_out(ctx: Context, package: str) -> bool:
    """The package has only `out` in every judged release (`cuda_nvcc` in the split-redist era):
    joining it whole names all there is."""
    judged = _outputs.judged_outputs(ctx, package)
    return judged is not None and all(outputs == ("out",) for outputs in judged)


def _only_a_root(expression: Node, ctx: Context, depth: int) -> bool:
    """The join is used only as a directory: in strings (`CUDA_HOME = "${join}"`, `-I${join}/include`,
    a path patched into sources) or as the value of a root setting (`CUDA_PATH = join;`), also
    through the `let` binding that holds it; never as an input, whose setup hooks would matter."""
    node = expression
    while node.parent is not None and node.parent.type == "parenthesized_expression":
        node = node.parent
    holder = node.parent
    if holder is not None and holder.type == "interpolation":
        return True
    if holder is None or holder.type != "binding" or depth > _MAX_DEPTH:
        return False
    names = attrpath_names(holder.child_by_field_name("attrpath"))
    if names and names[-1] in _ROOT_NAMES:
        return True
    scope = holder.parent.parent if holder.parent is not None else None
    if scope is None or scope.type not in {"let_expression", "rec_attrset_expression"} or len(names) != 1 or names[0] is None:
        return False
    uses = ctx.semantic.uses(names[0], holder)
    return bool(uses) and all(_root_use(use, ctx, depth + 1) for use in uses)


def _root_use(variable: Node, ctx: Context, depth: int) -> bool:
    """A use of the join's variable that takes it as a directory (see `_only_a_root`); a use in
    another `let` binding (`cudaPath = lib.removeSuffix "-12" join;`) is judged by that one's uses."""
    node = variable
    while node.parent is not None and node.parent.type in {"parenthesized_expression", "apply_expression"}:
        if node.parent.type == "apply_expression" and last_name(flatten_apply(node.parent)[0]) not in _STRING_FUNCTIONS:
            break
        node = node.parent
    if ctx.semantic.search_path_call(node) is not None:
        return True  # `lib.makeLibraryPath [ join ]`: its `lib` directory, a path
    site = ctx.semantic.input_site(node)
    join = _outputs.join_of(ctx, site) if site is not None else None
    if join is not None and depth <= _MAX_DEPTH:
        return _only_a_root(join.node, ctx, depth + 1)  # a part of another join that is only a root
    return _only_a_root(node, ctx, depth)


# Eras in which a package's `out` holds (or links) every output: a plain package in a join
# brings all of them; from the multi-output era on CUDA202 reports such an element instead.
_WHOLE_OUT = frozenset({"single-output", "symlink-farm"})


# Functions that keep a path a path: `lib.removeSuffix "-12" join`, `toString join`.
_STRING_FUNCTIONS = frozenset({"removeSuffix", "removePrefix", "toString"})
