"""Whether a derivation compiles CUDA code, and where its nvcc comes from (CUDA302, CUDA309,
CUDA310).

"Compiles CUDA" is judged from the derivation's text: CMake's CUDA language (`CMAKE_CUDA_*`,
`LANGUAGES CUDA`), nvcc named in a phase or a flag, `.cu` sources, architecture flags,
`-DUSE_CUDA=ON`-style switches, `cudaPackages.flags`, a torch extension; a repackaged binary
(`dontBuild`, a wheel, prebuilt files patched by `autoPatchelfHook`) compiles nothing.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import TypeVar

from tree_sitter import Node

from cudalint.knowledge import catalog
from cudalint.lint import edits
from cudalint.lint.context import Context
from cudalint.nix.places import SHELL_BUILDERS
from cudalint.nix.syntax import (
    ATTRSET_TYPES,
    attrpath_names,
    binding_value,
    bindings_of,
    descendants,
    flatten_apply,
    last_name,
    outermost_apply,
    string_literal,
    text,
    unparen,
)

PYTHON_BUILDERS = frozenset({"buildPythonPackage", "buildPythonApplication"})
# Inputs through which a derivation gets its nvcc (a Python package's `build-system` too).
NVCC_INPUTS = catalog.NATIVE_INPUTS | catalog.HOST_INPUTS | {"depsBuildBuild", "build-system"}
# Outputs of the runfile toolkit or cuda_nvcc that carry the compiler.
NVCC_OUTPUTS = frozenset({"out", "bin", "dev"})
_MAX_DEPTH = 4
T = TypeVar("T")
# What `cudaPackages.flags` formats the user's capabilities into.
ARCH_FORMATS = frozenset({"cmakeCudaArchitecturesString", "gencodeString", "gencode", "cudaCapabilities", "arches", "realArches", "virtualArches"})
# Signs that device code is compiled here, in strings and attribute names: CMake's CUDA language,
# nvcc run in a phase, `.cu` sources, architecture flags, `-DUSE_CUDA`-style switches.
_COMPILES_CUDA = re.compile(
    r"CMAKE_CUDA_|enable_language\(\s*CUDA|LANGUAGES[^\n]*\bCUDA\b|\bnvcc\b|\.cu\b|\bCUDA_ARCH|TORCH_CUDA_ARCH_LIST"
    r"|-gencode|--generate-code|\bsm_\d{2,3}\b|\bcompute_\d{2,3}\b|FORCE_CUDA|CUDA_NVCC_FLAGS|NVCC_FLAGS"
    r"|(?:-D|(?<![A-Za-z]))(?:USE|WITH|ENABLE|BUILD|GGML|LLAMA)_CU(?:DA|BLAS)\b|--(?:with|enable)-cuda\b"
    r"|\bNVCC=|\bCUDACXX\b|\bCUDA_HOME\b"  # Make/Meson told which nvcc; CMake's CUDA compiler; torch's extension builder
    r"|CUDA_(?:BINARIES|KERNELS)\b"  # `WITH_CYCLES_CUDA_BINARIES`: a project option that compiles kernels
    r"|\b[A-Z][A-Z_]*(?:API|BACKEND|GPU)=(?:cuda|CUDA)\b"  # `-DGPU_API=cuda`: CUDA picked as the build's backend
)
# `lib.cmakeFeature "GPU_API" "cuda"`: the same choice through nixpkgs' CMake helpers
_CMAKE_HELPERS = frozenset({"cmakeFeature", "cmakeOptionType"})
# A torch extension (`buildPythonPackage` with torch and nvcc) compiles with nvcc.
TORCH = frozenset({"torch", "pytorch", "torchWithCuda", "torch-bin", "pytorchWithCuda"})
# Attributes of a repackaging derivation, which compiles nothing.
_NOTHING_COMPILED = {"dontBuild": "true", "format": '"wheel"'}


# ----- evidence that device code is compiled here ------------------------------------------------


def compiles_device_code(attrset: Node, function: Node, ctx: Context, torch_alone: bool = True) -> bool:
    """nvcc is reachable (the caller checked) and something compiles with it: CMake's CUDA
    language, nvcc in a phase, `.cu` sources, architecture flags, a `-DUSE_CUDA`-style switch,
    `cudaPackages.flags`, or a torch extension (with `torch_alone`, any torch among a Python
    package's attributes: with nvcc there, it builds one; not when CMake configures the build,
    whose options then decide). A package that only links CUDA libraries, and a repackaged
    binary, compile nothing with nvcc."""
    return _memoised("compiles", attrset, ctx, lambda: _compiles_device_code(attrset, function, ctx, torch_alone), function, torch_alone)


def _compiles_device_code(attrset: Node, function: Node, ctx: Context, torch_alone: bool) -> bool:
    for binding in bindings_of(attrset):
        if binding.type != "binding":
            continue
        names = attrpath_names(binding.child_by_field_name("attrpath"))
        value = binding_value(binding)
        if len(names) == 1 and names[0] in _NOTHING_COMPILED and value is not None and text(value) == _NOTHING_COMPILED[names[0]]:
            return False
    python = last_name(function) in PYTHON_BUILDERS or unparen(function).type == "apply_expression"
    # with CMake configuring the build, its options say whether CUDA is compiled, not torch's presence
    torch_alone = torch_alone and not builds_with_cmake(attrset, ctx)
    for node in reachable(attrset, ctx):
        if spells(node, _COMPILES_CUDA):
            return True
        if node.type == "select_expression" and _selects_arch_flags(node):
            return True  # `cudaPackages.flags.cmakeCudaArchitecturesString`: architectures to compile for
        if torch_alone and python and node.type in ("variable_expression", "select_expression") and last_name(node) in TORCH:
            return True
        if node.type == "apply_expression" and _selects_cuda_backend(node):
            return True
    return False


def _selects_arch_flags(select: Node) -> bool:
    """`cudaPackages.flags.x`, or an architecture format of a `flags` variable (`flags.gencodeString`
    with `inherit (cudaPackages) flags;` or a `flags` formal of a file the CUDA set calls)."""
    names = attrpath_names(select.child_by_field_name("attrpath"))
    if "flags" in names[:-1]:
        return True
    return bool(names) and names[-1] in ARCH_FORMATS and last_name(select.child_by_field_name("expression")) in {"flags", "cudaFlags"}


def _selects_cuda_backend(apply: Node) -> bool:
    function, arguments = flatten_apply(apply)
    if last_name(function) not in _CMAKE_HELPERS or len(arguments) < 2:
        return False
    name, value = string_literal(arguments[-2]), string_literal(arguments[-1])
    return name is not None and value is not None and value.lower() == "cuda" and bool(re.search(r"API|BACKEND|GPU", name))


def spells(node: Node, pattern: re.Pattern[str]) -> bool:
    """`node` is a string fragment, or a binding whose attribute name, `pattern` finds: a
    setting written in a flag string (`-DCMAKE_CUDA_ARCHITECTURES=...`) or as an attribute."""
    if node.type == "string_fragment":
        return pattern.search(text(node)) is not None
    if node.type == "binding":
        return any(n is not None and pattern.search(n) for n in attrpath_names(node.child_by_field_name("attrpath")))
    return False


# The node types the questions here look at in what a derivation reaches.
_REACHED_TYPES = frozenset({"string_fragment", "binding", "select_expression", "variable_expression", "apply_expression"})


def reachable(attrset: Node, ctx: Context) -> tuple[Node, ...]:
    """The attrset's strings, bindings, variables, selections and calls, in text order, and those
    of the let-bound values its variables name (cmakeFlags kept in a `let`). Computed once per
    node and file: CUDA302, CUDA309 and CUDA310 each ask several questions of the same call."""
    return _memoised("reachable", attrset, ctx, lambda: tuple(_reach(attrset, ctx)))


def _reach(attrset: Node, ctx: Context) -> Iterator[Node]:
    seen: set[tuple[int, int]] = set()
    stack = [(attrset, 0)]
    while stack:
        root, depth = stack.pop()
        for node in descendants(root):
            kind = node.type
            if kind not in _REACHED_TYPES:
                continue
            yield node
            if kind == "variable_expression" and depth < _MAX_DEPTH:
                binding = ctx.semantic.resolve(node)
                if binding.kind in {"let", "rec"} and binding.value is not None and binding.node is not None:
                    key = (binding.node.start_byte, binding.node.end_byte)
                    if key not in seen and not contains(binding.value, attrset):
                        seen.add(key)
                        stack.append((binding.value, depth + 1))


def _memoised(name: str, node: Node, ctx: Context, compute: Callable[[], T], *extra: object) -> T:
    """One answer per call or derivation and file for a question several rules ask of it (nodes
    key it: they hash and compare by their place in the tree)."""
    memo = ctx.semantic.memo(__name__)
    key = (name, node, *extra)
    if key not in memo:
        memo[key] = compute()
    return memo[key]


def derivation_attrset(argument: Node) -> Node | None:
    node = unparen(argument)
    if node is not None and node.type == "function_expression":
        node = unparen(node.child_by_field_name("body"))
    return node if node is not None and node.type in ATTRSET_TYPES else None


# ----- where nvcc comes from ---------------------------------------------------------------------


def nvcc_sources(attrset: Node, ctx: Context) -> tuple[tuple[str, Node], ...]:
    """(`runfile` | `join` | `redist`, node) for each nvcc the derivation's inputs bring."""
    return _memoised("nvcc_sources", attrset, ctx, lambda: _nvcc_sources(attrset, ctx))


