"""A package that builds against a CUDA-enabled dependency (`torch`, `opencv4`, `faiss`,
`onnxruntime`) but takes its CUDA packages, its CUDA switch or its GPU architectures from
elsewhere, so that the two can disagree.

Flagged, in a file whose function takes the dependency and builds against it (it is in
`dependencies`, `build-system`, `buildInputs`, `propagatedBuildInputs`, ... or read as
`torch.x`): a `cudaPackages` (or `cudaPackages_12_8`) formal that the file uses, where the
dependency exposes its own set (`torch.cudaPackages`, `faiss.cudaPackages`,
`onnxruntime.cudaPackages`); a `cudaSupport` formal whose default is not `torch`'s switch
(`cudaSupport ? config.cudaSupport`); the architectures of `TORCH_CUDA_ARCH_LIST` taken from
anything but `torch.cudaCapabilities` (`cudaPackages.flags.cudaCapabilities`,
`config.cudaCapabilities`); and, for OpenCV (which exposes no package set), a `cudaPackages`
formal used only to list CUDA libraries in host inputs next to `opencv4`, which its `cxxdev`
output already propagates.

Not flagged: files that already follow the dependency (`inherit (torch) cudaCapabilities
cudaPackages cudaSupport;`, `cudaSupport ? torch.cudaSupport`), the switch of a package that
takes torch only under an option of its own (`lib.optionals withPytorch [ torch ]`: it serves
several frameworks, and its switch cannot follow one of them), a `cudaPackages` formal the file
never uses, a dependency taken only for tests (`nativeCheckInputs`, `checkInputs`,
`optional-dependencies`, also nested: `optional-dependencies.testing`), a file that hands the
dependency to something other than a build input (a GPU test helper's `libraries = [ torch ]`:
it builds nothing against it), a package that compiles CUDA code of its own next to OpenCV (`cuda_nvcc`
among its inputs: OpenCV offers no set to follow), `magma` (torch chooses it to match its own set),
and `torch-bin` (a wheel, whose CUDA release is fixed), and the architectures on a target whose
torch does not expose `cudaCapabilities` yet (before 2023-03, PRs #218035, #220609). Contexts: package files and overrides;
dev shells and modules, which take no `torch` formal, are not judged.

## Why
nixpkgs lets every package that takes `cudaPackages` receive any CUDA release: a user may
override torch with `cudaPackages_12_8` while the extension still gets the default set. The
extension then compiles against one CUDA release and loads, in the same process, a torch built
with another: two `libcudart`s, mismatched headers, or a build that fails with the wrong `nvcc`.
Its CUDA switch must follow torch too (an extension built with CUDA against a CPU torch does not
build; one without CUDA against a CUDA torch silently loses its GPU code), and its device code
must target the GPUs torch was built for: `torch.cudaCapabilities` is the user's list filtered to
what torch supports. nixpkgs' torch extensions (torchvision, xformers, flash-attn, openfold) all
start with `inherit (torch) cudaCapabilities cudaPackages cudaSupport;`; reviewers ask for it
(PR #250927, PR #217367, PR #498205). For OpenCV, whose CMake config asks for the CUDA libraries it
was built with, nixpkgs propagates them from its `cxxdev` output (`cudaPropagateToOutput =
"cxxdev"`), the release OpenCV used, instead of a hand-written list from the caller's set
(PR #314186).

The fixes are unsafe: they change which CUDA release (or switch, or architecture list) the
package builds with whenever the caller's and the dependency's differ, which is the point. The
`cudaPackages` fix removes the formal and binds `inherit (torch) cudaPackages;` in a `let` (added
to an `inherit (torch) ...;` already there); the switch fix defaults the formal to
`torch.cudaSupport`; the architecture fix writes `torch.cudaCapabilities`.

## Example
```nix
{ lib, buildPythonPackage, torch, cudaPackages }:
buildPythonPackage {
  pname = "fused-ops";
  version = "0.2";
  src = ./.;
  nativeBuildInputs = [ cudaPackages.cuda_nvcc ];
  buildInputs = [ cudaPackages.cuda_cudart ];
  dependencies = [ torch ];
}
```

## Use instead
```nix
{ lib, buildPythonPackage, torch }:
let
  inherit (torch) cudaPackages;
in
buildPythonPackage {
  pname = "fused-ops";
  version = "0.2";
  src = ./.;
  nativeBuildInputs = [ cudaPackages.cuda_nvcc ];
  buildInputs = [ cudaPackages.cuda_cudart ];
  dependencies = [ torch ];
}
```

## References
- https://github.com/NixOS/nixpkgs/pull/250927
- https://github.com/NixOS/nixpkgs/pull/217367
- https://github.com/NixOS/nixpkgs/pull/498205
- https://github.com/NixOS/nixpkgs/pull/314186
- https://github.com/NixOS/nixpkgs/blob/00d0ced332d7b0d37844ace4493b577dd0930f88/pkgs/development/python-modules/torch/source/default.nix
- https://github.com/NixOS/nixpkgs/blob/01fb069ed21e61f09d3205e3f4949d8e65fbf4c4/pkgs/development/libraries/opencv/4.x.nix
- https://github.com/NixOS/nixpkgs/blob/094d0c72ebf91d775014952497aa75ab3ab7b709/pkgs/by-name/fa/faiss/package.nix
"""

