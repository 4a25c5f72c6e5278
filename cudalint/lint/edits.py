"""Edit builders shared by rule fixes. They keep the file's style: a list or formals written one
item per line gets a new line with the same indentation; an inline one gets an inline item."""

from __future__ import annotations

from tree_sitter import Node

from cudalint.knowledge import catalog
from cudalint.lint.model import Edit
from cudalint.nix.semantic import CudaRef, InputSite, NameBinding, Semantic
from cudalint.nix.shell import SEQUENCES, ShellText
from cudalint.nix.source import SourceFile
from cudalint.nix.syntax import (
    ATTRSET_TYPES,
    attrpath_names,
    binding_value,
    bindings_of,
    descendants,
    dotted_name,
    flatten_apply,
    last_name,
    node_key,
    outermost_apply,
    text,
    unparen,
)


def replace(node: Node, content: str) -> Edit:
    return Edit(node.start_byte, node.end_byte, content)


def _alone_on_lines(source: SourceFile, start: int, end: int) -> bool:
    """Nothing but white space shares the lines of the span `start`..`end`."""
    line_start = source.line_start(source.line_of(start))
    line_end = source.line_end(source.line_of(end))
    return not source.data[line_start:start].strip() and not source.data[end:line_end].strip()


def delete_element(source: SourceFile, element: Node) -> Edit:
    """Delete a list element (or a formal, a binding) with the white space that belonged to it,
    and with the comment lines right above it when they speak of it alone (the element ends its
    group: the list's end, a blank line or another comment follows)."""
    edit = delete_span(source, element.start_byte, element.end_byte)
    if edit.start != source.line_start(source.line_of(element.start_byte)) or edit.content:
        return edit  # not whole lines
    first = source.line_of(element.start_byte)
    comment = first
    while comment > 0 and source.data[source.line_start(comment - 1) : source.line_end(comment - 1)].strip().startswith(b"#"):
        comment -= 1
    if comment == first or comment == 0 or not source.data[source.line_start(comment - 1) : source.line_end(comment - 1)].strip():
        return edit  # no comment above, or one that opens the file or a paragraph of its own
    following = source.line_of(element.end_byte) + 1
    rest = source.data[source.line_start(following) : source.line_end(following)].strip() if following < source.line_count else b""
    if rest and not rest.startswith((b"]", b"}", b"#")):
        return edit  # the comment may head the next items too
    return Edit(source.line_start(comment), edit.end, "")


def delete_span(source: SourceFile, start: int, end: int) -> Edit:
    """Delete the bytes `start`..`end` with the white space that belonged to them: their whole
    lines when nothing else is on them, else the blanks that follow (or, if none, those before)."""
    if _alone_on_lines(source, start, end):
        first = source.line_of(start)
        last = source.line_of(end)
        stop = source.line_start(last + 1) if last + 1 < source.line_count else source.line_end(last)
        return Edit(source.line_start(first), stop, "")
    data = source.data
    if end < len(data) and data[end : end + 1] in (b" ", b"\t"):
        while end < len(data) and data[end : end + 1] in (b" ", b"\t"):
            end += 1
    else:
        while start > 0 and data[start - 1 : start] in (b" ", b"\t"):
            start -= 1
    return Edit(start, end, "")


def remove_shell(shell: ShellText, start: int, end: int) -> Edit:
    """The edit deleting the shell code [start, end) of a Nix string and leaving valid shell.

    Words of a simple command go with the blanks that separate them from the next word (or, at
    the end, from the previous one); array elements alone on their lines go with the lines. A
    whole statement goes with its lines when nothing else is on them (a trailing comment goes
    too), else with an adjacent `;` or a following `&&`, or alone at the top of the script. Where
    deleting would leave a pipeline, a list or a block without its command (`a && cmd`,
    `cmd | b`, `then cmd; fi`), `:` takes its place."""
    command = shell.command_holding(start, end)
    if command is not None and (command.node.type == "array" or (command.words[0].start, command.words[-1].end) != (start, end)):
        if command.node.type == "array" and (lines := _shell_lines(shell, start, end, comment=False)) is not None:
            return lines
        words = command.words
        first = next((i for i, w in enumerate(words) if w.start == start), None)
        last = next((i for i, w in enumerate(words) if w.end == end), None)
        if first is None or last is None:
            return Edit(start, end, "")  # a part of a word (`${...}` in `-L${...}/lib`)
        if last + 1 < len(words):
            return Edit(words[first].start, words[last + 1].start, "")
        return Edit(words[first - 1].end if first > 0 else start, words[last].end, "")
    noop = Edit(start, end, ":")
    node = shell.statement_node(start, end)
    parent = node.parent if node is not None else None
    if parent is not None and parent.type in {"pipeline", "negated_command"}:
        return noop
    if parent is not None and parent.type == "list":
        operator = parent.children[1]
        if parent.named_children[0] != node or operator.type != "&&":
            return noop  # `a && cmd`, `cmd || b`
        operator_start, operator_end = shell.absolute(operator)
        same_line = shell.source.line_of(operator_start) == shell.source.line_of(end)
        return Edit(start, _skip_blanks(shell.source.data, operator_end), "") if same_line else noop
    if parent is not None and parent.type in SEQUENCES and parent.type != "program" and len(shell.statements(parent)) == 1:
        return noop  # the only command of a block
    removed = _shell_lines(shell, start, end, comment=True) or _with_semicolon(shell.source, start, end)
    if removed is None and (parent is None or parent.type == "program"):
        return Edit(start, end, "")  # a statement of the script's own sequence: nothing depends on it
    return removed or noop


