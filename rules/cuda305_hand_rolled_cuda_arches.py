"""Hand-written CUDA architecture lists instead of `cudaPackages.flags`.

Flags architectures written by hand: `-DCMAKE_CUDA_ARCHITECTURES=86` (also `CUDAARCHS=`, `native`,
`all`, `all-major`), `lib.cmakeFeature "CMAKE_CUDA_ARCHITECTURES" "80;86"`, nvcc's
`-gencode=arch=compute_80,code=sm_80` / `-arch=sm_86`, `TORCH_CUDA_ARCH_LIST = "8.0;8.6"`, in
flags, environment variables and shell phases; and lists built from `cudaCapabilities` or
`config.cudaCapabilities` with string functions (`lib.concatStringsSep`,
`lib.concatMapStringsSep`, `builtins.replaceStrings`, `map` with a string lambda). Not flagged:
values from `cudaPackages.flags` (`flags.cmakeCudaArchitecturesString`, `flags.gencodeString`,
strings built from `flags.cudaCapabilities`, `flags.arches`, `flags.realArches`), the user's own
`config.cudaCapabilities = [ ... ]` setting, capabilities printed in messages (`throw`,
`lib.warn`, `lib.assertMsg`, `assert`, `meta`, `passthru`), shell comments, and the text a
`substituteInPlace --replace*` or `sed` line removes from upstream build files.

## Why
Which GPUs a build targets is the user's choice, made once in `config.cudaCapabilities` (and
`config.cudaForwardCompat`). `cudaPackages.flags` turns that choice into every format build
systems want: `flags.cmakeCudaArchitecturesString` for `CMAKE_CUDA_ARCHITECTURES`,
`flags.gencodeString` for nvcc, `flags.cudaCapabilities`, `flags.arches`, `flags.realArches`
(PR #322070 renamed `cudaFlags` to `flags`). A hard-coded `86` builds for one GPU generation only
(or, with `native`, for the GPU of a build machine that has none in the sandbox); building the
string from `config.cudaCapabilities` yourself skips the defaults for an unset option, forward
compatibility (PTX) and the per-release filtering of unsupported capabilities that `flags`
applies.

This is advice (info) without an automatic fix: which `flags` attribute fits depends on the build
system (CMake, plain nvcc, PyTorch extensions).

## Example
```nix
{ lib, cudaPackages, config }:
cudaPackages.backendStdenv.mkDerivation {
  pname = "kernels";
  version = "1.0";
  cmakeFlags = [ "-DCMAKE_CUDA_ARCHITECTURES=86" ];
  NVCC_FLAGS = "-gencode=arch=compute_80,code=sm_80";
  TORCH_CUDA_ARCH_LIST = lib.concatStringsSep ";" config.cudaCapabilities;
}
```

## Use instead
```nix
{ lib, cudaPackages }:
let
  inherit (cudaPackages) flags;
in
cudaPackages.backendStdenv.mkDerivation {
  pname = "kernels";
  version = "1.0";
  cmakeFlags = [ (lib.cmakeFeature "CMAKE_CUDA_ARCHITECTURES" flags.cmakeCudaArchitecturesString) ];
  NVCC_FLAGS = flags.gencodeString;
  TORCH_CUDA_ARCH_LIST = lib.concatStringsSep ";" flags.cudaCapabilities;
}
```

## References
- https://github.com/NixOS/nixpkgs/pull/322070
- https://nixos.org/manual/nixpkgs/unstable/#cuda
"""

from __future__ import annotations

import re

from tree_sitter import Node

from cudalint.context import Context
from cudalint.model import Applicability, Rule, Severity
from cudalint.syntax import (
    STRING_TYPES,
    attrpath_names,
    descendants,
    flatten_apply,
    last_name,
    outermost_apply,
    string_literal,
    text,
    unparen,
)

RULE = Rule(
    code="CUDA305",
    name="hand-rolled-cuda-arches",
    severity=Severity.INFO,
    fix=Applicability.NONE,
    summary="Hand-written CUDA architecture list instead of `cudaPackages.flags`",
    node_types=(
        "string_expression",
        "indented_string_expression",
        "binding",
        "apply_expression",
        "variable_expression",
        "select_expression",
    ),
    patterns=(
        b"CUDA_ARCHITECTURES",
        b"CUDAARCHS",
        b"CUDA_ARCH_LIST",
        b"compute_",
        b"sm_",
        b"cudaCapabilities",
    ),
)

