"""Hostile traffic over the wire, from a raw stdio JSON-RPC client (pytest-lsp's client cannot
send malformed messages): bad JSON, unknown methods, positions past the end, edits to documents
never opened, ranges splitting a surrogate pair, 1,000 rapid edits, and memory after closing.
After each, the server must answer as the protocol asks and go on serving.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from cudalint.lint.engine import lint
from cudalint.lint.settings import LintSettings
from cudalint.nix.source import SourceFile
from lsp_editor import PATIENCE
from lsp_framing import RawServer

FINDING = "{ stdenv, cudatoolkit }:\nstdenv.mkDerivation {\n  nativeBuildInputs = [ cudatoolkit ];\n}\n"
METHOD_NOT_FOUND = -32601
PARSE_ERROR = -32700


class Wire(RawServer):
    """A server process and the raw messages it sends, read on a thread."""

    def __init__(self, root: Path) -> None:
        super().__init__(root, PATIENCE)

    def diagnostics(self, uri: str, text: str) -> set[tuple[str, str]]:
        """The diagnostics published for `uri` once they match a fresh lint of `text`; a stale
        publication is skipped (versions arrive in order)."""
        expected = {(d.code, d.message) for d in lint(SourceFile("x.nix", text), LintSettings()).diagnostics}
        while True:
            message = self.wait(lambda m: m.get("method") == "textDocument/publishDiagnostics" and m["params"]["uri"] == uri)
            found = {(d["code"], d["message"]) for d in message["params"]["diagnostics"]}
            if found == expected:
                return found

    def still_serving(self, root: Path) -> None:
        uri = (root / "alive.nix").as_uri()
        self.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "nix", "version": 1, "text": FINDING}})
        assert "CUDA001" in {code for code, _ in self.diagnostics(uri, FINDING)}
        assert self.process.poll() is None

    def rss_kib(self) -> int:
        for line in Path(f"/proc/{self.process.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
        raise AssertionError("no VmRSS")


@pytest.fixture
def wire(tmp_path: Path):
    connection = Wire(tmp_path)
    yield connection
    connection.close()


def open_document(wire: Wire, uri: str, text: str, version: int = 1) -> None:
    wire.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "nix", "version": version, "text": text}})


MALFORMED = [
    b'{"jsonrpc": "2.0", "id": 99, "method": "textDocument/hover", "params": {',  # cut short
    b"[1, 2, 3]",  # JSON, but no message
    '{"jsonrpc": "2.0", "method": "\udcff"}'.encode("utf-8", "surrogatepass"),  # not UTF-8
    b'{"jsonrpc": "2.0", "id": 98, "method": "textDocument/hover", "params": 7}',  # wrong params
]


def answers_to_malformed(wire: Wire) -> list[dict[str, Any]]:
    """What the server sends back for MALFORMED, read up to the answer of a request sent after
    them (answers come in order)."""
    start = len(wire.seen)
    for body in MALFORMED:
        wire.send_raw(body)
    wire.request("cudalint/afterMalformed", None)
    return wire.seen[start:]


def test_malformed_json_is_logged_and_survived(wire: Wire, tmp_path: Path) -> None:
    answers = answers_to_malformed(wire)
    logged = [m for m in answers if m.get("method") == "window/logMessage" and m["params"]["type"] == 1]
    assert logged, answers
    wire.still_serving(tmp_path)


def test_malformed_json_is_answered_with_a_parse_error(wire: Wire) -> None:
    answers = answers_to_malformed(wire)
    assert any(m.get("error", {}).get("code") == PARSE_ERROR and m.get("id") is None for m in answers), answers


def test_unknown_methods(wire: Wire, tmp_path: Path) -> None:
    answer = wire.request("cudalint/noSuchMethod", {"x": 1})
    assert answer["error"]["code"] == METHOD_NOT_FOUND
    wire.notify("cudalint/noSuchNotification", {"x": 1})  # ignored, no answer
    wire.notify("$/noSuchOptionalNotification", None)
    wire.still_serving(tmp_path)


def test_positions_past_the_end_of_the_document(wire: Wire, tmp_path: Path) -> None:
    uri = (tmp_path / "a.nix").as_uri()
    open_document(wire, uri, FINDING)
    wire.diagnostics(uri, FINDING)
    far = {"line": 10_000, "character": 10_000}
    line_end = {"line": 1, "character": 10_000}
    for position in (far, line_end):
        document = {"textDocument": {"uri": uri}, "position": position}
        for method in ("textDocument/hover", "textDocument/completion"):
            answer = wire.request(method, document)
            assert "result" in answer or answer["error"]["code"] < 0
        answer = wire.request("textDocument/codeAction", {**{"textDocument": {"uri": uri}}, "range": {"start": position, "end": far}, "context": {"diagnostics": []}})
        assert "result" in answer or answer["error"]["code"] < 0
    # an edit whose range lies past the end appends at the end, as editors expect
    wire.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": 2}, "contentChanges": [{"range": {"start": far, "end": far}, "text": "\n"}]})
    wire.still_serving(tmp_path)


def test_a_request_with_invalid_params_is_answered(wire: Wire, tmp_path: Path) -> None:
    uri = (tmp_path / "a.nix").as_uri()
    open_document(wire, uri, FINDING)
    wire.next_id += 1
    ident = wire.next_id
    body = {"jsonrpc": "2.0", "id": ident, "method": "textDocument/hover", "params": {"textDocument": {"uri": uri}, "position": {"line": 0, "character": -1}}}
    wire.send_raw(json.dumps(body).encode())
    wire.request("cudalint/afterInvalidParams", None)  # answers come in order
    assert any(m.get("id") == ident for m in wire.seen), "no answer to the request with invalid params"


def test_edits_and_requests_for_documents_never_opened(wire: Wire, tmp_path: Path) -> None:
    uri = (tmp_path / "never.nix").as_uri()
    change = {"range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}}, "text": "x"}
    wire.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": 2}, "contentChanges": [change]})
    wire.notify("textDocument/didClose", {"textDocument": {"uri": uri}})
    answer = wire.request("textDocument/hover", {"textDocument": {"uri": uri}, "position": {"line": 0, "character": 0}})
    assert "result" in answer or answer["error"]["code"] < 0
    answer = wire.request("textDocument/diagnostic", {"textDocument": {"uri": uri}})
    assert "result" in answer or answer["error"]["code"] < 0
    wire.still_serving(tmp_path)


def test_ranges_inside_a_surrogate_pair(wire: Wire, tmp_path: Path) -> None:
    uri = (tmp_path / "emoji.nix").as_uri()
    text = '{ a = "🚀🚀"; }\n' + FINDING.replace("{ stdenv", "x: { stdenv", 1)
    open_document(wire, uri, text)
    wire.diagnostics(uri, text)
    inside = {"line": 0, "character": 8}  # between the two UTF-16 halves of the first rocket
    for position in (inside, {"line": 0, "character": 10}):
        answer = wire.request("textDocument/hover", {"textDocument": {"uri": uri}, "position": position})
        assert "result" in answer or answer["error"]["code"] < 0
    wire.notify(
        "textDocument/didChange",
        {"textDocument": {"uri": uri, "version": 2}, "contentChanges": [{"range": {"start": inside, "end": {"line": 0, "character": 10}}, "text": "é"}]},
    )
    # the document stays valid text: a full replacement afterwards lints like a fresh run
    wire.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": 3}, "contentChanges": [{"text": FINDING}]})
    wire.diagnostics(uri, FINDING)


def test_a_thousand_rapid_edits_end_like_a_fresh_run(wire: Wire, tmp_path: Path) -> None:
    uri = (tmp_path / "typing.nix").as_uri()
    text = "{ stdenv, cudatoolkit }:\nstdenv.mkDerivation {\n  nativeBuildInputs = [ ];\n}\n"
    open_document(wire, uri, text)
    typed = "cudatoolkit " * 84  # 1,008 characters typed one at a time inside the list
    line, column = 2, len("  nativeBuildInputs = [ ")
    for version, character in enumerate(typed[:1000], start=2):
        position = {"line": line, "character": column}
        wire.notify(
            "textDocument/didChange",
            {"textDocument": {"uri": uri, "version": version}, "contentChanges": [{"range": {"start": position, "end": position}, "text": character}]},
        )
        column += 1
    final = text.replace("[ ]", "[ " + typed[:1000] + "]")
    assert "CUDA001" in {code for code, _ in wire.diagnostics(uri, final)}


def test_memory_is_given_back_after_closing_documents(wire: Wire, tmp_path: Path) -> None:
    """Opening and closing the same load twice: the second round must not grow the server by
    anything like the documents' size (they are forgotten on close)."""
    body = FINDING + "# " + "x" * 1_000_000 + "\n"  # 1 MB documents

    def round_trip(name: str) -> None:
        for index in range(20):
            uri = (tmp_path / f"{name}{index}.nix").as_uri()
            open_document(wire, uri, body)
            wire.diagnostics(uri, body)
            wire.notify("textDocument/didClose", {"textDocument": {"uri": uri}})
        wire.request("textDocument/hover", {"textDocument": {"uri": (tmp_path / "none.nix").as_uri()}, "position": {"line": 0, "character": 0}})

    round_trip("first")
    after_first = wire.rss_kib()
    round_trip("second")
    grown = wire.rss_kib() - after_first
    assert grown < 20 * 1024, f"the server grew by {grown} KiB over 20 closed 1 MB documents"


