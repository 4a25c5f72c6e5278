"""A CUDA package referenced without naming an output where the target era makes that wrong.

In the symlink-farm era (nixpkgs 23.11, 24.05): a redistributable in `buildInputs`,
`propagatedBuildInputs` or another input that reaches the host platform, written plain
(`libcublas`) or through a getter (`lib.getDev libcublas`, which that era's redistributables
ignore). From the multi-output era on (24.11 and later): a plain redistributable in
`propagatedBuildInputs` (or another propagated host input), a plain multi-output package in the
`paths` of a `symlinkJoin` or `buildEnv` (`cuda_cudart` "for cuda_runtime.h"), and a string
interpolation of the package itself followed by a path that lives in another output
(`"${libcublas}/lib"`, `"${cuda_cudart}/include"`, `"${cuda_nvcc}/bin/nvcc"`).

Not flagged: plain names in `buildInputs` from the multi-output era on (the recommended form:
`buildInputs` selects `dev`, and the runtime closure keeps only what binaries reference), build
tools and hooks in inputs, packages whose only output on the target is `out`
(`"${cuda_nvcc}/bin/nvcc"`, a joined or propagated `cuda_cccl` are right in the split-redist
era), header-only packages without a `lib` output in propagated inputs, a propagated input whose
comment names a header (`cuda_nvrtc # nvrtc.h`: a library whose public headers include it hands
its `dev` on on purpose), a static output asked for in the symlink-farm era (`(lib.getOutput
"static" libcublas)` to link statically: CUDA201 judges where it may go), propagated inputs of a
derivation that declares a `dev` output (they are recorded in that `dev`, for dependents
compiling against its headers, which may include the CUDA package's: nixpkgs' libcublas
propagates `cuda_cudart` so), a `buildEnv` with `extraOutputsToInstall` (it names what it
installs), joins in the symlink-farm era (`out` links everything there: CUDA203 says what that
costs), paths into `lib/stubs` and static archives (CUDA201), and the single-output era (one
output, nothing to name). Nor `libcuda` through `cuda_cudart` (`-L${cuda_cudart}/lib -lcuda`,
`"${cuda_cudart}/lib/libcuda.so"`): libcuda is the driver, which no `lib` output holds, so the
getter would keep the wrong library; link against the stubs instead
(`${lib.getOutput "stubs" cuda_cudart}/lib/stubs` in the split-redist era,
`${lib.getLib cuda_cudart}/lib/stubs` in the multi-output era, `${cuda_cudart}/lib/stubs`
before) and find the driver at run time in `${addDriverRunpath.driverLink}/lib`, as CUDA110
reports. A finding must hold for every judged release (the configured
`cuda` releases, else all the era's nixpkgs offers).

By context: packages and overrides get every finding. Dev shells and NixOS/home-manager modules
ship nothing that other derivations depend on or keep at run time, so their input lists are not
judged (a shell's `buildInputs` in the symlink-farm era only makes the shell bigger); their
interpolations and joins are, because a path into an empty `out` is broken anywhere.

## Why
nixpkgs changed what a bare CUDA redistributable means several times. From PR #240498 (23.11)
until PR #323056 (24.11) a redistributable's `out` was a symlink farm of all its outputs, so a
plain reference, which binaries' RUNPATH then points into, kept every output alive at run time,
static libraries of up to 1 GB included; naming the outputs (`libcublas.dev libcublas.lib`)
was the fix. Since 24.11 outputs are ordinary: `out` is nearly empty, so `"${libcublas}/lib"`
points at nothing, and propagating a plain package hands its `dev` output (and, before the
CUDA 13 rework, `static`) to every dependent. A join is built from the paths it is given:
`symlinkJoin` links each package's string form, which is its `out` alone
(pkgs/build-support/trivial-builders/default.nix), and `buildEnv` installs
`meta.outputsToInstall` (`bin` where there is one, else `out`) plus `extraOutputsToInstall`
(pkgs/build-support/buildenv/default.nix @ 010375ac6ad4d6c710a60a88661a6dd7d04e9fe1), so a
join of plain `cuda_cudart` has no `cuda_runtime.h` and no `libcudart.so`.

The interpolation fix writes the getter of the output that holds the path
(`"${lib.getLib libcublas}/lib"`, `lib.getDev` for headers, `lib.getInclude` in the
split-redist era, `lib.getBin`) and is safe: that output exists in every judged release. The
symlink-farm fix names `dev` and `lib` where the package has nothing else but `out` and
`static`; it is safe because nothing a build or a binary uses is lost: where a build needs a
static library, it is named too (`cuda_cudart.static` in a CMake build, whose CUDA language check
links the static runtime by default; `x.static` for `lib.getOutput "static" x`), which keeps it
at build time only (a static archive is in no RUNPATH). Propagating
`(lib.getLib x)` instead of `x` is offered as an unsafe fix: dependents that include the
package's headers must then list it themselves. The join fix adds the outputs holding programs,
headers and libraries (`lib.getBin`, `lib.getDev` or in the split-redist era `lib.getInclude`,
`lib.getLib`) next to the package, which stays in case its `out` holds files no other output
has; it is unsafe because the join, and what references it, then holds more.

## Example
```nix
{ lib, stdenv, cudaPackages }:
stdenv.mkDerivation {
  pname = "blas-wrapper";
  version = "1.0";
  src = ./.;
  nativeBuildInputs = [ cudaPackages.cuda_nvcc ];
  buildInputs = [ cudaPackages.cuda_cudart ];
  propagatedBuildInputs = [ cudaPackages.libcublas ];
  makeFlags = [ "CUBLAS_LIB=${cudaPackages.libcublas}/lib" ];
}
```

## Use instead
```nix
{ lib, stdenv, cudaPackages }:
stdenv.mkDerivation {
  pname = "blas-wrapper";
  version = "1.0";
  src = ./.;
  nativeBuildInputs = [ cudaPackages.cuda_nvcc ];
  buildInputs = [ cudaPackages.cuda_cudart ];
  propagatedBuildInputs = [ (lib.getLib cudaPackages.libcublas) ];
  makeFlags = [ "CUBLAS_LIB=${lib.getLib cudaPackages.libcublas}/lib" ];
}
```

## References
- https://github.com/NixOS/nixpkgs/pull/240498
- https://github.com/NixOS/nixpkgs/pull/323056
- https://github.com/NixOS/nixpkgs/pull/253951
- https://nixos.org/manual/nixpkgs/unstable/#cuda
- https://github.com/NixOS/nixpkgs/blob/010375ac6ad4d6c710a60a88661a6dd7d04e9fe1/pkgs/build-support/buildenv/default.nix
- https://github.com/NixOS/nixpkgs/blob/77d57157d61d28d9f8948f4fe7c6e3c7a78d5338/pkgs/build-support/trivial-builders/default.nix
"""