def _skip_blanks(data: bytes, offset: int) -> int:
    while offset < len(data) and data[offset : offset + 1] in (b" ", b"\t"):
        offset += 1
    return offset


def _shell_lines(shell: ShellText, start: int, end: int, comment: bool) -> Edit | None:
    """The lines of [start, end) when nothing else is on them (but a `;` or, if `comment`, a
    trailing comment) and the next line is still in the string."""
    source = shell.source
    data = source.data
    first, last = source.line_of(start), source.line_of(end)
    line_start = source.line_start(first)
    rest = data[end : source.line_end(last)].strip()
    if data[line_start:start].strip() or not (not rest or rest == b";" or (comment and rest.startswith(b"#"))):
        return None
    if last + 1 < source.line_count and source.line_start(last + 1) <= shell.content_end:
        return Edit(line_start, source.line_start(last + 1), "")
    return None


def _with_semicolon(source: SourceFile, start: int, end: int) -> Edit | None:
    """[start, end) with the `;` that follows it on its line (and blanks), or the one before."""
    data = source.data
    after = _skip_blanks(data, end)
    if data[after : after + 1] == b";" and data[after : after + 2] != b";;":
        return Edit(start, _skip_blanks(data, after + 1), "")
    before = start
    while before > 0 and data[before - 1 : before] in (b" ", b"\t"):
        before -= 1
    if data[before - 1 : before] == b";" and source.line_of(before) == source.line_of(start):
        return Edit(before - 1, end, "")
    return None


def list_elements(list_node: Node) -> list[Node]:
    return [c for c in list_node.children_by_field_name("element")]


def is_multiline(source: SourceFile, container: Node, items: list[Node]) -> bool:
    """One item per line: the container spans lines and no two items share a line."""
    if source.line_of(container.start_byte) == source.line_of(container.end_byte):
        return False
    lines = [source.line_of(i.start_byte) for i in items]
    return len(lines) == len(set(lines))


def append_to_list(source: SourceFile, list_node: Node, items: list[str]) -> Edit | None:
    """Append items not already present (by text) to a list literal."""
    elements = list_elements(list_node)
    present = {text(e) for e in elements}
    new = [i for i in items if i not in present]
    if not new:
        return None
    closing = list_node.children[-1]
    if closing.type != "]":
        return None
    nl = source.newline
    if is_multiline(source, list_node, elements):
        if elements:
            last = elements[-1]
            indent = source.indentation_of_line(source.line_of(last.start_byte))
            anchor = _end_with_trailing_comment(source, last)
        else:
            indent = source.indentation_of_line(source.line_of(closing.start_byte)) + "  "
            anchor = list_node.children[0].end_byte
        return Edit(anchor, anchor, "".join(nl + indent + i for i in new))
    if elements:
        return Edit(elements[-1].end_byte, elements[-1].end_byte, "".join(" " + i for i in new))
    opening = list_node.children[0]
    return Edit(opening.end_byte, closing.start_byte, " " + " ".join(new) + " ")


def _end_with_trailing_comment(source: SourceFile, node: Node) -> int:
    sibling = node.next_sibling
    if sibling is not None and sibling.type == "comment" and source.line_of(sibling.start_byte) == source.line_of(node.end_byte):
        return sibling.end_byte
    return node.end_byte


def find_binding(attrset: Node, name: str) -> Node | None:
    for binding in bindings_of(attrset):
        if binding.type == "binding" and attrpath_names(binding.child_by_field_name("attrpath")) == [name]:
            return binding
    return None


def first_list(expression: Node | None) -> Node | None:
    """The list literal an input value is built from: `[ ... ]`, `[ ... ] ++ x`,
    `with cudaPackages; [ ... ]`; None for values we should not edit (`deps`, `optionals ...`)."""
    expression = unparen(expression)
    while expression is not None:
        if expression.type == "list_expression":
            return expression
        if expression.type == "binary_expression" and expression.child_by_field_name("operator").type == "++":
            expression = unparen(expression.child_by_field_name("left"))
            continue
        if expression.type == "with_expression":
            expression = unparen(expression.child_by_field_name("body"))
            continue
        return None
    return None


def add_to_input(source: SourceFile, attrset: Node, attr: str, items: list[str]) -> list[Edit]:
    """Make `items` members of `attr` (e.g. nativeBuildInputs) of a derivation's attrset."""
    binding = find_binding(attrset, attr)
    if binding is not None:
        value = binding_value(binding)
        target = first_list(value)
        if target is not None:
            edit = append_to_list(source, target, items)
            return [edit] if edit is not None else []
        if value is None:
            return []
        return [Edit(value.end_byte, value.end_byte, " ++ [ " + " ".join(items) + " ]")]
    return [insert_binding(source, attrset, f"{attr} = [ {' '.join(items)} ];")]


def heading_comments_start(source: SourceFile, line: int, floor: int) -> int:
    """The first line of the comment lines right above `line` (below line `floor`), which head
    what starts there: an insertion before it goes above them."""
    while line - 1 > floor and source.data[source.line_start(line - 1) : source.line_end(line - 1)].strip().startswith(b"#"):
        line -= 1
    return line


