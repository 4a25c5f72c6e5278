"""Hand-written CUDA architecture lists instead of the user's `config.cudaCapabilities`.

Flags architectures written by hand, in any form: `-DCMAKE_CUDA_ARCHITECTURES=86` (also
`CUDAARCHS=`, `native`, `all`, `all-major`), `lib.cmakeFeature "CMAKE_CUDA_ARCHITECTURES" "80;86"`,
OpenCV's `-DCUDA_ARCH_BIN=8.6` / `CUDA_ARCH_PTX`, nvcc's `-gencode=arch=compute_80,code=sm_80`
(also `-gencode arch=...`) / `-arch=sm_86`, `TORCH_CUDA_ARCH_LIST = "8.0;8.6"` or
`export TORCH_CUDA_ARCH_LIST="8.6"`, project options under other names (`-DCOMPUTE_CAPABILITY=86`,
`CUDA_ARCH_LIST=8.6`, the CUDA samples' Makefile `SMS="80 86"`, a Makefile's `GENCODE_FLAGS=` holding
`-gencode` flags), in flags, environment variables and shell phases; and a
literal that reaches one of them through a name: a formal default (`cudaArch ? "86"` used in
`"-DCMAKE_CUDA_ARCHITECTURES=${cudaArch}"`), a `let` binding, a literal list joined with
`lib.concatStringsSep`, chosen by an `if` or extended with `++` (reported once, where the
literal is written); and a package's own capability argument with a hand-written default
(`cudaCapabilities ? [ "7.5" "8.6" ]`, also `cudaArchList ? [ ... ]`), which shadows the user's choice
whatever variable it feeds.

Not flagged: lists derived from the user's choice, whatever the route: `cudaPackages.flags.*`
(`flags.cmakeCudaArchitecturesString`, `flags.gencodeString`, `flags.cudaCapabilities`,
`flags.arches`), the old `cudaPackages.cudaFlags` (CUDA005 handles the rename),
`config.cudaCapabilities` (also `pkgs.config.cudaCapabilities or [ ]`), and
`torch.cudaCapabilities` (the nixpkgs idiom for torch extensions: they must target what torch
was built for); the user's own `config.cudaCapabilities = [ ... ]` setting; capabilities printed
in messages or `meta`; shell comments; the text a `substituteInPlace --replace*` or `sed` line
removes from upstream build files; expected values of a test (an operand of `==` / `!=`, or a
`let`-bound `expected = { gencode = [ ... ]; }` that an assertion compares with what
`flags` produced, a string in an `assert` condition such as `lib.hasInfix ''...'' drv.preConfigure`),
and the script of a test's `runCommand` (named `...test...` or in a `tests/` directory), which
feeds lists in on purpose, unsupported ones included: the package set's own tests spell out the
formats.

Contexts: the same advice everywhere (info); a dev shell that exports a list for a local build
gets it too, since `flags` is one attribute away there as well.

## Why
Which GPUs a build targets is the user's choice, made once in `config.cudaCapabilities` (and
`config.cudaForwardCompat`). `cudaPackages.flags` turns that choice into every format build
systems want: `flags.cmakeCudaArchitecturesString` for `CMAKE_CUDA_ARCHITECTURES`,
`flags.gencodeString` for nvcc, `flags.cudaCapabilities`, `flags.arches`, `flags.realArches`
(PR #256324 introduced `flags` in 2023-12 with `cudaFlags` as its alias; PR #322070 moved
packages to it). Reviewers ask the same of a project's own option, whatever its name
(`COMPUTE_CAPABILITY`, `CUDA_ARCH_LIST`, a Makefile's `SMS`): build its value from `flags`. A hard-coded `86` builds for one GPU generation only
(or, with `native`, for the GPU of a build machine that has none in the sandbox). A torch
extension builds for `torch.cudaCapabilities` so that it matches the torch it loads into
(nixpkgs' torch extensions set `TORCH_CUDA_ARCH_LIST` from it).

This is advice (info) without an automatic fix: which `flags` attribute fits depends on the build
system (CMake, plain nvcc, PyTorch extensions). The advice names what the target nixpkgs has (the
reference set's vocabulary): `cudaPackages.cudaFlags.cudaCapabilities` before `flags` (23.05,
23.11), the capability list before `cmakeCudaArchitecturesString` (PR #301416, 2024-04-18); before
`cudaFlags` (PR #205351, in 23.05) nixpkgs had no user's list, and the rule is silent.

## Example
```nix
{ lib, cudaPackages, config }:
cudaPackages.backendStdenv.mkDerivation {
  pname = "kernels";
  version = "1.0";
  cmakeFlags = [ "-DCMAKE_CUDA_ARCHITECTURES=86" ];
  NVCC_FLAGS = "-gencode=arch=compute_80,code=sm_80";
  TORCH_CUDA_ARCH_LIST = "8.6";
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

from cudalint.lint.context import Context
from cudalint.lint.model import Applicability, FixAvailability, Severity
from cudalint.lint.rule import Rule
from cudalint.nix.syntax import (
    STRING_TYPES,
    ancestors,
    attrpath_names,
    descendants,
    flatten_apply,
    last_name,
    outermost_apply,
    string_literal,
    text,
    unparen,
)
from cudalint.rules._cuda_compilation import contains
from cudalint.rules._test_code import in_test_script

# Project options under other names: `-DCOMPUTE_CAPABILITY=86`, `CUDA_ARCH_LIST=8.6`, the CUDA
# samples' Makefile `SMS="80 86"`; dotted or not.
_OTHER_VARIABLES = frozenset({"COMPUTE_CAPABILITY", "CUDA_ARCH_LIST", "SMS"})
_ARCH_VARIABLES = frozenset({"CMAKE_CUDA_ARCHITECTURES", "CUDAARCHS", "TORCH_CUDA_ARCH_LIST", "CUDA_ARCH_BIN", "CUDA_ARCH_PTX"}) | _OTHER_VARIABLES

RULE = Rule(
    code="CUDA305",
    name="hand-rolled-cuda-arches",
    severity=Severity.INFO,
    fix=Applicability.NONE,
    availability=FixAvailability.NEVER,
    summary="Hand-written CUDA architecture list instead of the user's `config.cudaCapabilities`",
    node_types=("string_expression", "indented_string_expression", "binding", "apply_expression", "formal"),
    patterns=(b"CUDA_ARCHITECTURES", b"CUDAARCHS", b"CUDA_ARCH_LIST", b"CUDA_ARCH_BIN", b"CUDA_ARCH_PTX", b"compute_", b"sm_", b"apabilities", b"COMPUTE_CAPABILITY", b"SMS", b"cudaArch"),
    attrpath_patterns=tuple(name.encode() for name in _ARCH_VARIABLES),
)

_MASK = 0x01
# One architecture as CMake writes it (`86`, `90a`, `80-real`); a `;`/`,` separated list of them,
# or one of CMake's special values.
_CMAKE_VALUE = rb"(?:\d{2,3}[a-z]?(?:-real|-virtual)?(?:[;,]\d{2,3}[a-z]?(?:-real|-virtual)?)*|native|all-major|all)(?![\w.\x01-])"
_CMAKE_TEXT = re.compile(_CMAKE_VALUE.decode())
_TORCH_VALUE = rb"\d+\.\d+a?(?:\+PTX)?(?:[; ,]\d+\.\d+a?(?:\+PTX)?)*(?![\w.\x01])"
_TORCH_TEXT = re.compile(r"\s*" + _TORCH_VALUE.decode() + r"\s*")
# `86`, `8.6`, `8.6+PTX`, `90a`, and lists of them (`;`, `,` or blanks between)
_ANY_ITEM = rb"(?:\d+\.\d+a?(?:\+PTX)?|\d{2,3}[a-z]?)"
_ANY_VALUE = _ANY_ITEM + rb"(?:[;, ]" + _ANY_ITEM + rb")*(?![\w.\x01])"
_ANY_TEXT = re.compile(r"\s*" + _ANY_VALUE.decode() + r"\s*")
_FLAG_PATTERNS: tuple[tuple[re.Pattern[bytes], str], ...] = (
    (
        re.compile(rb"(?<![\w-])(?:-D)?CMAKE_CUDA_ARCHITECTURES(?::[A-Za-z]+)?=['\"]?" + _CMAKE_VALUE),
        "`CMAKE_CUDA_ARCHITECTURES` is hand-written: use `cudaPackages.flags.cmakeCudaArchitecturesString`",
    ),
    (
        re.compile(rb"(?<![\w-])CUDAARCHS=['\"]?" + _CMAKE_VALUE),
        "`CUDAARCHS` is hand-written: use `cudaPackages.flags.cmakeCudaArchitecturesString`",
    ),
    (
        re.compile(rb"(?<![\w-])(?:-D)?CUDA_ARCH_(?:BIN|PTX)(?::[A-Za-z]+)?=['\"]?" + _TORCH_VALUE.replace(rb"a?(?:\+PTX)?", rb"a?")),
        "`CUDA_ARCH_BIN` is hand-written: build it from `cudaPackages.flags.cudaCapabilities`",
    ),
    (
        re.compile(rb"(?<![\w-])TORCH_CUDA_ARCH_LIST=['\"]?" + _TORCH_VALUE),
        "`TORCH_CUDA_ARCH_LIST` is hand-written: use `cudaPackages.flags.cudaCapabilities` (or `torch.cudaCapabilities`)",
    ),
    (
        re.compile(rb"(?<![\w-])(?:-D)?(?:COMPUTE_CAPABILITY|CUDA_ARCH_LIST|SMS)(?::[A-Za-z]+)?=['\"]?" + _ANY_VALUE),
        "`COMPUTE_CAPABILITY` is hand-written: build it from `cudaPackages.flags.cudaCapabilities`",
    ),
    (
        re.compile(
            rb"(?<![\w-])(?:-gencode|--generate-code)(?:=|[ \t]+)['\"]?arch=compute_\d+\w*(?:,code=(?:\[[\w,]*\]|[\w]+(?:,(?:sm|compute|lto)_\w+)*))?"
            rb"|(?<![\w-])(?:-arch|--gpu-architecture|-code|--gpu-code)(?:=|[ \t]+)['\"]?(?:(?:sm|compute|lto)_\d+\w*|native|all-major|all)(?![\w\x01-])"
        ),
        "nvcc architectures are hand-written: use `cudaPackages.flags.gencodeString`",
    ),
)
# Lines that edit upstream build files: only the replacement text they insert counts.
_EDITING_LINE = re.compile(rb"\bsed\b|\bperl\b")
_REPLACE = re.compile(rb"--replace(?:-fail|-warn|-quiet)?[ \t]+(\"[^\"]*\"|'[^']*'|\S+)[ \t]+(\"[^\"]*\"|'[^']*'|\S+)")
_NOT_CODE = frozenset({"meta", "description", "longDescription"})

_CMAKE_SETTERS = frozenset({"cmakeFeature", "cmakeOptionType"})

# Functions the architecture list flows through on its way into a string.
_STRING_FUNCTIONS = frozenset({"concatStringsSep", "concatMapStringsSep", "concatMapStrings", "concatStrings", "replaceStrings", "toString", "dropDots"})
_MAX_DEPTH = 6


@RULE
def check(node: Node, ctx: Context) -> None:
    kind = node.type
    if kind in STRING_TYPES:
        _check_string(node, ctx)
    elif kind == "binding":
        _check_binding(node, ctx)
    elif kind == "formal":
        _check_capabilities_formal(node, ctx)
    else:
        _check_cmake_setter(node, ctx)


# ----- literal flags in strings ---------------------------------------------------------------


def _check_string(string: Node, ctx: Context) -> None:
    if any(part in _NOT_CODE for part in ctx.semantic.binding_path(string)) or _is_replaced_text(string) or _is_expected_value(string, ctx):
        return
    _check_interpolations(string, ctx)
    found: list[tuple[int, int, bytes]] = []
    shell = ctx.semantic.shell_text(string)
    if shell is not None:
        for line, match in shell.code_matches(_ANY_FLAG):
            if _EDITING_LINE.search(line.code) or not _inserted_by_replace(line.code, match):
                continue
            found.append((line.start + match.start(), line.start + match.end(), match.group(0)))
    else:
        start = string.start_byte
        masked = bytearray(ctx.source.data[start : string.end_byte])
        for child in string.children:
            if child.type == "interpolation":
                masked[child.start_byte - start : child.end_byte - start] = bytes([_MASK]) * (child.end_byte - child.start_byte)
        found.extend((start + m.start(), start + m.end(), m.group(0)) for m in _ANY_FLAG.finditer(bytes(masked)))
    _report_flags(found, ctx)


_ANY_FLAG = re.compile(b"|".join(b"(?:" + p.pattern + b")" for p, _ in _FLAG_PATTERNS))


def _report_flags(found: list[tuple[int, int, bytes]], ctx: Context) -> None:
    """One finding per message and line: `-gencode a -gencode b` on one line is one list."""
    spans: dict[tuple[str, int], tuple[int, int]] = {}
    for start, end, matched in found:
        message = next(m for p, m in _FLAG_PATTERNS if p.match(matched))
        variable = re.match(rb"(?:-D)?(CUDA_ARCH_\w+?|COMPUTE_CAPABILITY|SMS)(?::|=)", matched)
        if variable is not None:
            message = message.replace("CUDA_ARCH_BIN", variable.group(1).decode()).replace("COMPUTE_CAPABILITY", variable.group(1).decode())
        key = (message, ctx.source.line_of(start))
        first = spans.get(key)
        spans[key] = (min(first[0], start), max(first[1], end)) if first else (start, end)
    for (message, _), span in spans.items():
        _report(ctx, span, message)


def _inserted_by_replace(code: bytes, match: re.Match[bytes]) -> bool:
    """On a `substituteInPlace ... --replace-fail OLD NEW` line, only NEW is written by us."""
    replacements = list(_REPLACE.finditer(code))
    if not replacements:
        return True
    return any(r.start(2) <= match.start() and match.end() <= r.end(2) for r in replacements)


def _is_expected_value(node: Node, ctx: Context) -> bool:
    """An expected value of a test: an operand of `==` / `!=` (`assert flags.gencode == [ ... ]`),
    or the value of a `let` binding that such a comparison reads (`expected = { gencode = [ ...
    ]; }; ... expected == actual`). Nothing is built from it."""
    for ancestor in ancestors(node):
        if ancestor.type == "binary_expression" and _compares(ancestor):
            return True
        if ancestor.type == "assert_expression" and contains(ancestor.child_by_field_name("condition"), node):
            return True  # `assert lib.hasInfix ''TORCH_CUDA_ARCH_LIST="8.9"'' drv.preConfigure;`
        if ancestor.type == "binding" and ancestor.parent is not None and ancestor.parent.parent is not None and ancestor.parent.parent.type == "let_expression":
            names = attrpath_names(ancestor.child_by_field_name("attrpath"))
            if len(names) == 1 and names[0] is not None and names[0] in _compared_in(ancestor.parent.parent, ctx):
                return True
    return in_test_script(node, ctx)


def _compares(expression: Node) -> bool:
    found = expression.child_by_field_name("operator")
    return found is not None and found.type in {"==", "!="}


def _compared_in(let: Node, ctx: Context) -> frozenset[str]:
    """The variables the `let`'s body compares with `==` / `!=` (once per `let`: each literal
    of its bindings asks, and a walk of the body each time was quadratic)."""
    memo = ctx.semantic.memo(__name__)
    key = ("compared in", let.start_byte, let.end_byte)
    if key not in memo:
        body = let.child_by_field_name("body")
        found = set()
        for node in descendants(body) if body is not None else ():
            if node.type == "binary_expression" and _compares(node):
                for side in ("left", "right"):
                    operand = unparen(node.child_by_field_name(side))
                    if operand is not None and operand.type == "variable_expression":
                        found.add(text(operand))
        memo[key] = frozenset(found)
    return memo[key]


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

# Where each variable's list should come from instead.
_ADVICE = {
    "CMAKE_CUDA_ARCHITECTURES": "cudaPackages.flags.cmakeCudaArchitecturesString",
    "CUDAARCHS": "cudaPackages.flags.cmakeCudaArchitecturesString",
    "TORCH_CUDA_ARCH_LIST": "torch.cudaCapabilities",
    "CUDA_ARCH_BIN": "cudaPackages.flags.cudaCapabilities",
    "CUDA_ARCH_PTX": "cudaPackages.flags.cudaCapabilities",
    "nvcc": "cudaPackages.flags.gencodeString",
}
# The text just before an interpolation that makes it an architecture value.
_PREFIX = re.compile(
    r"(?:(CMAKE_CUDA_ARCHITECTURES|CUDAARCHS|TORCH_CUDA_ARCH_LIST|CUDA_ARCH_BIN|CUDA_ARCH_PTX|COMPUTE_CAPABILITY|(?<![\w-])CUDA_ARCH_LIST|(?<![\w-])SMS)(?::[A-Za-z]+)?=['\"]?"
    r"|(?:compute|sm|lto)_|(?:-arch|--gpu-architecture|-code|--gpu-code)[= ])$"
)
# One architecture or capability, as any of the formats write it.
_ARCH_ITEM = re.compile(r"\s*(?:\d{2,3}[a-z]?(?:-real|-virtual)?|\d+\.\d+a?(?:\+PTX)?|(?:sm|compute)_\d{2,3}[a-z]?)\s*")
_ARCH_LIST = re.compile(r"(?:" + _ARCH_ITEM.pattern + r")(?:[;, ](?:" + _ARCH_ITEM.pattern + r"))*")


def _check_binding(binding: Node, ctx: Context) -> None:
    names = attrpath_names(binding.child_by_field_name("attrpath"))
    if not names or names[-1] not in _ARCH_VARIABLES or _is_expected_value(binding, ctx):
        return
    variable = names[-1]
    value = unparen(binding.child_by_field_name("expression"))
    literal = string_literal(value)
    if value is None:
        return
    if literal is None:
        _report_named_literal(value, variable, ctx)
        return
    if variable in _OTHER_VARIABLES:
        if _ANY_TEXT.fullmatch(literal):
            _report(ctx, value, f"`{variable}` is hand-written: {_advice(variable)}")
    elif variable == "TORCH_CUDA_ARCH_LIST" or variable.startswith("CUDA_ARCH_"):
        if _TORCH_TEXT.fullmatch(literal):
            _report(ctx, value, f"`{variable}` is hand-written: {_advice(variable)}")
    elif _CMAKE_TEXT.fullmatch(literal.strip()):
        _report(ctx, value, f"`{variable}` is hand-written: {_advice(variable)}")


# A package's own capability argument (`cudaCapabilities ? [ "7.5" "8.6" ]`) shadows the user's
# `config.cudaCapabilities` whatever it feeds.
# (`cudaArch ? "86"` is judged by the flag it feeds, whose advice is more precise.)
_CAPABILITY_FORMAL = re.compile(r"^(?:(?:cuda|gpu)(?:Compute)?Capabilities|cudaArch(?:List|s)|cudaArches)$")


def _check_capabilities_formal(formal: Node, ctx: Context) -> None:
    name = formal.child_by_field_name("name")
    default = formal.child_by_field_name("default")
    if name is None or default is None or not _CAPABILITY_FORMAL.match(text(name)):
        return
    found = _hand_written(default, ctx, 0)
    if found is not None:
        _report_once(found[0], f"`{text(name)} ? ...` hand-writes architectures: use `cudaPackages.flags.cudaCapabilities`", ctx)


def _advice(variable: str) -> str:
    if variable == "TORCH_CUDA_ARCH_LIST":
        return "use `cudaPackages.flags.cudaCapabilities` (or `torch.cudaCapabilities`)"
    if variable.startswith("CUDA_ARCH_") or variable in _OTHER_VARIABLES:
        return "build it from `cudaPackages.flags.cudaCapabilities`"
    return f"use `{_ADVICE[variable]}`"


def _check_cmake_setter(apply: Node, ctx: Context) -> None:
    if outermost_apply(apply) != apply:
        return
    function, arguments = flatten_apply(apply)
    if last_name(function) not in _CMAKE_SETTERS or len(arguments) < 2:
        return
    variable = string_literal(arguments[-2])
    if variable not in _ARCH_VARIABLES:
        return
    literal = string_literal(arguments[-1])
    if literal is None:
        _report_named_literal(arguments[-1], variable, ctx)
    elif (_CMAKE_TEXT if variable in ("CMAKE_CUDA_ARCHITECTURES", "CUDAARCHS") else _ANY_TEXT if variable in _OTHER_VARIABLES else _TORCH_TEXT).fullmatch(literal.strip()):
        _report(ctx, apply, f"`{variable}` is hand-written: {_advice(variable)}")


# ----- literals that reach an architecture variable through a name -------------------------------


def _check_interpolations(string: Node, ctx: Context) -> None:
    """`"-DCMAKE_CUDA_ARCHITECTURES=${cudaArch}"`, `"arch=compute_${arch}"` with a hand-written
    `cudaArch`."""
    previous = None
    for child in string.children:
        if child.type == "interpolation" and previous is not None and previous.type == "string_fragment":
            found = _PREFIX.search(text(previous))
            expression = child.named_children[0] if child.named_children else None
            if found and expression is not None:
                _report_named_literal(expression, found.group(1) or "nvcc", ctx)
        previous = child


def _report_named_literal(expression: Node, variable: str, ctx: Context) -> None:
    """Report, once, the hand-written literal a variable or a joined list brings to `variable`
    (a formal default, a `let` value, a literal list)."""
    found = _hand_written(expression, ctx, 0)
    if found is None:
        return
    literal, name = found
    what = f"`{name}`" if name else "this list"
    _report_once(literal, f"{what} hand-writes `{variable}` architectures: {_advice(variable)}", ctx)


# The advice as the newest nixpkgs spells it -> as a target before `flags` (2023-12-07) does.
_BEFORE_FLAGS = {
    "`cudaPackages.flags.cmakeCudaArchitecturesString`": "`cudaPackages.cudaFlags.cudaCapabilities` (dots dropped)",
    "`cudaPackages.flags.gencodeString`": "`-gencode` flags built from `cudaPackages.cudaFlags.cudaCapabilities`",
    "`cudaPackages.flags.cudaCapabilities`": "`cudaPackages.cudaFlags.cudaCapabilities`",
}


def _report(ctx: Context, at: Node | tuple[int, int], message: str) -> None:
    """Report with the advice in the target's names (the reference set's vocabulary): `cudaFlags`
    before `flags`, the capability list where `cmakeCudaArchitecturesString` does not exist yet;
    nothing before `cudaFlags` (PR #205351, in 23.05), when nixpkgs had no user's list to use."""
    idiom = ctx.reference.idiom("capabilityFlags", ctx.target)
    if idiom is None:
        return
    if idiom == "cudaPackages.cudaFlags":
        for new, old in _BEFORE_FLAGS.items():
            message = message.replace(new, old)
    elif not ctx.reference.has("cudaPackages.flags.cmakeCudaArchitecturesString", ctx.target):
        message = message.replace("`cudaPackages.flags.cmakeCudaArchitecturesString`", "`cudaPackages.flags.cudaCapabilities` (dots dropped)")
    ctx.report(at, message)


def _report_once(literal: Node, message: str, ctx: Context) -> None:
    """A literal reaches several flags (or a flag and its formal): one finding, where it is written."""
    reported = ctx.semantic.memo(__name__).setdefault("reported", set())
    if (literal.start_byte, literal.end_byte) in reported:
        return
    reported.add((literal.start_byte, literal.end_byte))
    _report(ctx, literal, message)


def _hand_written(node: Node | None, ctx: Context, depth: int) -> tuple[Node, str | None] | None:
    """(the literal, the name that carries it) when `node` is or names hand-written architectures."""
    node = unparen(node)
    if node is None or depth > _MAX_DEPTH:
        return None
    literal = string_literal(node)
    if literal is not None:
        return (node, None) if _ARCH_LIST.fullmatch(literal) else None
    if node.type == "list_expression":
        items = [item for item in node.named_children if item.type != "comment"]
        if items and all((value := string_literal(item)) is not None and _ARCH_ITEM.fullmatch(value) for item in items):
            return node, None
        return None
    if node.type == "variable_expression":
        binding = ctx.semantic.resolve(node)
        value = binding.value
        if binding.kind == "formal" and binding.node is not None and binding.node.type == "formal":
            value = binding.node.child_by_field_name("default")
        elif binding.kind not in {"let", "rec"}:
            return None
        found = _hand_written(value, ctx, depth + 1)
        if found is None:
            return None
        shown = f"{text(node)} ? {text(value)}" if binding.kind == "formal" else text(node)
        return found[0], found[1] or (shown if len(shown) <= 40 else text(node))
    if node.type == "apply_expression":
        function, arguments = flatten_apply(outermost_apply(node))
        if last_name(function) in _STRING_FUNCTIONS and arguments:
            return _hand_written(arguments[-1], ctx, depth + 1)
    # a list chosen among literals (`if old then cuda9Arches else cuda10Arches`) or extended
    # with them (`cuda9Arches ++ [ "7.5" ]`)
    if node.type == "if_expression":
        parts = [node.child_by_field_name("consequence"), node.child_by_field_name("alternative")]
    elif node.type == "binary_expression" and node.child_by_field_name("operator").type == "++":
        parts = [node.child_by_field_name("left"), node.child_by_field_name("right")]
    else:
        return None
    return next((found for part in parts if (found := _hand_written(part, ctx, depth + 1)) is not None), None)
