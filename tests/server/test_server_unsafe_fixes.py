"""`unsafe-fixes` decides whether quick fixes include unsafe fixes: the editor's setting, else the
project's, else they are offered (a quick fix is picked one at a time under its "(unsafe fix)"
title). Fix-all stays safe-only whatever the setting."""

from __future__ import annotations

import pytest
from lsprotocol import types

from cudalint.lint.engine import lint
from cudalint.lint.model import Applicability
from cudalint.lint.settings import LintSettings
from cudalint.nix.source import SourceFile
from cudalint.server.code_actions import fix_title

# CUDA001 (the runfile toolkit) has only unsafe fixes; CUDA102 (the driver path) a safe one.
SAMPLE = """\
{ stdenv, cudatoolkit, addDriverRunpath }:
stdenv.mkDerivation {
  pname = "probe";
  version = "1.0";
  buildInputs = [ cudatoolkit ];
  NIX_LDFLAGS = "-L/run/opengl-driver/lib -lcuda";
}
"""
WHOLE_FILE = types.Range(start=types.Position(line=0, character=0), end=types.Position(line=7, character=0))


def expected_titles() -> tuple[set[str], set[str]]:
    """The titles of the sample's safe and unsafe fixes, from the engine."""
    fixes = [fix for d in lint(SourceFile("probe.nix", SAMPLE), LintSettings()).diagnostics for fix in d.fixes]
    safe = {fix_title(f) for f in fixes if f.applicability is Applicability.SAFE}
    unsafe = {fix_title(f) for f in fixes if f.applicability is Applicability.UNSAFE}
    assert safe and unsafe, "the sample must have fixes of both kinds"
    return safe, unsafe


async def quick_fix_titles(client, tmp_path, *, editor_setting=None, project_setting=None) -> set[str]:
    if project_setting is not None:
        (tmp_path / "cudalint.toml").write_text(f"unsafe-fixes = {str(project_setting).lower()}\n", encoding="utf-8")
    if editor_setting is not None:
        client.set_configuration({"unsafeFixes": editor_setting}, section="cudalint")
        client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings={"cudalint": {"unsafeFixes": editor_setting}}))
    editor = client.editor
    editor.open(tmp_path / "probe.nix", SAMPLE)
    diagnostics = await editor.diagnostics()
    assert {"CUDA001", "CUDA102"} <= {d.code for d in diagnostics}
    actions = await editor.code_actions(WHOLE_FILE, diagnostics, only=[types.CodeActionKind.QuickFix])
    return {action.title for action in actions}


@pytest.mark.parametrize(
    ("editor_setting", "project_setting", "offered"),
    [
        (None, None, True),  # nobody says: offered
        (False, None, False),
        (None, False, False),  # the project says no
        (True, False, True),  # the editor's setting wins over the project's
        (False, True, False),
    ],
)
async def test_unsafe_quick_fixes_follow_the_setting(client, tmp_path, editor_setting, project_setting, offered):
    safe, unsafe = expected_titles()
    titles = await quick_fix_titles(client, tmp_path, editor_setting=editor_setting, project_setting=project_setting)
    assert safe <= titles
    assert "Ignore CUDA001 on this line" in titles
    if offered:
        assert unsafe <= titles
    else:
        assert not titles & unsafe
        assert not [title for title in titles if "(unsafe fix)" in title]


async def test_fix_all_stays_safe_when_unsafe_fixes_are_offered(client, tmp_path):
    await quick_fix_titles(client, tmp_path, editor_setting=True)
    editor = client.editor
    (action,) = await editor.code_actions(WHOLE_FILE, [], only=["source.fixAll.cudalint"])
    editor.apply(action.edit)
    assert "cudatoolkit" in editor.text and "/run/opengl-driver/lib" not in editor.text
