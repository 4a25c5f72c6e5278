"""What the document's path and text decide in the editor: a file under `nixos/modules/` is a module,
and a pin nothing dates makes removed names warnings."""

from __future__ import annotations

import pytest_lsp
from lsprotocol import types
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


UNDATED = """let
  pkgs = import (fetchTarball "https://github.com/NixOS/nixpkgs/archive/3f0a8d1c2b4e5f60718293a4b5c6d7e8f9012345.tar.gz") { };
in
pkgs.mkShell { packages = [ pkgs.cudaPackages_11_8.cuda_nvcc ]; }
"""


async def test_an_undated_pin_makes_removed_names_warnings_in_the_editor(client, tmp_path):
    editor = client.editor
    editor.open(tmp_path / "shell.nix", UNDATED)
    [removed] = [d for d in await editor.diagnostics() if d.code == "CUDA002"]
    assert removed.severity == types.DiagnosticSeverity.Warning
    assert removed.message.endswith("(the pin is undated: pass --nixpkgs to judge it)")
