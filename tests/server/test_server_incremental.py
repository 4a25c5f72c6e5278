"""Large documents are re-linted incrementally: the first diagnostics after an edit come from
re-checking the attribute that holds it (provisional), and when typing pauses a full lint
confirms them or delivers the correction (pushed, or by asking a pulling client to pull again;
a pulling client that cannot be asked gets full lints only)."""

from __future__ import annotations

import asyncio

import pytest_lsp
from lsprotocol import types
from pytest_lsp import LanguageClient

from cudalint.lint.engine import lint
from cudalint.lint.settings import LintSettings
from cudalint.nix.source import SourceFile
from lsp_editor import PATIENCE, SERVER, start

# A builder call whose CUDA302 finding depends on its nativeBuildInputs, among many packages:
# big enough (a full lint takes about a second here) that the server re-lints it incrementally
# even on a machine several times faster. CUDA302 needs a target before cuda_nvcc pinned its
# own host compiler (late 2025): the workspace's cudalint.toml says 24.11.
TARGET = "24.11"
# The budget covers the parse of the 1,000-package file too: on a loaded machine the default 10 s
# ran out before the end (then the two sides compared different partial results).
BUDGET = 600
HEAD = "{ lib, stdenv, cudaPackages, cudatoolkit, cudaSupport ? true }:\nrec {\n"
JUDGED = """\
  judged = stdenv.mkDerivation {
    pname = "judged";
    version = "1";
    src = ./.;
    nativeBuildInputs = [ cudatoolkit ];
    buildPhase = "nvcc -o judged judged.cu";
  };
"""
PACKAGE = """\
  pkg{n} = stdenv.mkDerivation {{
    pname = "p{n}";
    version = "1.{n}";
    nativeBuildInputs = [ cudaPackages.cuda_nvcc ];
    buildInputs = lib.optionals cudaSupport (with cudaPackages; [ libcublas cuda_cudart ]);
    env.DRIVER = "/run/opengl-driver/lib";
  }};
"""
TEXT = HEAD + JUDGED + "".join(PACKAGE.format(n=n) for n in range(1000)) + "}\n"


def fresh(text: str) -> list[tuple]:
    source = SourceFile("big.nix", text)
    return sorted((d.code, *source.utf16_position(d.start), *source.utf16_position(d.end)) for d in lint(source, LintSettings(nixpkgs=TARGET, time_budget=BUDGET)).diagnostics)


def shown(diagnostics) -> list[tuple]:
    return sorted((str(d.code), d.range.start.line, d.range.start.character, d.range.end.line, d.range.end.character) for d in diagnostics)


@pytest_lsp.fixture(config=SERVER, params=["neovim@v0.7.0", "neovim@v0.11.0", "neovim@v0.11.0+refresh"])
async def client(request, lsp_client: LanguageClient, tmp_path):
    lsp_client.refreshes = 0
    features = lsp_client.protocol.fm.features
    original = features[types.WORKSPACE_DIAGNOSTIC_REFRESH]

    def refresh(params):
        lsp_client.refreshes += 1
        return original(params)

    features[types.WORKSPACE_DIAGNOSTIC_REFRESH] = refresh

    lsp_client.editor = await start(lsp_client, request.param, tmp_path)
    yield
    await lsp_client.shutdown_session()


async def settled(editor, client, want: list[tuple]) -> list[tuple]:
    """The document's diagnostics once they equal `want` (the full lint), or the last seen."""
    seen: list[tuple] = []
    deadline = asyncio.get_running_loop().time() + PATIENCE
    while asyncio.get_running_loop().time() < deadline:
        seen = shown(await editor.diagnostics())
        if seen == want:
            return seen
        await asyncio.sleep(0.2)
    return seen


async def test_a_local_edit_is_exact_at_once_and_a_distant_effect_arrives_when_typing_pauses(client, tmp_path):
    editor = client.editor
    (tmp_path / "cudalint.toml").write_text(f'nixpkgs = "{TARGET}"\ntime-budget = {BUDGET}\n')
    editor.open(tmp_path / "big.nix", TEXT)
    assert shown(await editor.diagnostics()) == fresh(TEXT)
    assert "CUDA302" in {c for c, *_ in fresh(TEXT)}

    # Fix one hard-coded driver path: only its attribute changes.
    where = editor.position_of('"/run/opengl-driver/lib"', 0)
    end = types.Position(line=where.line, character=where.character + len('"/run/opengl-driver/lib"'))
    editor.change([types.TextEdit(range=types.Range(start=where, end=end), new_text='"${placeholder "out"}/lib"')])
    assert shown(await editor.diagnostics()) == fresh(editor.text)

    # Replace the runfile nvcc: the builder call's CUDA302 goes too, but only the full lint knows.
    where = editor.position_of("[ cudatoolkit ]", 0)
    start = types.Position(line=where.line, character=where.character + 2)
    end = types.Position(line=where.line, character=start.character + len("cudatoolkit"))
    editor.change([types.TextEdit(range=types.Range(start=start, end=end), new_text="cudaPackages.cuda_nvcc")])
    want = fresh(editor.text)
    assert "CUDA302" not in {c for c, *_ in want}
    assert await settled(editor, client, want) == want
    if editor.pulls:
        # Neovim 0.11 pulls but cannot be asked to pull again: it only ever gets full lints.
        refreshable = editor.capabilities.workspace is not None and editor.capabilities.workspace.diagnostics is not None
        assert (client.refreshes >= 1) == refreshable