def insert_binding(source: SourceFile, attrset: Node, binding_text: str) -> Edit:
    """A new `name = value;` in an attrset, placed first, indented like its siblings (above the
    comment lines that head the first binding: they stay with it)."""
    bindings = bindings_of(attrset)
    opening = next(c for c in attrset.children if c.type == "{")
    nl = source.newline
    if bindings:
        first = bindings[0]
        line = source.line_of(first.start_byte)
        if line != source.line_of(opening.start_byte):
            indent = source.indentation_of_line(line)
            line = heading_comments_start(source, line, source.line_of(opening.start_byte))
            return Edit(source.line_start(line), source.line_start(line), indent + binding_text + nl)
        return Edit(first.start_byte, first.start_byte, binding_text + " ")
    closing = attrset.children[-1]
    if source.line_of(opening.start_byte) != source.line_of(closing.start_byte):
        indent = source.indentation_of_line(source.line_of(closing.start_byte)) + "  "
        return Edit(opening.end_byte, opening.end_byte, nl + indent + binding_text)
    return Edit(opening.end_byte, closing.start_byte, " " + binding_text + " ")


def append_binding(source: SourceFile, attrset: Node, binding_text: str) -> Edit:
    """A new `name = value;` in an attrset, placed last, indented like its siblings."""
    bindings = bindings_of(attrset)
    closing = attrset.children[-1]
    if not bindings or source.line_of(bindings[-1].start_byte) == source.line_of(closing.start_byte):
        return insert_binding(source, attrset, binding_text)
    last = bindings[-1]
    end = last.end_byte
    line_end = source.line_end(source.line_of(end))
    if source.data[end:line_end].strip().startswith(b"#"):  # a trailing comment stays with its line
        end = line_end
    indent = source.indentation_of_line(source.line_of(last.start_byte))
    return Edit(end, end, source.newline + indent + binding_text)


def formal_names(formals: Node) -> list[str]:
    return [text(f.child_by_field_name("name")) for f in formals.children_by_field_name("formal") if f.child_by_field_name("name") is not None]


def real_formals(formals: Node) -> list[Node]:
    from cudalint.nix.parsing import is_gap_formal

    return [f for f in formals.children_by_field_name("formal") if not is_gap_formal(f)]


def add_formal(source: SourceFile, formals: Node, name: str) -> Edit | None:
    """Add `name` to `{ a, b, ... }` keeping the one-per-line/inline style and trailing commas."""
    present = real_formals(formals)
    if name in formal_names(formals):
        return None
    items = present + [c for c in formals.children if c.type == "ellipses"]
    if not present:
        opening = formals.children[0]
        if items:
            return Edit(items[0].start_byte, items[0].start_byte, f"{name}, ")
        return Edit(opening.end_byte, formals.children[-1].start_byte, f" {name} ")
    last = present[-1]
    if is_multiline(source, formals, items):
        indent = source.indentation_of_line(source.line_of(last.start_byte))
        after = last.next_sibling
        comma_style_leading = source.data[source.line_start(source.line_of(last.start_byte)) : last.start_byte].strip() == b","
        if comma_style_leading:
            return Edit(last.end_byte, last.end_byte, f"{source.newline}{indent[:-2] if len(indent) >= 2 else indent}, {name}")
        if after is not None and after.type in {",", "ERROR"}:
            anchor = after.end_byte
            return Edit(anchor, anchor, f"{source.newline}{indent}{name},")
        return Edit(last.end_byte, last.end_byte, f",{source.newline}{indent}{name}")
    return Edit(last.end_byte, last.end_byte, f", {name}")


def rename_formal(formal: Node, name: str) -> Edit:
    """Rename a formal in place, dropping its default (`cudatoolkit ? null` -> `cudaPackages`)."""
    return Edit(formal.start_byte, formal.end_byte, name)


def remove_formal(source: SourceFile, formal: Node) -> Edit:
    """Remove a formal and one adjacent comma; in the one-per-line style, its whole line."""
    following = formal.next_sibling
    comma_after = following if following is not None and following.type == "," else None
    end = comma_after.end_byte if comma_after is not None else formal.end_byte
    if _alone_on_lines(source, formal.start_byte, end):
        return delete_span(source, formal.start_byte, end)
    if comma_after is not None:
        while end < len(source.data) and source.data[end : end + 1] in (b" ", b"\t"):
            end += 1
        return Edit(formal.start_byte, end, "")
    previous = formal.prev_sibling
    if previous is not None and previous.type == ",":
        if _alone_on_lines(source, previous.start_byte, formal.end_byte):
            return delete_span(source, previous.start_byte, formal.end_byte)  # leading-comma style: `  , name`
        return Edit(previous.start_byte, formal.end_byte, "")
    return Edit(formal.start_byte, formal.end_byte, "")


def enclosing_derivation_attrset(semantic: Semantic, node: Node) -> Node | None:
    call = semantic.enclosing_call(node)
    return call.attrset if call is not None else None


def is_bound(semantic: Semantic, node: Node, name: str) -> bool:
    """Whether `name` is bound lexically where `node` is (so a fix may write it bare)."""
    return semantic.resolve_name(name, node).lexical


