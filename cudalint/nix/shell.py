"""Shell text inside Nix strings (phases, `shellHook`, `runCommand` scripts), read by tree-sitter-bash.

A `ShellText` keeps absolute byte offsets. The shell parser reads the string's bytes with every
`${...}` interpolation (and every Nix escape) replaced by a placeholder word of the same length
and the string's delimiters by blanks, so each node of the shell tree spans the same bytes as in
the Nix source. Rules ask for what they need instead of tokenizing again:

- `commands()`: the simple commands (`cmd args`, `export X=...`, `X=1 cmd`, a lone `X=1`, also
  those of the scripts heredocs write), each with its words (`Word`: span and masked bytes,
  interpolations masked by 0x01);
- `statements()`: the statements of the script, each with the statements nested in its bodies;
- `lines()` / `line_at()`: logical lines (backslash continuations joined) with the shell comment
  cut off (`# export LD_LIBRARY_PATH=...` never runs), for rules matching a pattern on a line;
- `statement_node()`: the shell node of a span, for `cudalint.lint.edits.remove_shell`, the one
  way to delete shell code (a statement, a command or some of its words) and leave valid shell.

The parser is imported on first use: files whose text matches no rule's pattern never load it.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache

from tree_sitter import Language, Node, Parser, Tree

from cudalint.nix.source import SourceFile

MASK = 0x01
_PLACEHOLDER = ord("_")
_SHELL_ATTR = re.compile(
    r"^(?:\w*Phase|pre\w+|post\w+|shellHook|script|buildCommand|text|extraCommands|commands|"
    r"setupHook|fixupPhase|extraSetup|runScript|profile|extraInstallCommands|extraBuildCommands)$"
)
_SHELL_FUNCTIONS = frozenset({"runCommand", "runCommandLocal", "runCommandCC", "runCommandNoCC", "writeShellScript", "writeShellScriptBin", "writeScript", "writeScriptBin", "writeShellApplication"})
_NOT_SHELL = frozenset({"meta", "description", "longDescription", "passthru"})

# tree-sitter-bash node types
# the simple commands, and the elements of an array (`makeWrapperArgs+=( --prefix ... )`)
_SIMPLE_COMMANDS = frozenset({"command", "declaration_command", "unset_command", "variable_assignments", "array"})
LOOPS = frozenset({"for_statement", "c_style_for_statement", "while_statement"})
# a statement made of others: a pipeline (`find | while ...`), a list (`a && b`), a redirection
# (`while ...; done < <(find ...)`), a negation (`! cmd`)
_WRAPPERS = frozenset({"pipeline", "list", "redirected_statement", "negated_command"})
# where statements follow one another
SEQUENCES = frozenset({"program", "do_group", "compound_statement", "subshell", "if_statement", "elif_clause", "else_clause", "case_item"})
# what a sequence holds besides its statements
_NOT_STATEMENTS = frozenset({"comment", "elif_clause", "else_clause"})


@cache
def _language() -> Language:
    import tree_sitter_bash

    return Language(tree_sitter_bash.language())


@dataclass(frozen=True)
class ShellLine:
    start: int  # absolute byte offsets of the logical line
    end: int
    code: bytes  # masked bytes of the line with its comment cut off (same offsets from start)
    comment_start: int | None  # absolute offset of a trailing/whole-line comment


@dataclass(frozen=True)
class Word:
    """One shell word of a command (absolute offsets; `raw` has interpolations masked)."""

    start: int
    end: int
    raw: bytes

    @property
    def plain(self) -> bytes:
        """The word without quote characters (`"LD_LIBRARY_PATH"` -> LD_LIBRARY_PATH)."""
        return self.raw.replace(b'"', b"").replace(b"'", b"")


@dataclass(frozen=True)
class Command:
    """A simple command (tree-sitter-bash `command`, `declaration_command`, a lone assignment,
    an array's elements): its node, its words in order (`export`, `LD_LIBRARY_PATH=...`; `X=1`,
    `cmd`, `arg`) and which word names the command (None for assignments only)."""

    node: Node
    words: tuple[Word, ...]
    name_index: int | None

    @property
    def name(self) -> bytes:
        """The command word, unquoted (`export`, `wrapProgram`); b"" for assignments only."""
        return self.words[self.name_index].plain if self.name_index is not None else b""

    def arguments(self) -> tuple[Word, ...]:
        """The words after the command word."""
        return self.words[self.name_index + 1 :] if self.name_index is not None else ()


class ShellText:
    def __init__(self, node: Node, source: SourceFile) -> None:
        self.node = node
        self.source = source
        self.interpolations = [c for c in node.children if c.type == "interpolation"]
        self._interpolation_ends = [i.end_byte for i in self.interpolations]  # sorted: they do not overlap
        start, end = node.start_byte, node.end_byte
        masked = bytearray(source.data[start:end])
        for interpolation in self.interpolations:
            a, b = interpolation.start_byte - start, interpolation.end_byte - start
            masked[a:b] = bytes([MASK]) * (b - a)
        self.offset = start
        self.masked = bytes(masked)
        children = node.children
        # the code between the delimiters (`''`/`"`), absolute offsets
        self.content_start = children[0].end_byte if len(children) >= 2 else end
        self.content_end = children[-1].start_byte if len(children) >= 2 else end
        self._tree: Tree | None = None
        self._text = b""
        self._roots_found: list[Node] | None = None
        self._lines: list[ShellLine] | None = None
        self._line_starts: list[int] = []
        self._comments: list[tuple[int, int]] | None = None
        self._commands: list[Command] | None = None
        self._by_node: dict[tuple[int, int, str], Command] = {}
        self._command_starts: list[int] = []

    # ----- the shell tree ---------------------------------------------------------------------

    @property
    def tree(self) -> Tree:
        """The shell parse of the string, its offsets relative to `self.offset`."""
        if self._tree is None:
            text = bytearray(self.masked)
            text[: self.content_start - self.offset] = b" " * (self.content_start - self.offset)
            text[self.content_end - self.offset :] = b" " * (len(text) - (self.content_end - self.offset))
            for child in self.node.children:
                if child.type == "interpolation":
                    text[child.start_byte - self.offset : child.end_byte - self.offset] = bytes([_PLACEHOLDER]) * (child.end_byte - child.start_byte)
                elif child.type == "escape_sequence":
                    # `''$`, `\\`, `\"`: the escaped character stays (still a quote, a `;`, ...);
                    # `'''` (a literal `''`) becomes one word
                    a, b = child.start_byte - self.offset, child.end_byte - self.offset
                    keep = 0 if text[b - 1 : b] == b"'" else 1
                    text[a : b - keep] = bytes([_PLACEHOLDER]) * (b - keep - a)
            self._tree = Parser(_language()).parse(bytes(text))  # a parser per parse: the server lints in a thread
            self._text = bytes(text)
        return self._tree

    def _roots(self) -> list[Node]:
        """The script's tree, and the scripts its heredocs write (`cat > $out/bin/x <<EOF`),
        parsed alone with the same offsets."""
        if self._roots_found is None:
            root = self.tree.root_node
            bodies = [n for n in _walk(root) if n.type == "heredoc_body"]
            self._roots_found = [root]
            if bodies:
                text = bytearray(re.sub(rb"[^\n]", b" ", self._text))
                for body in bodies:
                    text[body.start_byte : body.end_byte] = self._text[body.start_byte : body.end_byte]
                self._roots_found.append(Parser(_language()).parse(bytes(text)).root_node)
        return self._roots_found

    def absolute(self, node: Node) -> tuple[int, int]:
        return self.offset + node.start_byte, self.offset + node.end_byte

    def statements(self, within: Node | None = None) -> list[Node]:
        """The statements of the script (or of a sequence node: a `do_group`, an `if` body)."""
        parent = self.tree.root_node if within is None else within
        return [child for index, child in enumerate(parent.named_children) if child.type not in _NOT_STATEMENTS and parent.field_name_for_named_child(index) not in {"condition", "value"}]

    def commands(self) -> list[Command]:
        """The simple commands of the script, in text order."""
        if self._commands is None:
            commands = (self._command(n) for root in self._roots() for n in _walk(root) if _is_simple_command(n))
            self._commands = sorted((c for c in commands if c.words), key=lambda c: c.words[0].start)  # not an empty array `()`
            self._command_starts = [c.words[0].start for c in self._commands]
            self._by_node = {(c.node.start_byte, c.node.end_byte, c.node.type): c for c in self._commands}
        return self._commands

    def commands_in(self, node: Node) -> list[Command]:
        """The simple commands inside a shell node (the node itself included)."""
        commands = self.commands()
        start, end = self.absolute(node)
        first = bisect.bisect_left(self._command_starts, start)
        last = bisect.bisect_left(self._command_starts, end)
        return [c for c in commands[first:last] if c.node.end_byte <= node.end_byte]

    def command_at(self, offset: int) -> Command | None:
        """The innermost simple command holding the absolute byte `offset`."""
        return self.command_holding(offset, offset + 1)

    def command_holding(self, start: int, end: int) -> Command | None:
        """The innermost simple command whose words hold the absolute span [start, end)."""
        self.commands()
        for root in self._roots():
            node: Node | None = root.descendant_for_byte_range(start - self.offset, max(start, end - 1) - self.offset)
            while node is not None:
                command = self._by_node.get((node.start_byte, node.end_byte, node.type))
                if command is not None and command.words[0].start <= start and end <= command.words[-1].end:
                    return command
                node = node.parent
        return None

    def _command(self, node: Node) -> Command:
        words: list[Word] = []
        for child in [node] if node.type == "variable_assignment" else node.named_children:
            if child.type == "comment":
                continue
            start, end = self.absolute(child)
            if words and words[-1].end == start:  # pieces of one word (`a"b"`)
                start = words.pop().start
            words.append(Word(start, end, self.masked[start - self.offset : end - self.offset]))
        name_index = None
        if node.type in {"declaration_command", "unset_command"} and node.children:
            keyword = node.children[0]  # `export`, `local`, `unset` (no named node)
            start, end = self.absolute(keyword)
            words.insert(0, Word(start, end, self.masked[start - self.offset : end - self.offset]))
            name_index = 0
        name = node.child_by_field_name("name") if node.type == "command" else None
        if name is not None:
            name_start = self.offset + name.start_byte
            name_index = next((i for i, w in enumerate(words) if w.start <= name_start < w.end), None)
        return Command(node, tuple(words), name_index)

    # ----- logical lines and comments ----------------------------------------------------------

    def lines(self) -> list[ShellLine]:
        """The logical lines, computed once per string."""
        if self._lines is None:
            self._lines = list(self._split_lines())
            self._line_starts = [line.start for line in self._lines]
        return self._lines

    def line_at(self, offset: int) -> ShellLine | None:
        """The logical line holding the absolute byte `offset` (its end included)."""
        lines = self.lines()
        index = bisect.bisect_right(self._line_starts, offset) - 1
        if index < 0 or offset > lines[index].end:
            return None
        return lines[index]

    def comments(self) -> list[tuple[int, int]]:
        """Spans of the shell comments (absolute). A string without `#` is not parsed for them."""
        if self._comments is None:
            self._comments = sorted(self.absolute(n) for root in self._roots() for n in _walk(root) if n.type == "comment") if b"#" in self.masked else []
        return self._comments

    def _split_lines(self) -> Iterator[ShellLine]:
        data = self.masked
        comments = self.comments()
        position = 0
        length = len(data)
        while position < length:
            end = position
            while True:
                newline = data.find(b"\n", end)
                if newline == -1:
                    end = length
                    break
                if newline > 0 and data[newline - 1 : newline] == b"\\":
                    end = newline + 1
                    continue
                end = newline
                break
            start = self.offset + position
            index = self._comment_from(start)
            comment = comments[index][0] if index < len(comments) and comments[index][0] < self.offset + end else None
            code = data[position:end] if comment is None else data[position : comment - self.offset]
            yield ShellLine(start, self.offset + end, code, comment)
            position = end + 1

    def code_matches(self, pattern: re.Pattern[bytes]) -> Iterator[tuple[ShellLine, re.Match[bytes]]]:
        """Matches of `pattern` in code (not in comments); match offsets are relative to line.start."""
        if pattern.search(self.masked) is None:
            return
        for line in self.lines():
            for match in pattern.finditer(line.code):
                yield line, match

    def in_comment(self, offset: int) -> bool:
        comment = self._comment_from(offset + 1) - 1  # the last comment starting at or before `offset`
        return comment >= 0 and offset < self.comments()[comment][1]

    def _comment_from(self, offset: int) -> int:
        """The index of the first comment starting at or after the absolute `offset`."""
        return bisect.bisect_left(self.comments(), (offset, -1))

    # ----- interpolations -----------------------------------------------------------------------

    def interpolations_in(self, start: int, end: int) -> list[Node]:
        """Interpolations overlapping the absolute byte span [start, end)."""
        first = bisect.bisect_right(self._interpolation_ends, start)
        found = []
        for interpolation in self.interpolations[first:]:
            if interpolation.start_byte >= end:
                break
            found.append(interpolation)
        return found

    def expression_of(self, interpolation: Node) -> Node | None:
        return interpolation.child_by_field_name("expression") or next((c for c in interpolation.named_children), None)

    def slice(self, start: int, end: int) -> str:
        return self.source.slice(start, end)

    def statement_node(self, start: int, end: int) -> Node | None:
        """The outermost shell node spanning exactly the absolute [start, end) (a statement or a
        command), or None."""
        node = self.tree.root_node.descendant_for_byte_range(start - self.offset, end - self.offset)
        found = None
        while node is not None and node.type != "program":
            if self.absolute(node) == (start, end):
                found = node
            node = node.parent
        return found


def _walk(node: Node) -> Iterator[Node]:
    """`node` and its descendants in text order."""
    yield node
    for child in node.children:
        yield from _walk(child)


def _is_simple_command(node: Node) -> bool:
    if node.type in _SIMPLE_COMMANDS:
        return True
    # a lone `X=1` (not the prefix of a command, not one of `A=1 B=2`)
    return node.type == "variable_assignment" and node.parent is not None and node.parent.type not in {"command", "declaration_command", "variable_assignments"}


def is_shell_string(node: Node, binding_path: tuple[str, ...], call_name: str | None) -> bool:
    """Whether a string node holds shell code, judged from where it sits."""
    if any(part in _NOT_SHELL for part in binding_path):
        return False
    if binding_path and _SHELL_ATTR.match(binding_path[-1]):
        return True
    if call_name in _SHELL_FUNCTIONS:
        return True
    # multi-line strings elsewhere (let-bound scripts, wrapper arguments) are usually shell too
    return node.type == "indented_string_expression"
