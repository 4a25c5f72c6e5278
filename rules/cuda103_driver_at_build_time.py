"""The NVIDIA driver package (`nvidia_x11`) used by a package or dev shell.

Flags the driver from nixpkgs, `nvidia_x11`, `linuxPackages*.nvidia_x11`,
`config.boot.kernelPackages.nvidia_x11`, `...nvidiaPackages.stable`,
`config.hardware.nvidia.package`, where it becomes part of what is built or run: in build
inputs (`buildInputs`, `nativeBuildInputs`, `propagatedBuildInputs`, a dev shell's
`packages`, ...), in `lib.makeLibraryPath`/`makeSearchPath`, on `LD_LIBRARY_PATH`, or
interpolated into a derivation's strings (`-L${nvidia_x11}/lib`, `patchelf --set-rpath
${nvidia_x11}/lib`). A variable bound to the driver is reported where it is bound. Not
flagged: NixOS driver selection (`hardware.nvidia.package = ...`,
`config.boot.kernelPackages.nvidiaPackages.stable`, `services.xserver.videoDrivers`,
`boot.extraModulePackages`), the system's own driver (`config....`) on a NixOS
`LD_LIBRARY_PATH`, a variable merely named `nvidia_x11` that is bound to something else,
metadata (`nvidia_x11.version`), and overrides of `nvidia_x11` that set `version`/`src` to
match the host's driver (nixGL-style wrappers).

## Why
The user-space driver libraries (`libcuda.so`, `libnvidia-ml.so`) must match the kernel module
of the machine the program runs on, which nixpkgs cannot know at build time. A package that
links or wraps `nvidia_x11` is tied to one driver version: it fails with "API mismatch" on any
other host and is rebuilt for every driver update. nixpkgs links CUDA programs against the
`libcuda.so` stub that `cuda_cudart` ships and finds the real driver at run time through the
RUNPATH entry `autoAddDriverRunpath` adds (`/run/opengl-driver/lib`, which NixOS points at the
host's driver). There is no automatic fix: what replaces the driver depends on whether it was
linked, wrapped or run.

## Example
```nix
{ stdenv, linuxPackages, cudaPackages }:
stdenv.mkDerivation {
  pname = "gpu-tool";
  version = "1.0";
  src = ./.;
  nativeBuildInputs = [ cudaPackages.cuda_nvcc ];
  buildInputs = [
    cudaPackages.cuda_cudart
    linuxPackages.nvidia_x11
  ];
}
```

## Use instead
```nix
{ stdenv, autoAddDriverRunpath, cudaPackages }:
stdenv.mkDerivation {
  pname = "gpu-tool";
  version = "1.0";
  src = ./.;
  nativeBuildInputs = [
    cudaPackages.cuda_nvcc
    autoAddDriverRunpath
  ];
  buildInputs = [ cudaPackages.cuda_cudart ];
}
```

## References
- https://nixos.org/manual/nixpkgs/unstable/#cuda
- https://github.com/NixOS/nixpkgs/pull/117318
- https://github.com/NixOS/nixpkgs/pull/139564
- https://github.com/NixOS/nixpkgs/pull/323249
"""

from __future__ import annotations

import re

from tree_sitter import Node

from cudalint import catalog
from cudalint.context import Context
from cudalint.model import Applicability, Rule, Severity
from cudalint.rules._driver import (
    LD,
    METADATA,
    DriverRef,
    driver_override_chain,
    driver_ref,
    enclosing_builder,
    overrides_match_host,
    placement,
)
from cudalint.semantic import SEARCH_PATH_FUNCTIONS
from cudalint.syntax import (
    STRING_TYPES,
    attrpath_names,
    binding_value,
    dotted_name,
    flatten_apply,
    last_name,
    text,
)

RULE = Rule(
    code="CUDA103",
    name="driver-at-build-time",
    severity=Severity.WARNING,
    fix=Applicability.NONE,
    summary="The NVIDIA driver package (`nvidia_x11`) in a package's inputs, library path or build",
    node_types=("variable_expression",),
    patterns=(b"nvidia_x11", b"nvidiaPackages", b"nvidia.package"),
)

_LD_WORD = re.compile(rb"(?<![A-Za-z0-9_])LD_LIBRARY_PATH\b")
_NOT_BUILT = frozenset({"meta", "passthru"})
# Search-path builders that count here: library paths (`makeBinPath` is not one).
_LIBRARY_PATH_FUNCTIONS = SEARCH_PATH_FUNCTIONS - {"makeBinPath"}