# -- a slow document, cancellation, the framing and the shutdown sequence (issue 23) ----------

# The 192 KB list of 16,000 toolkits: seconds of lint (81 s before CUDA001 stopped rescanning it).
SLOW = "[ " + "cudatoolkit " * 16_000 + "]\n"
REQUEST_CANCELLED = -32800
INVALID_REQUEST = -32600


def hover_at(uri: str, line: int = 0, character: int = 2) -> dict[str, Any]:
    return {"textDocument": {"uri": uri}, "position": {"line": line, "character": character}}


def test_a_slow_document_holds_up_no_other_and_its_requests_can_be_cancelled(wire: Wire, tmp_path: Path) -> None:
    """Hover lints off the protocol thread: while the slow document is linted, the other one's
    hover is answered, and the slow one's hover, cancelled, is answered with RequestCancelled."""
    quick, slow = (tmp_path / "quick.nix").as_uri(), (tmp_path / "slow.nix").as_uri()
    open_document(wire, quick, FINDING)
    wire.diagnostics(quick, FINDING)
    open_document(wire, slow, SLOW)
    waiting = wire.send_request("textDocument/hover", hover_at(slow))
    wire.notify("$/cancelRequest", {"id": waiting})
    answered = wire.send_request("textDocument/hover", hover_at(quick, 2, 25))
    first = wire.wait(lambda m: m.get("id") in (waiting, answered) and "method" not in m)
    second = wire.wait(lambda m: m.get("id") in (waiting, answered) and "method" not in m)
    by_id = {first["id"]: first, second["id"]: second}
    assert by_id[waiting].get("error", {}).get("code") == REQUEST_CANCELLED, by_id[waiting]
    assert "CUDA001" in json.dumps(by_id[answered]["result"]), by_id[answered]
    slow_published = [i for i, m in enumerate(wire.seen) if m.get("method") == "textDocument/publishDiagnostics" and m["params"]["uri"] == slow]
    answered_at = next(i for i, m in enumerate(wire.seen) if m.get("id") == answered and "method" not in m)
    assert not slow_published or answered_at < slow_published[0], "the quick hover waited for the slow document's lint"
    wire.still_serving(tmp_path)


