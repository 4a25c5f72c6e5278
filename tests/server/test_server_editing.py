"""End to end over stdio, once per recorded client (VS Code, Neovim 0.7 and 0.11, Emacs):
diagnostics as the client takes them, quick fixes, fix-all, ignore-line, incremental edits."""

from __future__ import annotations

import random

import pytest
from lsprotocol import types

from cudalint.lint.engine import lint
from cudalint.lint.fixing import fix_file
from cudalint.lint.model import Applicability
from cudalint.lint.registry import rule_by_code
from cudalint.lint.settings import LintSettings
from cudalint.nix.source import SourceFile

# Non-ASCII (also outside the BMP: two UTF-16 units) before and on the lines with findings.
SAMPLE = """\
{ lib, stdenv, cudaPackages, cudatoolkit, autoAddDriverRunpath, autoAddCudaCompatRunpath }:
# "café", ünïcode and 𝔘𝔫𝔦 before the findings shift nothing
stdenv.mkDerivation {
  pname = "saxpy";
  version = "1.0";
  /* 𝔘𝔫𝔦 */ nativeBuildInputs = [ cudatoolkit autoAddCudaCompatRunpath autoAddDriverRunpath ];
  postInstall = ''
    wrapProgram $out/bin/saxpy --prefix LD_LIBRARY_PATH : /run/opengl-driver/lib
  '';
}
"""


@pytest.fixture
def editor(client, tmp_path):
    client.editor.open(tmp_path / "saxpy.nix", SAMPLE)
    return client.editor


def expected(text: str) -> list[tuple[str, int, int, int, int]]:
    """What a fresh engine run on `text` finds, as LSP ranges (codes and UTF-16 positions)."""
    source = SourceFile("saxpy.nix", text)
    found = []
    for d in lint(source, LintSettings()).diagnostics:
        (l1, c1), (l2, c2) = source.utf16_position(d.start), source.utf16_position(d.end)
        found.append((d.code, l1, c1, l2, c2))
    return sorted(found)


def shown(diagnostics: list[types.Diagnostic]) -> list[tuple[str, int, int, int, int]]:
    return sorted((str(d.code), d.range.start.line, d.range.start.character, d.range.end.line, d.range.end.character) for d in diagnostics)


async def test_diagnostics_match_the_engine_and_carry_rule_metadata(editor):
    diagnostics = await editor.diagnostics()
    assert shown(diagnostics) == expected(SAMPLE)
    for diagnostic in diagnostics:
        rule = rule_by_code(str(diagnostic.code))
        assert diagnostic.source == "cudalint"
        assert diagnostic.code_description.href == rule.url
        assert diagnostic.severity.name.lower() == {"info": "information"}.get(rule.severity.value, rule.severity.value)
        assert diagnostic.data["version"] == editor.version


@pytest.mark.parametrize("code", ["CUDA106", "CUDA001"])
async def test_quick_fix_removes_the_finding(editor, code):
    diagnostics = await editor.diagnostics()
    target = next(d for d in diagnostics if d.code == code)
    actions = await editor.code_actions(target.range, [target], only=[types.CodeActionKind.QuickFix])
    fixes = [a for a in actions if a.diagnostics and a.diagnostics[0].code == code and not a.title.startswith("Ignore")]
    assert fixes, [a.title for a in actions]
    fix = fixes[0]
    unsafe = rule_by_code(code).fix is Applicability.UNSAFE
    assert fix.title.endswith("(unsafe fix)") == unsafe
    editor.apply(fix.edit)
    after = await editor.diagnostics()
    assert shown(after) == expected(editor.text)
    assert code not in {d.code for d in after if d.range.start.line == target.range.start.line}


async def test_fix_all_applies_the_safe_fixes_only(editor):
    await editor.diagnostics()
    whole = types.Range(start=types.Position(line=0, character=0), end=types.Position(line=0, character=0))
    actions = await editor.code_actions(whole, [], only=["source.fixAll"])
    assert [a.kind for a in actions] == ["source.fixAll.cudalint"]
    editor.apply(actions[0].edit)
    assert editor.text == fix_file(SourceFile("saxpy.nix", SAMPLE), LintSettings(), unsafe=False).text
    after = await editor.diagnostics()
    assert shown(after) == expected(editor.text)
    assert "CUDA106" not in {d.code for d in after} and "CUDA001" in {d.code for d in after}


@pytest.mark.parametrize("code", ["CUDA001", "CUDA101", "CUDA102", "CUDA106"])
async def test_ignore_on_this_line(editor, code):
    diagnostics = await editor.diagnostics()
    target = next(d for d in diagnostics if d.code == code)
    actions = await editor.code_actions(target.range, [target])
    [ignore] = [a for a in actions if a.title == f"Ignore {code} on this line"]
    editor.apply(ignore.edit)
    after = await editor.diagnostics()
    assert code not in {d.code for d in after}
    assert "CUDA901" not in {d.code for d in after}
    assert shown(after) == expected(editor.text)


async def test_a_burst_of_incremental_edits_ends_like_a_fresh_run(editor):
    await editor.diagnostics()
    shuffle = random.Random(4)
    for _ in range(200):
        source = editor.source
        line = shuffle.randrange(source.line_count - 1)
        width = len(source.line_text(line).encode("utf-16-le")) // 2
        at = types.Position(line=line, character=shuffle.randrange(width + 1))
        start = source.offset_of_utf16(at.line, at.character)
        if shuffle.random() < 0.5 and start < len(source.data) - 1:
            # delete one character (never half of a surrogate pair)
            following = source.data[start:].decode()[0]
            end = types.Position(line=at.line, character=at.character + len(following.encode("utf-16-le")) // 2)
            if following != "\n":
                editor.change([types.TextEdit(range=types.Range(start=at, end=end), new_text="")])
                continue
        editor.change([types.TextEdit(range=types.Range(start=at, end=at), new_text=shuffle.choice(["é", "𝔘", " ", "x", ";", "{", "\n", "cudatoolkit "]))])
    assert shown(await editor.diagnostics()) == expected(editor.text)


async def test_positions_are_utf16_whatever_the_client_prefers(client):
    encoding = client.editor.initialize_result.capabilities.position_encoding
    assert encoding in (None, types.PositionEncodingKind.Utf16)
