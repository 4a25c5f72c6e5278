"""Fuzzing, bounded (about a minute): generated Nix and mutated fixtures through the engine, the
fixes and Nix's parser. `python -m tests.fuzz --minutes 30` runs the same checks for longer with
fresh randomness and keeps what fails under tests/fixtures/regressions/, which
`test_saved_regressions_pass` replays.

The run is deterministic (derandomized, no example database), so it cannot be flaky; the per-input
limit is enforced by killing a child process, not by timing assertions.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings

from fuzz_harness import REGRESSIONS, Watchdog, as_text, broken_promises, examine
from nix_generator import DEPTH, NESTINGS, dense_list, fixture_paths, mutated_fixtures, nix_files, one_line
from nix_oracle import nix_parser

GENERATED_CASES = 300
MUTATED_CASES = 100
# Seconds one input may take, all checks included: generous (real files take milliseconds) so
# that only a hang or a blow-up trips it, on any machine.
PER_INPUT_LIMIT = 60.0
BOUNDED = settings(
    max_examples=GENERATED_CASES,
    derandomize=True,
    database=None,
    deadline=None,
    suppress_health_check=list(HealthCheck),
)


@pytest.fixture(scope="module")
def watchdog() -> Iterator[Watchdog]:
    dog = Watchdog(PER_INPUT_LIMIT)
    yield dog
    dog.close()


def check(text: str, watchdog: Watchdog, nix: str) -> None:
    problems = broken_promises(text, watchdog, nix)
    assert not problems, "\n".join(problems) + f"\n--- input ({len(text)} characters):\n{text[:500]}"


def test_generated_nix(watchdog: Watchdog) -> None:
    nix = nix_parser()
    seen = []

    @BOUNDED
    @given(nix_files())
    def run(text: str) -> None:
        seen.append(text)
        check(text, watchdog, nix)

    run()
    # the generator must reach the rules: most cases parse, and many have findings with fixes
    valid = sum(examine_quick(t)[0] for t in seen)
    with_fixes = sum(examine_quick(t)[1] for t in seen)
    assert len(seen) >= GENERATED_CASES * 0.9
    assert valid >= len(seen) // 2 and with_fixes >= len(seen) // 5, (len(seen), valid, with_fixes)


def examine_quick(text: str) -> tuple[bool, bool]:
    """(parses, has a fix) by cudalint's own account."""
    from cudalint.lint.engine import lint
    from cudalint.lint.settings import LintSettings
    from cudalint.nix.source import SourceFile

    result = lint(SourceFile("g.nix", text), LintSettings())
    return result.syntax_errors == 0, any(d.fixes for d in result.diagnostics)


def test_mutated_fixtures(watchdog: Watchdog) -> None:
    nix = nix_parser()

    @settings(BOUNDED, max_examples=MUTATED_CASES)
    @given(mutated_fixtures())
    def run(data: bytes) -> None:
        check(as_text(data), watchdog, nix)

    run()


@pytest.mark.parametrize(("opening", "closing"), NESTINGS, ids=[o.strip() or "lambda" for o, _ in NESTINGS])
def test_nesting_ten_thousand_levels_deep(opening: str, closing: str, watchdog: Watchdog) -> None:
    body = fixture_paths()[0].read_text(encoding="utf-8")
    text = opening * DEPTH + body + closing * DEPTH
    check(text, watchdog, nix_parser())


def test_long_single_line(watchdog: Watchdog) -> None:
    """A fire fixture repeated onto one dense 64 KB line: lint and fix-all end and the fixes keep
    the text parsing. (50 MB lines, which take minutes of linear work, are in the long run; the
    CLI and the server skip files over `max-file-size`, 10 MB by default.)"""
    assert not broken_promises(as_text(one_line(64 * 1024)), watchdog, nix_parser(), thorough=False)


def test_fix_all_converges_over_many_package_functions(watchdog: Watchdog) -> None:
    assert not broken_promises(as_text(dense_list(4, "CUDA001")), watchdog, nix_parser())


def regression_inputs() -> list[Path]:
    return sorted(REGRESSIONS.glob("*.input"))


@pytest.mark.parametrize("path", regression_inputs(), ids=lambda p: p.stem)
def test_saved_regressions_pass(path: Path, watchdog: Watchdog) -> None:
    check(as_text(path.read_bytes()), watchdog, nix_parser())


def test_examine_catches_a_fix_that_breaks_the_syntax(monkeypatch) -> None:
    """The harness itself can fail: a fix that leaves unparseable text is reported."""
    import cudalint.lint.fixing
    import fuzz_harness
    from cudalint.lint.model import Edit

    real = cudalint.lint.fixing.apply_edits
    monkeypatch.setattr(fuzz_harness, "apply_edits", lambda data, edits: real(data, list(edits) + [Edit(0, 0, "{")]))
    text = "{ stdenv, cudatoolkit }:\nstdenv.mkDerivation { nativeBuildInputs = [ cudatoolkit ]; }\n"
    assert any("syntax errors" in p for p in examine(text).problems)
