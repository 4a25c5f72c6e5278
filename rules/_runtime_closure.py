"""Where a store path referenced in a string ends up at run time: in a wrapper, an RPATH or an
installed file. A path written there stays in the package's runtime closure (what users download),
not only in its build closure. Shared by CUDA204 (which reports such references to the toolkit)
and CUDA001 (which leaves them to CUDA204: one finding per construct)."""

from __future__ import annotations

import re

from tree_sitter import Node

from cudalint.lint.context import Context
from cudalint.nix.syntax import flatten_apply, last_name, outermost_apply, unparen

# Attributes whose strings are arguments of makeWrapper (`makeWrapperArgs = [ "--set" ... ]`).
WRAPPER_ARGUMENTS = frozenset({"makeWrapperArgs", "qtWrapperArgs", "gappsWrapperArgs", "wrapperArgs", "makeWrapperFlags", "programArgs"})
# Builders whose text becomes an installed script or file.
FILE_WRITERS = frozenset({"writeShellScript", "writeShellScriptBin", "writeScript", "writeScriptBin", "writeText", "writeTextFile", "writeTextDir", "writeShellApplication"})
_WRAPPER = re.compile(rb"\b(?:makeWrapper|makeShellWrapper|makeBinaryWrapper|makeCWrapper|wrapProgram|wrapProgramShell|wrapProgramBinary)\b")
_RPATH = re.compile(rb"\bpatchelf\b[^\n]*--(?:set|add)-rpath\b|-rpath[ ,=]")
# The line writes into an output: `> $out/...`, `tee $out/...`, `substituteInPlace $out/...`.
_INSTALLED = re.compile(rb"(?:>>?|\btee(?:\s+-a)?|\bsubstituteInPlace|\bsubstitute\s+\S+)\s*\"?\$\{?(?:out|bin|lib|dev)\b")


def runtime_use(node: Node, ctx: Context) -> str | None:
    """How the string holding `node` (an expression inside `${...}`) keeps it at run time:
    "wrapper", "RPATH" or "installed file"; None for a build-time use."""
    interpolation = _interpolation_of(node, ctx)
    if interpolation is None or interpolation.parent is None:
        return None
    string = interpolation.parent
    path = ctx.semantic.binding_path(string)
    if any(part in WRAPPER_ARGUMENTS for part in path):
        return "wrapper"
    if _written_by(string):
        return "installed file"
    shell = ctx.semantic.shell_text(string)
    if shell is not None:
        line = shell.line_at(interpolation.start_byte)
        if line is None or (line.comment_start is not None and interpolation.start_byte >= line.comment_start):
            return None
        if _WRAPPER.search(line.code):
            return "wrapper"
        if _RPATH.search(line.code):
            return "RPATH"
        if _INSTALLED.search(line.code) or _in_heredoc_to_output(shell, line):
            return "installed file"
    elif path and path[-1] in {"NIX_LDFLAGS", "LDFLAGS"} and b"rpath" in ctx.source.data[string.start_byte : string.end_byte]:
        return "RPATH"
    return None


_HEREDOC = re.compile(rb"<<-?\s*['\"]?(\w+)['\"]?")


def _in_heredoc_to_output(shell, line) -> bool:
    """`line` is in the body of `cat > $out/bin/x << EOF ... EOF`: text that lands in the file."""
    terminator: bytes | None = None
    for candidate in shell.lines():
        if candidate.start >= line.start:
            return terminator is not None
        if terminator is not None:
            if candidate.code.strip() == terminator:
                terminator = None
            continue
        opened = _HEREDOC.search(candidate.code)
        if opened and _INSTALLED.search(candidate.code):
            terminator = opened.group(1)
    return False


def _interpolation_of(node: Node, ctx: Context) -> Node | None:
    """The `${...}` whose value holds `node` directly or as an element of a search path
    (`${lib.makeLibraryPath [ cudatoolkit ]}`)."""
    if node.parent is not None and node.parent.type == "interpolation":
        return node.parent
    call = ctx.semantic.search_path_call(node, through_if=False)
    if call is not None and call.parent is not None and call.parent.type == "interpolation":
        return call.parent
    return None


def _written_by(string: Node) -> bool:
    """The string is the text of `writeShellScriptBin "x" ''...''` or `writeShellApplication { text = ...; }`."""
    parent = string.parent
    while parent is not None and parent.type == "parenthesized_expression":
        parent = parent.parent
    if parent is not None and parent.type == "apply_expression":
        function, _ = flatten_apply(outermost_apply(parent))
        return last_name(function) in FILE_WRITERS
    if parent is not None and parent.type == "binding":
        attrset = parent.parent.parent if parent.parent is not None else None
        holder = attrset.parent if attrset is not None else None
        if holder is not None and holder.type == "apply_expression" and unparen(holder.child_by_field_name("argument")) == attrset:
            function, _ = flatten_apply(outermost_apply(holder))
            return last_name(function) in FILE_WRITERS
    return False
