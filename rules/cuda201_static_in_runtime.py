"""A static CUDA output or static archive where it reaches a runtime closure: in
`propagatedBuildInputs`, `propagatedNativeBuildInputs`, `depsTargetTargetPropagated` (and the
other propagated inputs), in the `paths` of a `symlinkJoin`/`buildEnv`, in wrapper arguments, or
in `lib.makeLibraryPath`.

Static outputs are `x.static`, `lib.getOutput "static" x` and `lib.getStatic x` of a CUDA
package; static archives are paths such as `"${libcublas}/lib/libcublas_static.a"`. Not flagged:
static outputs in `buildInputs` or `nativeBuildInputs` (they stay in the build closure; nixpkgs
itself lists `(lib.getOutput "static" cuda_cudart)` there), in `disallowedRequisites` and other
non-input attributes, and a join used only at build time: as a build input or in the build
environment (`env.CUDA_PATH`, a `CUDA_HOME = "${join}";` attribute, compiler flags, a phase
that no wrapper, RPATH or installed file keeps), also through let bindings derived from it.

Every context gets the finding (packages, dev shells, modules, overrides): a static output never
serves a run-time library path, a wrapper or a dependent, wherever it is written; in a dev shell
or a module the closure kept alive is the shell's or the system profile's.

## Why
CUDA static libraries approach or pass 1 GB (`libcublas`'s static output alone is several hundred
MB: nixpkgs PR #253951 cut "1GB" from closures by keeping it out). They are only needed while
linking. Propagated inputs end up in every dependent's inputs and, through the
`nix-support/propagated-*` files of the output, in its runtime closure; a join, a wrapper script
or a library path that mentions the static output keeps it alive at run time, where nothing ever
loads a static archive.

The fix, offered where the static output is an element of a propagated input list, moves it to
`buildInputs` of the same derivation (keeping a `lib.optionals` guard). It is unsafe: dependents
that linked statically against it through the propagation must now list it themselves. In joins,
wrappers and library paths, drop the static output by hand (use the `lib` output).

## Example
```nix
{ stdenv, lib, cudaPackages }:
stdenv.mkDerivation {
  pname = "gemm";
  version = "1.0";
  nativeBuildInputs = [ cudaPackages.cuda_nvcc ];
  propagatedBuildInputs = [
    cudaPackages.libcublas
    (lib.getOutput "static" cudaPackages.libcublas)
  ];
}
```

## Use instead
```nix
{ stdenv, lib, cudaPackages }:
stdenv.mkDerivation {
  pname = "gemm";
  version = "1.0";
  nativeBuildInputs = [ cudaPackages.cuda_nvcc ];
  buildInputs = [ (lib.getOutput "static" cudaPackages.libcublas) ];
  propagatedBuildInputs = [ cudaPackages.libcublas ];
}
```

## References
- https://github.com/NixOS/nixpkgs/pull/253951
- https://github.com/NixOS/nixpkgs/pull/240498
- https://nixos.org/manual/nixpkgs/unstable/#ssec-stdenv-dependencies-propagated
"""

from __future__ import annotations

import re

from tree_sitter import Node

from cudalint.knowledge import catalog, sizes
from cudalint.lint import edits
from cudalint.lint.context import Context
from cudalint.lint.model import Applicability, Fix, FixAvailability, Severity
from cudalint.lint.rule import Rule
from cudalint.nix.semantic import Call, CudaRef, InputSite
from cudalint.nix.syntax import attrpath_names, binding_value, flatten_apply, last_name, text
from cudalint.rules import _outputs
from cudalint.rules._runtime_closure import runtime_use

RULE = Rule(
    code="CUDA201",
    name="static-in-runtime",
    severity=Severity.WARNING,
    fix=Applicability.UNSAFE,
    availability=FixAvailability.SOMETIMES,
    summary="Static CUDA libraries in propagated inputs, joins, wrappers or library paths",
    node_types=("variable_expression",),
    cuda_references_only=True,
    patterns=catalog.CUDA_REFERENCE_PATTERNS,  # it judges `cuda_ref`s
)

