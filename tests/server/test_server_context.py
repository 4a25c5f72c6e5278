"""The document's path reaches the context model: a file under `nixos/modules/` is a module."""

from __future__ import annotations

import pytest_lsp
from pytest_lsp import LanguageClient

from lsp_editor import CLIENTS, SERVER, start

# `cudaSupport ? false` is a package's defect (CUDA303); a module's own argument is not
MODULE = """{ config, lib, pkgs, cudaSupport ? false, ... }:
{
  meta.maintainers = [ ];
}
"""


@pytest_lsp.fixture(config=SERVER)
async def client(lsp_client: LanguageClient, tmp_path):
    lsp_client.editor = await start(lsp_client, CLIENTS[0], tmp_path)  # type: ignore[attr-defined]
    yield
    await lsp_client.shutdown_session()


async def test_the_document_path_decides_module_context(client, tmp_path):
    editor = client.editor
    editor.open(tmp_path / "pkgs" / "foo" / "package.nix", MODULE)
    assert [d.code for d in await editor.diagnostics()] == ["CUDA303"]
    editor.open(tmp_path / "nixos" / "modules" / "services" / "foo.nix", MODULE)
    assert [d.code for d in await editor.diagnostics()] == []
