"""The server keeps serving: handler exceptions, text that does not parse, garbage, huge files."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pytest_lsp import ClientServerConfig, LanguageClient

from cudalint.lint.engine import lint
from cudalint.lint.settings import LintSettings
from cudalint.nix.source import SourceFile
from lsp_editor import PATIENCE, start

FAULTY = ClientServerConfig(server_command=[sys.executable, str(Path(__file__).with_name("faulty_server.py"))])
BROKEN = """\
{ stdenv, cudatoolkit }:
stdenv.mkDerivation {
  nativeBuildInputs = [ cudatoolkit ];
  buildInputs = [ (
}
"""


@pytest_lsp.fixture(config=FAULTY)
async def faulty(lsp_client: LanguageClient, tmp_path):
    lsp_client.editor = await start(lsp_client, "visual-studio-code", tmp_path)
    yield
    await lsp_client.shutdown_session()


async def test_a_handler_exception_is_answered_logged_and_survived(faulty, tmp_path):
    editor = faulty.editor
    editor.open(tmp_path / "a.nix", BROKEN)
    request = types.HoverParams(text_document=types.TextDocumentIdentifier(uri=editor.uri), position=types.Position(line=2, character=25))
    with pytest.raises(JsonRpcException, match="injected hover failure"):
        await asyncio.wait_for(faulty.text_document_hover_async(request), PATIENCE)

    async def logged() -> None:  # the log follows the error response
        while not any("injected hover failure" in m.message and m.type == types.MessageType.Error for m in faulty.log_messages):
            await asyncio.sleep(0.02)

    await asyncio.wait_for(logged(), PATIENCE)
    assert await editor.diagnostics()  # still serving


async def test_unparsable_text_still_gets_the_findings_that_can_be_found(client, tmp_path):
    editor = client.editor
    editor.open(tmp_path / "a.nix", BROKEN)
    codes = {d.code for d in await editor.diagnostics()}
    assert {"CUDA900", "CUDA001"} <= codes
    assert codes == {d.code for d in lint(SourceFile("a.nix", BROKEN), LintSettings()).diagnostics}


@pytest.mark.parametrize("garbage", ["\x00\x01\xff\ufffd" * 5000, "((((((((((" * 20000, "${" * 30000], ids=["binary", "parentheses", "interpolations"])
async def test_garbage_does_not_stop_the_server(client, tmp_path, garbage):
    editor = client.editor
    editor.open(tmp_path / "garbage.nix", garbage)
    found = {(d.code, d.message) for d in await editor.diagnostics()}
    assert found == {(d.code, d.message) for d in lint(SourceFile("garbage.nix", garbage), LintSettings()).diagnostics}
    editor.open(tmp_path / "after.nix", BROKEN)  # and it goes on serving
    assert "CUDA001" in {d.code for d in await editor.diagnostics()}


async def test_a_file_over_the_size_limit_is_not_linted_and_the_server_answers(client, tmp_path):
    editor = client.editor
    line = "  x = cudaPackages.cuda_nvcc; # padding to make the file big\n"
    editor.open(tmp_path / "huge.nix", "{\n" + line * (10_600_000 // len(line)) + "}\n")
    assert await editor.diagnostics() == []
    warnings = [m for m in client.messages if m.type == types.MessageType.Warning]
    assert any("max-file-size" in m.message for m in warnings)