from __future__ import annotations

from tree_sitter import Node

from cudalint.knowledge import catalog
from cudalint.lint import edits
from cudalint.lint.context import Context
from cudalint.lint.model import Applicability, Edit, Fix, FixAvailability, Severity
from cudalint.lint.rule import Rule
from cudalint.nix.syntax import attrpath_names, bindings_of, dotted_name, identifier_name, last_name, text, unparen
from cudalint.rules._cuda_switch import in_attribute, mentions_switch

# The environment variable torch extensions read their architectures from.
_ARCH_LIST = "TORCH_CUDA_ARCH_LIST"

RULE = Rule(
    code="CUDA312",
    preview=True,  # below 0.95 on the corpora: off by default until it passes
    precision="0.83 (10 true of 12 judged findings on the real-world corpora, 2026-11-25; tests/realworld/)",
    name="inconsistent-cuda-dependency",
    severity=Severity.WARNING,
    fix=Applicability.UNSAFE,
    availability=FixAvailability.SOMETIMES,
    summary="CUDA packages, switch or architectures not taken from the CUDA-enabled dependency (`torch.cudaPackages`)",
    node_types=("formal", "binding"),
    patterns=(b"torch", b"opencv", b"faiss", b"onnxruntime"),
    attrpath_patterns=(_ARCH_LIST.encode(),),
)

# Dependencies whose passthru carries the CUDA package set they were built with (torch: also
# `cudaSupport` and `cudaCapabilities`), most specific first.
SET_CARRIERS = ("torch", "faiss", "onnxruntime")
# OpenCV carries no set; its `cxxdev` output propagates the CUDA libraries its CMake config needs.
OPENCV = ("opencv4", "opencv")
# Inputs that only serve tests or optional features: taking the dependency there builds nothing against it.
_TEST_INPUTS = frozenset({"nativeCheckInputs", "checkInputs", "installCheckInputs", "nativeInstallCheckInputs", "optional-dependencies"})
# Inputs a package builds against (not a test helper's `libraries = [ torch ]`).
_BUILD_INPUTS = (catalog.INPUT_ATTRIBUTES | {"packages"}) - _TEST_INPUTS
# Selections of the dependency that are about its CUDA build.
_ARCH_NAMES = frozenset({"cudaCapabilities", "cmakeCudaArchitecturesString", "cudaArchList", "realArches", "arches"})


@RULE
def check(node: Node, ctx: Context) -> None:
    if node.type == "formal":
        _check_formal(node, ctx)
    else:
        _check_arch_list(node, ctx)


def _top_formals(ctx: Context) -> dict[str, Node]:
    function = ctx.semantic.top_function()
    formals = function.child_by_field_name("formals") if function is not None else None
    if formals is None:
        return {}
    return {text(f.child_by_field_name("name")): f for f in edits.real_formals(formals) if f.child_by_field_name("name") is not None}


