"""Rules in preview (ruff's model): off unless preview mode is on, whatever selects them; marked
in `cudalint rules`, `cudalint rule CODE` and the docs. No rule needs to be in preview for these
tests: they put one there for the duration of a test."""

from __future__ import annotations

from pathlib import Path

import pytest

from cudalint.frontend.cli import main
from cudalint.frontend.config import ConfigError, Overrides, Resolver, Selection, parse_config, select_rules
from cudalint.lint import registry
from cudalint.lint.registry import known_codes, rule_by_code
from cudalint.lint.settings import LintSettings

CODE = "CUDA104"
HOOK = '{ stdenv, addOpenGLRunpath }:\nstdenv.mkDerivation {\n  pname = "x";\n  version = "1";\n  nativeBuildInputs = [ addOpenGLRunpath ];\n}\n'


@pytest.fixture
def in_preview(monkeypatch):
    """Put CODE in preview, clearing the registry's caches before and after."""
    monkeypatch.setattr(rule_by_code(CODE), "preview", True)
    monkeypatch.setattr(rule_by_code(CODE), "precision", "0.80 (4/5), test value")
    registry.stable_codes.cache_clear()
    registry.preview_codes.cache_clear()
    yield CODE
    registry.stable_codes.cache_clear()
    registry.preview_codes.cache_clear()


def test_default_selection_leaves_preview_rules_off(in_preview) -> None:
    assert in_preview not in LintSettings().enabled
    assert in_preview not in select_rules([Selection()])
    assert in_preview in select_rules([Selection()], preview=True)
    assert select_rules([Selection()], preview=True) == known_codes()


@pytest.mark.parametrize("selector", ["ALL", "CUDA1", "CUDA10", CODE])
def test_no_selector_enables_a_preview_rule_without_preview(in_preview, selector) -> None:
    assert in_preview not in select_rules([Selection(select=(selector,))])
    assert in_preview not in select_rules([Selection(extend_select=(selector,))])
    assert in_preview in select_rules([Selection(select=(selector,))], preview=True)


def test_ignore_still_wins_in_preview_mode(in_preview) -> None:
    assert in_preview not in select_rules([Selection(ignore=(in_preview,))], preview=True)


def test_config_key(tmp_path) -> None:
    assert parse_config({"preview": True}, None, str(tmp_path), "cudalint.toml").preview is True
    with pytest.raises(ConfigError, match="`preview` must be true or false, not a string"):
        parse_config({"preview": "yes"}, None, str(tmp_path), "cudalint.toml")


def test_resolver_layers_command_line_over_file(in_preview, tmp_path: Path) -> None:
    (tmp_path / "cudalint.toml").write_text("preview = true\n")
    target = str(tmp_path / "a.nix")
    assert in_preview in Resolver(Overrides(), cwd=str(tmp_path)).settings_for(target).lint.enabled
    assert in_preview not in Resolver(Overrides(preview=False), cwd=str(tmp_path)).settings_for(target).lint.enabled
    (tmp_path / "cudalint.toml").write_text("")
    assert in_preview not in Resolver(Overrides(), cwd=str(tmp_path)).settings_for(target).lint.enabled
    assert in_preview in Resolver(Overrides(preview=True), cwd=str(tmp_path)).settings_for(target).lint.enabled


def _check(argv: list[str], tmp_path: Path, monkeypatch, capsys) -> tuple[int, str, str]:
    (tmp_path / "a.nix").write_text(HOOK)
    monkeypatch.chdir(tmp_path)
    code = main(["check", "--isolated", "--jobs", "1", "--output-format", "json", *argv, "a.nix"])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_cli_preview_flag(in_preview, tmp_path: Path, monkeypatch, capsys) -> None:
    _, out, err = _check([], tmp_path, monkeypatch, capsys)
    assert in_preview not in out and "preview" not in err
    _, out, _ = _check(["--preview"], tmp_path, monkeypatch, capsys)
    assert in_preview in out


def test_cli_warns_when_a_preview_rule_is_selected_by_code(in_preview, tmp_path: Path, monkeypatch, capsys) -> None:
    _, out, err = _check(["--select", in_preview], tmp_path, monkeypatch, capsys)
    assert in_preview not in out
    assert f"warning: {in_preview} is in preview and stays off: pass --preview" in err
    _, out, err = _check(["--select", in_preview, "--preview"], tmp_path, monkeypatch, capsys)
    assert in_preview in out and "is in preview" not in err


def test_rule_listing_and_docs_mark_preview(in_preview, capsys) -> None:
    main(["rules", "--color", "never"])
    listing = capsys.readouterr().out
    row = next(line for line in listing.splitlines() if line.startswith(in_preview))
    assert " preview " in row
    assert " stable " in next(line for line in listing.splitlines() if line.startswith("CUDA001"))
    main(["rule", in_preview, "--color", "never"])
    assert "Status:   preview, off unless --preview or `preview = true` (precision: 0.80 (4/5), test value)" in capsys.readouterr().out
    from cudalint.frontend.ruledocs import rules_reference_markdown

    assert "**Status:** preview" in rules_reference_markdown()


def test_editor_setting(in_preview, tmp_path: Path) -> None:
    from cudalint.server.configuration import Settings, parse_editor_settings

    path = str(tmp_path / "a.nix")
    assert in_preview in Settings(str(tmp_path), parse_editor_settings({"preview": True}, str(tmp_path))).for_path(path).lint.enabled
    assert in_preview not in Settings(str(tmp_path), parse_editor_settings({}, str(tmp_path))).for_path(path).lint.enabled
