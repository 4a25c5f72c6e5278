"""`cudalint check` over the rule fixtures agrees, in every output format, with the reviewed
per-rule snapshots; `--fix` leaves only findings without safe fixes and is idempotent."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from cudalint.frontend.cli import main
from cudalint.lint.registry import all_rules
from snapshots import FIXTURES, SNAPSHOTS, fixture_target

CODES = [r.code for r in all_rules()]
_SNAPSHOT_FINDING = re.compile(r"^(\d+):(\d+)-\d+:\d+ (CUDA\d{3}) ")


def expected(code: str) -> set[tuple[str, int, int, str]]:
    found = set()
    for snapshot in sorted((SNAPSHOTS / code).glob("*.snap")):
        for line in snapshot.read_text(encoding="utf-8").splitlines():
            match = _SNAPSHOT_FINDING.match(line)
            if match:
                found.add((snapshot.stem + ".nix", int(match.group(1)), int(match.group(2)), match.group(3)))
    return found


def run(capsys, *argv: str) -> tuple[int, str]:
    status = main(["check", *argv])
    return status, capsys.readouterr().out


def parse_text(out: str) -> set:
    found = set()
    for line in out.splitlines():
        match = re.match(r"^(?:.*/)?([^/:]+\.nix):(\d+):(\d+): (CUDA\d{3}) ", line)
        if match:
            found.add((match.group(1), int(match.group(2)), int(match.group(3)), match.group(4)))
    return found


def parse_json(out: str) -> set:
    return {(Path(d["filename"]).name, d["location"]["row"], d["location"]["column"], d["code"]) for d in json.loads(out)}


def parse_sarif(out: str) -> set:
    found = set()
    for result in json.loads(out)["runs"][0]["results"]:
        location = result["locations"][0]["physicalLocation"]
        region = location["region"]
        found.add((Path(location["artifactLocation"]["uri"]).name, region["startLine"], region["startColumn"], result["ruleId"]))
    return found


def parse_github(out: str) -> set:
    found = set()
    for line in out.splitlines():
        match = re.match(r"^::\w+ file=(?:.*/)?([^/,]+\.nix),line=(\d+),col=(\d+).*?title=(CUDA\d{3})", line)
        if match:
            found.add((match.group(1), int(match.group(2)), int(match.group(3)), match.group(4)))
    return found


PARSERS = {"text": parse_text, "json": parse_json, "sarif": parse_sarif, "github": parse_github}


@pytest.mark.parametrize("output_format", sorted(PARSERS))
@pytest.mark.parametrize("code", CODES)
def test_cli_findings_match_the_snapshots(code: str, output_format: str, capsys) -> None:
    select = "ALL" if code == "CUDA901" else f"{code},CUDA900"
    want = expected(code)
    found: set = set()
    statuses = []
    # One run per target era the fixtures name (their `# fixture-target:` line), as a user would.
    for target, paths in _fixtures_by_target(code).items():
        flags = [flag for key, value in target for flag in (f"--{key}", value)]
        # every finding fails the run here (--fail-on info), and rules in preview run too
        status, out = run(capsys, "--isolated", "--preview", "--fail-on", "info", "--select", select, *flags, "--output-format", output_format, "--jobs", "1", *paths)
        statuses.append(status)
        # CUDA901 needs every rule on; only its own findings (and syntax errors) are compared
        found |= {f for f in PARSERS[output_format](out) if f[3] in (code, "CUDA900")}
    assert max(statuses) == (1 if want or code == "CUDA901" else 0)
    assert found == want


def _fixtures_by_target(code: str) -> dict[tuple, list[str]]:
    groups: dict[tuple, list[str]] = {}
    for path in sorted((FIXTURES / code).glob("*.nix")):
        target = fixture_target(path.read_text(encoding="utf-8"))
        key = tuple((k, ",".join(v) if isinstance(v, tuple) else v) for k, v in sorted(target.items()))
        groups.setdefault(key, []).append(str(path))
    return groups


def test_fix_leaves_only_findings_without_safe_fixes_and_is_idempotent(tmp_path: Path, capsys) -> None:
    tree = tmp_path / "fixtures"
    shutil.copytree(FIXTURES, tree)
    # syntax-error fixtures are not fixable, and --fix must not touch them
    broken = {p: p.read_bytes() for p in (tree / "CUDA900").glob("fire_*.nix")}
    run(capsys, "--isolated", "--fix", str(tree))
    status, out = run(capsys, "--isolated", "--output-format", "json", str(tree))
    remaining = json.loads(out)
    assert [d for d in remaining if d["fix"] and d["fix"]["applicability"] == "safe"] == []
    assert all(p.read_bytes() == data for p, data in broken.items())
    before = {p: p.read_bytes() for p in tree.rglob("*.nix")}
    run(capsys, "--isolated", "--fix", "--unsafe-fixes", str(tree))
    after_unsafe = {p: p.read_bytes() for p in tree.rglob("*.nix")}
    run(capsys, "--isolated", "--fix", "--unsafe-fixes", str(tree))
    assert {p: p.read_bytes() for p in tree.rglob("*.nix")} == after_unsafe
    assert before != after_unsafe  # the unsafe pass did change something
