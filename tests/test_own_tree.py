"""cudalint's own configuration ([tool.cudalint] in pyproject.toml) keeps its deliberately wrong
test inputs out of `cudalint check .` in the clone, as ruff's repository does for its fixtures."""

from __future__ import annotations

import json

from cudalint.frontend.cli import main
from editor_support import REPO


def test_checking_the_clone_finds_nothing(monkeypatch, capsys) -> None:
    monkeypatch.chdir(REPO)
    code = main(["check", "--jobs", "1", "--output-format", "json", "."])
    assert (code, json.loads(capsys.readouterr().out)) == (0, [])


def test_a_named_example_is_still_checked(monkeypatch, capsys) -> None:
    monkeypatch.chdir(REPO)
    code = main(["check", "--jobs", "1", "--output-format", "json", "examples/legacy-cuda-package.nix"])
    assert code == 1 and json.loads(capsys.readouterr().out)
