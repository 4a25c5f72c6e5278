"""Every rule has fixtures that fire, fixtures that stay silent, and fix snapshots.

Layout: tests/fixtures/rules/<CODE>/fire_*.nix and silent_*.nix; tests/snapshots/<CODE>/*.snap.
"""

from __future__ import annotations

import functools
from collections import Counter
from pathlib import Path

import pytest

from cudalint.lint.engine import SYNTAX_ERROR, lint
from cudalint.lint.fixing import fix_file
from cudalint.lint.model import Applicability, Diagnostic, FixAvailability
from cudalint.lint.registry import all_rules
from cudalint.nix.parsing import parse, syntax_problems
from cudalint.nix.source import SourceFile
from snapshots import FIXTURES, UPDATE, fixture_target, render, settings_for, snapshot_path

RULES = all_rules()
CODES = [r.code for r in RULES]


def fixtures(code: str, kind: str) -> list[Path]:
    return sorted((FIXTURES / code).glob(f"{kind}_*.nix"))


ALL_FIRE = [(c, p) for c in CODES for p in fixtures(c, "fire")]
ALL_SILENT = [(c, p) for c in CODES for p in fixtures(c, "silent")]


def _id(pair: tuple[str, Path]) -> str:
    return f"{pair[0]}/{pair[1].name}"


@pytest.mark.parametrize("code", CODES)
def test_every_rule_has_fixtures_and_snapshots(code: str) -> None:
    fire, silent = fixtures(code, "fire"), fixtures(code, "silent")
    assert fire, f"{code} has no tests/fixtures/rules/{code}/fire_*.nix"
    assert silent, f"{code} has no tests/fixtures/rules/{code}/silent_*.nix"
    missing = [p.name for p in fire if not snapshot_path(code, p).exists()]
    assert UPDATE or not missing, f"{code}: no snapshot for {missing}"


@pytest.mark.parametrize("code", [r.code for r in RULES if r.fix is not Applicability.NONE])
def test_fixable_rule_has_a_fix_snapshot_that_changes_code(code: str) -> None:
    changed = [p for p in fixtures(code, "fire") if snapshot_path(code, p).exists() and "\n+++ after" in snapshot_path(code, p).read_text()]
    assert UPDATE or changed, f"{code} declares a fix but no snapshot shows one"


@pytest.mark.parametrize("pair", ALL_FIRE, ids=_id)
def test_fire_fixture(pair: tuple[str, Path]) -> None:
    code, path = pair
    source = SourceFile(path.name, path.read_text(encoding="utf-8"))
    result = lint(source, settings_for(code, source.text))
    assert any(d.code == code for d in result.diagnostics), f"{path.name} does not trigger {code}"
    assert not result.internal_errors, f"{path.name}: {result.internal_errors}"
    if code != SYNTAX_ERROR:
        assert result.syntax_errors == 0, f"{path.name} has syntax errors; fixtures must be valid Nix"
    rendered = render(code, path)
    snapshot = snapshot_path(code, path)
    if UPDATE:
        snapshot.parent.mkdir(parents=True, exist_ok=True)
        snapshot.write_text(rendered, encoding="utf-8")
    assert rendered == snapshot.read_text(encoding="utf-8")


@pytest.mark.parametrize("pair", ALL_FIRE, ids=_id)
def test_fixes_converge_and_keep_the_file_parseable(pair: tuple[str, Path]) -> None:
    code, path = pair
    source = SourceFile(path.name, path.read_text(encoding="utf-8"))
    settings = settings_for(code, source.text)
    before = len(syntax_problems(parse(source), source))
    outcome = fix_file(source, settings, unsafe=True)
    fixed = SourceFile(path.name, outcome.text)
    assert len(syntax_problems(parse(fixed), fixed)) <= before
    again = fix_file(fixed, settings, unsafe=True)
    assert not again.changed, f"a second fix-all still changed {path.name}"
    assert all(d.fix is None for d in again.result.diagnostics if d.code == code), f"{path.name}: a finding left after fix-all still offers a fix"