def _nvcc_sources(attrset: Node, ctx: Context) -> tuple[tuple[str, Node], ...]:
    found: list[tuple[str, Node]] = []
    seen: set[tuple[int, int]] = set()
    for binding in bindings_of(attrset):
        if binding.type != "binding":
            continue
        names = attrpath_names(binding.child_by_field_name("attrpath"))
        if len(names) == 1 and names[0] in NVCC_INPUTS:
            _collect(binding_value(binding), ctx, 0, found, seen)
    return tuple(found)


def _collect(node: Node | None, ctx: Context, depth: int, found: list[tuple[str, Node]], seen: set[tuple[int, int]]) -> None:
    if node is None or depth > _MAX_DEPTH:
        return
    stack = [node]
    while stack:
        current = stack.pop()
        if current.type == "apply_expression" and outermost_apply(current) == current:
            function, arguments = flatten_apply(current)
            if last_name(function) in catalog.JOIN_BUILDERS:
                if arguments and _join_has_nvcc(arguments[-1], ctx):
                    found.append(("join", current))
                continue
            if last_name(function) in SHELL_BUILDERS:
                continue  # an FHS environment's nvcc is for its user, not for this build
        if current.type == "variable_expression":
            root = ctx.semantic.reference_root(current)
            ref = ctx.semantic.cuda_ref(root)
            binding = ctx.semantic.resolve(current)
            if ref is not None and ref.via != "let":
                if ref.output is None or ref.output in NVCC_OUTPUTS:
                    if catalog.is_runfile_toolkit(ref.package):
                        found.append(("runfile", root))
                    elif ref.package == "cuda_nvcc":
                        found.append(("redist", root))
                continue
            if binding.kind in {"let", "rec"} and binding.value is not None and binding.node is not None:
                key = (binding.node.start_byte, binding.node.end_byte)
                if key not in seen:
                    seen.add(key)
                    before = len(found)
                    _collect(binding.value, ctx, depth + 1, found, seen)
                    # report a join or toolkit reached through a variable at the variable's use
                    for index in range(before, len(found)):
                        kind, _ = found[index]
                        if kind in {"join", "runfile"}:
                            found[index] = (kind, current)
            continue
        stack.extend(reversed(current.children))


