"""The benchmark's generated inputs are deterministic, valid Nix, and as CUDA-heavy as intended."""

from __future__ import annotations

import random

from bench import generate
from cudalint.lint.engine import SYNTAX_ERROR, lint, may_find
from cudalint.lint.registry import known_codes
from cudalint.lint.settings import LintSettings
from cudalint.nix.source import SourceFile


def _small_tree(seed: int) -> list[tuple[str, str]]:
    return generate.tree_files(random.Random(seed), total=400, database_scale=0.002)


def test_the_tree_is_the_same_for_the_same_seed_and_differs_for_another() -> None:
    assert _small_tree(1) == _small_tree(1)
    assert _small_tree(1) != _small_tree(2)


def test_generated_files_are_valid_nix() -> None:
    """Fixture copies aside (some fixtures are syntax errors on purpose), every file parses."""
    for path, text in _small_tree(3):
        if text.startswith("# from tests/fixtures/rules/CUDA900/"):
            continue
        result = lint(SourceFile(path, text), LintSettings(enabled=frozenset({SYNTAX_ERROR})), prefilter=False)
        assert result.syntax_errors == 0, (path, result.diagnostics[:1])


def test_about_two_percent_use_cuda_and_most_files_are_skipped() -> None:
    files = _small_tree(4)
    cuda = [p for p, text in files if text.startswith("# from ")]
    assert len(cuda) == round(len(files) * generate.CUDA_SHARE)
    parsed = [p for p, text in files if may_find(text.encode(), known_codes())]
    assert len(cuda) <= len(parsed) < len(files) // 10


def test_the_editor_file_is_3000_lines_of_valid_nix_with_findings() -> None:
    text = generate.cuda_heavy_file()
    assert text == generate.cuda_heavy_file()
    assert 3000 <= text.count("\n") < 3100
    result = lint(SourceFile("editor.nix", text), LintSettings())
    assert result.syntax_errors == 0
    assert len({d.code for d in result.diagnostics}) >= 5
