"""Diagnostics: engine findings as LSP diagnostics, pushed or pulled (never both).

Clients that advertise `textDocument.diagnostic` pull; the others get `publishDiagnostics`
after a burst of changes settles (debounced). A result is published only while its document is
still at the version that was linted.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from lsprotocol import types
from pygls.exceptions import JsonRpcException

from cudalint.lint.engine import LintResult
from cudalint.lint.model import Diagnostic, Severity
from cudalint.lint.registry import known_codes, rule_by_code
from cudalint.nix.source import SourceFile

if TYPE_CHECKING:
    from .documents import Snapshot
    from .state import ServerState

SOURCE = "cudalint"
# Long enough to merge the changes of fast typing, short enough to feel immediate.
DEBOUNCE_SECONDS = 0.15
# After a provisional (incremental) result: how long typing must pause before the full lint
# that confirms or corrects it.
CONFIRM_SECONDS = 0.3
SERVER_CANCELLED = -32802

_SEVERITY = {
    Severity.ERROR: types.DiagnosticSeverity.Error,
    Severity.WARNING: types.DiagnosticSeverity.Warning,
    Severity.INFO: types.DiagnosticSeverity.Information,
}


def lsp_range(source: SourceFile, start: int, end: int) -> types.Range:
    start_line, start_character = source.utf16_position(start)
    end_line, end_character = source.utf16_position(end)
    return types.Range(
        start=types.Position(line=start_line, character=start_character),
        end=types.Position(line=end_line, character=end_character),
    )


def to_lsp(diagnostic: Diagnostic, source: SourceFile, version: int) -> types.Diagnostic:
    """`data` identifies the finding in the lint of `version`, which code actions look up."""
    href = rule_by_code(diagnostic.code).url if diagnostic.code in known_codes() else None
    return types.Diagnostic(
        range=lsp_range(source, diagnostic.start, diagnostic.end),
        message=diagnostic.message,
        severity=_SEVERITY[diagnostic.severity],
        code=diagnostic.code,
        code_description=types.CodeDescription(href=href) if href else None,
        source=SOURCE,
        data={"version": version, "start": diagnostic.start, "end": diagnostic.end, "fixes": [f.title for f in diagnostic.fixes]},
    )


def _findings(diagnostics: list[Diagnostic]) -> list[tuple]:
    return [(d.code, d.start, d.end, d.message, d.severity, tuple(f.title for f in d.fixes)) for d in diagnostics]


def client_pulls(capabilities: types.ClientCapabilities) -> bool:
    document = capabilities.text_document
    return document is not None and document.diagnostic is not None


class Diagnostics:
    """Schedules lints of changed documents and delivers their results."""

    def __init__(self, server: ServerState) -> None:
        self.server = server
        self._pending: dict[str, asyncio.Task] = {}
        self._confirming: dict[str, asyncio.Task] = {}
        self.debounce = DEBOUNCE_SECONDS
        self.confirm_delay = CONFIRM_SECONDS

    @property
    def pull(self) -> bool:
        return client_pulls(self.server.client_capabilities)

    def changed(self, uri: str, immediately: bool = False) -> None:
        """A document changed (or opened): lint it once the changes settle, then push."""
        confirming = self._confirming.pop(uri, None)
        if confirming is not None:
            confirming.cancel()
        if self.pull:
            return
        pending = self._pending.pop(uri, None)
        if pending is not None:
            pending.cancel()
        self._pending[uri] = asyncio.ensure_future(self._publish_later(uri, 0 if immediately else self.debounce))

    async def _publish_later(self, uri: str, delay: float) -> None:
        try:
            if delay:
                await asyncio.sleep(delay)
            snapshot = self.server.documents.get(uri)
            if snapshot is None:
                return
            found = await self.server.lint_async(snapshot)
            current = self.server.documents.get(uri)
            if found is None or current is None or current.version != snapshot.version:
                return  # a newer version is on its way
            self.publish(snapshot, found.diagnostics)
            if found.provisional:
                self._confirm_later(snapshot, found)
        except asyncio.CancelledError:
            raise
        except Exception as error:  # keep serving; the next change retries
            self.server.log_error(f"linting {uri} failed", error)
        finally:
            if self._pending.get(uri) is asyncio.current_task():
                del self._pending[uri]

    def _confirm_later(self, snapshot: Snapshot, provisional: LintResult) -> None:
        """Once typing pauses, lint the whole version; deliver it if it says something else."""
        self._confirming[snapshot.uri] = asyncio.ensure_future(self._confirm(snapshot, provisional))

    async def _confirm(self, snapshot: Snapshot, provisional: LintResult) -> None:
        try:
            await asyncio.sleep(self.confirm_delay)
            exact = await self.server.lint_async(snapshot, exact=True)
            current = self.server.documents.get(snapshot.uri)
            if exact is None or current is None or current.version != snapshot.version:
                return
            if _findings(exact.diagnostics) == _findings(provisional.diagnostics):
                return
            if self.pull:
                self.server.workspace_diagnostic_refresh(None)
            else:
                self.publish(snapshot, exact.diagnostics)
        except asyncio.CancelledError:
            raise
        except Exception as error:  # keep serving; the next change retries
            self.server.log_error(f"linting {snapshot.uri} failed", error)
        finally:
            if self._confirming.get(snapshot.uri) is asyncio.current_task():
                del self._confirming[snapshot.uri]

    def publish(self, snapshot: Snapshot, diagnostics: list[Diagnostic]) -> None:
        self.server.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(
                uri=snapshot.uri,
                version=snapshot.version,
                diagnostics=[to_lsp(d, snapshot.source, snapshot.version) for d in diagnostics],
            )
        )

    def closed(self, uri: str) -> None:
        for tasks in (self._pending, self._confirming):
            pending = tasks.pop(uri, None)
            if pending is not None:
                pending.cancel()
        if not self.pull:
            self.server.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=[]))

    @property
    def can_refresh(self) -> bool:
        """Whether a pulling client can be asked to pull again (`workspace/diagnostic/refresh`)."""
        workspace = self.server.client_capabilities.workspace
        refresh = workspace.diagnostics if workspace is not None else None
        return refresh is not None and bool(refresh.refresh_support)

    def refresh_all(self) -> None:
        """Settings changed: every open document's findings may differ."""
        if self.pull:
            if self.can_refresh:
                self.server.workspace_diagnostic_refresh(None)
            return
        for snapshot in self.server.documents:
            self.changed(snapshot.uri, immediately=True)

    async def report(self, params: types.DocumentDiagnosticParams) -> types.DocumentDiagnosticReport:
        """`textDocument/diagnostic`: the findings of the document's current version."""
        snapshot = self.server.documents.get(params.text_document.uri)
        if snapshot is None:
            return types.RelatedFullDocumentDiagnosticReport(items=[])
        # A provisional answer can be corrected only by asking the client to pull again.
        found = await self.server.lint_async(snapshot, exact=not self.can_refresh)
        current = self.server.documents.get(snapshot.uri)
        if found is None or current is None or current.version != snapshot.version:
            raise JsonRpcException("the document changed while it was linted", SERVER_CANCELLED, {"retriggerRequest": True})
        if found.provisional and snapshot.uri not in self._confirming:
            self._confirm_later(snapshot, found)
        return types.RelatedFullDocumentDiagnosticReport(
            items=[to_lsp(d, snapshot.source, snapshot.version) for d in found.diagnostics],
            result_id=f"{snapshot.version}:{self.server.settings_generation}",
        )
