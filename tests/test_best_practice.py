"""Current nixpkgs best practice (rules.md, last section) produces no finding from any rule."""

from __future__ import annotations

from pathlib import Path

import pytest

from cudalint.lint.engine import lint
from cudalint.lint.registry import known_codes
from cudalint.lint.settings import LintSettings
from cudalint.nix.source import SourceFile

FILES = sorted((Path(__file__).parent / "fixtures" / "best-practice").glob("*.nix"))


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_best_practice_is_silent(path: Path) -> None:
    source = SourceFile(path.name, path.read_text(encoding="utf-8"))
    result = lint(source, LintSettings(enabled=known_codes()))
    found = [f"{source.location(d.start)[0]}: {d.code} {d.message}" for d in result.diagnostics]
    assert not found, "\n".join(found)
    assert not result.internal_errors
