"""What nixpkgs CUDA reviewers asked for, as bad/fixed snippet pairs (tests/review_requests/).

For every request: an expected code fires on the bad snippet and none on the fixed one ("raised"),
and the fixed snippet is clean under all rules. Requests for rules that do not exist yet, and
requests an existing rule gets wrong, carry a strict xfail naming the planned code or the defect,
so the marker has to go when the rule lands or the defect is fixed. Run this file directly to
print the coverage per category.
"""

from __future__ import annotations

import datetime
import re
import subprocess
import tomllib
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

import pytest

from cudalint.lint.engine import lint
from cudalint.lint.registry import known_codes
from cudalint.lint.settings import LintSettings
from cudalint.nix.source import SourceFile
from requirements import require_executable, require_shared

DATA = Path(__file__).parent / "review_requests"
SNIPPETS = DATA / "snippets"
FIRST_DAY, LAST_DAY = datetime.date(2022, 1, 1), datetime.date(2026, 12, 31)
RECENT = datetime.date(2024, 1, 1)
SOURCES = frozenset({"review", "pr-change", "issue"})
KEYS = frozenset({"id", "thread", "url", "date", "source", "paraphrase", "cuda_specific", "expect", "target", "xfail", "accepted", "contradicts"})


@dataclass(frozen=True)
class Request:
    id: str
    category: str
    thread: int
    url: str
    date: datetime.date
    source: str
    paraphrase: str
    cuda_specific: bool
    expect: tuple[str, ...]
    target: dict = field(default_factory=dict)
    xfail: str | None = None
    accepted: dict[str, str] = field(default_factory=dict)
    contradicts: dict[str, str] = field(default_factory=dict)

    def snippet(self, kind: str) -> Path:
        return SNIPPETS / f"{self.id}.{kind}.nix"

    def settings(self) -> LintSettings:
        return LintSettings(enabled=known_codes(), nixpkgs=self.target.get("nixpkgs"), cuda=tuple(self.target.get("cuda", ())))


def load_requests() -> list[Request]:
    requests = []
    for path in sorted(DATA.glob("*.toml")):
        for entry in tomllib.loads(path.read_text(encoding="utf-8"))["request"]:
            unknown = set(entry) - KEYS
            assert not unknown, f"{path.name}: {entry.get('id')}: unknown keys {sorted(unknown)}"
            requests.append(
                Request(
                    category=path.stem,
                    date=datetime.date.fromisoformat(entry.pop("date")),
                    expect=tuple(entry.pop("expect")),
                    **entry,
                )
            )
    return requests


REQUESTS = load_requests()
BY_ID = {r.id: r for r in REQUESTS}


def codes_found(request: Request, kind: str) -> frozenset[str]:
    return _codes_found(request.id, kind)


@cache
def _codes_found(request_id: str, kind: str) -> frozenset[str]:
    request = BY_ID[request_id]
    path = request.snippet(kind)
    result = lint(SourceFile(path.name, path.read_text(encoding="utf-8")), request.settings())
    assert not result.syntax_errors and not result.internal_errors, f"{path.name}: {result.internal_errors or 'syntax errors'}"
    return frozenset(d.code for d in result.diagnostics)


def is_raised(request: Request) -> bool:
    expected = set(request.expect)
    return bool(expected & codes_found(request, "bad")) and not expected & codes_found(request, "fixed")


def _marked(request: Request, reason: str | None):
    marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
    return pytest.param(request, id=request.id, marks=marks)


# -- the data itself ------------------------------------------------------------------------------


def test_the_set_is_large_recent_and_well_formed() -> None:
    ids = Counter(r.id for r in REQUESTS)
    assert not [i for i, n in ids.items() if n > 1], "duplicate ids"
    assert len(REQUESTS) >= 40
    assert sum(r.date >= RECENT for r in REQUESTS) * 2 >= len(REQUESTS), "at least half from 2024-2026"
    for r in REQUESTS:
        kind = "issues" if r.source == "issue" else "pull"
        assert r.url == f"https://github.com/NixOS/nixpkgs/{kind}/{r.thread}", r.id
        assert FIRST_DAY <= r.date <= LAST_DAY, r.id
        assert r.source in SOURCES, r.id
        assert r.id.startswith(("pr", "issue")) and str(r.thread) in r.id, r.id
        assert "\n" not in r.paraphrase and len(r.paraphrase) <= 200, f"{r.id}: paraphrase is one short line"
        assert not set(r.accepted) & set(r.expect), f"{r.id}: an expected code cannot be accepted on the fixed snippet"
        assert r.expect or not r.xfail, f"{r.id}: nothing is expected, so nothing can be marked"


def test_every_snippet_belongs_to_a_request() -> None:
    expected = {r.snippet(kind).name for r in REQUESTS for kind in ("bad", "fixed")}
    present = {p.name for p in SNIPPETS.glob("*.nix")}
    assert present == expected, f"orphans: {sorted(present - expected)}; missing: {sorted(expected - present)}"


