"""Properties every fix must have, over every fixture with every rule on.

An editor applies one quick fix at a time, so each fix alone (alternatives included) must leave
text that parses, must change nothing outside its edits, and must make its own finding go away.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from cudalint.engine import lint
from cudalint.fixing import apply_edits
from cudalint.parsing import parse, syntax_problems
from cudalint.settings import LintSettings
from cudalint.source import SourceFile

from requirements import require_executable

FIXTURES = Path(__file__).parent / "fixtures"
FILES = sorted(p for p in FIXTURES.rglob("*.nix") if "CUDA900" not in p.parts)


def single_fixes(path: Path):
    source = SourceFile(path.name, path.read_text(encoding="utf-8"))
    result = lint(source, LintSettings())
    for diagnostic in result.diagnostics:
        for fix in diagnostic.fixes:
            yield source, diagnostic, fix


@pytest.mark.parametrize("path", FILES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_each_fix_alone_parses_and_resolves_its_finding(path: Path) -> None:
    problems = []
    before: dict[str, int] = {}
    for source, diagnostic, fix in single_fixes(path):
        if not before:
            for d in lint(source, LintSettings()).diagnostics:
                before[d.code] = before.get(d.code, 0) + 1
        fixed = SourceFile(path.name, apply_edits(source.data, list(fix.edits)).decode("utf-8"))
        where = f"{diagnostic.code} at line {source.location(diagnostic.start)[0]} ({fix.title})"
        if syntax_problems(parse(fixed), fixed):
            problems.append(f"{where}: the fixed text does not parse")
            continue
        remaining = sum(d.code == diagnostic.code for d in lint(fixed, LintSettings()).diagnostics)
        if remaining >= before[diagnostic.code]:
            problems.append(f"{where}: {diagnostic.code} reports as many findings after the fix as before")
    assert not problems, "\n".join(problems)


def test_every_single_fix_is_accepted_by_nix(tmp_path: Path) -> None:
    nix = require_executable("nix-instantiate", "Nix's own parser checks the fixed text")
    written = []
    for path in FILES:
        for index, (source, diagnostic, fix) in enumerate(single_fixes(path)):
            target = tmp_path / f"{path.parent.name}-{path.stem}-{index}.nix"
            target.write_bytes(apply_edits(source.data, list(fix.edits)))
            written.append((target, f"{path.parent.name}/{path.name}: {diagnostic.code} ({fix.title})"))
    assert written
    rejected = []
    # one nix-instantiate per file: --parse stops at the first file's error
    for target, label in written:
        run = subprocess.run([nix, "--parse", str(target)], capture_output=True, text=True)
        if run.returncode != 0 and "undefined variable" not in run.stderr:
            rejected.append(f"{label}: {run.stderr.strip().splitlines()[-1] if run.stderr.strip() else 'rejected'}")
    assert not rejected, "\n".join(rejected)