def test_a_document_over_the_size_limit_is_not_parsed(tmp_path: Path) -> None:
    from lsprotocol import types

    from cudalint.server.documents import DocumentStore

    store = DocumentStore()
    assert store.open("file:///big.nix", "/big.nix", 1, FINDING, max_size=10).tree is None
    start = types.Position(line=0, character=0)
    event = types.TextDocumentContentChangePartial(range=types.Range(start=start, end=start), text="x")
    assert store.change("file:///big.nix", 2, [event], max_size=10).tree is None
    assert store.change("file:///big.nix", 3, [event], max_size=None).tree is not None


def test_an_absurd_content_length_is_answered_and_survived(wire: Wire, tmp_path: Path) -> None:
    body = json.dumps({"jsonrpc": "2.0", "id": 901, "method": "textDocument/hover", "params": hover_at("file:///x.nix")}).encode()
    wire.send_raw(body, "99999999999999999999")
    answer = wire.wait(lambda m: "error" in m and m.get("id") is None)
    assert answer["error"]["code"] == PARSE_ERROR
    wire.still_serving(tmp_path)


@pytest.mark.parametrize("wrong", [+40, -5])
def test_a_wrong_content_length_costs_one_message(wire: Wire, tmp_path: Path, wrong: int) -> None:
    """Too large: the message is still read whole when the next header follows it; too small:
    a parse error. Either way the next message is answered."""
    body = json.dumps({"jsonrpc": "2.0", "id": 902, "method": "cudalint/noSuchMethod", "params": {}}).encode()
    wire.send_raw(body, len(body) + wrong)
    after = wire.request("cudalint/afterWrongLength", None)
    assert after["error"]["code"] == METHOD_NOT_FOUND
    if wrong > 0:
        assert any(m.get("id") == 902 for m in wire.seen), wire.seen
    else:
        assert any(m.get("error", {}).get("code") == PARSE_ERROR for m in wire.seen), wire.seen
    wire.still_serving(tmp_path)


def test_a_request_nested_a_hundred_thousand_deep_is_answered(wire: Wire, tmp_path: Path) -> None:
    depth = 100_000
    body = b'{"jsonrpc": "2.0", "id": 903, "method": "textDocument/hover", "params": ' + b"[" * depth + b"]" * depth + b"}"
    wire.send_raw(body)
    answer = wire.answer(903)
    assert answer["error"]["code"] == PARSE_ERROR
    wire.still_serving(tmp_path)


def test_requests_after_shutdown_are_refused_and_exit_ends_with_0(tmp_path: Path) -> None:
    wire = Wire(tmp_path)
    try:
        assert "error" not in wire.request("shutdown", None)
        refused = wire.request("textDocument/hover", hover_at((tmp_path / "a.nix").as_uri()))
        assert refused["error"]["code"] == INVALID_REQUEST
        wire.notify("exit", None)
        assert wire.process.wait(timeout=PATIENCE) == 0
    finally:
        if wire.process.poll() is None:
            wire.process.kill()


def test_exit_without_shutdown_ends_with_1(tmp_path: Path) -> None:
    wire = Wire(tmp_path)
    try:
        wire.notify("exit", None)
        assert wire.process.wait(timeout=PATIENCE) == 1
    finally:
        if wire.process.poll() is None:
            wire.process.kill()
