"""Properties every fix must have, over every fixture with every rule on, checked with the
fuzzer's checks (tests/fuzz_harness.py), which test_fuzz.py applies to generated and mutated input.

An editor applies one quick fix at a time, so each fix alone (alternatives included) must leave
text that parses (by cudalint's account and Nix's), must make a finding of its rule go away, and
when safe must keep comments and the white space between the tokens it keeps. Fix-all, with and
without unsafe fixes, converges within a few passes, and a second fix-all changes nothing. Through
the CLI's writer, fix-all keeps CRLF line endings and a BOM.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from cudalint.frontend import files, runner
from cudalint.frontend.config import FileSettings
from cudalint.lint.fixing import fix_file
from cudalint.lint.settings import LintSettings
from cudalint.nix.source import SourceFile
from fuzz_harness import disagreements, examine, reformatted
from nix_generator import fixture_paths
from nix_oracle import nix_parser

FIXTURES = fixture_paths()
FIXABLE = [p for p in FIXTURES if "CUDA900" not in p.parts]


def label(path: Path) -> str:
    return f"{path.parent.name}/{path.name}"


@pytest.mark.parametrize("path", FIXTURES, ids=label)
def test_every_fix_of_the_fixture_keeps_its_promises(path: Path) -> None:
    examined = examine(path.read_text(encoding="utf-8"))
    problems = examined.problems + disagreements(examined, nix_parser())
    assert not problems, "\n".join(problems)


def test_fixtures_have_fixes_to_check() -> None:
    fixed_texts = sum(len(examine(p.read_text(encoding="utf-8")).oracle) - 1 for p in FIXABLE)
    assert fixed_texts > len(FIXABLE)


@pytest.mark.parametrize("path", FIXABLE, ids=label)
def test_fix_all_through_the_writer_keeps_crlf_and_bom(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    expected = fix_file(SourceFile(path.name, text), LintSettings(), unsafe=True).text
    settings = FileSettings(LintSettings(), True, files.DEFAULT_MAX_FILE_SIZE, None)
    for bom in (b"", files.BOM):
        raw = bom + text.replace("\n", "\r\n").encode("utf-8")
        decoded = files.decode_source(raw)
        assert isinstance(decoded, files.ReadSource)
        output = runner.process_source(path.name, decoded, settings, runner.FIX, None).output
        assert output == bom + expected.replace("\n", "\r\n").encode("utf-8"), f"bom={bool(bom)}"


def test_reformatting_inside_an_edit_is_caught() -> None:
    """The formatting check can fail: an edit that re-renders a list it keeps on one line."""
    assert reformatted("[\n    cmake\n    ninja\n  ]", "[ cmake ninja cuda_nvcc ]")
    assert not reformatted("[\n    cmake\n    ninja\n  ]", "[\n    cmake\n    ninja\n    cuda_nvcc\n  ]")
    assert not reformatted("cudatoolkit", "cudaPackages.cuda_nvcc")