@pytest.mark.parametrize("pair", ALL_SILENT, ids=_id)
def test_silent_fixture(pair: tuple[str, Path]) -> None:
    code, path = pair
    source = SourceFile(path.name, path.read_text(encoding="utf-8"))
    result = lint(source, settings_for(code, source.text))
    found = [(source.location(d.start), d.message) for d in result.diagnostics if d.code == code]
    assert not found, f"{path.name} must not trigger {code}: {found}"
    assert not result.internal_errors, f"{path.name}: {result.internal_errors}"
    if code != SYNTAX_ERROR:
        assert result.syntax_errors == 0, f"{path.name} has syntax errors"


@functools.cache
def _every_finding() -> tuple[tuple[str, SourceFile, tuple[Diagnostic, ...]], ...]:
    """Every rule's findings on every fixture (fire and silent, under its target) and every
    rule-doc example, all rules on: `(where, source, findings)`."""
    from cudalint.lint.registry import known_codes
    from cudalint.lint.settings import LintSettings

    inputs = [(str(p.relative_to(FIXTURES)), p.read_text(encoding="utf-8")) for p in sorted(FIXTURES.glob("*/*.nix"))]
    inputs += [(f"{r.code} docs, {title} #{i}", example) for r in RULES for title in ("Example", "Use instead") for i, example in enumerate(r.examples(title))]
    found = []
    for where, text in inputs:
        source = SourceFile(where, text)
        found.append((where, source, tuple(lint(source, LintSettings(enabled=known_codes(), **fixture_target(text))).diagnostics)))
    return tuple(found)


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.code)
def test_fixes_are_no_riskier_than_the_rule_declares(rule) -> None:
    """ruff's model: a rule declares whether its findings have fixes (`availability`) and the
    riskiest applicability of any of them (`fix`, alternatives included)."""
    wrong = []
    for where, source, diagnostics in _every_finding():
        for d in (d for d in diagnostics if d.code == rule.code):
            at = f"{where}:{source.location(d.start)[0] + 1}"
            if rule.availability is FixAvailability.ALWAYS and d.fix is None:
                wrong.append(f"{at}: no fix, but the rule declares its fix always available")
            for fix in d.fixes:
                if rule.availability is FixAvailability.NEVER or fix.applicability.risk > rule.fix.risk:
                    wrong.append(f"{at}: {fix.applicability.value} fix {fix.title!r}, but the rule declares {rule.availability.value}/{rule.fix.value}")
    assert not wrong, "\n".join(wrong)


@pytest.mark.parametrize("rule", [r for r in RULES if r.availability is not FixAvailability.NEVER], ids=lambda r: r.code)
def test_declared_riskiest_fix_occurs(rule) -> None:
    """A rule declaring `unsafe` has a fixture where it emits an unsafe fix (declarations say what
    is true, not a safe margin)."""
    emitted = {f.applicability for _, _, diagnostics in _every_finding() for d in diagnostics if d.code == rule.code for f in d.fixes}
    assert rule.fix in emitted, f"{rule.code} declares {rule.fix.value} fixes but emits only {sorted(a.value for a in emitted)}"


def test_one_finding_per_construct() -> None:
    """No rule reports one expression twice: no two findings of a rule with the same span, or
    with one span inside the other (`${cudatoolkit}` and the `cudatoolkit` in it)."""
    twice = []
    for where, source, diagnostics in _every_finding():
        spans = Counter((d.code, d.start, d.end) for d in diagnostics)
        twice += [f"{where}:{source.location(start)[0] + 1} {code} x{n}" for (code, start, end), n in spans.items() if n > 1]
        for i, outer in enumerate(diagnostics):
            for inner in diagnostics[i + 1 :]:
                if outer.code == inner.code and (outer.start, outer.end) != (inner.start, inner.end):
                    if outer.start <= inner.start and inner.end <= outer.end or inner.start <= outer.start and outer.end <= inner.end:
                        twice.append(f"{where}:{source.location(inner.start)[0] + 1} {outer.code}: nested findings")
    assert not twice, "\n".join(twice)