def package_reference(source: SourceFile, semantic: Semantic, ref: CudaRef, package: str) -> tuple[str, list[Edit]]:
    """How to write CUDA package `package` where `ref` is, and edits that make it resolvable
    (adding a `cudaPackages` formal when nothing binds it)."""
    node = ref.node
    attrpath = ref.name_node.parent
    if ref.via == "select" and attrpath is not None and attrpath.type == "attrpath" and attrpath.parent is not None:
        # `cudaPackages.x`, `pkgs.cudaPackages_12.x.dev`: keep the set prefix as written
        return source.slice(attrpath.parent.start_byte, ref.name_node.start_byte) + package, []
    if ref.via == "with" and ref.set_name is not None:
        return package, []
    set_name = ref.set_name or "cudaPackages"
    if is_bound(semantic, node, set_name):
        return f"{set_name}.{package}", []
    if ref.via == "toplevel" and unparen(node).type == "select_expression":
        base = unparen(node).child_by_field_name("expression")
        return f"{text(base)}.cudaPackages.{package}", []
    binding = semantic.resolve_name(set_name, node)
    if binding.kind == "with" and any(_is_nixpkgs(semantic, w) for w in binding.withs):
        return f"{set_name}.{package}", []  # `with pkgs; [ ... ]` provides the set
    function = semantic.top_function()
    formals = function.child_by_field_name("formals") if function is not None else None
    if formals is not None and _scope_member(formals):
        # called by a CUDA package set's `callPackage` (`{ cuda_nvcc, cudatoolkit, ... }:`): its
        # packages are formals; a `cudaPackages` formal would be the top-level default release
        edit = add_formal(source, formals, package)
        return package, [edit] if edit is not None else []
    if formals is None or is_bound(semantic, node, "pkgs"):
        # a `pkgs` in scope (`{ pkgs ? import <nixpkgs> { } }:` for nix-shell, whose callers pass
        # nothing else) spells the set; a new formal would be a required argument nobody passes
        return f"pkgs.cudaPackages.{package}" if is_bound(semantic, node, "pkgs") else f"cudaPackages.{package}", []
    edit = add_formal(source, formals, "cudaPackages")
    return f"cudaPackages.{package}", [edit] if edit is not None else []


# Arguments only a NixOS or home-manager module takes: its other arguments are not packages.
# (`config` is not one: callPackage files take it for `config.cudaSupport`.)
MODULE_ARGUMENTS = frozenset({"options", "modulesPath"})
# Attributes only a CUDA package set's scope passes to `callPackage`.
_SCOPE_ONLY = frozenset({"cudaMajorMinorVersion", "cudaMajorVersion", "cudaVersion", "cudaOlder", "cudaAtLeast", "flags", "backendStdenv"})


# CUDA packages that nixpkgs also has at the top level (`cudnn`, `nccl`): as formals they say nothing.
_ALSO_TOP_LEVEL = frozenset({"cudnn", "nccl", "cutensor", "tensorrt"})


def _scope_member(formals: Node) -> bool:
    """Formals of a file called by a CUDA package set (`{ cuda_nvcc, flags, ... }:`)."""
    names = formal_names(formals)
    if "cudaPackages" in names:
        return False
    return any(n in _SCOPE_ONLY or (catalog.is_cuda_package(n) and n not in _ALSO_TOP_LEVEL and not catalog.is_runfile_toolkit(n) and catalog.role(n) != "hook") for n in names)


def is_attrset(node: Node | None) -> bool:
    return node is not None and node.type in ATTRSET_TYPES


def toplevel_reference(source: SourceFile, semantic: Semantic, at: Node, name: str, like: Node | None = None) -> tuple[str, list[Edit]] | None:
    """How to write the top-level nixpkgs attribute `name` (e.g. `autoAddDriverRunpath`) at `at`,
    and edits that make it resolvable (a formal added to the file's function).

    `like` is a sibling reference whose spelling to follow: `pkgs.addDriverRunpath` gives
    `pkgs.<name>`. Otherwise the bare name when a lexical binding provides it (or a `with` of
    the whole package set), `pkgs.<name>` where `pkgs` is bound, else the bare name plus a new
    formal (`pkgs` for a NixOS or home-manager module, whose arguments are not packages; a
    callPackage file taking `config` for `config.cudaSupport` is not one). None
    when there is no way (e.g. an overlay `final: prev: ...`). The one answer to "how does a fix
    write this top-level package here" for every rule."""
    like = unparen(like)
    if like is not None and like.type == "select_expression" and like.child_by_field_name("default") is None:
        base = unparen(like.child_by_field_name("expression"))
        names = attrpath_names(like.child_by_field_name("attrpath"))
        if base is not None and len(names) == 1 and semantic.package_set_name(base) is None and dotted_name(base) is not None:
            return f"{text(like.child_by_field_name('expression'))}.{name}", []
    binding = semantic.resolve_name(name, at)
    if binding.lexical:
        return name, []
    if binding.kind == "with" and any(_is_nixpkgs(semantic, w) for w in binding.withs):
        return name, []
    function = semantic.top_function()
    formals = function.child_by_field_name("formals") if function is not None else None
    like_is_formal = False
    if like is not None and like.type == "variable_expression":
        found = semantic.resolve(like)
        if found.kind == "free" or (found.kind == "with" and any(_is_nixpkgs(semantic, w) for w in found.withs)):
            return name, []
        like_is_formal = found.kind == "formal" and found.node is not None and formals is not None and found.node.parent == formals
    if not like_is_formal and semantic.resolve_name("pkgs", at).lexical:
        return f"pkgs.{name}", []
    if function is None:
        # a fragment without arguments: evaluated where other names come from (it already uses
        # some free), the name is free as they are; a closed one has nowhere to take it from
        return (name, []) if _uses_free_names(semantic) else None
    if formals is None or not (function.start_byte <= at.start_byte and at.end_byte <= function.end_byte):
        return None
    if semantic.is_module_file() or set(formal_names(formals)) & MODULE_ARGUMENTS:
        # a module's arguments are not packages; a callPackage file gets the real argument
        edit = add_formal(source, formals, "pkgs")
        return (f"pkgs.{name}", [edit]) if edit is not None else None
    edit = add_formal(source, formals, name)
    return name, [edit] if edit is not None else []