from __future__ import annotations

import re

from tree_sitter import Node

from cudalint.knowledge import catalog
from cudalint.lint import edits
from cudalint.lint.context import Context
from cudalint.lint.model import Applicability, Edit, Fix, FixAvailability, Severity
from cudalint.lint.rule import Rule
from cudalint.nix.semantic import Call, CudaRef
from cudalint.nix.syntax import attrpath_names, binding_value, bindings_of, descendants, flatten_apply, string_literal, text, unparen
from cudalint.rules import _driver, _outputs
from cudalint.rules._cuda_compilation import builds_with_cmake

RULE = Rule(
    code="CUDA202",
    preview=True,  # below 0.95 on the corpora: off by default until it passes
    precision="0.80 (8 true of 10 judged findings on the real-world corpora, 2026-11-25; tests/realworld/)",
    name="missing-explicit-output",
    severity=Severity.WARNING,
    fix=Applicability.UNSAFE,
    availability=FixAvailability.SOMETIMES,
    summary="CUDA package without an explicit output where the target era drags or misses outputs",
    node_types=("variable_expression",),
    cuda_references_only=True,
    patterns=catalog.CUDA_REFERENCE_PATTERNS,  # it judges `cuda_ref`s
)

# Inputs for the platform the package runs on: what binaries link against and keep at run time.
HOST_SIDE_INPUTS = frozenset({"buildInputs", "propagatedBuildInputs", "depsHostHost", "depsHostHostPropagated", "depsTargetTarget", "depsTargetTargetPropagated"})
PROPAGATED_HOST_INPUTS = HOST_SIDE_INPUTS & catalog.PROPAGATED_INPUTS
# `${x}` followed by one of these top-level directories: the output that holds it.
_PATH = re.compile(r"^/(lib|include|bin)(?:/([^\s\"'$;:/]*))?")
_SYMLINK_FARM_NAMED = ("dev", "lib")
# Whose `static` output CMake links by default (FindCUDAToolkit's and `enable_language(CUDA)`'s
# `CMAKE_CUDA_RUNTIME_LIBRARY` is `Static`): naming only `dev` and `lib` fails the configure check.
_STATIC_RUNTIME = frozenset({"cuda_cudart"})
# What a join of a package is for: its programs, headers and libraries, by era (headers are in
# `dev` until the split-redist era gives them an `include` output).
_JOINED = {"multi-output": ("bin", "dev", "lib"), "split-redist": ("bin", "include", "lib")}