BUILD_ONLY = frozenset({"buildInputs", "nativeBuildInputs", "depsBuildBuild", "checkInputs", "nativeCheckInputs", "nativeInstallCheckInputs"})
WRAPPER_ARGS = re.compile(r"[wW]rapperArgs$|^makeWrapperArgs$")
WRAPPER_COMMAND = re.compile(rb"\b(?:makeWrapper|makeBinaryWrapper|makeShellWrapper|wrapProgram|wrapProgramShell|wrapProgramBinary)\b")
# the text right after `${x}`: a path ending in a static archive
_MAX_DEPTH = 3
ARCHIVE = re.compile(r"^/[^\s\"'$;:]*?\.a(?![\w.])")


@RULE
def check(node: Node, ctx: Context) -> None:
    semantic = ctx.semantic
    root = semantic.reference_root(node)
    ref = semantic.cuda_ref(root)
    if ref is None or not catalog.is_cuda_package(ref.package):
        return
    span: tuple[int, int] = (root.start_byte, root.end_byte)
    holder = root  # the expression whose placement decides: the reference or the string around it
    interpolation = root.parent if root.parent is not None and root.parent.type == "interpolation" else None
    archive = False
    if interpolation is not None and interpolation.parent is not None:
        following = interpolation.next_sibling
        match = ARCHIVE.match(text(following)) if following is not None and following.type == "string_fragment" else None
        if match is not None:
            archive = True
            span = (interpolation.start_byte, following.start_byte + len(match.group(0).encode("utf-8")))
        holder = interpolation.parent
    if ref.output != "static" and not archive:
        return
    written = ctx.source.slice(*span)
    if archive:
        what = f"static archive `{written}`" if len(written) <= 60 else f"static archive of `{ref.package}`"
    else:
        what = f"static output `{written}`" if len(written) <= 60 else f"static output of `{ref.package}`"
    _check_placement(ctx, holder, interpolation, span, what, ref)


def _check_placement(ctx: Context, holder: Node, interpolation: Node | None, span: tuple[int, int], what: str, ref: CudaRef) -> None:
    semantic = ctx.semantic
    site = semantic.input_site(holder)
    if site is not None:
        if site.attr in catalog.PROPAGATED_INPUTS:
            ctx.report(span, _propagated_message(what, site.attr), fixes=[_move_fix(ctx, site, ref)])
            return
        call = _outputs.join_of(ctx, site)
        if call is not None:
            if not _build_only(ctx, call):
                ctx.report(span, f"{what} in the `paths` of `{call.name}` ships with the join; leave it out and link it from `buildInputs`")
            return
        if WRAPPER_ARGS.search(site.attr):
            ctx.report(span, _wrapper_message(what))
            return
        if site.list_node is not None:
            return  # an element of another list (`buildInputs`, `disallowedRequisites`): fine
    propagated = sorted(a for a in semantic.input_attrs(holder) if a in catalog.PROPAGATED_INPUTS)
    if propagated:
        ctx.report(span, _propagated_message(what, propagated[0], through_let=True))
        return
    call = semantic.search_path_call(holder, through_if=False)  # this rule never looked into `if` branches
    if call is not None:
        function = last_name(flatten_apply(call)[0])
        ctx.report(span, f"{what} in `lib.{function}` stays in the runtime closure; use the package's `lib` output")
        return
    if any(WRAPPER_ARGS.search(part) for part in semantic.binding_path(holder)) or (interpolation is not None and _in_wrapper_command(ctx, interpolation)):
        ctx.report(span, _wrapper_message(what))


def _propagated_message(what: str, attr: str, through_let: bool = False) -> str:
    where = f"a list that feeds `{attr}`" if through_let else f"`{attr}`"
    return f"{what} in {where} reaches every dependent's closure; list it in `buildInputs`"


