"""Rendering of per-rule fixture snapshots: the findings of one rule and the fix it produces.

Update snapshots with `CUDALINT_UPDATE_SNAPSHOTS=1 python -m pytest tests/test_rule_fixtures.py`
and review the diff like any other change.
"""

from __future__ import annotations

import difflib
import os
import re
from pathlib import Path

from cudalint.lint.engine import SYNTAX_ERROR, lint
from cudalint.lint.fixing import apply_edits, fix_file
from cudalint.lint.registry import known_codes
from cudalint.lint.settings import LintSettings
from cudalint.nix.source import SourceFile

ROOT = Path(__file__).parent
FIXTURES = ROOT / "fixtures" / "rules"
SNAPSHOTS = ROOT / "snapshots"
UPDATE = os.environ.get("CUDALINT_UPDATE_SNAPSHOTS") == "1"


# A fixture for one era starts with `# fixture-target: nixpkgs=24.05 cuda=12.2,12.4` (either part).
_TARGET = re.compile(r"^# fixture-target:((?:\s+(?:nixpkgs|cuda)=\S+)+)\s*$")


def fixture_target(text: str) -> dict[str, object]:
    match = _TARGET.match(text.split("\n", 1)[0])
    if match is None:
        return {}
    parts = dict(part.split("=", 1) for part in match.group(1).split())
    target: dict[str, object] = {}
    if "nixpkgs" in parts:
        target["nixpkgs"] = parts["nixpkgs"]
    if "cuda" in parts:
        target["cuda"] = tuple(parts["cuda"].split(","))
    return target


def settings_for(code: str, text: str = "") -> LintSettings:
    """Only the rule under test (and syntax errors); unused suppressions need every rule on.
    The fixture's `fixture-target` line sets the target nixpkgs and CUDA releases."""
    target = fixture_target(text)
    if code == "CUDA901":
        return LintSettings(enabled=known_codes(), **target)
    return LintSettings(enabled=frozenset({code, SYNTAX_ERROR}), **target)


def render(code: str, path: Path) -> str:
    text = path.read_text(encoding="utf-8")
    source = SourceFile(path.name, text)
    settings = settings_for(code, text)
    result = lint(source, settings)
    lines = [f"# findings of {code}"]
    for d in result.diagnostics:
        row, column = source.location(d.start)
        end_row, end_column = source.location(d.end)
        lines.append(f"{row}:{column}-{end_row}:{end_column} {d.code} [{d.severity.value}] {d.message}")
        for fix in d.fixes:
            lines.append(f"    fix ({fix.applicability.value}): {fix.title}")
    outcome = fix_file(source, settings, unsafe=True, first=result)
    lines.append(f"# fix-all with unsafe fixes ({outcome.passes} passes)")
    lines.extend(_diff(text, outcome.text) if outcome.changed else ["(no change)"])
    # Fixes beyond the first are editor actions only: show each applied alone.
    for d in result.diagnostics:
        for fix in d.fixes[1:]:
            row, column = source.location(d.start)
            lines.append(f"# alternative fix at {row}:{column}: {fix.title}")
            lines.extend(_diff(text, apply_edits(source.data, list(fix.edits)).decode("utf-8")))
    return "\n".join(lines) + "\n"


def _diff(before: str, after: str) -> list[str]:
    diff = difflib.unified_diff(before.splitlines(keepends=True), after.splitlines(keepends=True), "before", "after", n=2)
    return [line.rstrip("\n") for line in diff]


def snapshot_path(code: str, fixture: Path) -> Path:
    return SNAPSHOTS / code / (fixture.stem + ".snap")
