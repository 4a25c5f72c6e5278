"""Hover: a rule's documentation on its findings; on a CUDA package (`cudaPackages.X`, also
through `with` and `inherit`), what the reference set knows of it in the target release. Either
ends with the document's target (nixpkgs, where that came from, CUDA releases): the one place the
editor states it, instead of every diagnostic's message."""

from __future__ import annotations

from typing import TYPE_CHECKING

from lsprotocol import types
from tree_sitter import Node

from cudalint.frontend.files import format_size
from cudalint.knowledge import catalog, sizes
from cudalint.lint.model import Diagnostic
from cudalint.lint.registry import known_codes, rule_by_code
from cudalint.lint.settings import LintSettings
from cudalint.nix.semantic import Semantic
from cudalint.nix.syntax import last_name, text

from .diagnostics import lsp_range

if TYPE_CHECKING:
    from .state import ServerState

# How far up from the identifier under the cursor a package reference may start
# (identifier -> attrpath -> select -> getter call -> parentheses).
_MAX_CLIMB = 5


async def hover(server: ServerState, params: types.HoverParams) -> types.Hover | None:
    snapshot = server.documents.get(params.text_document.uri)
    if snapshot is None:
        return None
    source = snapshot.source
    offset = source.offset_of_utf16(params.position.line, params.position.character)
    sections: list[str] = []
    span: tuple[int, int] | None = None
    result = await server.lint_async(snapshot)
    if result is not None:
        for diagnostic in result.diagnostics:
            if diagnostic.start <= offset <= diagnostic.end and diagnostic.code in known_codes():
                sections.append(rule_markdown(diagnostic))
                span = span or (diagnostic.start, diagnostic.end)
    settings, target = server.document_settings(snapshot)
    package = package_at(Semantic(snapshot.tree, source), snapshot.tree.root_node, offset) if snapshot.tree is not None else None
    if package is not None:
        name, name_span = package
        described = package_markdown(name, settings.lint)
        if described:
            sections.insert(0, described)
            span = name_span
    if not sections:
        return None
    # the target, stated here for the document rather than in every diagnostic's message
    sections.append(f"*Judged against {target.describe()}.*")
    return types.Hover(
        contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value="\n\n---\n\n".join(sections)),
        range=lsp_range(source, *span) if span else None,
    )


def rule_markdown(diagnostic: Diagnostic) -> str:
    rule = rule_by_code(diagnostic.code)
    figures = "".join(f"\n\n**Fix:** {fix.title}" for fix in diagnostic.fixes if fix.download is not None)
    if rule.preview:
        figures += f"\n\n**Status:** {rule.preview_note}"
    return f"**{rule.code}** `{rule.name}`: {rule.summary}{figures}\n\n{rule.docs}\n\n[Documentation]({rule.url})"


def package_at(semantic: Semantic, root: Node, offset: int) -> tuple[str, tuple[int, int]] | None:
    """The CUDA package whose name is under the cursor, and the name's span."""
    node = root.descendant_for_byte_range(offset, offset)
    if node is None or node.type != "identifier":
        if node is not None and offset > 0:
            node = root.descendant_for_byte_range(offset - 1, offset - 1)  # the cursor just after a name
        if node is None or node.type != "identifier":
            return None
    inherited = _inherited_package(node)
    if inherited is not None:
        return inherited, (node.start_byte, node.end_byte)
    current: Node | None = node
    for _ in range(_MAX_CLIMB):
        if current is None:
            break
        ref = semantic.cuda_ref(current)
        if ref is not None and ref.name_node.start_byte <= offset <= ref.name_node.end_byte:
            return ref.package, (ref.name_node.start_byte, ref.name_node.end_byte)
        current = current.parent
    return None


def _inherited_package(identifier: Node) -> str | None:
    """`libcublas` in `inherit (cudaPackages) libcublas;`."""
    attrs = identifier.parent
    statement = attrs.parent if attrs is not None else None
    if attrs is None or statement is None or attrs.type != "inherited_attrs" or statement.type != "inherit_from":
        return None
    origin = statement.child_by_field_name("expression")
    if origin is None or not catalog.is_package_set_name(last_name(origin)):
        return None
    return text(identifier)


SNAPSHOT = "nixpkgs of 2025-11"  # the reference set's product manifests (nix/provenance.nix)


def package_markdown(name: str, settings: LintSettings) -> str | None:
    from cudalint.knowledge import reference  # loads on the first hover over a package, not at start-up

    target = reference.target(settings.nixpkgs, settings.cuda)
    info = reference.lookup(name, target)
    if info is None:
        return None
    title = f"**`cudaPackages.{info.name}`** ({info.role})"
    if info.description:
        title += f": {info.description}"
    lines = [title, "", f"In {target.describe()}:"]
    if info.releases:
        # NVIDIA products outside the CUDA manifests (cuDNN, cuTENSOR, TensorRT, ...) are modelled
        # from one nixpkgs snapshot: on older targets their version and size are that snapshot's
        snapshot = info.kind == "non-redist" and target.era.id != "split-redist"
        lines += ["", "| CUDA | version | outputs | archive |", "|---|---|---|---|"]
        for facts in info.releases:
            size = format_size(facts.size) if facts.size else "-"
            outputs = ", ".join(f"`{o}`" for o in facts.outputs) if facts.outputs else "unknown"
            version = f"{facts.version} (in {SNAPSHOT}; this target's is older)" if snapshot and facts.version else facts.version or "-"
            lines.append(f"| {facts.release} | {version} | {outputs} | {size} |")
    else:
        elsewhere = ", ".join(info.available_in) or "none"
        lines += ["", f"Not in the target's CUDA releases (present in CUDA {elsewhere})."]
    lines += sizes.hover_lines(reference.load(), name, target)
    deprecation = info.deprecation
    if deprecation is not None:
        advice = f" Use `{deprecation.replacement}` instead." if deprecation.replacement else ""
        throws = f" Evaluation fails from {deprecation.throws_from}." if deprecation.throws_from else ""
        note = f" {deprecation.note}" if deprecation.note else ""
        lines += ["", f"**{deprecation.status.capitalize()}** since {deprecation.since}.{throws}{advice}{note}"]
    return "\n".join(lines)