@RULE
def check(node: Node, ctx: Context) -> None:
    semantic = ctx.semantic
    root = semantic.reference_root(node)
    ref = driver_ref(semantic, root)
    if ref is None or ref.via_let:
        return  # not the driver, or a variable whose definition is reported
    if ref.rest[:1] and ref.rest[0] in METADATA:
        return
    expression, arguments = driver_override_chain(ref)
    if overrides_match_host(arguments) or (dotted_name(root) or "").endswith(".mkDriver"):
        return  # nixGL-style: the driver rebuilt as the host's release (or `nvidiaPackages.mkDriver { version = ...; }`)
    where = _where_used(ctx, ref, expression, 0)
    if where is None:
        return
    kind = placement(ctx, root).kind
    in_shell = kind == "shell"
    if in_shell:
        tie = "ties the dev shell to one driver version, which must match the kernel module of the machine it runs on"
    elif kind == "system":
        tie = "puts one driver version on every session's library path, which must match the kernel module the system runs"
    else:
        tie = (
            "ties the package to one driver version, which must match the kernel module of the machine it runs on "
            "(and rebuilds it for every driver update)"
        )
    if in_shell:
        advice = (
            "Use the host's driver instead: NixOS exposes it in `${addDriverRunpath.driverLink}/lib`, and CUDA programs "
            "built by Nix find it there through their RUNPATH (`autoAddDriverRunpath`)"
        )
    elif kind == "system":
        advice = (
            "Refer to the system's own driver (`config.hardware.nvidia.package`, exposed in "
            "`${addDriverRunpath.driverLink}/lib`) instead"
        )
    else:
        advice = (
            "Link against the `libcuda.so` stub from `cuda_cudart` and find the host's driver at run time through the "
            "RUNPATH (`autoAddDriverRunpath`, `${addDriverRunpath.driverLink}/lib`)"
        )
    ctx.report(root, f"`{text(root)}` is the NVIDIA driver package {where}: that {tie}. {advice}")


def _where_used(ctx: Context, ref: DriverRef, expression: Node, depth: int) -> str | None:
    """How the driver expression ends up in a build, or None."""
    semantic = ctx.semantic
    found = _input_use(ctx, expression)
    if found is not None:
        return found
    library_path = semantic.search_path_call(expression)
    if library_path is not None and last_name(flatten_apply(library_path)[0]) not in _LIBRARY_PATH_FUNCTIONS:
        library_path = None
    holder = library_path or expression
    if library_path is not None and _feeds_build(ctx, ref, library_path):
        return f"in `{last_name(flatten_apply(library_path)[0])}`"
    interpolation = _interpolation_of(holder)
    if interpolation is not None:
        string = interpolation.parent
        if _on_ld_library_path(ctx, string, interpolation) and not _host_system(ref, expression):
            return "on `LD_LIBRARY_PATH`"
        builder = _builder_of(ctx, string)
        if builder is not None:
            return "in the dev shell's environment" if builder == "shell" else "in a derivation's build"
    if depth < 2:
        let = _let_binding(expression)
        if let is not None:
            name, binding = let
            for use in semantic.uses(name, binding):
                found = _where_used(ctx, ref, semantic.reference_root(use), depth + 1)
                if found is not None:
                    return found
    return None


def _input_use(ctx: Context, expression: Node) -> str | None:
    attrs = ctx.semantic.input_attrs(expression)
    for attr in sorted(attrs):
        if attr in catalog.INPUT_ATTRIBUTES:
            return f"in `{attr}`"
    if "packages" in attrs and (enclosing_builder(expression) or ("",))[0] == "shell":
        return "in the shell's `packages`"
    return None


def _feeds_build(ctx: Context, ref: DriverRef, call: Node) -> bool:
    """A library path of the driver counts unless it is the NixOS system's own driver outside any
    package (a session variable of the host)."""
    return not _host_system(ref, call)


def _host_system(ref: DriverRef, node: Node) -> bool:
    return ref.config and enclosing_builder(node) is None


def _interpolation_of(node: Node) -> Node | None:
    parent = node.parent
    while parent is not None and parent.type == "parenthesized_expression":
        parent = parent.parent
    if parent is not None and parent.type == "interpolation" and parent.parent is not None and parent.parent.type in STRING_TYPES:
        return parent
    return None


def _on_ld_library_path(ctx: Context, string: Node, interpolation: Node) -> bool:
    path = ctx.semantic.binding_path(string)
    if path and path[-1] == LD:
        return True
    shell = ctx.semantic.shell_text(string)
    if shell is None:
        return _LD_WORD.search(string.text or b"") is not None
    line = shell.line_at(interpolation.start_byte)
    return line is not None and _LD_WORD.search(line.code) is not None


def _builder_of(ctx: Context, string: Node) -> str | None:
    """The kind of builder (`derivation`, `wrapper`, `shell`) whose attributes hold `string`,
    outside `meta` and `passthru`."""
    found = enclosing_builder(string)
    if found is None or _NOT_BUILT & set(ctx.semantic.binding_path(string)):
        return None
    return found[0]


def _let_binding(expression: Node) -> tuple[str, Node] | None:
    """`name = expression;` in a `let` (or a `rec` attrset): the name and binding."""
    parent = expression.parent
    while parent is not None and parent.type == "parenthesized_expression":
        expression, parent = parent, parent.parent
    if parent is None or parent.type != "binding" or binding_value(parent) != expression:
        return None
    owner = parent.parent.parent if parent.parent is not None else None
    if owner is None or (owner.type != "let_expression" and owner.type != "rec_attrset_expression"):
        return None
    names = attrpath_names(parent.child_by_field_name("attrpath"))
    if len(names) != 1 or names[0] is None:
        return None
    return names[0], parent