_MASK = 0x01
# One architecture as CMake writes it (`86`, `90a`, `80-real`); a `;`/`,` separated list of them,
# or one of CMake's special values.
_CMAKE_VALUE = rb"(?:\d{2,3}[a-z]?(?:-real|-virtual)?(?:[;,]\d{2,3}[a-z]?(?:-real|-virtual)?)*|native|all-major|all)(?![\w.\x01-])"
_CMAKE_TEXT = re.compile(_CMAKE_VALUE.decode())
_TORCH_VALUE = rb"\d+\.\d+a?(?:\+PTX)?(?:[; ,]\d+\.\d+a?(?:\+PTX)?)*(?![\w.\x01])"
_TORCH_TEXT = re.compile(r"\s*" + _TORCH_VALUE.decode() + r"\s*")
_FLAG_PATTERNS: tuple[tuple[re.Pattern[bytes], str], ...] = (
    (
        re.compile(rb"(?<![\w-])(?:-D)?CMAKE_CUDA_ARCHITECTURES(?::[A-Za-z]+)?=['\"]?" + _CMAKE_VALUE),
        "`CMAKE_CUDA_ARCHITECTURES` is hand-written: use `cudaPackages.flags.cmakeCudaArchitecturesString`, which follows the user's `config.cudaCapabilities`",
    ),
    (
        re.compile(rb"(?<![\w-])CUDAARCHS=['\"]?" + _CMAKE_VALUE),
        "`CUDAARCHS` is hand-written: use `cudaPackages.flags.cmakeCudaArchitecturesString`, which follows the user's `config.cudaCapabilities`",
    ),
    (
        re.compile(rb"(?<![\w-])TORCH_CUDA_ARCH_LIST=['\"]?" + _TORCH_VALUE),
        "`TORCH_CUDA_ARCH_LIST` is hand-written: build it from `cudaPackages.flags.cudaCapabilities` (`lib.concatStringsSep \";\" flags.cudaCapabilities`), which follows the user's `config.cudaCapabilities`",
    ),
    (
        re.compile(
            rb"(?<![\w-])(?:-gencode|--generate-code)(?:=|[ \t]+)['\"]?arch=compute_\d+\w*(?:,code=(?:\[[\w,]*\]|[\w]+(?:,(?:sm|compute|lto)_\w+)*))?"
            rb"|(?<![\w-])(?:-arch|--gpu-architecture|-code|--gpu-code)(?:=|[ \t]+)['\"]?(?:(?:sm|compute|lto)_\d+\w*|native|all-major|all)(?![\w\x01-])"
        ),
        "nvcc architectures are hand-written: use `cudaPackages.flags.gencodeString`, which follows the user's `config.cudaCapabilities`",
    ),
)
# Lines that edit upstream build files: only the replacement text they insert counts.
_EDITING_LINE = re.compile(rb"\bsed\b|\bperl\b")
_REPLACE = re.compile(rb"--replace(?:-fail|-warn|-quiet)?[ \t]+(\"[^\"]*\"|'[^']*'|\S+)[ \t]+(\"[^\"]*\"|'[^']*'|\S+)")
_NOT_CODE = frozenset({"meta", "description", "longDescription"})

_ARCH_VARIABLES = frozenset({"CMAKE_CUDA_ARCHITECTURES", "CUDAARCHS", "TORCH_CUDA_ARCH_LIST"})
_CMAKE_SETTERS = frozenset({"cmakeFeature", "cmakeOptionType"})

# Functions the architecture list flows through on its way into a string.
_STRING_FUNCTIONS = frozenset(
    {"concatStringsSep", "concatMapStringsSep", "concatMapStrings", "concatStrings", "replaceStrings", "toString", "dropDots"}
)
_LIST_FUNCTIONS = frozenset({"map", "forEach", "filter", "intersectLists", "subtractLists", "unique", "optionals", "sort"})
_FLAGS_SETS = frozenset({"flags", "cudaFlags"})
# Functions that print a message, and which argument the message is.
_MESSAGE_FUNCTIONS = {"throw": 0, "abort": 0, "warn": 0, "trace": 0, "info": 0, "warnIf": 1, "warnIfNot": 1, "throwIf": 1, "throwIfNot": 1, "traceIf": 1, "assertMsg": 1}
_NOT_BUILD = frozenset({"meta", "description", "longDescription", "passthru"})
_MAX_DEPTH = 6


@RULE
def check(node: Node, ctx: Context) -> None:
    kind = node.type
    if kind in STRING_TYPES:
        _check_string(node, ctx)
    elif kind == "binding":
        _check_binding(node, ctx)
    elif kind == "apply_expression":
        _check_cmake_setter(node, ctx)
    else:
        _check_capabilities(node, ctx)


# ----- literal flags in strings ---------------------------------------------------------------