def _builds_against(ctx: Context, formal: Node) -> bool:
    """The file builds against the dependency bound by `formal`: some use of it sits in an input
    other than a test input, or reads one of its attributes (`torch.cudaSupport`)."""
    name = text(formal.child_by_field_name("name"))
    for use in ctx.semantic.uses(name, formal):
        if in_attribute(use, _TEST_INPUTS):
            continue  # `optional-dependencies.testing = [ torch ]`, however nested
        parent = use.parent
        if parent is not None and parent.type == "select_expression" and parent.child_by_field_name("expression") == use:
            return True
        if ctx.semantic.input_attrs(use) & _BUILD_INPUTS:
            return True
    return False


def _only_optionally(ctx: Context, formal: Node) -> bool:
    """Every use of the dependency stands under an option of the package that is not its CUDA
    switch (`lib.optionals withPytorch [ torch ]`, `if withPytorch then torch.cudaCapabilities
    else ...`): a package serving several frameworks, whose switch cannot follow one of them."""
    name = text(formal.child_by_field_name("name"))
    uses = [use for use in ctx.semantic.uses(name, formal) if not in_attribute(use, _TEST_INPUTS)]
    return bool(uses) and all(any(not mentions_switch(g.condition, ctx) for g in ctx.semantic.guards(use)) for use in uses)


def _dependency(ctx: Context, formals: dict[str, Node], names: tuple[str, ...]) -> str | None:
    return next((n for n in names if n in formals and _builds_against(ctx, formals[n])), None)


def _check_formal(formal: Node, ctx: Context) -> None:
    function = ctx.semantic.top_function()
    if function is None or formal.parent != function.child_by_field_name("formals"):
        return
    name = identifier_name(formal.child_by_field_name("name"))
    if name is None or not (name == "cudaSupport" or catalog.is_package_set_name(name) and name != "cudaPackagesGoogle"):
        return
    uses = ctx.semantic.uses(name, formal)
    if not uses or not all(ctx.place(use).is_package or ctx.place(use).is_override for use in uses):
        return
    formals = _top_formals(ctx)
    if name == "cudaSupport":
        if _dependency(ctx, formals, ("torch",)) is not None and not _only_optionally(ctx, formals["torch"]):
            _check_switch(formal, ctx)
        return
    carrier = _dependency(ctx, formals, SET_CARRIERS)
    if carrier is not None:
        fix = _set_fix(formal, name, carrier, ctx)
        ctx.report(formal, f"`{name}` can be another CUDA release than `{carrier}`'s: take `inherit ({carrier}) cudaPackages;` instead of the formal", fixes=[fix])
        return
    opencv = _dependency(ctx, formals, OPENCV)
    if opencv is not None and all(_only_host_library(use, ctx) for use in uses):
        ctx.report(formal, f'CUDA libraries listed for `{opencv}` can come from another CUDA release than its own: use `(lib.getOutput "cxxdev" {opencv})`, which propagates them')


def _check_switch(formal: Node, ctx: Context) -> None:
    default = formal.child_by_field_name("default")
    if default is not None and "torch" in text(default):
        return
    fix = None
    if default is not None:
        fix = Fix("Default to `torch.cudaSupport`", Applicability.UNSAFE, (edits.replace(default, "torch.cudaSupport"),))
    where = default if default is not None else formal
    ctx.report(where, "the CUDA switch can differ from the one `torch` was built with: default it to `torch.cudaSupport`", fixes=[fix])


def _only_host_library(use: Node, ctx: Context) -> bool:
    """`cudaPackages.libnpp` (any CUDA library, not a tool) in a host input list."""
    root = ctx.semantic.reference_root(use)
    ref = ctx.semantic.cuda_ref(root)
    if ref is None or catalog.role(ref.package) in {"tool", "hook", "toolkit"}:
        return False
    attrs = ctx.semantic.input_attrs(root)
    return bool(attrs) and attrs <= catalog.HOST_INPUTS


