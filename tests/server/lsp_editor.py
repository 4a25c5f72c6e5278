"""An editor as the language server sees it: a pytest-lsp client with recorded real client
capabilities, one open document kept in sync with the edits it sends, and the diagnostics of a
given version (pulled when the client pulls, else waited for)."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

from cudalint.nix.source import SourceFile

CLIENTS = ("visual-studio-code", "neovim@v0.7.0", "neovim@v0.11.0", "emacs@29.1")
SERVER = ClientServerConfig(server_command=[sys.executable, "-m", "cudalint", "server"])
# Guards against a hung server (the test fails instead of waiting forever); not a speed check.
PATIENCE = 120.0


def record_published_versions(client: LanguageClient) -> dict[str, list[tuple[int | None, list[types.Diagnostic]]]]:
    """pytest-lsp keeps the latest diagnostics only; the version each came with matters here."""
    published: dict[str, list[tuple[int | None, list[types.Diagnostic]]]] = {}
    features = client.protocol.fm.features
    original = features[types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS]

    def publish(params: types.PublishDiagnosticsParams) -> None:
        published.setdefault(params.uri, []).append((params.version, list(params.diagnostics)))
        original(params)

    features[types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS] = publish
    return published


async def start(client: LanguageClient, name: str, root: Path, options: Any = None) -> Editor:
    """`name` is a recorded client; `+refresh` adds support for `workspace/diagnostic/refresh`."""
    recorded, _, extra = name.partition("+")
    capabilities = client_capabilities(recorded)
    if extra == "refresh":
        workspace = capabilities.workspace or types.WorkspaceClientCapabilities()
        workspace.diagnostics = types.DiagnosticWorkspaceClientCapabilities(refresh_support=True)
        capabilities.workspace = workspace
    published = record_published_versions(client)
    result = await client.initialize_session(
        types.InitializeParams(
            capabilities=capabilities,
            root_uri=root.as_uri(),
            workspace_folders=[types.WorkspaceFolder(uri=root.as_uri(), name=root.name)],
            initialization_options=options,
        )
    )
    editor = Editor(client, capabilities, published)
    editor.initialize_result = result
    return editor


class Editor:
    def __init__(self, client: LanguageClient, capabilities: types.ClientCapabilities, published) -> None:
        self.client = client
        self.capabilities = capabilities
        self.published = published
        self.uri = ""
        self.text = ""
        self.version = 0

    @property
    def pulls(self) -> bool:
        return self.capabilities.text_document is not None and self.capabilities.text_document.diagnostic is not None

    @property
    def source(self) -> SourceFile:
        return SourceFile("doc.nix", self.text)

    def open(self, path: Path, text: str) -> None:
        self.uri, self.text, self.version = path.as_uri(), text, 1
        self.client.text_document_did_open(types.DidOpenTextDocumentParams(text_document=types.TextDocumentItem(uri=self.uri, language_id="nix", version=1, text=text)))

    def change(self, edits: list[types.TextEdit]) -> None:
        """Apply edits (positions in the current text) and send them as one incremental change
        each, last first so that every range stays valid in the text it is applied to."""
        ordered = sorted(edits, key=lambda e: (e.range.start.line, e.range.start.character), reverse=True)
        changes = []
        for edit in ordered:
            source = self.source
            start = source.offset_of_utf16(edit.range.start.line, edit.range.start.character)
            end = source.offset_of_utf16(edit.range.end.line, edit.range.end.character)
            self.text = (source.data[:start] + edit.new_text.encode() + source.data[end:]).decode()
            changes.append(types.TextDocumentContentChangePartial(range=edit.range, text=edit.new_text))
        self.version += 1
        self.client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=self.uri, version=self.version),
                content_changes=changes,
            )
        )

    def apply(self, edit: types.WorkspaceEdit) -> None:
        """Apply a server's WorkspaceEdit as the editor would, in whichever form it came."""
        if edit.document_changes:
            [document_edit] = edit.document_changes
            assert document_edit.text_document.uri == self.uri
            assert document_edit.text_document.version == self.version, "an edit for another version"
            self.change(list(document_edit.edits))
        else:
            self.change(list(edit.changes[self.uri]))

    async def diagnostics(self) -> list[types.Diagnostic]:
        """The server's diagnostics for the current version."""
        if self.pulls:
            report = await asyncio.wait_for(
                self.client.text_document_diagnostic_async(types.DocumentDiagnosticParams(text_document=types.TextDocumentIdentifier(uri=self.uri))),
                PATIENCE,
            )
            assert self.published.get(self.uri) is None, "a pulling client was pushed diagnostics"
            return list(report.items)

        async def published_for_version() -> list[types.Diagnostic]:
            while True:
                for version, diagnostics in reversed(self.published.get(self.uri, [])):
                    if version == self.version:
                        return diagnostics
                await asyncio.sleep(0.02)

        return await asyncio.wait_for(published_for_version(), PATIENCE)

    async def code_actions(self, where: types.Range, diagnostics: list[types.Diagnostic], only: list[str] | None = None) -> list[types.CodeAction]:
        actions = await asyncio.wait_for(
            self.client.text_document_code_action_async(
                types.CodeActionParams(
                    text_document=types.TextDocumentIdentifier(uri=self.uri),
                    range=where,
                    context=types.CodeActionContext(diagnostics=diagnostics, only=only),
                )
            ),
            PATIENCE,
        )
        return list(actions or [])

    def position_of(self, needle: str, offset: int = 0) -> types.Position:
        source = self.source
        byte = source.data.index(needle.encode()) + len(needle[:offset].encode())
        line, character = source.utf16_position(byte)
        return types.Position(line=line, character=character)