def test_expected_codes_exist_or_are_reserved() -> None:
    catalog = (require_shared() / "docs" / "rules.md").read_text(encoding="utf-8")
    reserved = set(re.findall(r"CUDA\d{3}", catalog))
    unknown = {c for r in REQUESTS for c in (*r.expect, *r.accepted, *r.contradicts)} - known_codes() - reserved
    assert not unknown, f"codes neither registered nor reserved in ../shared/docs/rules.md: {sorted(unknown)}"


def test_requests_for_unwritten_rules_are_marked() -> None:
    """A request whose codes are all planned must say so; a marker must name one of its codes."""
    for r in REQUESTS:
        planned = [c for c in r.expect if c not in known_codes()]
        if r.expect and len(planned) == len(r.expect):
            assert r.xfail and any(c in r.xfail for c in planned), f"{r.id}: mark it xfail with the planned code"
        if r.xfail:
            assert any(c in r.xfail for c in r.expect), f"{r.id}: the xfail reason names none of {r.expect}"


@pytest.mark.parametrize("kind", ["bad", "fixed"])
def test_snippets_are_valid_nix(kind: str) -> None:
    nix_instantiate = require_executable("nix-instantiate", "the reference Nix parser")
    paths = [str(r.snippet(kind)) for r in REQUESTS]
    run = subprocess.run([nix_instantiate, "--parse", *paths], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr


# -- what cudalint says about them ----------------------------------------------------------------


@pytest.mark.parametrize("request_", [_marked(r, r.xfail) for r in REQUESTS if r.expect])
def test_request_is_raised(request_: Request) -> None:
    bad, fixed = codes_found(request_, "bad"), codes_found(request_, "fixed")
    expected = set(request_.expect)
    assert expected & bad, f"none of {sorted(expected)} fires on {request_.snippet('bad').name} (found: {sorted(bad)})"
    assert not expected & fixed, f"{sorted(expected & fixed)} still fires on {request_.snippet('fixed').name}"


def _contradiction(request: Request) -> str | None:
    return "; ".join(request.contradicts.values()) or None


@pytest.mark.parametrize("request_", [_marked(r, _contradiction(r)) for r in REQUESTS])
def test_fixed_snippet_is_clean(request_: Request) -> None:
    """Any finding on what the reviewer asked for is advice that contradicts the reviewer."""
    unexplained = codes_found(request_, "fixed") - set(request_.accepted)
    assert not unexplained, f"{sorted(unexplained)} on {request_.snippet('fixed').name}, which follows the reviewer"


def test_contradictions_name_a_code_that_fires() -> None:
    for r in REQUESTS:
        stale = set(r.contradicts) - codes_found(r, "fixed")
        assert not stale, f"{r.id}: {sorted(stale)} no longer fires on the fixed snippet: drop the entry"
        stale = set(r.accepted) - codes_found(r, "fixed")
        assert not stale, f"{r.id}: accepted {sorted(stale)} does not fire: drop it"


# -- coverage -------------------------------------------------------------------------------------


def coverage_report(requests: list[Request]) -> str:
    rows = defaultdict(lambda: [0, 0, 0])  # category -> requests, CUDA-specific, raised of those
    misses: dict[str, list[str]] = defaultdict(list)
    for r in requests:
        row = rows[r.category]
        row[0] += 1
        if not r.cuda_specific:
            continue
        row[1] += 1
        if r.expect and is_raised(r):
            row[2] += 1
        else:
            why = r.xfail or ("no rule planned" if not r.expect else "not raised")
            misses[why.split(":")[0]].append(r.id)
    lines = [f"{'category':<10} {'requests':>8} {'CUDA':>5} {'raised':>6}"]
    lines += [f"{c:<10} {n:>8} {cuda:>5} {raised:>6}" for c, (n, cuda, raised) in sorted(rows.items())]
    total, cuda, raised = (sum(col) for col in zip(*rows.values()))
    lines.append(f"{'total':<10} {total:>8} {cuda:>5} {raised:>6}")
    lines.append(f"coverage: {raised}/{cuda} CUDA-specific requests raised ({100 * raised / cuda:.0f}%)")
    by_year = Counter(r.date.year for r in requests)
    lines.append("per year: " + ", ".join(f"{y}: {n}" for y, n in sorted(by_year.items())))
    lines += [f"missed, {why}: {', '.join(ids)}" for why, ids in sorted(misses.items())]
    return "\n".join(lines)


def test_coverage_matches_the_markers() -> None:
    """The figure printed is what the markers claim: raised exactly where nothing is marked."""
    print("\n" + coverage_report(REQUESTS))
    wrong = [r.id for r in REQUESTS if r.expect and is_raised(r) == bool(r.xfail)]
    assert not wrong, f"raised/xfail disagree for {wrong}"


if __name__ == "__main__":
    print(coverage_report(REQUESTS))