# Names every Nix evaluation has: using them does not make a fragment depend on its caller's scope.
_NIX_BUILTINS = frozenset(
    {"true", "false", "null", "builtins", "import", "toString", "map", "throw", "abort", "baseNameOf", "dirOf", "derivation", "isNull", "removeAttrs", "fetchTarball", "placeholder", "__curPos"}
)


def _uses_free_names(semantic: Semantic) -> bool:
    memo = semantic.memo(__name__)
    if "uses free names" not in memo:
        memo["uses free names"] = any(
            node.type == "variable_expression" and text(node) not in _NIX_BUILTINS and semantic.resolve(node).kind in {"free", "with"} for node in descendants(semantic.tree.root_node)
        )
    return memo["uses free names"]


def _is_nixpkgs(semantic: Semantic, environment: Node) -> bool:
    environment = unparen(environment)
    if environment is None or semantic.package_set_name(environment) is not None:
        return False
    if environment.type == "apply_expression":
        return "import" in text(environment)
    return last_name(environment) in catalog.NIXPKGS_NAMES


# ----- moving an element from one input list to another ----------------------------------------

_OPAQUE_VALUES = frozenset({"if_expression", "let_expression", "with_expression", "assert_expression", "function_expression"})


def _guard_prefix(source: SourceFile, list_node: Node, binding: Node) -> tuple[bool, str | None, Node]:
    """Between a list literal and the binding whose value holds it: whether only list-building
    syntax lies there, the text of at most one `lib.optionals cond ` guard (whitespace
    normalised), and the outermost node that holds nothing but that list."""
    value = binding_value(binding)
    prefix: str | None = None
    sole = list_node  # the largest node whose only content is this list
    child, parent = list_node, list_node.parent
    sole_open = True
    while child is not None and child != value and parent is not None:
        kind = parent.type
        if kind == "parenthesized_expression" or (kind == "with_expression" and parent.child_by_field_name("body") == child):
            pass
        elif kind == "binary_expression" and parent.child_by_field_name("operator").type == "++":
            sole_open = False
        elif kind == "apply_expression":
            outer = outermost_apply(parent)
            function, arguments = flatten_apply(outer)
            name = last_name(function)
            if name != "optionals" or len(arguments) != 2 or not (arguments[-1].start_byte <= child.start_byte and child.end_byte <= arguments[-1].end_byte) or prefix is not None:
                return False, None, sole
            prefix = " ".join(source.slice(outer.start_byte, arguments[-1].start_byte).split()) + " "
            if sole_open:
                sole = outer
            child, parent = outer, outer.parent
            continue
        else:
            return False, None, sole
        if sole_open and kind != "binary_expression":
            sole = parent
        child, parent = parent, parent.parent
    return child == value, prefix, sole


def _delete_emptied(source: SourceFile, site_binding: Node, sole: Node) -> Edit:
    """Delete `sole` (a node left holding only an empty list) together with the `++` joining it,
    or the whole binding when it is the binding's value."""
    value = binding_value(site_binding)
    if sole == value or unparen(value) == sole:
        return delete_element(source, site_binding)
    parent = sole.parent
    while parent is not None and parent.type == "parenthesized_expression":
        sole, parent = parent, parent.parent
    if parent is not None and parent.type == "binary_expression":
        left, right = parent.child_by_field_name("left"), parent.child_by_field_name("right")
        if right == sole:
            if parent == unparen(value) and _is_previous_value(left, site_binding):
                return delete_element(source, site_binding)  # `x = old.x or [ ];` would be a no-op
            return Edit(left.end_byte, sole.end_byte, "")
        if left == sole:
            return Edit(sole.start_byte, right.start_byte, "")
    return Edit(sole.start_byte, sole.end_byte, "[ ]")


def _is_previous_value(node: Node, binding: Node) -> bool:
    """`old.x or [ ]` / `old.x` in the binding of `x` inside `overrideAttrs (old: { ... })`: the
    list as it was before, so a binding left with only it changes nothing."""
    node = unparen(node)
    if node is None or node.type != "select_expression":
        return False
    default = unparen(node.child_by_field_name("default"))
    if default is not None and (default.type != "list_expression" or list_elements(default)):
        return False
    owner = binding.parent.parent if binding.parent is not None else None
    override, previous = _override_argument(owner) if owner is not None else (False, None)
    names = attrpath_names(binding.child_by_field_name("attrpath"))
    return override and previous is not None and text(node.child_by_field_name("expression")) == previous and attrpath_names(node.child_by_field_name("attrpath")) == names


def _holds_item(value: Node, item: str) -> bool:
    """An element written `item` already sits in some list of the value (any guard)."""
    return any(candidate.type == "list_expression" and any(text(e) == item for e in list_elements(candidate)) for candidate in descendants(value))


