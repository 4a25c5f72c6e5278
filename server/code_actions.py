"""Code actions: the engine's fixes as quick fixes (unsafe ones only when the file's
`unsafe-fixes` allows, see configuration.py), "Ignore CUDAxxx on this line", and
`source.fixAll.cudalint` (the CLI's `--fix`: safe fixes only, re-linted until nothing changes,
since fix-on-save applies it unseen).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from lsprotocol import types

from cudalint.lint.engine import ENGINE_RULES
from cudalint.lint.fixing import fix_file
from cudalint.lint.model import Applicability, Diagnostic, Edit, Fix
from cudalint.lint.suppression_edits import suppression_edit
from cudalint.nix.source import SourceFile

from .diagnostics import lsp_range, to_lsp

if TYPE_CHECKING:
    from .documents import Snapshot
    from .state import ServerState

FIX_ALL = "source.fixAll.cudalint"
KINDS = [types.CodeActionKind.QuickFix, FIX_ALL]


def _wanted(kind: str, only: list[str] | None) -> bool:
    return not only or any(kind == k or kind.startswith(k + ".") for k in only)


def workspace_edit(server: ServerState, snapshot: Snapshot, edits: list[Edit]) -> types.WorkspaceEdit:
    text_edits = [types.TextEdit(range=lsp_range(snapshot.source, e.start, e.end), new_text=e.content) for e in sorted(edits)]
    workspace = server.client_capabilities.workspace
    edit_capability = workspace.workspace_edit if workspace is not None else None
    if edit_capability is not None and edit_capability.document_changes:
        identifier = types.OptionalVersionedTextDocumentIdentifier(uri=snapshot.uri, version=snapshot.version)
        return types.WorkspaceEdit(document_changes=[types.TextDocumentEdit(text_document=identifier, edits=text_edits)])
    return types.WorkspaceEdit(changes={snapshot.uri: text_edits})


def fix_title(fix: Fix) -> str:
    return f"{fix.title} (unsafe fix)" if fix.applicability is Applicability.UNSAFE else fix.title


def _overlaps(diagnostic: Diagnostic, start: int, end: int) -> bool:
    return diagnostic.start <= end and start <= diagnostic.end


def _requested(snapshot: Snapshot, params: types.CodeActionParams, diagnostics: list[Diagnostic]) -> list[Diagnostic]:
    """The findings the request is about: those in its range, and those the client sent along."""
    source = snapshot.source
    start = source.offset_of_utf16(params.range.start.line, params.range.start.character)
    end = source.offset_of_utf16(params.range.end.line, params.range.end.character)
    sent = set()
    for item in params.context.diagnostics:
        data = item.data if isinstance(item.data, dict) else None
        if item.source == "cudalint" and data is not None and data.get("version") == snapshot.version:
            sent.add((item.code, data.get("start"), data.get("end")))
    return [d for d in diagnostics if _overlaps(d, start, end) or (d.code, d.start, d.end) in sent]


async def code_actions(server: ServerState, params: types.CodeActionParams) -> list[types.CodeAction]:
    snapshot = server.documents.get(params.text_document.uri)
    if snapshot is None:
        return []
    result = await server.lint_async(snapshot, exact=True)
    if result is None:
        return []
    only = list(params.context.only) if params.context.only else None
    actions: list[types.CodeAction] = []
    if _wanted(types.CodeActionKind.QuickFix, only):
        unsafe_allowed = server.file_settings(snapshot.uri).unsafe_fixes
        preferred_taken = False
        for diagnostic in _requested(snapshot, params, result.diagnostics):
            lsp_diagnostic = to_lsp(diagnostic, snapshot.source, snapshot.version)
            for fix in diagnostic.fixes:
                if fix.applicability is Applicability.UNSAFE and not unsafe_allowed:
                    continue
                preferred = fix.applicability is Applicability.SAFE and not preferred_taken
                preferred_taken = preferred_taken or preferred
                actions.append(
                    types.CodeAction(
                        title=fix_title(fix),
                        kind=types.CodeActionKind.QuickFix,
                        diagnostics=[lsp_diagnostic],
                        is_preferred=preferred or None,
                        edit=workspace_edit(server, snapshot, list(fix.edits)),
                    )
                )
            if diagnostic.code not in ENGINE_RULES:
                edit = suppression_edit(snapshot.source, result.tree, diagnostic)
                if edit is not None:
                    actions.append(
                        types.CodeAction(
                            title=f"Ignore {diagnostic.code} on this line",
                            kind=types.CodeActionKind.QuickFix,
                            diagnostics=[lsp_diagnostic],
                            edit=workspace_edit(server, snapshot, [edit]),
                        )
                    )
    if _wanted(FIX_ALL, only):
        action = fix_all_action(server, snapshot, result)
        if action is not None:
            actions.append(action)
    return actions


def fix_all_action(server: ServerState, snapshot: Snapshot, result) -> types.CodeAction | None:
    settings = server.document_settings(snapshot)[0]
    outcome = fix_file(snapshot.source, settings.lint, unsafe=False, first=result)
    if not outcome.changed:
        return None
    return types.CodeAction(
        title="Fix all safe cudalint findings",
        kind=FIX_ALL,
        edit=workspace_edit(server, snapshot, [changed_span(snapshot.source, outcome.text)]),
    )


def changed_span(source: SourceFile, new_text: str) -> Edit:
    """One edit turning `source` into `new_text`, covering only what differs (so the editor
    keeps the cursor and folds outside it)."""
    old, new = source.data, new_text.encode("utf-8", "surrogatepass")
    limit = min(len(old), len(new))
    prefix = 0
    while prefix < limit and old[prefix] == new[prefix]:
        prefix += 1
    suffix = 0
    while suffix < limit - prefix and old[-1 - suffix] == new[-1 - suffix]:
        suffix += 1
    # keep the span on character boundaries (UTF-8 continuation bytes are 0b10xxxxxx)
    while prefix > 0 and (old[prefix] if prefix < len(old) else 0) & 0xC0 == 0x80:
        prefix -= 1
    while suffix > 0 and old[len(old) - suffix] & 0xC0 == 0x80:
        suffix -= 1
    content = new[prefix : len(new) - suffix].decode("utf-8", "surrogatepass")
    return Edit(prefix, len(old) - suffix, content)