def _check_string(string: Node, ctx: Context) -> None:
    if any(part in _NOT_CODE for part in ctx.semantic.binding_path(string)) or _is_replaced_text(string):
        return
    shell = ctx.semantic.shell_text(string)
    if shell is not None:
        for line, match in shell.code_matches(_ANY_FLAG):
            if _EDITING_LINE.search(line.code) or not _inserted_by_replace(line.code, match):
                continue
            _report_flag(line.start + match.start(), line.start + match.end(), match.group(0), ctx)
        return
    start = string.start_byte
    masked = bytearray(ctx.source.data[start : string.end_byte])
    for child in string.children:
        if child.type == "interpolation":
            masked[child.start_byte - start : child.end_byte - start] = bytes([_MASK]) * (child.end_byte - child.start_byte)
    for match in _ANY_FLAG.finditer(bytes(masked)):
        _report_flag(start + match.start(), start + match.end(), match.group(0), ctx)


_ANY_FLAG = re.compile(b"|".join(b"(?:" + p.pattern + b")" for p, _ in _FLAG_PATTERNS))


def _report_flag(start: int, end: int, matched: bytes, ctx: Context) -> None:
    message = next(m for p, m in _FLAG_PATTERNS if p.match(matched))
    ctx.report((start, end), message)


def _inserted_by_replace(code: bytes, match: re.Match[bytes]) -> bool:
    """On a `substituteInPlace ... --replace-fail OLD NEW` line, only NEW is written by us."""
    replacements = list(_REPLACE.finditer(code))
    if not replacements:
        return True
    return any(r.start(2) <= match.start() and match.end() <= r.end(2) for r in replacements)


def _is_replaced_text(string: Node) -> bool:
    """The pattern list of `builtins.replaceStrings [ "-arch=sm_35" ] [ ... ] text`."""
    child, parent = string, string.parent
    while parent is not None and parent.type in {"list_expression", "parenthesized_expression"}:
        child, parent = parent, parent.parent
    if parent is None or parent.type != "apply_expression":
        return False
    function, arguments = flatten_apply(outermost_apply(parent))
    return last_name(function) == "replaceStrings" and bool(arguments) and arguments[0] == child


# ----- literal values of the architecture variables -------------------------------------------


def _check_binding(binding: Node, ctx: Context) -> None:
    names = attrpath_names(binding.child_by_field_name("attrpath"))
    if not names or names[-1] not in _ARCH_VARIABLES:
        return
    value = unparen(binding.child_by_field_name("expression"))
    literal = string_literal(value)
    if value is None or literal is None:
        return
    variable = names[-1]
    if variable == "TORCH_CUDA_ARCH_LIST":
        if _TORCH_TEXT.fullmatch(literal):
            ctx.report(value, next(m for p, m in _FLAG_PATTERNS if b"TORCH" in p.pattern))
    elif _CMAKE_TEXT.fullmatch(literal.strip()):
        ctx.report(value, f"`{variable}` is hand-written: use `cudaPackages.flags.cmakeCudaArchitecturesString`, which follows the user's `config.cudaCapabilities`")


def _check_cmake_setter(apply: Node, ctx: Context) -> None:
    if outermost_apply(apply) != apply:
        return
    function, arguments = flatten_apply(apply)
    if last_name(function) not in _CMAKE_SETTERS or len(arguments) < 2:
        return
    if string_literal(arguments[-2]) != "CMAKE_CUDA_ARCHITECTURES":
        return
    literal = string_literal(arguments[-1])
    if literal is not None and _CMAKE_TEXT.fullmatch(literal.strip()):
        ctx.report(
            apply,
            "`CMAKE_CUDA_ARCHITECTURES` is hand-written: pass `cudaPackages.flags.cmakeCudaArchitecturesString`, which follows the user's `config.cudaCapabilities`",
        )


# ----- architecture strings built from cudaCapabilities -----------------------------------------


def _check_capabilities(node: Node, ctx: Context) -> None:
    if node.type == "variable_expression":
        if text(node) != "cudaCapabilities" or _is_select_base(node):
            return
    else:
        names = attrpath_names(node.child_by_field_name("attrpath"))
        if not names or names[-1] != "cudaCapabilities":
            return
    if _capabilities_source(node, ctx, 0) == "flags":
        return
    for top in _string_tops(node, ctx, 0):
        if _is_message(top, ctx):
            continue
        ctx.report(
            top,
            "architecture list built by hand from `cudaCapabilities`: use `cudaPackages.flags` "
            "(`flags.cmakeCudaArchitecturesString`, `flags.gencodeString`, or `flags.cudaCapabilities` "
            "for other formats), which also handle defaults and forward compatibility",
        )


