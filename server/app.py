"""The language server: state, lint scheduling and the wiring of each LSP feature to its module.

Handlers are thin: each looks up its module's function when it runs, so a failure in one is
answered with an LSP error (requests) or logged (notifications) and the server keeps serving.
Every lint runs on a worker thread, never on the protocol thread: a long lint of a huge file
blocks neither the protocol nor the lints of other documents (one at a time per document, a few
documents at once), and a request waiting for one can be cancelled (`$/cancelRequest`).
"""

from __future__ import annotations

import asyncio
import gc
import json
import os
import sys
import time
import traceback
from concurrent.futures import ThreadPoolExecutor
from urllib.parse import unquote, urlparse

from lsprotocol import types
from pygls.exceptions import JsonRpcException, JsonRpcInvalidRequest, JsonRpcParseError
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol
from pygls.protocol.language_server import lsp_method

from cudalint import __version__
from cudalint.frontend.config import FileSettings
from cudalint.frontend.files import format_size
from cudalint.lint.engine import LintResult, lint, relint, warm_up
from cudalint.lint.results import ReportedTarget

from . import code_actions, completion, configuration, diagnostics, framing, hover
from .documents import DocumentStore, Snapshot

NAME = "cudalint"


def path_of(uri: str, root: str) -> str:
    """The file system path of a document; documents without one (untitled:) count as files in
    the workspace root, for configuration discovery."""
    parsed = urlparse(uri)
    if parsed.scheme == "file":
        return os.path.abspath(unquote(parsed.path))
    return os.path.join(root, os.path.basename(unquote(parsed.path)) or "untitled.nix")


class CudalintProtocol(LanguageServerProtocol):
    @lsp_method(types.INITIALIZE)
    def lsp_initialize(self, params: types.InitializeParams):
        # Positions are UTF-16 (cudalint.nix.source converts them); pygls would otherwise adopt the
        # client's first preference (Emacs and Neovim 0.11 offer UTF-8/32 first).
        if params.capabilities.general is not None:
            params.capabilities.general.position_encodings = None
        return (yield from super().lsp_initialize(params))

    # cudalint keeps its own documents (server/documents.py, with their trees): pygls' workspace
    # copy of every open text would only double the memory.
    @lsp_method(types.TEXT_DOCUMENT_DID_OPEN)
    def lsp_text_document__did_open(self, params: types.DidOpenTextDocumentParams):
        if (handler := self.fm.features.get(types.TEXT_DOCUMENT_DID_OPEN)) is not None:
            yield handler, (params,), None

    @lsp_method(types.TEXT_DOCUMENT_DID_CHANGE)
    def lsp_text_document__did_change(self, params: types.DidChangeTextDocumentParams):
        if (handler := self.fm.features.get(types.TEXT_DOCUMENT_DID_CHANGE)) is not None:
            yield handler, (params,), None

    @lsp_method(types.TEXT_DOCUMENT_DID_CLOSE)
    def lsp_text_document__did_close(self, params: types.DidCloseTextDocumentParams):
        if (handler := self.fm.features.get(types.TEXT_DOCUMENT_DID_CLOSE)) is not None:
            yield handler, (params,), None

    def handle_message(self, message) -> None:
        # After `shutdown` a request gets InvalidRequest (the spec); pygls dropped it unanswered.
        if self._shutdown and getattr(message, "method", "") != types.EXIT and getattr(message, "id", None) is not None:
            self._send_response(message.id, error=JsonRpcInvalidRequest("the server is shutting down: only `exit` is accepted").to_response_error())
            return
        super().handle_message(message)

    def structure_message(self, data: dict):
        try:
            return super().structure_message(data)
        except JsonRpcException as error:
            if isinstance(data, dict) and "jsonrpc" in data and "method" in data and "id" in data:
                # A request whose params do not fit its method: answer it (-32602), or the
                # client waits for ever.
                self._send_response(data["id"], error=error.to_response_error())
            raise


