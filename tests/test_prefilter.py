"""The prefilter (files that mention nothing a rule looks for are not parsed) changes no result.

Every fixture, example and rule-docs example is linted with and without the prefilter, with all
rules and with each rule alone; the findings must be identical. The name stems that CUDA
package references are prefiltered by must cover every name the catalog calls a CUDA package.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cudalint.knowledge import catalog
from cudalint.lint.engine import SYNTAX_ERROR, lint, may_find
from cudalint.lint.registry import all_rules
from cudalint.lint.settings import LintSettings
from cudalint.nix.source import SourceFile
from snapshots import fixture_target

REPO = Path(__file__).resolve().parent.parent
CODES = [rule.code for rule in all_rules()]


def _samples() -> list[tuple[str, str]]:
    found = [(p.relative_to(REPO).as_posix(), p.read_text(encoding="utf-8")) for p in sorted((REPO / "tests" / "fixtures").rglob("*.nix"))]
    found += [(p.relative_to(REPO).as_posix(), p.read_text(encoding="utf-8")) for p in sorted((REPO / "examples").rglob("*.nix"))]
    for rule in all_rules():
        for section in ("Example", "Use instead"):
            found += [(f"{rule.code} docs {section} {i}", text) for i, text in enumerate(rule.examples(section))]
    return found


SAMPLES = _samples()


def _findings(source: SourceFile, settings: LintSettings, prefilter: bool) -> list[tuple]:
    result = lint(source, settings, prefilter=prefilter)
    return [(d.code, d.start, d.end, d.message, d.severity) for d in result.diagnostics]


@pytest.mark.parametrize("name,text", SAMPLES, ids=[name for name, _ in SAMPLES])
def test_prefilter_changes_no_finding(name: str, text: str) -> None:
    source = SourceFile(name, text)
    target = fixture_target(text)
    everything = LintSettings(**target)
    unfiltered = _findings(source, everything, prefilter=False)
    assert _findings(source, everything, prefilter=True) == unfiltered
    # each rule alone (with syntax errors, as the fixture tests run them): its own patterns must suffice
    for code in {c for c, *_ in unfiltered} - {SYNTAX_ERROR}:
        alone = LintSettings(enabled=frozenset({code, SYNTAX_ERROR}), **target)
        assert _findings(source, alone, prefilter=True) == _findings(source, alone, prefilter=False), code


def test_the_fixtures_exercise_the_prefilter() -> None:
    """Some samples must be skipped by some single rule, or the test above proves little."""
    skipped = [name for name, text in SAMPLES if not may_find(text.encode(), frozenset({"CUDA106"}))]
    assert len(skipped) > len(SAMPLES) // 2


def test_a_file_without_any_pattern_is_not_parsed() -> None:
    source = SourceFile("plain.nix", '{ lib, stdenv }:\nstdenv.mkDerivation { pname = "hello"; buildInputs = [ ; }\n')
    assert lint(source, LintSettings()).tree is None
    assert lint(source, LintSettings()).diagnostics == []
    # without the prefilter the same text has a syntax error
    assert [d.code for d in lint(source, LintSettings(), prefilter=False).diagnostics] == [SYNTAX_ERROR]


def test_a_suppression_comment_alone_makes_a_file_worth_parsing() -> None:
    source = SourceFile("plain.nix", "# cudalint: ignore[CUDA001]\n{ }\n")
    assert [d.code for d in lint(source, LintSettings()).diagnostics] == ["CUDA901"]


def _stem_free(name: str) -> bool:
    return not any(stem.decode() in name for stem in catalog.CUDA_REFERENCE_PATTERNS)


@given(st.from_regex(catalog._LIBRARY_NAME, fullmatch=True) | st.sampled_from(sorted(catalog.TOOLS | catalog.HEADER_ONLY)))
def test_every_cuda_package_name_holds_a_reference_pattern(name: str) -> None:
    assert not (catalog.is_cuda_package(name) and _stem_free(name)), name


@given(st.from_regex(catalog.RUNFILE_TOOLKIT, fullmatch=True) | st.from_regex(catalog.PACKAGE_SET, fullmatch=True))
def test_every_set_and_toolkit_name_holds_a_reference_pattern(name: str) -> None:
    assert not _stem_free(name), name


def test_a_skipped_file_on_standard_input_is_echoed_by_fix() -> None:
    from cudalint.frontend import runner
    from cudalint.frontend.config import FileSettings

    settings = FileSettings(LintSettings(), unsafe_fixes=True, max_file_size=1 << 20, config=None)
    data = b"\xef\xbb\xbf{ lib }:\r\nlib.id\r\n"  # a BOM and CRLF: the bytes must come back as they were
    processed = runner.process_task(runner.Task(None, "-", 0, True, data), settings, runner.FIX)
    assert processed.output == data
    assert processed.result is not None and processed.result.diagnostics == [] and not processed.failed