def _join_has_nvcc(argument: Node, ctx: Context) -> bool:
    attrset = unparen(argument)
    if attrset is None or attrset.type not in ATTRSET_TYPES:
        return False
    paths = edits.find_binding(attrset, "paths")
    value = binding_value(paths) if paths is not None else None
    if value is None:
        return False
    for variable in descendants(value):
        if variable.type != "variable_expression":
            continue
        ref = ctx.semantic.cuda_ref(ctx.semantic.reference_root(variable))
        if ref is not None and (ref.package == "cuda_nvcc" or catalog.is_runfile_toolkit(ref.package)):
            return True
    return False


def contains(outer: Node | None, inner: Node) -> bool:
    return outer is not None and outer.start_byte <= inner.start_byte and inner.end_byte <= outer.end_byte


def derivation_call(apply: Node, ctx: Context) -> tuple[Node, Node] | None:
    """(function, attrset) of `stdenv.mkDerivation {..}` (any stdenv, also `finalAttrs: {..}`),
    `buildPythonPackage {..}`, `(buildPythonPackage.override {..}) {..}`; None for other calls.
    Once per call and file: CUDA302, CUDA309 and CUDA310 ask it of every call."""
    return _memoised("derivation_call", apply, ctx, lambda: _derivation_call(apply))


def _derivation_call(apply: Node) -> tuple[Node, Node] | None:
    if outermost_apply(apply) != apply:
        return None
    function, arguments = flatten_apply(apply)
    if not arguments:
        return None
    attrset = derivation_attrset(arguments[-1])
    if attrset is None:
        return None
    if last_name(function) not in PYTHON_BUILDERS | {"mkDerivation"} and unparen(function).type != "apply_expression":
        return None
    return function, attrset


def package_build(apply: Node, ctx: Context) -> tuple[Node, Node] | None:
    """`derivation_call` where it builds a package: not a nix-shell environment (no source, no
    phases), a dev shell or a module's setting."""
    call = derivation_call(apply, ctx)
    return call if call is not None and ctx.place(call[1]).is_package else None