def answer_unreadable(server: LanguageServer, error: Exception, reader: framing.GuardedReader | None = None) -> bool:
    """A message body that is not JSON gets the JSON-RPC parse error (-32700, id null); one
    nested too deep to decode (Python's recursion limit) too, with its id when one shows."""
    if isinstance(error, json.JSONDecodeError):
        server.protocol._send_response(None, error=JsonRpcParseError(str(error)).to_response_error())
        return True
    if isinstance(error, RecursionError):
        ident = framing.request_id(reader.last_body) if reader is not None else None
        server.protocol._send_response(ident, error=JsonRpcParseError("the message is nested too deeply to be read").to_response_error())
        return True
    return False


# Documents whose full lint takes longer than this are re-linted incrementally after an edit
# (a provisional result, confirmed by a full lint when typing pauses); smaller ones in full.
INCREMENTAL_ABOVE = 0.1
# Documents linted at once (each document's lints run one at a time).
LINT_THREADS = 3


class CudalintServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__(NAME, __version__, text_document_sync_kind=types.TextDocumentSyncKind.Incremental, protocol_cls=CudalintProtocol)
        self.documents = DocumentStore()
        self.diagnostics = diagnostics.Diagnostics(self)
        self.root = os.getcwd()
        self.initialization_options: object = None
        self.settings = configuration.Settings(self.root)
        self.settings_generation = 0
        self._reported: set[str] = set()
        self._raw_settings: object = None
        self._results: dict[str, tuple[int, int, LintResult]] = {}
        self._full_lint_seconds: dict[str, float] = {}  # per document, the last full lint's cost
        self._worker = ThreadPoolExecutor(max_workers=LINT_THREADS, thread_name_prefix="cudalint-lint")
        self.reader: framing.GuardedReader | None = None  # stdin, when the server serves it
        self.exit_code = 0
        self._lanes: dict[str, asyncio.Lock] = {}  # per document: its lints, one at a time

    # -- messages -------------------------------------------------------------------------------

    def log(self, message: str, kind: types.MessageType = types.MessageType.Log) -> None:
        self.window_log_message(types.LogMessageParams(type=kind, message=message))

    def log_error(self, message: str, error: BaseException) -> None:
        details = "".join(traceback.format_exception(error)).rstrip()
        self.log(f"{message}: {details}", types.MessageType.Error)

    def show_once(self, message: str, kind: types.MessageType = types.MessageType.Error) -> None:
        if message not in self._reported:
            self._reported.add(message)
            self.window_show_message(types.ShowMessageParams(type=kind, message=message))

    def report_server_error(self, error: Exception, source) -> None:
        # Requests are already answered with the error; notifications have nobody to answer.
        answer_unreadable(self, error, self.reader)
        self.log_error(f"error in a handler ({source.__name__})", error)

    # -- settings -------------------------------------------------------------------------------

    def apply_settings(self, raw: object, refresh: bool = True) -> None:
        if raw == self._raw_settings:
            return
        self._raw_settings = raw
        editor = configuration.parse_editor_settings(raw, self.root)
        for problem in editor.problems:
            self.show_once(f"{problem} (the other settings still apply)")
        self.settings = configuration.Settings(self.root, editor)
        self.settings_generation += 1
        self._results.clear()
        if refresh:
            self.diagnostics.refresh_all()

    def file_settings(self, uri: str) -> FileSettings:
        settings = self.settings.for_path(path_of(uri, self.root))
        for problem in self.settings.config_errors:
            self.show_once(f"{problem} (linting with the defaults)")
        self.settings.config_errors.clear()
        return settings

    def document_settings(self, snapshot: Snapshot, settings: FileSettings | None = None) -> tuple[FileSettings, ReportedTarget]:
        """The document's settings with the nixpkgs its own text fetches, and the target they mean."""
        from cudalint.frontend.runner import file_target

        settings = settings if settings is not None else self.file_settings(snapshot.uri)
        path = path_of(snapshot.uri, self.root)
        return file_target(snapshot.source.text, os.path.basename(path), settings, os.path.dirname(path))

    # -- linting --------------------------------------------------------------------------------

    def _cached(self, snapshot: Snapshot, exact: bool = False) -> LintResult | None:
        """The stored lint of this version; with `exact`, not a provisional one."""
        hit = self._results.get(snapshot.uri)
        if hit is not None and hit[0] == snapshot.version and hit[1] == self.settings_generation:
            if not (exact and hit[2].provisional):
                return hit[2]
        return None

    def _prepare(self, snapshot: Snapshot) -> FileSettings | None:
        """The settings to lint with, or None when the document is not to be linted."""
        path = path_of(snapshot.uri, self.root)
        settings = self.file_settings(snapshot.uri)
        if self.settings.excluded(path):
            return None
        size = len(snapshot.source.data)
        settings = self.document_settings(snapshot, settings)[0]
        if size > settings.max_file_size:
            self.show_once(
                f"cudalint: {os.path.basename(path)} is {format_size(size)}, over the limit of {format_size(settings.max_file_size)} (setting `max-file-size`): not linted",
                types.MessageType.Warning,
            )
            return None
        return settings

    def _lint(self, snapshot: Snapshot, settings: FileSettings | None, generation: int, exact: bool = False) -> LintResult | None:
        """Lint this version: re-checking only what the edits since the stored lint touched
        (a provisional result, confirmed by a full lint once typing pauses) unless `exact`."""
        if settings is None:
            return None
        result = None if exact or self._full_lint_seconds.get(snapshot.uri, 0.0) < INCREMENTAL_ABOVE else self._relint(snapshot, settings, generation)
        if result is None:
            began = time.perf_counter()
            result = lint(snapshot.source, settings.lint, tree=snapshot.tree)
            self._full_lint_seconds[snapshot.uri] = time.perf_counter() - began
        self._results[snapshot.uri] = (snapshot.version, generation, result)
        return result

    def _relint(self, snapshot: Snapshot, settings: FileSettings, generation: int) -> LintResult | None:
        stored = self._results.get(snapshot.uri)
        if stored is None or stored[1] != generation:
            return None
        region = snapshot.changed_since(stored[0])
        if region is None:
            return None
        return relint(stored[2], snapshot.source, snapshot.tree, region.start, region.old_end, region.new_end, settings.lint)

    async def lint_async(self, snapshot: Snapshot, exact: bool = False) -> LintResult | None:
        """The lint of this version (cached), on a worker thread: exact for code actions, which
        apply its fixes; diagnostics and hover take a provisional one. None when the document
        moved on before its turn came (nobody wants that result any more). A request awaiting
        it that is cancelled is answered at once; the lint goes on (within its time budget)
        and is kept for the next request."""
        cached = self._cached(snapshot, exact)
        if cached is not None:
            return cached
        settings = self._prepare(snapshot)
        if settings is None:
            return LintResult(snapshot.source, None, [])  # excluded or too big: nothing to show
        generation = self.settings_generation

        def work() -> LintResult | None:
            current = self.documents.get(snapshot.uri)
            if current is None or current.version != snapshot.version:
                return None
            cached = self._cached(snapshot, exact)  # (a request before this one may have linted it)
            return cached if cached is not None else self._lint(snapshot, settings, generation, exact)

        lane = self._lanes.setdefault(snapshot.uri, asyncio.Lock())
        async with lane:
            result = await asyncio.get_running_loop().run_in_executor(self._worker, work)
        if result is not None:
            for problem in result.internal_errors:
                self.log(f"{snapshot.uri}: {problem}", types.MessageType.Error)
        return result

    def forget(self, uri: str) -> None:
        self._results.pop(uri, None)
        self._full_lint_seconds.pop(uri, None)
        lane = self._lanes.get(uri)
        if lane is not None and not lane.locked():
            del self._lanes[uri]

    def size_limit(self, uri: str) -> int:
        """The size (bytes) over which a document is not parsed nor linted (`max-file-size`)."""
        return self.file_settings(uri).max_file_size


