"""The NVIDIA driver package (`nvidia_x11`) used by a package or dev shell.

Flags the driver from nixpkgs, `nvidia_x11`, `linuxPackages*.nvidia_x11`,
`config.boot.kernelPackages.nvidia_x11`, `...nvidiaPackages.stable`,
`config.hardware.nvidia.package`, where it becomes part of what is built or run: in build
inputs (`buildInputs`, `nativeBuildInputs`, `propagatedBuildInputs`, a dev shell's
`packages`, an FHS environment's `targetPkgs`/`multiPkgs`, a let-bound list passed on with
`inherit buildInputs;`, ...), in `lib.makeLibraryPath`/`makeSearchPath` (also of a let-bound
list), on `LD_LIBRARY_PATH`, or interpolated into a derivation's or shell's strings
(`-L${nvidia_x11}/lib`, `patchelf --set-rpath ${nvidia_x11}/lib`). A variable bound to the
driver is reported where it is bound, `inherit (pkgs.linuxPackages) nvidia_x11;` at the
inherited name, once.

What each context gets (`ctx.place`): a package, a warning (link the `libcuda.so` stub, find the
driver through `autoAddDriverRunpath`); a dev shell, a warning (use the host's
`${addDriverRunpath.driverLink}/lib`); a NixOS/home-manager module, a warning where a driver from
nixpkgs (`pkgs.linuxPackages*.nvidia_x11`) is used by `environment.*`, `home.*`,
`programs.nix-ld.*` or `systemd.*` (`ExecStart = "${pkgs.linuxPackages.nvidia_x11.bin}/bin/nvidia-smi"`):
it is the default kernel's driver, not the one the system loads, and the unsafe fix writes
`config.hardware.nvidia.package` where the module takes `config`.

Not flagged: NixOS driver selection (`hardware.nvidia.package = ...`, `boot.extraModulePackages`,
`services.xserver.videoDrivers`), the system's own driver (`config....`) in a module, a variable
merely named `nvidia_x11` that is bound to something else, metadata (`nvidia_x11.version`),
commented-out shell lines, and overrides of `nvidia_x11` that set `version`/`src` to match the
host's driver (nixGL-style wrappers).

## Why
The user-space driver libraries (`libcuda.so`, `libnvidia-ml.so`) must match the kernel module
of the machine the program runs on, which nixpkgs cannot know at build time. A package that
links or wraps `nvidia_x11` is tied to one driver version: it fails with "API mismatch" on any
other host and is rebuilt for every driver update. nixpkgs links CUDA programs against the
`libcuda.so` stub that `cuda_cudart` ships and finds the real driver at run time through the
RUNPATH entry `autoAddDriverRunpath` adds (`/run/opengl-driver/lib`, which NixOS points at the
host's driver). In a NixOS module, `pkgs.linuxPackages.nvidia_x11` belongs to the default
kernel, while the system loads `config.hardware.nvidia.package` (which follows
`boot.kernelPackages`): `nvidia-smi` from the other one fails with "Driver/library version
mismatch". Packages and shells get no automatic fix: what replaces the driver depends on
whether it was linked, wrapped or run. The module fix is unsafe: it changes the driver used.

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
- https://github.com/NixOS/nixpkgs/blob/master/nixos/modules/hardware/video/nvidia.nix
"""

from __future__ import annotations

import re

from tree_sitter import Node

from cudalint.knowledge import catalog
from cudalint.lint import edits
from cudalint.lint.context import Context
from cudalint.lint.model import Applicability, Fix, FixAvailability, Severity
from cudalint.lint.rule import Rule
from cudalint.nix.places import Place
from cudalint.nix.semantic import SEARCH_PATH_FUNCTIONS
from cudalint.nix.syntax import (
    STRING_TYPES,
    ancestors,
    attrpath_names,
    binding_value,
    descendants,
    dotted_name,
    flatten_apply,
    identifier_name,
    last_name,
    text,
    unparen,
)
from cudalint.rules._driver import (
    LD,
    METADATA,
    DriverRef,
    driver_override_chain,
    driver_ref,
    driver_runpath_name,
    overrides_match_host,
)
from cudalint.rules._runpath_hooks import driver_hook