def _is_message(node: Node, ctx: Context) -> bool:
    """Capabilities printed in an error, a warning or the package's metadata, not passed to a build."""
    if any(part in _NOT_BUILD for part in ctx.semantic.binding_path(node)):
        return True
    parent = node.parent
    while parent is not None:
        if parent.type == "apply_expression":
            function, arguments = flatten_apply(outermost_apply(parent))
            index = _MESSAGE_FUNCTIONS.get(last_name(function) or "")
            if index is not None and len(arguments) > index and _within(arguments[index], node):
                return True
        if parent.type == "assert_expression" and _within(parent.child_by_field_name("condition"), node):
            return True
        parent = parent.parent
    return False


def _within(outer: Node | None, inner: Node) -> bool:
    return outer is not None and outer.start_byte <= inner.start_byte and inner.end_byte <= outer.end_byte


def _string_tops(node: Node, ctx: Context, depth: int) -> list[Node]:
    """The expressions that turn the capability list `node` into a string, following let-bound
    variables (`caps = config.cudaCapabilities; ... concatStringsSep ";" caps`)."""
    top, builds_string = _climb(node)
    if builds_string:
        return [top]
    binding = top.parent
    if depth >= 3 or binding is None or binding.type != "binding" or binding.child_by_field_name("expression") != top:
        return []
    owner = binding.parent.parent if binding.parent is not None else None
    names = attrpath_names(binding.child_by_field_name("attrpath"))
    if owner is None or owner.type not in {"let_expression", "rec_attrset_expression"} or len(names) != 1 or names[0] is None:
        return []
    if names[0] == "cudaCapabilities":
        return []  # its uses are checked themselves
    found: list[Node] = []
    for use in ctx.semantic.uses(names[0], binding):
        found.extend(_string_tops(use, ctx, depth + 1))
    return found


def _is_select_base(node: Node) -> bool:
    parent = node.parent
    return parent is not None and parent.type == "select_expression" and parent.child_by_field_name("expression") == node


def _capabilities_source(node: Node | None, ctx: Context, depth: int) -> str:
    """`flags` when the capabilities come from `cudaPackages.flags`, else `config`/`literal`."""
    node = unparen(node)
    if node is None or depth > _MAX_DEPTH:
        return "unknown"
    if node.type == "select_expression":
        base = node.child_by_field_name("expression")
        names = attrpath_names(node.child_by_field_name("attrpath"))
        if len(names) >= 2:
            return "flags" if names[-2] in _FLAGS_SETS else "config"
        base = unparen(base)
        if base is not None and base.type == "variable_expression":
            return _set_source(base, ctx)
        return "flags" if last_name(base) in _FLAGS_SETS else "config"
    if node.type == "variable_expression":
        binding = ctx.semantic.resolve(node)
        if binding.kind in {"let", "rec"}:
            if binding.value is None:
                return "unknown"
            return _capabilities_source(binding.value, ctx, depth + 1)
        if binding.kind == "inherit-from":
            return "flags" if last_name(binding.source) in _FLAGS_SETS else "config"
        if binding.kind == "with":
            return "flags" if any(last_name(e) in _FLAGS_SETS for e in binding.withs) else "config"
        return "config"
    return "literal"


def _set_source(variable: Node, ctx: Context) -> str:
    """Whether a variable a `.cudaCapabilities` is selected from is (bound to) `flags`."""
    if text(variable) in _FLAGS_SETS:
        return "flags"
    binding = ctx.semantic.resolve(variable)
    if binding.kind in {"let", "rec"} and binding.value is not None and last_name(binding.value) in _FLAGS_SETS:
        return "flags"
    return "config"


def _climb(node: Node) -> tuple[Node, bool]:
    """Follow the capability list up through list and string functions; the outermost
    expression reached, and whether a string is made of it."""
    current = node
    builds_string = False
    while current.parent is not None:
        parent = current.parent
        if parent.type == "parenthesized_expression":
            current = parent
            continue
        if parent.type == "binary_expression" and parent.child_by_field_name("operator").type == "++":
            current = parent
            continue
        if parent.type == "apply_expression" and parent.child_by_field_name("argument") == current:
            call = outermost_apply(parent)
            function, arguments = flatten_apply(call)
            name = last_name(function)
            if name in _STRING_FUNCTIONS:
                builds_string = True
            elif name in _LIST_FUNCTIONS:
                if name in {"map", "forEach"} and arguments and _makes_strings(arguments[0] if name == "map" else arguments[-1]):
                    builds_string = True
            else:
                break
            current = call
            continue
        break
    return current, builds_string


def _makes_strings(function: Node) -> bool:
    """A mapped function that formats capabilities: calls a string function or writes sm_/compute_."""
    for node in descendants(function):
        if node.type in {"variable_expression", "select_expression"} and last_name(node) in _STRING_FUNCTIONS:
            return True
        if node.type == "string_fragment" and re.search(r"sm_|compute_|lto_", text(node)):
            return True
    return False
