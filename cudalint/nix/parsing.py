"""The one place that loads the Nix grammar and turns parse errors into syntax-error spans.

The PyPI grammar (tree-sitter-nix 0.1) predates trailing commas in formals (`{ a, b, }:`,
nixfmt's style): it yields a MISSING identifier in a last `formal`, or a small ERROR holding
only that `,`, with comments anywhere around it (`{ a, b, # note` newline `}:`). Nix accepts
both, so exactly those two shapes are tolerated; anything else (`{ a, ..., }`, `{ a,, }`,
`{ a, , b }`) is a real syntax error.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from functools import lru_cache

import tree_sitter
import tree_sitter_nix

from cudalint.nix.source import SourceFile
from cudalint.nix.syntax import descendants


@lru_cache(maxsize=1)
def language() -> tree_sitter.Language:
    return tree_sitter.Language(tree_sitter_nix.language())


@lru_cache(maxsize=64)
def _type_query(types: tuple[str, ...]) -> tree_sitter.Query:
    return tree_sitter.Query(language(), "[" + " ".join(f"({kind})" for kind in types) + "] @node")


def nodes_of_type(root: tree_sitter.Node, types: tuple[str, ...]) -> list[tree_sitter.Node]:
    """The nodes of these named types below `root` (itself included), in pre-order (the order of
    `syntax.descendants`). tree-sitter's query engine finds them in C: a rule that looks at every
    `assert` of a file no longer walks all its nodes in Python."""
    found = tree_sitter.QueryCursor(_type_query(types)).captures(root).get("node", [])
    found.sort(key=lambda node: (node.start_byte, -node.end_byte))  # captures of nested nodes come out of pre-order
    return found


def new_parser() -> tree_sitter.Parser:
    return tree_sitter.Parser(language())


# Bytes handed to tree-sitter per read when a parse can be stopped (see `parse`).
_CHUNK = 1 << 16


def parse(source: SourceFile, old_tree: tree_sitter.Tree | None = None) -> tree_sitter.Tree:
    parser = new_parser()
    return parser.parse(source.data, old_tree) if old_tree else parser.parse(source.data)


def parse_until(source: SourceFile, deadline: float) -> tree_sitter.Tree | None:
    """The tree of `source`, or None when parsing is still going at `deadline` (a
    `time.monotonic()` value): tree-sitter reports its progress to a callback only when it reads
    the text through one, and stops when the callback says so (a selector chain of 50,000 names
    took 17 s to parse)."""
    data = source.data

    def read(offset: int, _point: object) -> bytes:
        return data[offset : offset + _CHUNK]

    def expired(_offset: int, _has_error: bool) -> bool:
        return time.monotonic() > deadline

    parser = new_parser()
    try:
        tree = parser.parse(read, progress_callback=expired)
    except ValueError:  # ("Parsing failed": the callback stopped it)
        return None
    # A tree parsed through a callback reads its nodes' text through it too (a slice per
    # `node.text`); parsed again from the bytes with itself as the old tree (nothing changed, so
    # nothing is re-parsed: microseconds), it holds the bytes.
    return parser.parse(data, tree)


@dataclass(frozen=True)
class SyntaxProblem:
    start: int
    end: int
    message: str


def _neighbours(node: tree_sitter.Node, parent: tree_sitter.Node) -> tuple[list[tree_sitter.Node], int]:
    """`parent`'s children other than comments, and `node`'s index among them. Comments may
    stand between any two tokens (`{ a, b, # note` newline `}:` is nixfmt's everyday layout), so
    the shape of the trailing-comma gap is judged without them. The tree-sitter calls for
    parents and siblings recurse in C as deep as the node is nested and crash at about 7,000
    levels, so the walks here carry the parent along instead of asking for it."""
    children = [child for child in parent.children if child.type != "comment" or child == node]
    index = next(i for i, child in enumerate(children) if child == node)
    return children, index


def _is_trailing_comma_gap(node: tree_sitter.Node, parent: tree_sitter.Node | None, grandparent: tree_sitter.Node | None) -> bool:
    if parent is None:
        return False
    if node.is_missing and node.type == "identifier" and parent.type == "formal":
        if grandparent is None or grandparent.type != "formals" or parent.named_child_count != 1:
            return False
        siblings, index = _neighbours(parent, grandparent)
        return 1 < index < len(siblings) - 1 and siblings[index - 1].type == "," and siblings[index + 1].type == "}" and siblings[index - 2].type == "formal"
    if node.type == "ERROR" and parent.type == "formals":
        tokens = [child for child in node.children if child.type != "comment"]
        if len(tokens) != 1 or tokens[0].type != ",":
            return False
        siblings, index = _neighbours(node, parent)
        return 0 < index < len(siblings) - 1 and siblings[index - 1].type == "formal" and siblings[index + 1].type == "}"
    return False


def is_gap_formal(node: tree_sitter.Node) -> bool:
    """A `formal` node that only exists because of a tolerated trailing comma."""
    return node.type == "formal" and node.child_count == 1 and node.children[0].is_missing and _is_trailing_comma_gap(node.children[0], node, node.parent)


def syntax_problems(tree: tree_sitter.Tree, source: SourceFile, definitions: list[tree_sitter.Node] | None = None) -> list[SyntaxProblem]:
    """What Nix's parser rejects, in file order: parse errors (the trailing-comma gap is not
    one), duplicate formals and attributes defined twice. `definitions`: the tree's `formals`
    and `binding_set` nodes when a walk already found them."""
    problems = _parse_errors(tree, source) + duplicate_definitions(tree.root_node, definitions) + _stray_white_space(tree, source)
    problems.sort(key=lambda p: (p.start, p.end))
    return problems


def _parse_errors(tree: tree_sitter.Tree, source: SourceFile) -> list[SyntaxProblem]:
    root = tree.root_node
    if not root.has_error:
        return []
    problems: list[SyntaxProblem] = []
    stack: list[tuple[tree_sitter.Node, tree_sitter.Node | None, tree_sitter.Node | None]] = [(root, None, None)]
    while stack:
        node, parent, grandparent = stack.pop()
        if not node.has_error and not node.is_missing:
            continue
        if node.is_missing:
            if not _is_trailing_comma_gap(node, parent, grandparent):
                problems.append(SyntaxProblem(node.start_byte, node.end_byte, _missing_message(node)))
            continue
        if node.type == "ERROR":
            if not _is_trailing_comma_gap(node, parent, grandparent):
                problems.append(_error_problem(node, source))
            continue
        stack.extend((child, node, parent) for child in reversed(node.children))
    return _one_per_line(problems, source)


def _one_per_line(problems: list[SyntaxProblem], source: SourceFile) -> list[SyntaxProblem]:
    """The grammar's error recovery often reports one mistake as a cascade of errors on its line
    (`import &lt;nixpkgs&gt; {}` gives three): keep the first, spanning the rest."""
    merged: list[SyntaxProblem] = []
    for problem in sorted(problems, key=lambda p: (p.start, p.end)):
        last = merged[-1] if merged else None
        if last is not None and source.line_of(last.start) == source.line_of(problem.start):
            merged[-1] = SyntaxProblem(last.start, max(last.end, problem.end), last.message)
        else:
            merged.append(problem)
    return merged


# The grammar skips any ASCII white space between tokens; Nix only spaces, tabs and newlines.
_NOT_NIX_WHITE_SPACE = re.compile(rb"[\x0b\x0c]")
_CHARACTER_NAMES = {b"\x0b": "a vertical tab (U+000B)", b"\x0c": "a form feed (U+000C)"}


def _stray_white_space(tree: tree_sitter.Tree, source: SourceFile) -> list[SyntaxProblem]:
    """Vertical tabs and form feeds between tokens (inside strings and comments they are text)."""
    if b"\x0b" not in source.data and b"\x0c" not in source.data:
        return []  # (two memchr scans: the regular expression's scan took a tenth of the whole check)
    problems = []
    for match in _NOT_NIX_WHITE_SPACE.finditer(source.data):
        at = match.start()
        holder = tree.root_node.descendant_for_byte_range(at, at + 1)
        if holder is not None and holder.child_count and holder.type != "ERROR":
            what = _CHARACTER_NAMES[match.group()]
            problems.append(SyntaxProblem(at, at + 1, f"syntax error: {what} is not white space in Nix; use a space"))
    return problems


def _missing_message(node: tree_sitter.Node) -> str:
    if node.is_named:
        what = "an expression" if node.type == "identifier" else node.type.replace("_", " ")
        return f"syntax error: expected {what} here"
    return f"syntax error: missing `{node.type}`"


def _error_problem(node: tree_sitter.Node, source: SourceFile) -> SyntaxProblem:
    start, end = node.start_byte, node.end_byte
    first_line_end = source.line_end(source.line_of(start))
    shown = source.slice(start, min(end, first_line_end, start + 40)).strip()
    if not shown:
        return SyntaxProblem(start, end, "syntax error")
    return SyntaxProblem(start, end, f"syntax error: unexpected `{shown}`")


_LEAF = object()  # a value that is not an attrset literal: nothing can be merged into it
# Nested attrset literals deeper than this are merged without looking inside (no false errors).
_MAX_MERGE_DEPTH = 64


def duplicate_definitions(root: tree_sitter.Node, definitions: list[tree_sitter.Node] | None = None) -> list[SyntaxProblem]:
    """Duplicate formals and attributes, which Nix rejects while parsing.

    Nix merges attrset literals (`a = { x = 1; }; a.y = 2;` is fine) and rejects every other
    second definition of a static name; dynamic names (`${x}`) are checked at evaluation.
    `definitions`: the `function_expression`, `formals` and `binding_set` nodes below `root`
    in pre-order, when already found."""
    found: dict[tuple[int, int], SyntaxProblem] = {}
    # Below a node without errors every binding and formal starts with its first name: that name
    # is read from the text, not asked of tree-sitter node by node (the check's cost in a large file).
    names = _LeadingNames(root)
    function = None  # the last function seen: in pre-order, the one holding the next formals
    for node in descendants(root) if definitions is None else definitions:
        kind = node.type
        if kind == "function_expression":
            function = node
        elif kind == "formals":
            _duplicate_formals(node, found, function, None if node.has_error else names)
        elif kind == "binding_set" and _first_names_repeat(node, None if node.has_error else names):
            _insert_bindings({}, node, found, report=True)
    return list(found.values())


# tree-sitter-nix's identifier token: the longest run of these from where a name starts.
_IDENTIFIER = re.compile(rb"[A-Za-z_][A-Za-z0-9_'-]*")
# A binding's first name: an identifier, or a quoted name without escapes or interpolation
# (group 1: what it spells, as `_name_key` has it).
_FIRST_NAME = re.compile(rb'[A-Za-z_][A-Za-z0-9_\'-]*|"((?:[^"\\$]|\$(?!\{))*)"')


class _LeadingNames:
    """The plain name a node starts with, read from the text below `root` (None when the node
    starts with something else: a quoted name, an interpolation, a keyword-led statement)."""

    def __init__(self, root: tree_sitter.Node) -> None:
        self.data = root.text or b""
        self.offset = root.start_byte

    def __call__(self, node: tree_sitter.Node) -> bytes | None:
        found = _IDENTIFIER.match(self.data, node.start_byte - self.offset)
        return found.group() if found is not None else None


def _first_names_repeat(binding_set: tree_sitter.Node, leading: _LeadingNames | None = None) -> bool:
    """Whether two definitions of a binding set start with the same name: only then can one
    be a duplicate (a binding set's nested literals are checked where they are), so the merge
    below runs for few of them. Compares the names' bytes: quoted and plain spellings of a
    name differ here, so a repeat counts whenever either could be one. `leading`: the names
    bindings start with, when the binding set has no errors."""
    seen: set[bytes] = set()
    match, data, offset = (_FIRST_NAME.match, leading.data, leading.offset) if leading is not None else (None, b"", 0)
    for binding in binding_set.named_children:
        found = match(data, binding.start_byte - offset) if match is not None else None
        if found is not None and found.group() != b"inherit":  # a binding (an inherit starts with its keyword, a comment with `#` or `/*`)
            key = found.group(1)
            if key is None:
                key = found.group()
            if key in seen:
                return True
            seen.add(key)
            continue
        kind = binding.type
        if kind == "binding":
            attrpath = binding.child_by_field_name("attrpath")
            first = attrpath.named_children[0] if attrpath is not None and attrpath.named_child_count else None
            if first is None:
                continue
            key = _name_key(first)
            if key in seen:
                return True
            seen.add(key)
        elif kind in {"inherit", "inherit_from"}:
            attrs = binding.child_by_field_name("attrs")
            for name in attrs.named_children if attrs is not None else ():
                key = _name_key(name)
                if key in seen:
                    return True
                seen.add(key)
    return False


def _name_key(node: tree_sitter.Node) -> bytes:
    """A name's identity for `_first_names_repeat`: quoted names without interpolation count
    as the plain name they spell (`"a"` and `a` repeat), anything else as its text."""
    raw = node.text or b""
    if node.type == "string_expression" and raw[:1] == b'"' and b"${" not in raw and b"\\" not in raw:
        return raw[1:-1]
    return raw


def _name(node: tree_sitter.Node) -> str | None:
    if node.type == "identifier":
        return node.text.decode("utf-8", "replace")
    if node.type == "string_expression" and all(c.type in {'"', "string_fragment"} for c in node.children):
        return "".join(c.text.decode("utf-8", "replace") for c in node.children if c.type == "string_fragment")
    return None


def _duplicate_formals(formals: tree_sitter.Node, found: dict, function: tree_sitter.Node | None = None, leading: _LeadingNames | None = None) -> None:
    """Formals named twice (or like the whole argument). `leading`: the names nodes start with,
    when the formals have no errors (then every formal starts with its name)."""
    names: set[bytes] = set()
    if function is None or function.child_by_field_name("formals") != formals:
        # (asking tree-sitter for a parent costs the siblings of every ancestor: thousands in a
        # generated package set, where the walk has already seen the function)
        function = formals.parent
    universal = function.child_by_field_name("universal") if function is not None else None
    if universal is not None:
        names.add(universal.text or b"")
    if leading is not None:
        written = formals.text or b""
        if b"?" not in written and b"#" not in written and b"/*" not in written:
            # no defaults and no comments: the identifiers in the text are the formals' names
            listed = _IDENTIFIER.findall(written)
            if len(set(listed)) == len(listed) and names.isdisjoint(listed):
                return
    for formal in formals.children_by_field_name("formal"):
        if leading is not None:
            name = leading(formal)
            start = formal.start_byte
            end = start + len(name) if name is not None else start
        else:
            identifier = formal.child_by_field_name("name")
            if identifier is None or identifier.is_missing:
                continue
            name, start, end = identifier.text or b"", identifier.start_byte, identifier.end_byte
        if name is None:
            continue
        if name in names:
            found[(start, end)] = SyntaxProblem(start, end, f"duplicate function argument `{name.decode('utf-8', 'replace')}`")
        names.add(name)


def _attrset_literal(node: tree_sitter.Node | None) -> tree_sitter.Node | None:
    while node is not None and node.type == "parenthesized_expression":
        node = node.child_by_field_name("expression")
    if node is not None and node.type in {"attrset_expression", "rec_attrset_expression"}:
        return next((c for c in node.children if c.type == "binding_set"), node)
    return None


def _insert_bindings(target: dict, binding_set: tree_sitter.Node, found: dict, report: bool, depth: int = 0) -> None:
    if depth > _MAX_MERGE_DEPTH:
        return
    for binding in binding_set.named_children:
        if binding.type in {"inherit", "inherit_from"}:
            attrs = binding.child_by_field_name("attrs")
            for attr in attrs.children_by_field_name("attr") if attrs is not None else ():
                name = _name(attr)
                if name is None:
                    continue
                if name in target and report:
                    _duplicate(attr, name, found)
                target.setdefault(name, _LEAF)
        elif binding.type == "binding":
            attrpath = binding.child_by_field_name("attrpath")
            components = attrpath.children_by_field_name("attr") if attrpath is not None else []
            names = [_name(c) for c in components]
            if not names or any(n is None for n in names):
                continue
            _insert_path(target, names, binding, found, report, depth)


def _insert_path(target: dict, names: list[str], binding: tree_sitter.Node, found: dict, report: bool, depth: int) -> None:
    current = target
    for index, name in enumerate(names):
        existing = current.get(name)
        if index < len(names) - 1:
            if existing is None:
                existing = current[name] = {}
            elif existing is _LEAF:
                if report:
                    _duplicate(binding.child_by_field_name("attrpath"), ".".join(names), found)
                return
            current = existing
            continue
        literal = _attrset_literal(binding.child_by_field_name("expression"))
        if literal is not None:
            if existing is _LEAF:
                if report:
                    _duplicate(binding.child_by_field_name("attrpath"), ".".join(names), found)
            elif existing is None:
                existing = current[name] = {}
                if literal.type == "binding_set":  # its own duplicates are reported where it is
                    _insert_bindings(existing, literal, found, False, depth + 1)
            elif literal.type == "binding_set":
                _insert_bindings(existing, literal, found, report, depth + 1)
        elif existing is None:
            current[name] = _LEAF
        elif report:
            _duplicate(binding.child_by_field_name("attrpath"), ".".join(names), found)


def _duplicate(node: tree_sitter.Node, name: str, found: dict) -> None:
    found[(node.start_byte, node.end_byte)] = SyntaxProblem(node.start_byte, node.end_byte, f"attribute `{name}` is already defined")