def add_input_item(source: SourceFile, site: InputSite, attrset: Node, attr: str, items: str | list[str]) -> list[Edit] | None:
    """Edits making `items` members of input `attr` of `attrset`, under the same `optionals`
    guard as `site` (the element they accompany); [] when all are already there, None when they
    cannot be written safely."""
    wanted = [items] if isinstance(items, str) else list(items)
    guard: str | None = None
    if site.list_node is not None and site.binding is not None and site.binding.type == "binding":
        ok, guard, _ = _guard_prefix(source, site.list_node, site.binding)
        if not ok:
            return None
    binding = find_binding(attrset, attr)
    value = binding_value(binding) if binding is not None else None
    if value is not None:
        wanted = [item for item in wanted if not _holds_item(value, item)]
    if not wanted:
        return []
    target = first_list(value) if value is not None and guard is None else None
    if target is not None:
        edit = append_to_list(source, target, wanted)  # one item per line where the list is so
        return [edit] if edit is not None else []
    return _append_input(source, attrset, attr, " ".join(wanted), guard)


def add_guarded_input(source: SourceFile, attrset: Node, attr: str, item: str, guard: str) -> list[Edit] | None:
    """Edits making `item` a member of input `attr` of `attrset` under `guard` (`lib.optionals
    cudaSupport `): in a list already under that guard, else a new `++ guard [ item ]`."""
    return _append_input(source, attrset, attr, item, guard)


def _append_input(source: SourceFile, attrset: Node, attr: str, text_: str, prefix: str | None) -> list[Edit] | None:
    """Edits making `text_` an item of `attr`, under the guard `prefix` (`lib.optionals c `);
    nothing when an element written `text_` is already in it."""
    binding = find_binding(attrset, attr)
    if binding is not None and binding_value(binding) is not None and _holds_item(binding_value(binding), text_):
        return []
    if binding is None:
        override, previous = _override_argument(attrset)
        if override:
            if previous is None:
                return None  # a new binding would replace the original list
            return [insert_binding(source, attrset, f"{attr} = {previous}.{attr} or [ ] ++ {prefix or ''}[ {text_} ];")]
        if prefix is None:
            return add_to_input(source, attrset, attr, [text_])
        return [insert_binding(source, attrset, f"{attr} = {prefix}[ {text_} ];")]
    value = binding_value(binding)
    if value is None:
        return None
    if prefix is None:
        target = first_list(value)
        if target is not None:
            edit = append_to_list(source, target, [text_])
            return [edit] if edit is not None else []
    else:
        for candidate in descendants(value):
            if candidate.type == "list_expression":
                ok, candidate_prefix, _ = _guard_prefix(source, candidate, binding)
                if ok and candidate_prefix == prefix:
                    edit = append_to_list(source, candidate, [text_])
                    return [edit] if edit is not None else []
    addition = f" ++ {prefix or ''}[ {text_} ]"
    if source.line_of(value.start_byte) != source.line_of(value.end_byte):
        # nixfmt style: a multi-line value continues with `++` on its own line
        indent = source.indentation_of_line(source.line_of(binding.start_byte))
        addition = f"{source.newline}{indent}++ {prefix or ''}[ {text_} ]"
    if unparen(value).type in _OPAQUE_VALUES and value.type != "parenthesized_expression":
        return [Edit(value.start_byte, value.start_byte, "("), Edit(value.end_byte, value.end_byte, ")" + addition)]
    return [Edit(value.end_byte, value.end_byte, addition)]


def _override_argument(attrset: Node) -> tuple[bool, str | None]:
    """Whether `attrset` is what an override call returns (`x.overrideAttrs (old: { ... })`),
    and the name of the previous attributes (`old`) when it is bound."""
    holder, parameter, innermost = attrset, None, True
    parent = holder.parent
    while parent is not None and parent.type == "parenthesized_expression":
        holder, parent = parent, parent.parent
    while parent is not None and parent.type == "function_expression" and parent.child_by_field_name("body") == holder:
        universal = parent.child_by_field_name("universal")
        if innermost and universal is not None and parent.child_by_field_name("formals") is None:
            parameter = text(universal)  # the attributes before the override: `old`, `prevAttrs`
        innermost = False
        holder, parent = parent, parent.parent
        while parent is not None and parent.type == "parenthesized_expression":
            holder, parent = parent, parent.parent
    if parent is None or parent.type != "apply_expression" or parent.child_by_field_name("argument") != holder:
        return False, None
    function, _ = flatten_apply(parent)
    if last_name(function) not in catalog.OVERRIDE_FUNCTIONS:
        return False, None
    return True, parameter


def merge_edits(edits: list[Edit]) -> list[Edit]:
    """Fuse edits of one fix that start at the same offset (an insertion where a deletion
    starts), which the fix selection would otherwise treat as overlapping."""
    merged: list[Edit] = []
    for edit in sorted(edits, key=lambda e: (e.start, e.end)):
        if merged and merged[-1].start == edit.start and merged[-1].start == merged[-1].end:
            previous = merged.pop()
            edit = Edit(edit.start, edit.end, previous.content + edit.content)
        merged.append(edit)
    return merged


def remove_input_element(source: SourceFile, site: InputSite) -> Edit | None:
    """The edit deleting `site.element` from its input list; a list left empty goes with its
    `++` (or the whole binding). None when the element is not directly in a list literal."""
    if site.list_node is None:
        return None
    ok, _, sole = _guard_prefix(source, site.list_node, site.binding)
    elements = list_elements(site.list_node)
    if ok and len(elements) == 1 and elements[0] == site.element:
        return _delete_emptied(source, site.binding, sole)
    return delete_element(source, site.element)