@RULE
def check(node: Node, ctx: Context) -> None:
    era = ctx.target.era.id
    if era == "single-output":
        return
    semantic = ctx.semantic
    root = semantic.reference_root(node)
    ref = semantic.cuda_ref(root)
    if ref is None or ref.output is not None and ref.getter is None:
        return
    info = ctx.reference.lookup(ref.package, ctx.target)
    if info is None or info.kind not in {"redist", "non-redist"}:
        return
    judged = _outputs.judged_outputs(ctx, ref.package)
    if judged is None or all(outputs == ("out",) for outputs in judged):
        return
    interpolated = root.parent is not None and root.parent.type == "interpolation"
    if interpolated:
        if era != "symlink-farm" and ref.getter is None:
            _check_interpolation(ctx, ref, root, judged)
        return
    site = semantic.input_site(root)
    join = _outputs.join_of(ctx, site) if site is not None else None
    if join is not None:
        if era in _JOINED and ref.getter is None:
            _check_join(ctx, ref, root, join, site.list_node, judged)
        return
    if info.role in {"tool", "hook"}:
        return  # build tools are not linked into what the package ships
    attrs = {site.attr} if site is not None else set(semantic.input_attrs(root)) if _list_element(root) is not None else set()
    if era == "symlink-farm":
        where = sorted(attrs & HOST_SIDE_INPUTS)
        # only a linked library's directory ends up in a RUNPATH that keeps the farm alive
        if where and ref.output != "static" and _outputs.in_every(judged, "lib") and _ships(ctx, root):
            # (a static output is asked for on purpose, to link statically: no `lib` to name)
            _report_symlink_farm(ctx, ref, root, where[0], judged)
    elif ref.getter is None:
        where = sorted(attrs & PROPAGATED_HOST_INPUTS)
        if site is not None and _declares_dev_output(site.binding) or _propagated_for_headers(ctx, root):
            return
        if where and _outputs.in_every(judged, "lib") and _outputs.in_every(judged, "dev") and _ships(ctx, root):
            _report_propagated(ctx, ref, root, where[0], judged)


def _ships(ctx: Context, node: Node) -> bool:
    """Inputs of a package or an override reach a runtime closure or dependents; a dev shell's or
    a module's do not."""
    place = ctx.place(node)
    return not (place.is_shell or place.is_module)