def _wrapper_message(what: str) -> str:
    return f"{what} in wrapper arguments stays in the runtime closure; point the wrapper at the `lib` output"


def _move_fix(ctx: Context, site: InputSite, ref: CudaRef) -> Fix | None:
    if site.list_node is None:
        return None
    changes = edits.move_element(ctx.source, ctx.semantic, site, "buildInputs")
    if not changes:
        return None
    note = sizes.static_note(ctx.reference, ctx.target, ref.package)
    return Fix(f"Move the static output of `{ref.package}` to `buildInputs`{note}", Applicability.UNSAFE, tuple(changes))


def _build_only(ctx: Context, call: Call) -> bool:
    """A join written in, or bound in a `let` and used only as, a build input does not reach a
    runtime closure."""
    direct = ctx.semantic.input_site(call.node)
    if direct is not None:
        return direct.attr in BUILD_ONLY  # `buildInputs = [ (symlinkJoin { ... }) ]`
    holder = call.node
    while holder.parent is not None and holder.parent.type == "parenthesized_expression":
        holder = holder.parent
    binding = holder.parent
    if binding is None or binding.type != "binding" or binding_value(binding) != holder:
        return False
    scope = binding.parent.parent if binding.parent is not None else None
    if scope is None or scope.type != "let_expression":
        return False
    return _used_at_build_time_only(ctx, binding, 0)


def _used_at_build_time_only(ctx: Context, binding: Node, depth: int) -> bool:
    """Every use of the let binding is a build input or the build environment (`env.CUDA_PATH`),
    directly or through further let bindings derived from it (`root = lib.removeSuffix ... join;`)."""
    name = text(binding.child_by_field_name("attrpath"))
    uses = ctx.semantic.uses(name, binding)
    if not uses:
        return False
    for use in uses:
        if _in_build_environment(use):
            continue
        site = ctx.semantic.input_site(use)
        if site is not None:
            if site.attr not in BUILD_ONLY:
                return False
            continue
        holder = use  # `root = "${join}";`: the string holds the use
        while holder.parent is not None and holder.parent.type in {"interpolation", "string_expression", "indented_string_expression"}:
            holder = holder.parent
        derived = ctx.semantic.let_binding_holding(holder) if depth < _MAX_DEPTH else None
        if derived is None:
            if _build_time_string(ctx, use, holder):
                continue
            return False
        if not _used_at_build_time_only(ctx, derived, depth + 1):
            return False
    return True


def _build_time_string(ctx: Context, use: Node, string: Node) -> bool:
    """`CUDA_HOME = "${join}";`, `NVCC_PREPEND_FLAGS = [ "-I${join}/include" ];`, a path in a
    phase: a string of a derivation attribute that no wrapper, RPATH or installed file keeps."""
    if string is use or string.type not in {"string_expression", "indented_string_expression"}:
        return False
    path = ctx.semantic.binding_path(string)
    return bool(path) and path[0] not in {"passthru", "meta"} and runtime_use(use, ctx) is None


def _in_build_environment(node: Node) -> bool:
    """Inside a derivation's `env = { ... }` (also `env.X = ...`, `env = a // lib.optionalAttrs c { ... }`)."""
    parent = node.parent
    while parent is not None:
        if parent.type == "binding":
            names = attrpath_names(parent.child_by_field_name("attrpath"))
            owner = parent.parent.parent if parent.parent is not None else None
            if names[:1] == ["env"] and owner is not None and owner.type != "let_expression":
                return True
        parent = parent.parent
    return False


def _in_wrapper_command(ctx: Context, interpolation: Node) -> bool:
    """An interpolation on a `makeWrapper`/`wrapProgram` line of shell code (not in a comment)."""
    string = interpolation.parent
    shell = ctx.semantic.shell_text(string) if string is not None else None
    if shell is None:
        return False
    line = shell.line_at(interpolation.start_byte)
    if line is None or (line.comment_start is not None and interpolation.start_byte >= line.comment_start):
        return False
    return WRAPPER_COMMAND.search(line.code) is not None