def move_to_input(source: SourceFile, site: InputSite, attrset: Node, attr: str, text: str) -> list[Edit]:
    """Move the list element `site.element` out of its input list into input `attr` of `attrset`
    (e.g. from `buildInputs` to `nativeBuildInputs`), written as `text` there.

    A `lib.optionals cond [ ... ]` guard around the element is kept around the moved item (an
    existing list under the same guard is reused); a source list left empty is removed with its
    `++` (or the whole binding). Returns [] when the move cannot be written safely: the element is
    not directly in a list literal, or sits under `if`, nested guards or other functions."""
    if site.list_node is None:
        return []
    ok, prefix, _ = _guard_prefix(source, site.list_node, site.binding)
    if not ok:
        return []
    removal = remove_input_element(source, site)
    assert removal is not None
    addition = _append_input(source, attrset, attr, text, prefix)
    if addition is None:
        return []
    edits = merge_edits([removal, *addition])
    for first, second in zip(edits, edits[1:]):
        if second.start < first.end:
            return []
    return edits


def move_element(source: SourceFile, semantic: Semantic, site: InputSite, attr: str) -> list[Edit]:
    """`move_to_input` of `site.element` to input `attr` of the same attrset, spelled so that it
    still resolves there (see `spell_at`); [] when it cannot be moved."""
    owner = site.binding.parent.parent if site.binding.parent is not None else None
    if owner is None or owner.type not in ATTRSET_TYPES:
        return []
    spelled = spell_at(semantic, site.element, input_destination(owner, attr))
    if spelled is None:
        return []
    return move_to_input(source, site, owner, attr, spelled)


def input_destination(attrset: Node, attr: str) -> Node:
    """Where an item added to input `attr` of `attrset` will be evaluated (for name resolution):
    the list it is appended to, the existing value, or the attrset."""
    binding = find_binding(attrset, attr)
    if binding is None:
        return attrset
    value = binding_value(binding)
    if value is None:
        return attrset
    return first_list(value) or value


def spell_at(semantic: Semantic, node: Node, destination: Node, depth: int = 0) -> str | None:
    """The text of `node` rewritten so that it means the same when written at `destination`:
    names that resolve differently there are qualified with the package set they came from
    (`libcublas` under `with cudaPackages;` -> `cudaPackages.libcublas`). None when that is
    not possible (a name bound by an inner `let` or formal that the destination cannot see)."""
    if depth > 4:
        return None
    replacements: list[tuple[int, int, str]] = []
    for variable in descendants(node):
        if variable.type != "variable_expression":
            continue
        name = text(variable.child_by_field_name("name"))
        here = semantic.resolve(variable)
        there = semantic.resolve_name(name, destination)
        if _same_binding(here, there) or _equivalent_withs(semantic, here, there, destination):
            continue
        qualifier: Node | None = None
        if here.kind == "with":
            qualifier = next((w for w in here.withs if semantic.package_set_name(w) is not None), None)
        elif here.kind == "inherit-from":
            qualifier = here.source
        if qualifier is None or dotted_name(qualifier) is None:
            return None
        spelled = spell_at(semantic, qualifier, destination, depth + 1)
        if spelled is None:
            return None
        replacements.append((variable.start_byte, variable.end_byte, f"{spelled}.{name}"))
    data = node.text or b""
    for start, end, content in sorted(replacements, reverse=True):
        data = data[: start - node.start_byte] + content.encode("utf-8") + data[end - node.start_byte :]
    return data.decode("utf-8", "replace")


def _equivalent_withs(semantic: Semantic, here: NameBinding, there: NameBinding, destination: Node) -> bool:
    """Both names come from `with` environments written the same way and meaning the same
    (`with cudaPackages;` around two different lists of one file)."""
    if here.kind != "with" or there.kind != "with" or len(here.withs) != len(there.withs):
        return False
    for mine, theirs in zip(here.withs, there.withs):
        if " ".join(text(mine).split()) != " ".join(text(theirs).split()) or dotted_name(mine) is None:
            return False
        if spell_at(semantic, mine, theirs) != text(theirs):
            return False
    return True


def _same_binding(a: NameBinding, b: NameBinding) -> bool:
    if a.kind != b.kind:
        return False
    if (a.node is None) != (b.node is None) or (a.node is not None and node_key(a.node) != node_key(b.node)):
        return False
    return [node_key(w) for w in a.withs] == [node_key(w) for w in b.withs]


# ----- formals the fixes left unused -----------------------------------------------------------


def used_formals(semantic: Semantic) -> tuple[frozenset[str], frozenset[str]]:
    """The formals of the file's function, and those some expression uses (a variable, an
    `inherit x;`, another formal's default)."""
    function = semantic.top_function()
    formals = function.child_by_field_name("formals") if function is not None else None
    if formals is None:
        return frozenset(), frozenset()
    inherits = semantic.nodes_of_type("inherit")
    declared, used = set(), set()
    for formal in real_formals(formals):
        name_node = formal.child_by_field_name("name")
        if name_node is None:
            continue
        name = text(name_node)
        declared.add(name)
        if semantic.uses(name, formal) or any(_inherits(semantic, inherit, name, formal) for inherit in inherits):
            used.add(name)
    return frozenset(declared), frozenset(used)


def _inherits(semantic: Semantic, inherit: Node, name: str, formal: Node) -> bool:
    """`inherit name;` taking `name` from `formal`."""
    attrs = inherit.child_by_field_name("attrs")
    if attrs is None or not any(text(a) == name for a in attrs.named_children):
        return False
    owner = inherit.parent.parent if inherit.parent is not None else None
    if owner is None:
        return False
    # in a `let` or `rec { }` the inherited name is itself a binding of that scope: look outside
    start = owner if owner.type in ("let_expression", "rec_attrset_expression") else inherit
    return semantic.resolve_name(name, start).node == formal