def _check_interpolation(ctx: Context, ref: CudaRef, root: Node, judged: list[tuple[str, ...]]) -> None:
    interpolation = root.parent
    assert interpolation is not None
    following = interpolation.next_sibling
    match = _PATH.match(text(following)) if following is not None and following.type == "string_fragment" else None
    if match is None:
        return
    directory, entry = match.group(1), match.group(2) or ""
    if directory == "lib" and (entry == "stubs" or entry.endswith(".a")):
        return  # stubs move between outputs across releases; static archives are CUDA201's
    if _driver.libcuda_path(ctx.semantic, interpolation) is not None:
        return  # libcuda is the driver, in no `lib` output: CUDA110 says where to take it from
    era = ctx.target.era.id
    output = {"lib": "lib", "bin": "bin", "include": "include" if era == "split-redist" else "dev"}[directory]
    if not _outputs.in_every(judged, output):
        return  # some judged release keeps it in `out`, where the path is right
    assert following is not None
    span = (interpolation.start_byte, following.start_byte + 1 + len(directory))
    call = _outputs.getter_call(ctx, root, output, text(root))
    getter = call[0] if call is not None else f"lib.{_outputs.getter(ctx, output)} {text(root)}"
    fix = None
    if call is not None:
        fix = Fix(f"Use `{call[0]}`", Applicability.SAFE, (Edit(root.start_byte, root.end_byte, call[0]), *call[1]))
    ctx.report(span, f"`{ctx.source.slice(*span)}` is in the nearly empty `out` of `{ref.package}`; write `${{{getter}}}/{directory}`", fixes=[fix])


def _check_join(ctx: Context, ref: CudaRef, root: Node, join: Call, site_list: Node | None, judged: list[tuple[str, ...]]) -> None:
    """A bare multi-output package in a join's `paths` contributes its `out` (`symlinkJoin`) or
    `meta.outputsToInstall` (`buildEnv`: `bin` where there is one, else `out`), not its headers
    or libraries."""
    if join.name == "buildEnv" and any(binding.type == "binding" and attrpath_names(binding.child_by_field_name("attrpath")) == ["extraOutputsToInstall"] for binding in bindings_of(join.attrset)):
        return  # the join names the outputs it installs
    gets = "bin" if join.name == "buildEnv" and _outputs.in_every(judged, "bin") else "out"
    joined = {r.output for e in (site_list.children_by_field_name("element") if site_list is not None else ()) if (r := ctx.semantic.cuda_ref(e)) is not None and r.package == ref.package}
    wanted = [o for o in _JOINED[ctx.target.era.id] if o not in {gets, *joined} and _outputs.in_every(judged, o)]
    if not wanted:
        return  # the list joins its other outputs too
    calls = _outputs.getter_calls(ctx, root, wanted, text(root))
    outputs = [f"({c})" for c in calls[0]] if calls is not None else [f"(lib.{_outputs.getter(ctx, o)} {text(root)})" for o in wanted]
    fix = None
    # appended beside the package, whose `out` may still hold files no other output has
    added = edits.append_to_list(ctx.source, site_list, outputs) if calls is not None and site_list is not None else None
    if added is not None:
        fix = Fix("Also join the outputs that hold its files", Applicability.UNSAFE, (added, *calls[1]), isolation=f"join-{site_list.start_byte}")
    only = "its nearly empty `out`" if gets == "out" else "its `bin` output"
    ctx.report(root, f"`{text(root)}` in the `paths` of `{join.name}` adds only {only}; also join `{' '.join(outputs)}`", fixes=[fix])


def _report_symlink_farm(ctx: Context, ref: CudaRef, root: Node, attr: str, judged: list[tuple[str, ...]]) -> None:
    package_text = text(flatten_apply(unparen(root))[1][-1]) if ref.getter is not None else text(root)
    named = [o for o in _SYMLINK_FARM_NAMED if _outputs.in_every(judged, o)]
    wants_static = (ref.getter is not None and ref.output == "static") or (ref.package in _STATIC_RUNTIME and _builds_with_cmake(ctx, root))
    if wants_static:
        # the static runtime stays: asked for by name, or linked by CMake's CUDA check
        named = ([] if ref.getter is not None else named) + ["static"] if _outputs.in_every(judged, "static") else []
    named_text = " ".join(f"{package_text}.{o}" for o in named) if named else f"{package_text}.<output>"
    fix = None
    others = {o for outputs in judged for o in outputs} - {"out", "static", *named}
    element = _list_element(root)
    if named and (not others or named == ["static"]) and element is not None:
        fix = Fix(f"Name the outputs: `{named_text}`", Applicability.SAFE, (Edit(element.start_byte, element.end_byte, _separator(ctx, element).join(f"{package_text}.{o}" for o in named)),))
    # getters return the whole package in this era
    ctx.report(root, f"`{text(root)}` in `{attr}` keeps every output of `{ref.package}` (static included) at run time; write `{named_text}`", fixes=[fix])


