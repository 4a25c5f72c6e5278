"""What the feature handlers (hover, completion, code actions, diagnostics, configuration) may ask
of the server: a protocol, so that they depend on this small surface rather than on the server
class in app.py (which imports them to wire each LSP method to its handler)."""

from __future__ import annotations

from collections.abc import Awaitable
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from lsprotocol import types

    from cudalint.frontend.config import FileSettings
    from cudalint.lint.engine import LintResult
    from cudalint.lint.results import ReportedTarget

    from .documents import DocumentStore, Snapshot


class ServerState(Protocol):
    documents: DocumentStore
    initialization_options: object
    settings_generation: int

    @property
    def client_capabilities(self) -> types.ClientCapabilities: ...

    # settings

    def apply_settings(self, raw: object, refresh: bool = True) -> None: ...

    def file_settings(self, uri: str) -> FileSettings: ...

    def document_settings(self, snapshot: Snapshot, settings: FileSettings | None = None) -> tuple[FileSettings, ReportedTarget]: ...

    # linting

    async def lint_async(self, snapshot: Snapshot, exact: bool = False) -> LintResult | None: ...

    # the client

    def log_error(self, message: str, error: BaseException) -> None: ...

    def text_document_publish_diagnostics(self, params: types.PublishDiagnosticsParams) -> None: ...

    def workspace_diagnostic_refresh(self, params: None) -> object: ...

    def workspace_configuration_async(self, params: types.ConfigurationParams) -> Awaitable[list[Any]]: ...