RULE = Rule(
    code="CUDA103",
    name="driver-at-build-time",
    severity=Severity.WARNING,
    fix=Applicability.UNSAFE,
    availability=FixAvailability.SOMETIMES,
    summary="The NVIDIA driver package (`nvidia_x11`) in a package's inputs, library path or build",
    node_types=("variable_expression", "inherited_attrs"),
    patterns=(b"nvidia_x11", b"nvidiaPackages", b"nvidia.package"),
)

_LD_WORD = re.compile(rb"(?<![A-Za-z0-9_])LD_LIBRARY_PATH\b")
_NOT_BUILT = frozenset({"meta", "passthru"})
# Search-path builders that count here: library paths (`makeBinPath` is not one).
_LIBRARY_PATH_FUNCTIONS = SEARCH_PATH_FUNCTIONS - {"makeBinPath"}
# Package lists of an FHS environment: functions of the package set returning a list.
_FHS_LISTS = frozenset({"targetPkgs", "multiPkgs"})
# Module options where a driver package is used, not selected: packages, nix-ld libraries,
# session variables, services (`hardware.*`, `boot.*`, `services.xserver.*` select it).
_MODULE_USES = ("environment.", "home.", "systemd.", "programs.nix-ld.")
_DRIVER_NAME = re.compile(r"^nvidia_x11(_[A-Za-z0-9_]+)?$")
_KERNEL_SET = re.compile(r"linuxPackages|kernelPackages")
_SYSTEM_DRIVER = "config.hardware.nvidia.package"


@RULE
def check(node: Node, ctx: Context) -> None:
    if node.type == "inherited_attrs":
        _check_inherit(node, ctx)
        return
    semantic = ctx.semantic
    root = semantic.reference_root(node)
    ref = driver_ref(semantic, root)
    if ref is None or ref.via_let or _from_inherit(ctx, root):
        return  # not the driver, or a variable whose definition is reported
    if ref.rest[:1] and ref.rest[0] in METADATA:
        return
    expression, arguments = driver_override_chain(ref)
    if overrides_match_host(arguments) or (dotted_name(root) or "").endswith(".mkDriver"):
        return  # nixGL-style: the driver rebuilt as the host's release (or `nvidiaPackages.mkDriver { version = ...; }`)
    found = _where_used(ctx, ref, expression, 0)
    if found is not None:
        _report(ctx, root, ref, *found)


def _check_inherit(attrs: Node, ctx: Context) -> None:
    """`inherit (pkgs.linuxPackages) nvidia_x11;`: reported once, at the name, when a use of it
    reaches a build."""
    statement = attrs.parent
    source = statement.child_by_field_name("expression") if statement is not None and statement.type == "inherit_from" else None
    if source is None or not _KERNEL_SET.search(text(source)):
        return
    for attr in attrs.children_by_field_name("attr"):
        name = identifier_name(attr)
        if name is None or not _DRIVER_NAME.match(name):
            continue
        for use in ctx.semantic.uses(name, statement):
            root = ctx.semantic.reference_root(use)
            ref = driver_ref(ctx.semantic, root)
            if ref is None or (ref.rest[:1] and ref.rest[0] in METADATA):
                continue
            found = _where_used(ctx, ref, driver_override_chain(ref)[0], 0)
            if found is not None:
                _report(ctx, attr, DriverRef(attr, (), False), *found, shown=f"inherit (...) {name}")
                break


def _from_inherit(ctx: Context, root: Node) -> bool:
    """A use of a name bound by `inherit (linuxPackages) nvidia_x11;` (reported there)."""
    base = root
    while base.type == "select_expression":
        base = unparen(base.child_by_field_name("expression"))
    if base is None or base.type != "variable_expression":
        return False
    binding = ctx.semantic.resolve(base)
    return binding.kind == "inherit-from" and binding.source is not None and _KERNEL_SET.search(text(binding.source)) is not None