def remove_orphaned_formals(source: SourceFile, semantic: Semantic, before: tuple[frozenset[str], frozenset[str]]) -> list[Edit]:
    """Edits removing formals that the file used before fixes (`used_formals`), or that fixes
    added or renamed, and that nothing uses now (a switch with a default too: callers setting it
    would change nothing), in a function without `args@` (which callers' arguments would still
    have to match)."""
    function = semantic.top_function()
    formals = function.child_by_field_name("formals") if function is not None else None
    if formals is None or function.child_by_field_name("universal") is not None:
        return []
    declared_before, used_before = before
    _, used_now = used_formals(semantic)
    edits: list[Edit] = []
    for formal in real_formals(formals):
        name_node = formal.child_by_field_name("name")
        if name_node is None:
            continue
        name = text(name_node)
        if (name in used_before or name not in declared_before) and name not in used_now:
            edit = remove_formal(source, formal)
            if edits and edit.start < edits[-1].end:
                break  # removing neighbours at once could take one comma twice: the rest next pass
            edits.append(edit)
    return edits


# ----- inputs the fixes listed twice -----------------------------------------------------------


def _input_key(semantic: Semantic, element: Node) -> str:
    """What a list element denotes, for telling duplicates: the CUDA package and output, else
    its text (white space and a `pkgs.` prefix aside)."""
    ref = semantic.cuda_ref(element)
    if ref is not None and unparen(ref.node) == unparen(element):
        return f"cuda:{ref.set_name}.{ref.package}.{ref.output}"
    spelled = "".join(text(element).split())
    return spelled.removeprefix("pkgs.")


# Finding a list's input attribute climbs its ancestors: over a machine-made file with thousands
# of list literals (a `++` chain 3,000 long) that is quadratic, and no fix writes such files.
MAX_TIDIED_LISTS = 500


def _input_lists(semantic: Semantic) -> list[tuple[str, Node]]:
    """The list literals directly holding elements of an input attribute, with the attribute
    (none in a file of more than MAX_TIDIED_LISTS lists: fix-all then leaves copies alone)."""
    found: list[tuple[str, Node]] = []
    listings = semantic.nodes_of_type("list_expression")
    if len(listings) > MAX_TIDIED_LISTS:
        return found
    for listing in listings:
        elements = list_elements(listing)
        site = semantic.input_site(elements[0]) if elements else None
        if site is not None and site.list_node == listing:
            found.append((site.attr, listing))
    return found


def input_counts(semantic: Semantic) -> dict[tuple[str, ...], int]:
    """How often each (input attribute, element) occurs in the file's input lists, by what the
    element denotes and (keys `("text", attr, text)`) by how it is written."""
    counts: dict[tuple[str, ...], int] = {}
    for attr, listing in _input_lists(semantic):
        for element in list_elements(listing):
            for key in ((attr, _input_key(semantic, element)), ("text", attr, " ".join(text(element).split()))):
                counts[key] = counts.get(key, 0) + 1
    return counts


def remove_duplicated_inputs(source: SourceFile, semantic: Semantic, before: dict[tuple[str, ...], int]) -> list[Edit]:
    """Edits deleting copies of an input that the fixes made (`input_counts` before them): two
    fixes that each wrote `cuda_cudart.dev cuda_cudart.lib`, a fix writing
    `cudaPackages.cuda_nvcc` into a `with cudaPackages;` list that has `cuda_nvcc`, a copy moved
    under `lib.optionals cudaSupport` beside one that is there anyway. Within one binding, the
    copy under the fewest conditions (those of every other copy) stays, the original before one
    a fix wrote; copies under conditions that exclude each other all stay."""
    counts = input_counts(semantic)
    copies_by_key: dict[tuple, list[tuple[frozenset, bool, Node]]] = {}
    for attr, listing in _input_lists(semantic):
        site = semantic.input_site(list_elements(listing)[0])
        assert site is not None
        conditions = frozenset((g.text, g.positive) for g in semantic.guards(listing))
        for element in list_elements(listing):
            spelled = ("text", attr, " ".join(text(element).split()))
            key = (node_key(site.binding), attr, _input_key(semantic, element))
            copies_by_key.setdefault(key, []).append((conditions, counts[spelled] > before.get(spelled, 0), element))
    doomed: list[Node] = []
    for (_, attr, name), copies in copies_by_key.items():
        excess = min(len(copies) - 1, counts[(attr, name)] - before.get((attr, name), 0))
        if excess <= 0:
            continue
        widest = [i for i, (conditions, _, _) in enumerate(copies) if all(conditions <= other for other, _, _ in copies)]
        if not widest:
            continue  # under conditions that exclude each other (`cudaSupport`, `!cudaSupport`)
        keeper = min(widest, key=lambda i: (copies[i][1], i))
        others = sorted((i for i in range(len(copies)) if i != keeper), key=lambda i: (not copies[i][1], -i))
        doomed.extend(copies[i][2] for i in others[:excess])
    edits: list[Edit] = []
    for element in sorted(doomed, key=lambda e: e.start_byte):
        edit = delete_element(source, element)
        if edits and edit.start < edits[-1].end:
            break  # neighbours: the rest on the next pass
        edits.append(edit)
    return edits