def _builds_with_cmake(ctx: Context, root: Node) -> bool:
    call = ctx.semantic.enclosing_call(root)
    return call is not None and call.attrset is not None and builds_with_cmake(call.attrset, ctx)


def _report_propagated(ctx: Context, ref: CudaRef, root: Node, attr: str, judged: list[tuple[str, ...]]) -> None:
    fix = None
    element = _list_element(root)
    if element is not None:
        call = _outputs.getter_call(ctx, root, "lib", text(root))
        if call is not None:
            fix = Fix(f"Propagate `({call[0]})`", Applicability.UNSAFE, (Edit(element.start_byte, element.end_byte, f"({call[0]})"), *call[1]))
    # the split-redist era stopped `dev` from propagating `static`
    propagated = "`dev` and `static`" if ctx.target.era.id == "multi-output" and _outputs.in_every(judged, "static") else "`dev`"
    ctx.report(root, f"`{text(root)}` in `{attr}` hands its {propagated} to every dependent; propagate `(lib.getLib {text(root)})`", fixes=[fix])


# A comment naming a header file: `cuda_nvrtc # nvrtc.h` is propagated for its headers on purpose.
_HEADER_COMMENT = re.compile(rb"#[^\n]*(?:\b[\w/]+\.(?:h|hh|hpp|hxx|cuh)\b|\bheaders?\b)")


def _propagated_for_headers(ctx: Context, node: Node) -> bool:
    """The element's comment on its line names a header (`cuda_nvrtc # nvrtc.h`): dependents
    include it through this package's public headers, so the `dev` output is what must be
    propagated (a header-only library propagates it so)."""
    data = ctx.source.data
    line_end = data.find(b"\n", node.end_byte)
    return _HEADER_COMMENT.match(data[node.end_byte : line_end if line_end >= 0 else len(data)].lstrip(b" \t,")) is not None


def _declares_dev_output(input_binding: Node) -> bool:
    """The derivation holding `input_binding` declares a `dev` output: its propagated inputs are
    then recorded in `dev`, for dependents that compile against its headers, and a library whose
    public headers include the CUDA package's headers must hand them on (nixpkgs' libcublas
    propagates `cuda_cudart` so)."""
    attrset = input_binding.parent.parent if input_binding.parent is not None else None
    if attrset is None:
        return False
    for binding in bindings_of(attrset):
        if binding.type == "binding" and attrpath_names(binding.child_by_field_name("attrpath")) == ["outputs"]:
            value = binding_value(binding)
            return value is not None and any(string_literal(node) == "dev" for node in descendants(value))
    return False


def _list_element(node: Node) -> Node | None:
    """The element of a list literal that is `node` (with its parentheses), if it is one; not a
    whole binding value (`x = pkg;`), whose uses are references of their own."""
    element = node
    while element.parent is not None and element.parent.type == "parenthesized_expression":
        element = element.parent
    return element if element.parent is not None and element.parent.type == "list_expression" else None


def _separator(ctx: Context, element: Node) -> str:
    """Between the named outputs: a new line where the list has one element per line."""
    line_start = ctx.source.data.rfind(b"\n", 0, element.start_byte) + 1
    indent = ctx.source.data[line_start : element.start_byte]
    return "\n" + indent.decode("utf-8") if indent.strip() == b"" else " "