def _report(ctx: Context, at: Node, ref: DriverRef, where: str, place: Place, shown: str | None = None) -> None:
    shown = shown or text(at)
    if place.is_module:
        ctx.report(
            at,
            f"`{shown}` {where} is the default kernel's driver, not the one this system loads: use `{_SYSTEM_DRIVER}`",
            fixes=[_module_fix(ctx, at, ref)],
        )
    elif place.is_shell:
        ctx.report(at, f"`{shown}` {where} pins one driver release, which must match the host's: use the host's `${{{driver_runpath_name(ctx)}.driverLink}}/lib`")
    else:
        hook = driver_hook(ctx)  # the target's name for the hook (before 2024-04 the CUDA set's)
        instead = f"add `{hook}`" if hook is not None else f"call `{driver_runpath_name(ctx)}` on the binaries"
        ctx.report(at, f"`{shown}` {where} ties the package to one driver release: link the `libcuda.so` stub and {instead}")


def _module_fix(ctx: Context, at: Node, ref: DriverRef) -> Fix | None:
    """`pkgs.linuxPackages.nvidia_x11.bin` -> `config.hardware.nvidia.package.bin`, where the
    module takes `config` (a new formal could break a file imported by hand)."""
    if at.type not in {"variable_expression", "select_expression"} or ref.config or ref.via_let:
        return None
    if ctx.semantic.resolve_name("config", at).kind != "formal":
        return None
    replacement = ".".join((_SYSTEM_DRIVER, *ref.rest))
    return Fix(f"Use `{replacement}`", Applicability.UNSAFE, (edits.replace(at, replacement),))


def _where_used(ctx: Context, ref: DriverRef, expression: Node, depth: int) -> tuple[str, Place] | None:
    """How the driver expression ends up in a build, a shell or a system, and where it stands."""
    semantic = ctx.semantic
    place = _place(ctx, expression)
    if place.is_module:
        return _module_use(ref, place)
    found = _input_use(ctx, expression, place)
    if found is not None:
        return found, place
    library_path = semantic.search_path_call(expression)
    if library_path is not None and last_name(flatten_apply(library_path)[0]) not in _LIBRARY_PATH_FUNCTIONS:
        library_path = None
    holder = library_path or expression
    if library_path is not None:
        return f"in `{last_name(flatten_apply(library_path)[0])}`", place
    interpolation = _interpolation_of(holder)
    if interpolation is not None:
        string = interpolation.parent
        if _commented_out(ctx, string, interpolation) or _NOT_BUILT & set(semantic.binding_path(string)):
            return None
        if _on_ld_library_path(ctx, string, interpolation):
            return "on `LD_LIBRARY_PATH`", place
        if place.node is not None or place.is_shell:
            return ("in the shell's environment" if place.is_shell else "in a build"), place
    if depth < 2:
        let = _let_binding(expression) or _let_list(ctx, expression)
        if let is not None:
            name, binding = let
            for use in semantic.uses(name, binding):
                found_use = _where_used(ctx, ref, semantic.reference_root(use), depth + 1)
                if found_use is not None:
                    return found_use
            inherited = _inherited_input(ctx, name, binding)
            if inherited is not None:
                return inherited
    return None


def _place(ctx: Context, expression: Node) -> Place:
    """Where the expression stands; a `let` value outside any builder (`libPath = ...; in
    buildFHSEnv { ... }`) stands where the variable is used."""
    place = ctx.place(expression)
    if place.node is not None or place.detail != "file":
        return place
    for ancestor in ancestors(expression):
        let = _let_binding(ancestor) if ancestor.parent is not None and ancestor.parent.type == "binding" else None
        if let is not None:
            uses = ctx.semantic.uses(*let)
            return ctx.place(uses[0]) if uses else place
    return place


