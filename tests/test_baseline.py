"""Baselines: recorded findings stop failing a run, matching survives moved lines, not edits."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from cudalint.frontend.baseline import VERSION, Baseline, BaselineError, fingerprint, load_baseline, write_baseline
from cudalint.lint.results import FileResult
from samples import TOOLKIT, checked


def codes(results: list[FileResult]) -> list[tuple[str, str, int]]:
    return [(r.path, d.code, r.source.location(d.start)[0]) for r in results if r.source for d in r.diagnostics]


@pytest.fixture
def workdir(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_round_trip_drops_every_recorded_finding(workdir) -> None:
    results = [checked("a.nix", TOOLKIT), checked("sub/b.nix", TOOLKIT)]
    assert write_baseline("baseline.json", results) == 2
    baseline = load_baseline("baseline.json")
    assert len(baseline) == 2
    kept, dropped = baseline.filter(results)
    assert dropped == 2
    assert codes(kept) == []
    assert [r.path for r in kept] == ["a.nix", "sub/b.nix"]
    assert baseline.unmatched == 0
    # The input is not modified.
    assert len(results[0].diagnostics) == 1


def test_file_format_is_versioned_and_readable(workdir) -> None:
    write_baseline("baseline.json", [checked("a.nix", TOOLKIT)])
    data = json.loads((workdir / "baseline.json").read_text())
    assert data["version"] == VERSION
    (entry,) = data["findings"]
    assert entry["path"] == "a.nix" and entry["code"] == "CUDA001" and entry["line"] == 4
    assert "cudatoolkit" in entry["message"]
    assert "count" not in entry


def test_moving_lines_keeps_matches(workdir) -> None:
    write_baseline("baseline.json", [checked("a.nix", TOOLKIT)])
    moved = TOOLKIT.replace('  pname = "saxpy";\n', '  pname = "saxpy";\n  version = "1.0";\n  src = ./.;\n')
    moved = "# A comment added on top\n\n" + moved
    result = checked("a.nix", moved)
    assert codes([result]) == [("a.nix", "CUDA001", 8)]
    kept, dropped = load_baseline("baseline.json").filter([result])
    assert dropped == 1 and codes(kept) == []


def test_reindenting_keeps_matches(workdir) -> None:
    write_baseline("baseline.json", [checked("a.nix", TOOLKIT)])
    reindented = TOOLKIT.replace("  nativeBuildInputs = [ cudatoolkit ];", "      nativeBuildInputs =   [ cudatoolkit ];")
    kept, dropped = load_baseline("baseline.json").filter([checked("a.nix", reindented)])
    assert dropped == 1


def test_editing_around_the_flagged_text_keeps_it_baselined(workdir) -> None:
    write_baseline("baseline.json", [checked("a.nix", TOOLKIT)])
    edited = TOOLKIT.replace("[ cudatoolkit ]", "[ cudatoolkit cmake ]")
    kept, dropped = load_baseline("baseline.json").filter([checked("a.nix", edited)])
    assert dropped == 1 and codes(kept) == []


def test_a_rewritten_flagged_text_stays_old_up_to_the_rules_count_in_the_file(workdir) -> None:
    write_baseline("baseline.json", [checked("a.nix", TOOLKIT)])
    edited = TOOLKIT.replace("{ stdenv, cudatoolkit }", "{ stdenv, cudaPackages }").replace("[ cudatoolkit ]", "[ cudaPackages.cudatoolkit ]")
    kept, dropped = load_baseline("baseline.json").filter([checked("a.nix", edited)])
    assert dropped == 1 and codes(kept) == []
    grown = edited.replace('  pname = "saxpy";\n', '  pname = "saxpy";\n  buildInputs = [ cudaPackages.cudatoolkit_11 ];\n')
    kept, dropped = load_baseline("baseline.json").filter([checked("a.nix", grown)])
    assert dropped == 1 and [code for _, code, _ in codes(kept)] == ["CUDA001"]
    kept, dropped = load_baseline("baseline.json").filter([checked("b.nix", edited)])  # another file
    assert dropped == 0


def test_exact_matches_win_over_anchors(workdir) -> None:
    """Two findings with the same flagged text, one baselined: the one whose line is unchanged
    is the old one; the other is reported."""
    two = TOOLKIT.replace('  pname = "saxpy";\n', '  pname = "saxpy";\n  propagatedBuildInputs = [ cudatoolkit ];\n')
    write_baseline("baseline.json", [checked("a.nix", TOOLKIT)])
    kept, dropped = load_baseline("baseline.json").filter([checked("a.nix", two)])
    assert dropped == 1 and [line for _, _, line in codes(kept)] == [4]


def test_a_baseline_written_before_fix_still_matches_after_it(workdir, capsys) -> None:
    """The issue's case: --fix rewrote the lines of findings it did not fix; they stay old."""
    from cudalint.frontend.cli import main

    example = Path(__file__).resolve().parent.parent / "examples" / "legacy-cuda-package.nix"
    Path("pkg.nix").write_text(example.read_text(encoding="utf-8"), encoding="utf-8")
    assert main(["check", "--isolated", "--jobs", "1", "--write-baseline", "baseline.json", "pkg.nix"]) == 0
    assert main(["check", "--isolated", "--jobs", "1", "--fix", "--exit-zero", "pkg.nix"]) == 0
    capsys.readouterr()
    assert main(["check", "--isolated", "--jobs", "1", "--output-format", "json", "--baseline", "baseline.json", "pkg.nix"]) == 0
    assert json.loads(capsys.readouterr().out) == []