def create_server() -> CudalintServer:
    server = CudalintServer()

    @server.feature(types.INITIALIZE)
    def on_initialize(params: types.InitializeParams) -> None:
        folders = params.workspace_folders or []
        root_uri = folders[0].uri if folders else params.root_uri
        if root_uri:
            server.root = path_of(root_uri, server.root)
        elif params.root_path:
            server.root = os.path.abspath(params.root_path)
        server.initialization_options = params.initialization_options
        server.apply_settings(params.initialization_options or {}, refresh=False)

    @server.feature(types.INITIALIZED)
    async def on_initialized(params: types.InitializedParams) -> None:
        server.log(f"cudalint {__version__} serving {server.root} ({'pull' if server.diagnostics.pull else 'push'} diagnostics)", types.MessageType.Info)
        await configuration.fetch(server)

    @server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
    async def on_configuration_changed(params: types.DidChangeConfigurationParams) -> None:
        await configuration.fetch(server, params.settings)

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def on_open(params: types.DidOpenTextDocumentParams) -> None:
        document = params.text_document
        server.documents.open(document.uri, path_of(document.uri, server.root), document.version, document.text, server.size_limit(document.uri))
        server.diagnostics.changed(document.uri, immediately=True)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def on_change(params: types.DidChangeTextDocumentParams) -> None:
        document = params.text_document
        if server.documents.change(document.uri, document.version, list(params.content_changes), server.size_limit(document.uri)) is not None:
            server.diagnostics.changed(document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def on_close(params: types.DidCloseTextDocumentParams) -> None:
        server.documents.close(params.text_document.uri)
        server.forget(params.text_document.uri)
        server.diagnostics.closed(params.text_document.uri)

    @server.feature(
        types.TEXT_DOCUMENT_DIAGNOSTIC,
        types.DiagnosticOptions(identifier=NAME, inter_file_dependencies=False, workspace_diagnostics=False),
    )
    async def on_diagnostic(params: types.DocumentDiagnosticParams) -> types.DocumentDiagnosticReport:
        return await server.diagnostics.report(params)

    @server.feature(types.TEXT_DOCUMENT_CODE_ACTION, types.CodeActionOptions(code_action_kinds=code_actions.KINDS))
    async def on_code_action(params: types.CodeActionParams) -> list[types.CodeAction]:
        return await code_actions.code_actions(server, params)

    @server.feature(types.TEXT_DOCUMENT_HOVER)
    async def on_hover(params: types.HoverParams) -> types.Hover | None:
        return await hover.hover(server, params)

    @server.feature(types.TEXT_DOCUMENT_COMPLETION, types.CompletionOptions(trigger_characters=[".", '"']))
    def on_completion(params: types.CompletionParams) -> types.CompletionList | None:
        return completion.completion(server, params)

    @server.feature(types.SHUTDOWN)
    def on_shutdown(params: None) -> None:
        server._worker.shutdown(wait=False, cancel_futures=True)

    @server.feature(types.EXIT)
    def on_exit(params: None) -> None:
        # The spec: exit code 1 when `shutdown` did not come first (pygls raises SystemExit(1)
        # inside its loop, which its own `start_io` swallows, and the process ended with 0).
        server.exit_code = 0 if server.protocol._shutdown else 1

    return server


def prepare_for_editing() -> None:
    """Load the rules, grammar and reference set before the first document and freeze them: the
    collector's full passes then skip them. Unfrozen, such a pass took 20-40 ms, landing on a
    keystroke now and then (the p95 of edit latency); frozen, 1-2 ms."""
    warm_up()
    gc.collect()
    gc.freeze()


def run(tcp_port: int | None = None, host: str = "127.0.0.1") -> int:
    prepare_for_editing()
    server = create_server()
    if tcp_port is not None:
        server.start_tcp(host, tcp_port)
    else:
        server.reader = framing.GuardedReader(sys.stdin.buffer)
        server.start_io(stdin=server.reader)  # (pygls only calls its readline and read)
    return server.exit_code