def _module_use(ref: DriverRef, place: Place) -> tuple[str, Place] | None:
    """A driver from nixpkgs (not the system's own `config....`) used by a module option."""
    if ref.config or not place.detail.startswith(_MODULE_USES):
        return None
    parts = place.detail.split(".")
    shown = ".".join(parts if len(parts) <= 3 else [parts[0], parts[1], "*", parts[-1]])
    return f"in `{shown}`", place


def _input_use(ctx: Context, expression: Node, place: Place) -> str | None:
    attrs = ctx.semantic.input_attrs(expression)
    for attr in sorted(attrs):
        if attr in catalog.INPUT_ATTRIBUTES:
            return f"in `{attr}`"
    if "packages" in attrs and place.is_shell:
        return "in the shell's `packages`"
    fhs = _fhs_list(expression)
    if fhs is not None:
        return f"in `{fhs}`"
    return None


def _fhs_list(expression: Node) -> str | None:
    """`targetPkgs = pkgs: with pkgs; [ ... ]` (or `multiPkgs`) holding the expression."""
    child, parent = expression, expression.parent
    while parent is not None and parent.type in {"list_expression", "parenthesized_expression", "with_expression", "binary_expression"}:
        child, parent = parent, parent.parent
    if parent is None or parent.type != "function_expression" or parent.child_by_field_name("body") != child:
        return None
    binding = parent.parent
    if binding is None or binding.type != "binding" or binding_value(binding) != parent:
        return None
    names = attrpath_names(binding.child_by_field_name("attrpath"))
    return names[-1] if names and names[-1] in _FHS_LISTS else None


def _inherited_input(ctx: Context, name: str, binding: Node) -> tuple[str, Place] | None:
    """`buildInputs = [ ... ];` in a `let`, passed on with `inherit buildInputs;`."""
    if name not in catalog.INPUT_ATTRIBUTES and name != "packages":
        return None
    scope = binding.parent.parent if binding.parent is not None else None
    body = scope.child_by_field_name("body") if scope is not None and scope.type == "let_expression" else None
    for node in descendants(body) if body is not None else ():
        if node.type != "inherit":
            continue
        attrs = node.child_by_field_name("attrs")
        for attr in attrs.children_by_field_name("attr") if attrs is not None else ():
            if identifier_name(attr) == name and ctx.semantic.resolve_name(name, node).node == binding:
                place = ctx.place(node)
                if name != "packages" or place.is_shell:
                    return (f"in `{name}`" if name != "packages" else "in the shell's `packages`"), place
    return None


def _interpolation_of(node: Node) -> Node | None:
    parent = node.parent
    while parent is not None and parent.type == "parenthesized_expression":
        parent = parent.parent
    if parent is not None and parent.type == "interpolation" and parent.parent is not None and parent.parent.type in STRING_TYPES:
        return parent
    return None


def _commented_out(ctx: Context, string: Node, interpolation: Node) -> bool:
    shell = ctx.semantic.shell_text(string)
    line = shell.line_at(interpolation.start_byte) if shell is not None else None
    return line is not None and line.comment_start is not None and interpolation.start_byte >= line.comment_start


def _on_ld_library_path(ctx: Context, string: Node, interpolation: Node) -> bool:
    path = ctx.semantic.binding_path(string)
    if path and path[-1] == LD:
        return True
    shell = ctx.semantic.shell_text(string)
    if shell is None:
        return _LD_WORD.search(string.text or b"") is not None
    line = shell.line_at(interpolation.start_byte)
    return line is not None and _LD_WORD.search(line.code) is not None


def _let_list(ctx: Context, expression: Node) -> tuple[str, Node] | None:
    """`name = [ ... expression ... ];` in a `let`: the name and binding."""
    binding = ctx.semantic.let_binding_holding(expression)
    names = attrpath_names(binding.child_by_field_name("attrpath")) if binding is not None else []
    return (names[0], binding) if binding is not None and names and names[0] is not None else None


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