def test_a_new_finding_is_reported(workdir) -> None:
    write_baseline("baseline.json", [checked("a.nix", TOOLKIT)])
    grown = TOOLKIT.replace('  pname = "saxpy";\n', '  pname = "saxpy";\n  buildInputs = [ cudatoolkit ];\n')
    result = checked("a.nix", grown)
    assert len(result.diagnostics) == 2
    baseline = load_baseline("baseline.json")
    kept, dropped = baseline.filter([result, checked("new.nix", TOOLKIT)])
    assert dropped == 1
    assert codes(kept) == [("a.nix", "CUDA001", 4), ("new.nix", "CUDA001", 4)]


def test_identical_findings_match_as_a_multiset(workdir) -> None:
    one = "{ cudatoolkit }:\n[\n  cudatoolkit\n]\n"
    two = "{ cudatoolkit }:\n[\n  cudatoolkit\n  cudatoolkit\n]\n"
    write_baseline("baseline.json", [checked("a.nix", one)])
    result = checked("a.nix", two)
    assert len(result.diagnostics) == 2
    kept, dropped = load_baseline("baseline.json").filter([result])
    assert dropped == 1 and len(codes(kept)) == 1
    # Both baselined: both dropped; the file records them once, with a count.
    write_baseline("baseline.json", [result])
    (entry,) = json.loads((workdir / "baseline.json").read_text())["findings"]
    assert entry["count"] == 2
    kept, dropped = load_baseline("baseline.json").filter([checked("a.nix", two)])
    assert dropped == 2


def test_fixed_findings_count_as_unmatched(workdir) -> None:
    write_baseline("baseline.json", [checked("a.nix", TOOLKIT)])
    baseline = load_baseline("baseline.json")
    kept, dropped = baseline.filter([checked("a.nix", "{ cudaPackages }: cudaPackages.cuda_nvcc\n")])
    assert dropped == 0 and baseline.unmatched == 1


def test_paths_are_relative_to_the_baseline_file(workdir) -> None:
    (workdir / "sub").mkdir()
    write_baseline("ci/baseline.json", [checked("sub/a.nix", TOOLKIT)])
    (entry,) = json.loads((workdir / "ci" / "baseline.json").read_text())["findings"]
    assert entry["path"] == "../sub/a.nix"
    # Running from another directory, with paths shown relative to it, still matches.
    os.chdir(workdir / "sub")
    kept, dropped = load_baseline("../ci/baseline.json").filter([checked("a.nix", TOOLKIT)])
    assert dropped == 1
    # A same-named file elsewhere does not.
    kept, dropped = load_baseline("../ci/baseline.json").filter([checked("other/a.nix", TOOLKIT)])
    assert dropped == 0


def test_code_is_part_of_the_identity(workdir) -> None:
    result = checked("a.nix", TOOLKIT)
    (diagnostic,) = result.diagnostics
    other = type(diagnostic)("CUDA999", diagnostic.message, diagnostic.start, diagnostic.end, diagnostic.severity)
    assert fingerprint(result.source, diagnostic) != fingerprint(result.source, other)


def test_file_errors_pass_through(workdir) -> None:
    write_baseline("baseline.json", [checked("a.nix", TOOLKIT), FileResult("bad.nix", None, error="unreadable")])
    results = [FileResult("bad.nix", None, error="unreadable"), checked("a.nix", TOOLKIT)]
    kept, dropped = load_baseline("baseline.json").filter(results)
    assert dropped == 1
    assert kept[0].error == "unreadable"


def test_written_file_mode_is_not_private(workdir) -> None:
    write_baseline("baseline.json", [])
    mode = stat.S_IMODE((workdir / "baseline.json").stat().st_mode)
    umask = os.umask(0)
    os.umask(umask)
    assert mode == 0o666 & ~umask
    assert not [p for p in workdir.iterdir() if p.name.endswith(".tmp")]
    assert len(load_baseline("baseline.json")) == 0


@pytest.mark.parametrize(
    "content, message",
    [
        (None, "does not exist"),
        ("{not json", "not valid JSON"),
        ("[]", "not a cudalint baseline"),
        ('{"findings": []}', "not a cudalint baseline"),
        ('{"version": 99, "findings": []}', "version 99"),
        ('{"version": 1}', "`findings` must be a list"),
        ('{"version": 1, "findings": [{"path": "a.nix"}]}', "finding #1"),
        ('{"version": 1, "findings": [{"path": "a.nix", "code": 1, "fingerprint": "x"}]}', "wrong type"),
        ('{"version": 1, "findings": [{"path": "a.nix", "code": "C", "fingerprint": "x", "count": 0}]}', "wrong type"),
        ('{"version": 1, "findings": ["x"]}', "finding #1"),
    ],
)
def test_bad_baseline_files_raise_baseline_error(workdir, content, message) -> None:
    if content is not None:
        (workdir / "baseline.json").write_text(content)
    with pytest.raises(BaselineError, match=message) as raised:
        load_baseline("baseline.json")
    assert "baseline.json" in str(raised.value)


def test_undecodable_baseline_raises_baseline_error(workdir) -> None:
    (workdir / "baseline.json").write_bytes(b"\xff\xfe\x00garbage")
    with pytest.raises(BaselineError, match="baseline.json"):
        load_baseline("baseline.json")


def test_baseline_is_a_class_with_filter() -> None:
    assert callable(Baseline.filter)