def is_python_builder(function: Node) -> bool:
    return last_name(function) in PYTHON_BUILDERS or unparen(function).type == "apply_expression"


def builder_label(function: Node) -> str:
    """How messages name the call (its own text can be long: `(buildPythonPackage.override {..})`)."""
    return "buildPythonPackage" if is_python_builder(function) else "stdenv.mkDerivation"


# ----- repackaged binaries -----------------------------------------------------------------------

# Sources that are built already: Debian packages, NVIDIA's runfiles, wheels, shared objects.
_PREBUILT_SOURCE = re.compile(r"\.(?:deb|run|whl|rpm|so(?:\.\d+)*|AppImage)\b")
_BUILD_SYSTEMS = frozenset({"cmake", "meson", "ninja", "bazel", "scons", "autoreconfHook"})


def repackages(attrset: Node, ctx: Context) -> bool:
    """The derivation ships binaries built elsewhere: `dontBuild = true`, a wheel
    (`format = "wheel"`, also in `fetchPypi`), or `autoPatchelfHook` fixing prebuilt files
    (a `.deb`/`.run`/`.whl`/`.so` source, or no build system among the native inputs)."""
    return _memoised("repackages", attrset, ctx, lambda: _repackages(attrset, ctx))


def _repackages(attrset: Node, ctx: Context) -> bool:
    patches_elf = False
    for node in reachable(attrset, ctx):
        if node.type == "binding":
            names = attrpath_names(node.child_by_field_name("attrpath"))
            value = binding_value(node)
            if len(names) == 1 and names[0] in _NOTHING_COMPILED and value is not None and text(value) == _NOTHING_COMPILED[names[0]]:
                return True
        elif node.type in ("variable_expression", "select_expression") and last_name(node) == "autoPatchelfHook":
            patches_elf = True
    if not patches_elf:
        return False
    return prebuilt_source(attrset, ctx) or not _names_in_inputs(attrset, ctx, catalog.NATIVE_INPUTS, _BUILD_SYSTEMS)


def prebuilt_source(attrset: Node, ctx: Context) -> bool:
    src = edits.find_binding(attrset, "src")
    value = binding_value(src) if src is not None else None
    return value is not None and any(n.type == "string_fragment" and _PREBUILT_SOURCE.search(text(n)) for n in reachable(value, ctx))


def builds_with_cmake(attrset: Node, ctx: Context) -> bool:
    """`cmake` among the native inputs: CMake configures the build (and its `FindCUDAToolkit`
    looks for nvcc), even when a Python build backend drives it (`dontUseCmakeConfigure`)."""
    return _names_in_inputs(attrset, ctx, catalog.NATIVE_INPUTS | {"build-system"}, frozenset({"cmake"}))


def _names_in_inputs(attrset: Node, ctx: Context, inputs: frozenset[str], wanted: frozenset[str]) -> bool:
    for binding in bindings_of(attrset):
        if binding.type != "binding":
            continue
        names = attrpath_names(binding.child_by_field_name("attrpath"))
        value = binding_value(binding)
        if len(names) == 1 and names[0] in inputs and value is not None:
            if any(n.type in ("variable_expression", "select_expression") and last_name(n) in wanted for n in reachable(value, ctx)):
                return True
    return False


def cuda_libraries(attrset: Node, ctx: Context) -> list[Node]:
    """The CUDA libraries and headers (not tools, hooks or toolkits) in the derivation's host
    inputs, as the outermost reference nodes, in text order."""
    found: dict[tuple[int, int], Node] = {}
    for binding in bindings_of(attrset):
        if binding.type != "binding":
            continue
        names = attrpath_names(binding.child_by_field_name("attrpath"))
        value = binding_value(binding)
        if len(names) != 1 or names[0] not in catalog.HOST_INPUTS or value is None:
            continue
        for node in reachable(value, ctx):
            if node.type != "variable_expression":
                continue
            root = ctx.semantic.reference_root(node)
            ref = ctx.semantic.cuda_ref(root)
            if ref is not None and ref.via != "let" and catalog.role(ref.package) in {"library", "headers"}:
                found.setdefault((root.start_byte, root.end_byte), root)
    return [found[key] for key in sorted(found)]


def inherited_names(attrset: Node) -> set[str]:
    """Attributes the derivation takes with `inherit` (`inherit (old) nativeBuildInputs;`): their
    values are elsewhere, maybe in a derivation this file does not show."""
    names: set[str] = set()
    for binding in bindings_of(attrset):
        if binding.type in {"inherit", "inherit_from"}:
            attrs = binding.child_by_field_name("attrs")
            names.update(text(a) for a in (attrs.children_by_field_name("attr") if attrs is not None else []))
    return names
