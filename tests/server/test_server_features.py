"""Hover, completion and settings over stdio, once per recorded client."""

from __future__ import annotations

import asyncio

from lsprotocol import types

from cudalint.knowledge import reference, sizes
from cudalint.lint.registry import rule_by_code
from cudalint.lint.settings import LintSettings
from lsp_editor import PATIENCE

SAMPLE = """\
{ stdenv, cudaPackages, cudatoolkit }:
let inherit (cudaPackages) libcufft; in
stdenv.mkDerivation {
  pname = "fft";
  version = "1.0"; src = ./.;
  nativeBuildInputs = [ cudatoolkit ];
  buildInputs = with cudaPackages; [ cudaPackages.libcublas cuda_cudart libcufft ];
  cmakeFlags = [ "-DCMAKE_CUDA_ARCHITECTURES=86" ]; # a second finding (CUDA305) besides CUDA001
}
"""


def open_sample(client, tmp_path, text: str = SAMPLE):
    editor = client.editor
    editor.open(tmp_path / "fft.nix", text)
    return editor


async def hover_at(editor, needle: str, offset: int = 1) -> types.Hover | None:
    request = types.HoverParams(text_document=types.TextDocumentIdentifier(uri=editor.uri), position=editor.position_of(needle, offset))
    return await asyncio.wait_for(editor.client.text_document_hover_async(request), PATIENCE)


async def complete_at(editor, line_text: str) -> list[types.CompletionItem]:
    """Type `line_text` on a new line before the closing brace and ask for completion at its end."""
    last = editor.source.line_count - 2  # the line of the closing `}`
    at = types.Position(line=last, character=0)
    editor.change([types.TextEdit(range=types.Range(start=at, end=at), new_text=line_text + "\n")])
    position = types.Position(line=last, character=len(line_text.encode("utf-16-le")) // 2)
    result = await asyncio.wait_for(
        editor.client.text_document_completion_async(types.CompletionParams(text_document=types.TextDocumentIdentifier(uri=editor.uri), position=position)),
        PATIENCE,
    )
    return list(result.items) if isinstance(result, types.CompletionList) else list(result or [])


async def test_hover_on_a_finding_shows_the_rule_docs(client, tmp_path):
    editor = open_sample(client, tmp_path)
    await editor.diagnostics()
    shown = await hover_at(editor, "cudatoolkit ];")
    rule = rule_by_code("CUDA001")
    assert shown.contents.kind == types.MarkupKind.Markdown
    assert rule.summary in shown.contents.value and rule.url in shown.contents.value
    # what the fix saves and what the toolkit joins, in NVIDIA archive sizes
    target = reference.target(LintSettings().nixpkgs)
    assert "**Fix:** Replace the runfile toolkit with `cuda_nvcc`: " in shown.contents.value
    assert sizes.hover_lines(reference.load(), "cudatoolkit", target)[-1] in shown.contents.value


async def test_the_target_is_stated_once_per_document_in_the_hover_not_in_messages(client, tmp_path):
    (tmp_path / ".git").mkdir()
    (tmp_path / "flake.nix").write_text('{ inputs.nixpkgs.url = "github:NixOS/nixpkgs/nixos-23.05"; outputs = _: { }; }\n')
    editor = open_sample(client, tmp_path, SAMPLE.replace("[ cudatoolkit ]", "[ cudatoolkit cudaPackages_11_8.cuda_nvcc ]"))
    diagnostics = await editor.diagnostics()
    removed = [d for d in diagnostics if d.code == "CUDA002"]
    # on 23.05 cudaPackages_11_8 still evaluates: a warning, and no message repeats the target
    assert [d.severity for d in removed] == [types.DiagnosticSeverity.Warning]
    assert not any("23.05" in d.message or "assumed" in d.message for d in diagnostics)
    shown = await hover_at(editor, "cudatoolkit cuda")
    assert shown.contents.value.endswith("*Judged against nixpkgs 23.05 (flake.nix inputs.nixpkgs.url), CUDA 11.7.*")
    assert shown.contents.value.count("Judged against") == 1


async def test_hover_on_packages_through_select_with_and_inherit(client, tmp_path):
    editor = open_sample(client, tmp_path)
    target = reference.target(LintSettings().nixpkgs)
    for needle, package in [("libcublas", "libcublas"), ("cuda_cudart", "cuda_cudart"), ("libcufft; in", "libcufft"), ("libcufft ]", "libcufft")]:
        shown = await hover_at(editor, needle)
        info = reference.lookup(package, target)
        assert shown is not None, needle
        assert f"cudaPackages.{package}" in shown.contents.value
        assert target.describe() in shown.contents.value
        for facts in info.releases:
            assert all(f"`{output}`" in shown.contents.value for output in facts.outputs or ())


async def test_completion_of_packages_outputs_and_getoutput(client, tmp_path):
    editor = open_sample(client, tmp_path)
    target = reference.target(None)
    packages = await complete_at(editor, "  x = cudaPackages.")
    labels = {item.label for item in packages}
    assert set(reference.package_names(target)) <= labels
    deprecated = {d.name for d in reference.deprecated_names(target)}
    tagged = {item.label for item in packages if item.tags and types.CompletionItemTag.Deprecated in item.tags}
    assert tagged == deprecated & labels and tagged
    outputs = await complete_at(editor, "  y = cudaPackages.libcublas.")
    assert [item.label for item in outputs] == list(reference.outputs("libcublas", target))
    names = await complete_at(editor, '  z = lib.getOutput "')
    assert {item.label for item in names} == set(reference.OUTPUT_NAMES)


async def test_settings_change_relints_and_bad_values_are_reported_once(client, tmp_path):
    editor = open_sample(client, tmp_path)
    assert "CUDA001" in {d.code for d in await editor.diagnostics()}
    client.set_configuration({"ignore": ["CUDA001"], "extend-select": ["CUDA9999"]}, section="cudalint")
    for _ in range(2):  # the same bad value twice: one message
        client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings={"cudalint": client.get_configuration(section="cudalint")}))
    # the editor sends a change and asks again (pull) or waits for the re-lint (push)
    editor.change([])

    async def relinted() -> set[str]:
        while "CUDA001" in (codes := {d.code for d in await editor.diagnostics()}):
            await asyncio.sleep(0.05)
        return codes

    codes = await asyncio.wait_for(relinted(), PATIENCE)
    assert codes and "CUDA001" not in codes
    errors = [m for m in client.messages if m.type == types.MessageType.Error]
    assert len(errors) == 1 and "CUDA9999" in errors[0].message
