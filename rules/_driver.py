"""Shared knowledge of the NVIDIA driver and LD_LIBRARY_PATH for CUDA101-CUDA103 (not a rule module).

- which expressions denote the driver package (`nvidia_x11`, `linuxPackages*.nvidia_x11`,
  `config.boot.kernelPackages.nvidiaPackages.stable`, `config.hardware.nvidia.package`) or the
  driver directory (`addDriverRunpath.driverLink`, literal `/run/opengl-driver`);
- what a value put on LD_LIBRARY_PATH consists of (CUDA libraries, the driver, other things);
- which derivation a package-context finding can fix (`fixable_call`; where a node stands is
  `ctx.place`, cudalint/nix/places.py);
- what a shell word (`ShellText`, cudalint/nix/shell.py) puts on a library path, and whether an
  offset is in a shell comment or in a message (`echo`);
- spelling a top-level nixpkgs attribute (`autoAddDriverRunpath`, `addDriverRunpath`) where a fix
  writes it, and only when it is sure to resolve.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from tree_sitter import Node

from cudalint.knowledge import catalog
from cudalint.lint import edits
from cudalint.lint.context import Context
from cudalint.lint.model import Edit
from cudalint.nix.places import Place
from cudalint.nix.semantic import GETTERS, SEARCH_PATH_FUNCTIONS, Semantic
from cudalint.nix.shell import MASK, ShellText
from cudalint.nix.syntax import STRING_TYPES, attrpath_names, dotted_name, flatten_apply, last_name, text, unparen

LD = "LD_LIBRARY_PATH"

_FIXUP_OVERRIDES = frozenset({"overrideAttrs", "overridePythonAttrs"})

# Attributes of a package that are not part of what it builds or runs.
METADATA = frozenset({"version", "name", "pname", "meta", "passthru", "src", "outputs", "system", "drvPath", "majorVersion", "tests"})
OVERRIDES = catalog.OVERRIDE_FUNCTIONS - {"overridePythonAttrs"}

_DRIVER_NAME = re.compile(r"^nvidia_x11(_[A-Za-z0-9_]+)?$")
_DRIVER_SETS = re.compile(r"^(linuxPackages\w*|kernelPackages|pkgs|final|prev|self|super|nixpkgs)$")
DRIVER_DIR = "/run/opengl-driver"
_CUDA_LITERAL = re.compile(rb"cuda", re.I)
_DRIVER_DIR_LITERAL = re.compile(rb"/run/opengl-driver(?:-32)?(?:/|$)")
_DRIVER_LITERAL = re.compile(rb"nvidia|libcuda\.so", re.I)
# functions whose last argument is what they put on the path
_PASS_THROUGH = frozenset(
    {"map", "optionalString", "optional", "optionals", "mkIf", "mkForce", "mkMerge", "mkDefault", "mkOverride", "mkBefore", "mkAfter", "flatten", "unique", "getLib", "getOutput"}
)
SELF_REFERENCE = re.compile(rb"(?:''|\\)?\$\{LD_LIBRARY_PATH\b[^}]*\}|\$LD_LIBRARY_PATH\b")


# ----- the driver ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class DriverRef:
    """An expression denoting the NVIDIA driver package.

    `rest` are the attribute names selected after the driver (`bin`, `override`, `version`);
    `config` tells that it is reached through a NixOS `config` (the host's own driver); `via_let`
    that the expression is a variable bound by `let` to the driver (its definition is the place
    to report)."""

    node: Node
    rest: tuple[str, ...]
    config: bool
    via_let: bool = False


def _components(semantic: Semantic, expression: Node) -> tuple[list[str], Node | None] | None:
    """Names of a variable or select chain (`config.boot.kernelPackages.nvidia_x11` ->
    [config, boot, kernelPackages, nvidia_x11]); a base that is no plain name is "(...)"."""
    if expression.type == "variable_expression":
        return [text(expression.child_by_field_name("name"))], expression
    if expression.type != "select_expression" or expression.child_by_field_name("default") is not None:
        return None
    base = unparen(expression.child_by_field_name("expression"))
    names = attrpath_names(expression.child_by_field_name("attrpath"))
    if any(n is None for n in names):
        return None
    dotted = dotted_name(base)
    if dotted is None:
        return ["(...)", *names], None  # type: ignore[list-item]
    base_variable = base
    while base_variable is not None and base_variable.type == "select_expression":
        base_variable = unparen(base_variable.child_by_field_name("expression"))
    return [*dotted.split("."), *names], base_variable  # type: ignore[list-item]


def driver_ref(semantic: Semantic, node: Node | None, depth: int = 0) -> DriverRef | None:
    """If `node` denotes the NVIDIA driver package, how (see `DriverRef`)."""
    inner = unparen(node)
    if inner is None or node is None or depth > 6:
        return None
    if inner.type == "apply_expression":
        function, arguments = flatten_apply(inner)
        if last_name(function) in GETTERS and arguments:
            found = driver_ref(semantic, arguments[-1], depth + 1)
            return DriverRef(node, found.rest, found.config, found.via_let) if found is not None else None
        return None
    parts = _components(semantic, inner)
    if parts is None:
        return None
    names, base_variable = parts
    for index, name in enumerate(names):
        end = None
        if _DRIVER_NAME.match(name):
            end = index
        elif name == "nvidiaPackages" and index + 1 < len(names):
            end = index + 1
        elif names[index : index + 3] == ["hardware", "nvidia", "package"]:
            end = index + 2
        if end is None:
            continue
        rest = tuple(names[end + 1 :])
        config = names[0] == "config"
        if index == 0:
            return _driver_variable(semantic, node, inner, rest, depth)
        previous = names[index - 1]
        if name == "nvidiaPackages" or name == "hardware" or _DRIVER_SETS.match(previous):
            return DriverRef(node, rest, config)
        if index == 1 and base_variable is not None and base_variable.type == "variable_expression":
            # `kp.nvidia_x11` with `kp = config.boot.kernelPackages;`
            binding = semantic.resolve(base_variable)
            if binding.kind in {"let", "rec"} and binding.value is not None:
                value_names = _components(semantic, unparen(binding.value)) if unparen(binding.value) is not None else None
                if value_names is not None and value_names[0] and _DRIVER_SETS.match(value_names[0][-1]):
                    return DriverRef(node, rest, value_names[0][0] == "config")
            elif binding.kind in {"formal", "free", "with", "inherit-from"} and _DRIVER_SETS.match(previous):
                return DriverRef(node, rest, config)
        if previous == "(...)":
            base = unparen(inner.child_by_field_name("expression"))
            if base is not None and re.search(r"linuxPackages|kernelPackages", text(base)):
                return DriverRef(node, rest, config)
        return None
    return None


def _driver_variable(semantic: Semantic, node: Node, inner: Node, rest: tuple[str, ...], depth: int) -> DriverRef | None:
    variable = inner
    while variable.type == "select_expression":
        variable = unparen(variable.child_by_field_name("expression"))
    if variable is None or variable.type != "variable_expression":
        return None
    binding = semantic.resolve(variable)
    if binding.kind in {"formal", "free", "with", "inherit-from"}:
        return DriverRef(node, rest, False)
    if binding.kind in {"let", "rec"} and binding.value is not None:
        found = driver_ref(semantic, binding.value, depth + 1)
        if found is None or host_matched(semantic, found):
            return None  # a variable merely named like the driver, or a nixGL-style override
        return DriverRef(node, found.rest + rest, found.config, True)
    return None


def override_chain(node: Node) -> tuple[Node, list[Node]]:
    """Climb `x.override { } `, `(x.override { }).overrideAttrs (old: { })` from the reference
    `x`: the outermost expression of the chain and the override arguments."""
    current = node
    arguments: list[Node] = []
    while True:
        parent = current.parent
        while parent is not None and parent.type == "parenthesized_expression":
            current, parent = parent, parent.parent
        if parent is None or parent.type != "select_expression" or parent.child_by_field_name("expression") != current:
            return current, arguments
        names = attrpath_names(parent.child_by_field_name("attrpath"))
        if len(names) != 1 or names[0] not in OVERRIDES:
            return current, arguments
        call = parent.parent
        if call is None or call.type != "apply_expression" or call.child_by_field_name("function") != parent:
            return current, arguments
        arguments.append(call.child_by_field_name("argument"))
        current = call


_HOST_MATCH = re.compile(r"(?<![\w.])(version|src|url|sha256|hash)\s*=|\binherit\b[^;]*?(?<![\w.-])(version|src)(?![\w-])")


def overrides_match_host(arguments: list[Node | None]) -> bool:
    """Whether override arguments rebuild the driver as another release (nixGL-style, to match
    the host's kernel module): one of them sets (or inherits) `version`/`src`."""
    return any(a is not None and _HOST_MATCH.search(text(a)) for a in arguments)


def driver_override_chain(ref: DriverRef) -> tuple[Node, list[Node]]:
    """The whole `x.override { }` / `.overrideAttrs (...)` expression around a driver reference
    (which may itself end in `.override`), and the override arguments."""
    node = ref.node
    arguments: list[Node] = []
    if ref.rest and ref.rest[-1] in OVERRIDES:
        call = node.parent
        if call is not None and call.type == "apply_expression" and call.child_by_field_name("function") == node:
            arguments.append(call.child_by_field_name("argument"))
            node = call
    top, more = override_chain(node)
    return top, arguments + more


def host_matched(semantic: Semantic, ref: DriverRef) -> bool:
    """Whether the driver reference is overridden to match the host's driver (nixGL)."""
    if ref.via_let:
        return False
    _, arguments = driver_override_chain(ref)
    return overrides_match_host(arguments)


def is_driver_link(node: Node | None) -> bool:
    """`addDriverRunpath.driverLink` (or any `<x>.driverLink`, `addOpenGLRunpath.driverLink`)."""
    name = dotted_name(node)
    return name is not None and name.split(".")[-1] == "driverLink"


# ----- what a value put on a library path consists of -------------------------------------------

# CUDA libraries, the driver package (`nvidia_x11`), the driver directory (`driverLink`,
# `/run/opengl-driver`), anything else
CUDA, DRIVER, LINK, OTHER = "cuda", "driver", "link", "other"


def classify_expression(semantic: Semantic, node: Node | None, depth: int = 0) -> set[str]:
    """What a Nix value used as a library path list points at: {cuda, driver, other}."""
    node = unparen(node)
    if node is None or depth > 8:
        return {OTHER}
    kind = node.type
    if kind in STRING_TYPES:
        return _classify_string(semantic, node, depth)
    if kind == "list_expression":
        found: set[str] = set()
        for element in node.children_by_field_name("element"):
            found |= classify_expression(semantic, element, depth + 1)
        return found
    if kind == "binary_expression":
        return classify_expression(semantic, node.child_by_field_name("left"), depth + 1) | classify_expression(semantic, node.child_by_field_name("right"), depth + 1)
    if kind == "if_expression":
        return classify_expression(semantic, node.child_by_field_name("consequence"), depth + 1) | classify_expression(semantic, node.child_by_field_name("alternative"), depth + 1)
    if kind in {"let_expression", "with_expression", "assert_expression"}:
        return classify_expression(semantic, node.child_by_field_name("body"), depth + 1)
    if semantic.cuda_ref(node) is not None:
        return {CUDA}
    if is_driver_link(node):
        return {LINK}
    ref = driver_ref(semantic, node)
    if ref is not None and ref.rest[:1] not in {("version",), ("name",)}:
        return {DRIVER}
    if kind == "apply_expression":
        function, arguments = flatten_apply(node)
        name = last_name(function)
        if name in OVERRIDES and unparen(function) is not None and unparen(function).type == "select_expression":
            # `nvidia_x11.override { ... }`, `(x.override { }).overrideAttrs (...)`: what is overridden
            select = unparen(function)
            if len(attrpath_names(select.child_by_field_name("attrpath"))) > 1:
                found = driver_ref(semantic, select)
                return {DRIVER} if found is not None else ({CUDA} if semantic.cuda_ref(select) is not None else {OTHER})
            return classify_expression(semantic, select.child_by_field_name("expression"), depth + 1)
        if arguments and (name in SEARCH_PATH_FUNCTIONS or name in {"concatStringsSep", "concatMapStringsSep"}):
            return classify_expression(semantic, arguments[-1], depth + 1)
        if driver_ref(semantic, function) is not None:
            return {DRIVER}  # `nvidiaPackages.mkDriver { ... }`
        if arguments and name in _PASS_THROUGH:
            return classify_expression(semantic, arguments[-1], depth + 1)
        return {OTHER}
    if kind == "variable_expression":
        binding = semantic.resolve(node)
        if binding.kind in {"let", "rec"} and binding.value is not None:
            return classify_expression(semantic, binding.value, depth + 1)
    return {OTHER}


def _classify_string(semantic: Semantic, string: Node, depth: int) -> set[str]:
    found: set[str] = set()
    literal = bytearray()
    interpolations: list[Node] = []

    def close() -> None:
        found.update(_classify_piece(semantic, bytes(literal), interpolations, depth))
        literal.clear()
        interpolations.clear()

    for child in string.children:
        if child.type == "interpolation":
            interpolations.append(child)
            continue
        if child.type not in {"string_fragment", "escape_sequence"}:
            continue
        data = child.text or b""
        pieces = data.split(b":")
        for index, piece in enumerate(pieces):
            if index:
                close()
            literal.extend(piece)
    close()
    return found


def _classify_piece(semantic: Semantic, literal: bytes, interpolations: list[Node], depth: int) -> set[str]:
    if interpolations:
        found: set[str] = set()
        for interpolation in interpolations:
            expression = interpolation.child_by_field_name("expression") or next(iter(interpolation.named_children), None)
            found |= classify_expression(semantic, expression, depth + 1)
        return found
    return classify_literal(literal)


def classify_literal(literal: bytes) -> set[str]:
    """A literal path (or shell word) of a library path list."""
    literal = SELF_REFERENCE.sub(b"", literal)
    if not re.search(rb"[A-Za-z0-9_/]", literal.replace(b"'", b"").replace(b'"', b"")):
        return set()
    if _DRIVER_DIR_LITERAL.search(literal):
        return {LINK}
    if _DRIVER_LITERAL.search(literal):
        return {DRIVER}
    if _CUDA_LITERAL.search(literal):
        return {CUDA}
    return {OTHER}


def classify_shell_word(semantic: Semantic, shell: ShellText, start: int, end: int) -> set[str]:
    """What a shell word (absolute span, e.g. the value of `--prefix LD_LIBRARY_PATH :`) puts
    on a library path: its `:`-separated parts, each a literal or Nix interpolations."""
    data = bytearray(shell.source.data[start:end])
    masked = shell.masked[start - shell.offset : end - shell.offset]
    for match in SELF_REFERENCE.finditer(masked):
        data[match.start() : match.end()] = b" " * (match.end() - match.start())
    found: set[str] = set()
    position = 0
    for piece in bytes(data).split(b":"):
        piece_start = start + position
        piece_end = piece_start + len(piece)
        position += len(piece) + 1
        inside = shell.interpolations_in(piece_start, piece_end)
        if inside:
            for interpolation in inside:
                found |= classify_expression(semantic, shell.expression_of(interpolation))
        else:
            found |= classify_literal(bytes(masked[piece_start - start : piece_end - start]).replace(bytes([MASK]), b""))
    return found


def describe(classes: set[str]) -> str:
    if CUDA in classes and classes & {DRIVER, LINK}:
        return "CUDA libraries and the NVIDIA driver"
    if CUDA in classes:
        return "CUDA libraries"
    return "the NVIDIA driver package" if DRIVER in classes else "the driver directory"


def fixable_call(place: Place) -> tuple[Node, str] | None:
    """The builder call and name of the derivation a package-context fix can edit: a derivation
    builder (`mkDerivation`, `buildPythonPackage`, ...) or `overrideAttrs`, whose fixup phase runs
    the hooks of `nativeBuildInputs`; None for wrappers, shells and modules."""
    if place.node is None:
        return None
    if place.is_package and place.builder is not None:
        return place.node, place.builder
    if place.is_override and place.detail in _FIXUP_OVERRIDES:
        return place.node, place.detail
    return None


# ----- libcuda through a CUDA package --------------------------------------------------------------

# `-lcuda` (not `-lcudart`): the driver library
_LINKS_LIBCUDA = re.compile(rb"-lcuda(?![\w.+-])")
# after `${x}`: the driver library itself, or a library directory ending there
_LIBCUDA_FILE = re.compile(r"^/lib(?:64)?/libcuda\.so(?:\.\d+)*(?![\w.-])")
_LIBRARY_DIR = re.compile(r"^/lib(?:64)?(?:/(?![\w.-])|(?![\w./-]))")
# `-L`, `-L"`, `-L'`: what precedes a library directory
_LIBRARY_FLAG = re.compile(rb"-L[\"']?")
FILE, LINK_DIR = "file", "link-dir"


def libcuda_path(semantic: Semantic, interpolation: Node) -> tuple[str, int] | None:
    """Whether the path that `interpolation` (`${x}`) starts names libcuda inside `x`:
    `${x}/lib/libcuda.so` (`FILE`), or `-L${x}/lib` in a string or shell line that links
    `-lcuda` (`LINK_DIR`); with the end of that path (a byte offset)."""
    following = interpolation.next_sibling
    if following is None or following.type != "string_fragment":
        return None
    after = text(following)
    match = _LIBCUDA_FILE.match(after)
    if match is not None:
        return FILE, following.start_byte + match.end()
    match = _LIBRARY_DIR.match(after)
    if match is not None and _links_libcuda(semantic, interpolation):
        return LINK_DIR, following.start_byte + match.end()
    return None


def _links_libcuda(semantic: Semantic, interpolation: Node) -> bool:
    """`-L${x}/lib` is the library directory a `-lcuda` of its string (or shell line) is looked up
    in: the nearest `-L` before some `-lcuda` (`-L${a}/lib -lcuda -L${x}/lib -lcudart` takes
    libcuda from `a`)."""
    string = interpolation.parent
    if string is None:
        return False
    shell = semantic.shell_text(string)
    line = shell.line_at(interpolation.start_byte) if shell is not None else None
    written, start = (line.code, line.start) if line is not None else (string.text or b"", string.start_byte)
    here = interpolation.start_byte - start
    flags = [m.end() for m in _LIBRARY_FLAG.finditer(written)]
    for link in _LINKS_LIBCUDA.finditer(written):
        nearest = max((end for end in flags if end <= link.start()), default=None)
        if nearest == here:
            return True
    return False


# ----- literal driver directories in strings ------------------------------------------------------

# `echo`/`printf` arguments are words shown to a person, not paths
_MESSAGE_COMMANDS = frozenset({b"echo", b"printf"})


def is_host_path(data: bytes, offset: int) -> bool:
    """Not a path under some other root (`${root}/run/...`, `./run/...`, `$out/run/...`)."""
    if offset == 0:
        return True
    previous = data[offset - 1 : offset]
    if previous in (b"/", b".", b"}", b"$"):
        return False
    if re.match(rb"[\w]", previous):
        return data[max(0, offset - 2) : offset] == b"-L"
    return True


def in_shell_comment(shell: ShellText | None, offset: int) -> bool:
    return shell is not None and shell.in_comment(offset)


def in_shell_message(shell: ShellText | None, offset: int) -> bool:
    """Whether `offset` is in the arguments of an `echo`/`printf` (text for a person)."""
    command = shell.command_at(offset) if shell is not None else None
    return command is not None and command.name in _MESSAGE_COMMANDS and offset >= command.words[command.name_index or 0].end


def driver_runpath_name(ctx: Context) -> str:
    """The target's name of the package whose `driverLink` is the driver directory: the
    reference set's idiom (`addDriverRunpath`, PR #269475; before it `addOpenGLRunpath`)."""
    return ctx.reference.idiom("driverRunpath", ctx.target) or "addOpenGLRunpath"


# signs that 32-bit software is built or run here (where `/run/opengl-driver-32` is right): nixpkgs'
# i686 set, NixOS's 32-bit graphics switch (`enable32Bit`, formerly `driSupport32Bit`), FHS
# `multiPkgs` (built for both architectures), Steam and Wine
_32BIT_SIGNS = re.compile(rb"pkgsi686Linux|i686|32Bit|32bit|multiPkgs|lib32|pkgs32|steam|wine", re.I)
# the 64-bit directory, spelled right or wrong (a misspelled pair is corrected as a pair)
_64BIT_DIR = re.compile(rb"/run/open[-_ ]?gl[-_ ]?drivers?(?:/|\b(?!-))|driverLink", re.I)


def stray_32bit_dir(ctx: Context, string: Node) -> bool:
    """Whether `/run/opengl-driver-32` in `string` stands for the 64-bit directory: nothing in the
    file builds or runs 32-bit software, and the value that holds it (the binding around the
    string) does not also name the 64-bit directory, as NixOS's own
    `LD_LIBRARY_PATH = [ "/run/opengl-driver/lib" "/run/opengl-driver-32/lib" ]` does."""
    if _32BIT_SIGNS.search(ctx.source.data):
        return False
    holder = ctx.semantic.enclosing_binding(string) or string
    return _64BIT_DIR.search(holder.text or b"") is None


# ----- spelling a top-level attribute in a fix ----------------------------------------------------


def spell_toplevel(ctx: Context, at: Node, name: str) -> tuple[str, list[Edit]] | None:
    """How a fix writes nixpkgs' top-level `name` at `at`, with the edits that make it resolve
    (`edits.toplevel_reference`, the one answer for every rule)."""
    return edits.toplevel_reference(ctx.source, ctx.semantic, at, name)