def _set_fix(formal: Node, name: str, carrier: str, ctx: Context) -> Fix | None:
    """Remove the formal, bind `inherit (<carrier>) cudaPackages;` in a `let` around the body."""
    function = ctx.semantic.top_function()
    assert function is not None
    formals = function.child_by_field_name("formals")
    if name != "cudaPackages" or formal.child_by_field_name("default") is not None or any(f != formal and "cudaPackages" in text(f) for f in edits.real_formals(formals)):
        return None  # a versioned set would need renaming; defaults that read it see no `let`
    body = unparen(function.child_by_field_name("body"))
    if body is None:
        return None
    source = ctx.source
    binding = _inherit_from(body, carrier)
    if binding is not None:
        last = binding.child_by_field_name("attrs")
        added = Edit(last.end_byte, last.end_byte, " cudaPackages")
    elif body.type == "let_expression":
        first = next((b for b in bindings_of(body)), None)
        if first is None:
            return None
        line = source.line_of(first.start_byte)
        indent = source.indentation_of_line(line)
        line = edits.heading_comments_start(source, line, source.line_of(body.start_byte))  # the first binding's comment stays with it
        added = Edit(source.line_start(line), source.line_start(line), f"{indent}inherit ({carrier}) cudaPackages;{source.newline}")
    else:
        nl = source.newline
        at_line_start = source.line_start(source.line_of(body.start_byte)) == body.start_byte
        added = Edit(body.start_byte, body.start_byte, f"{'' if at_line_start else nl}let{nl}  inherit ({carrier}) cudaPackages;{nl}in{nl}")
    return Fix(f"Use `{carrier}.cudaPackages`", Applicability.UNSAFE, (edits.remove_formal(source, formal), added))


def _inherit_from(let: Node, carrier: str) -> Node | None:
    """`inherit (torch) ...;` among a `let`'s bindings."""
    if let.type != "let_expression":
        return None
    for binding in bindings_of(let):
        if binding.type == "inherit_from" and dotted_name(unparen(binding.child_by_field_name("expression"))) == carrier:
            return binding
    return None


def _check_arch_list(binding: Node, ctx: Context) -> None:
    names = attrpath_names(binding.child_by_field_name("attrpath"))
    if not names or names[-1] != _ARCH_LIST:
        return
    formals = _top_formals(ctx)
    if _dependency(ctx, formals, ("torch",)) is None:
        return
    value = binding.child_by_field_name("expression")
    if value is None:
        return
    if not ctx.reference.has("torch.cudaCapabilities", ctx.target):
        return  # torch did not say which architectures it was built for yet (2023-03)
    for node in _arch_sources(value, ctx):
        fix = Fix("Use `torch.cudaCapabilities`", Applicability.UNSAFE, (edits.replace(node, "torch.cudaCapabilities"),)) if last_name(node) == "cudaCapabilities" else None
        ctx.report(node, f"`{text(node)}` can differ from the architectures `torch` was built for: use `torch.cudaCapabilities`", fixes=[fix])


def _arch_sources(value: Node, ctx: Context) -> list[Node]:
    """Architecture lists in `value` that do not come from torch: selections or variables named
    like one (`cudaCapabilities`, `flags.cmakeCudaArchitecturesString`), outermost only."""
    found: list[Node] = []
    stack = [value]
    while stack:
        node = stack.pop()
        if node.type in {"select_expression", "variable_expression"} and last_name(node) in _ARCH_NAMES:
            if not _from_torch(node, ctx):
                found.append(node)
            continue
        stack.extend(reversed(node.named_children))
    return found


def _from_torch(node: Node, ctx: Context, depth: int = 0) -> bool:
    if node.type == "select_expression":
        base = dotted_name(unparen(node.child_by_field_name("expression")))
        return base is not None and base.split(".")[0] == "torch"
    binding = ctx.semantic.resolve(node)
    if binding.kind == "inherit-from":
        return dotted_name(unparen(binding.source)) == "torch"
    if binding.kind in {"let", "rec"} and binding.value is not None and depth < 4:
        value = unparen(binding.value)
        return value is not None and value.type in {"select_expression", "variable_expression"} and _from_torch(value, ctx, depth + 1)
    return False
