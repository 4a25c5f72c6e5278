"""tests/realworld/replay.py: matching, file checks and summary on a synthetic two-file corpus.

The corpus is written here from scratch (no third-party text) and the linter is replaced by a
function returning fixed findings, so the test needs neither /work/corpus nor a Nix evaluator.
"""

from __future__ import annotations

import hashlib
import importlib.util
import io
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

REPLAY = Path(__file__).resolve().parent / "realworld" / "replay.py"


def load_replay() -> Any:
    spec = importlib.util.spec_from_file_location("realworld_replay", REPLAY)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


replay = load_replay()
Finding = replay.Finding

ALPHA = """{ lib, cudaPackages, cudaSupport ? false }:
{
  buildInputs = [
    cudaPackages.cuda_cudart
    cudaPackages.libcublas
  ];
  nativeBuildInputs = [ cudaPackages.cuda_nvcc ];
}
"""

BETA = """{ lib, cudaPackages }:
{
  buildInputs = lib.optionals true [ cudaPackages.cuda_cudart ];
}
"""


def write_corpus(root: Path) -> dict[str, Any]:
    """Two files under root/synthetic/example+repo/ and their manifest (with verdicts)."""
    files = {"alpha.nix": ALPHA, "nested/beta.nix": BETA}
    for rel, text in files.items():
        path = root / "synthetic" / "example+repo" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")

    def entry(rel: str, clean: bool, findings: list[dict[str, Any]]) -> dict[str, Any]:
        data = files[rel].encode()
        return {
            "repo": "example/repo",
            "path": rel,
            "commit": None,
            "index_id": None,
            "length": len(files[rel]),
            "sha256": hashlib.sha256(data).hexdigest(),
            "date": "2026-01-01",
            "kind": "consumer",
            "nixpkgs": "unstable",
            "clean": clean,
            "note": "",
            "findings": findings,
        }

    return {
        "corpus": "synthetic",
        "files": [
            entry(
                "alpha.nix",
                False,
                [
                    {"code": "CUDA303", "line": 1, "text": "{ lib, cudaPackages, cudaSupport ? false }:", "verdict": "true", "reason": "default"},
                    {"code": "CUDA304", "line": 4, "text": "cudaPackages.cuda_cudart", "verdict": "false", "reason": "cuda-only"},
                    {"code": "CUDA304", "line": 5, "text": "cudaPackages.libcublas", "verdict": "debatable", "reason": "unsure"},
                    # recorded on a line the linter no longer reports: a lost true positive
                    {"code": "CUDA301", "line": 7, "text": "nativeBuildInputs = [ cudaPackages.cuda_nvcc ];", "verdict": "true", "reason": "x"},
                ],
            ),
            entry("nested/beta.nix", True, [{"code": "CUDA316", "line": 3, "text": "gone", "verdict": "false", "reason": "fixed since"}]),
        ],
    }


def fake_linter(found: dict[str, list[Any]]) -> Any:
    def lint(paths: Sequence[Path], target: str | None) -> dict[Path, list[Any]]:
        assert target == "unstable"
        return {p.resolve(): found.get(p.name, []) for p in paths}

    return lint


FOUND = {
    "alpha.nix": [
        Finding("CUDA303", 1, "switch default", "warning"),
        Finding("CUDA304", 4, "unguarded", "warning"),
        Finding("CUDA304", 5, "unguarded", "warning"),
        Finding("CUDA309", 2, "no arches", "info"),
    ],
    "beta.nix": [Finding("CUDA316", 3, "release package", "error")],
}


def test_match_pairs_by_code_and_text_nearest_line_first() -> None:
    lines = ["same", "other", "same"]
    recorded = [
        {"code": "C1", "line": 3, "text": "same", "verdict": "true"},
        {"code": "C1", "line": 1, "text": "same", "verdict": "false"},
        {"code": "C2", "line": 2, "text": "other", "verdict": "true"},
    ]
    matches, free = replay.match_findings(recorded, [Finding("C1", 3, "m", "warning"), Finding("C1", 1, "m", "warning")], lines)
    assert [(m.finding.line, m.verdict) for m in matches] == [(1, "false"), (3, "true")]
    assert free == [recorded[2]]


def test_match_leaves_other_text_or_code_unjudged() -> None:
    lines = ["alpha", "beta"]
    recorded = [{"code": "C1", "line": 1, "text": "alpha", "verdict": "true"}]
    matches, free = replay.match_findings(recorded, [Finding("C1", 2, "m", "warning"), Finding("C2", 1, "m", "warning")], lines)
    assert [m.verdict for m in matches] == [None, None]
    assert free == recorded


def test_each_verdict_pairs_with_one_finding() -> None:
    lines = ["x", "x"]
    recorded = [{"code": "C1", "line": 1, "text": "x", "verdict": "true"}]
    matches, _ = replay.match_findings(recorded, [Finding("C1", 1, "m", "warning"), Finding("C1", 2, "m", "warning")], lines)
    assert sorted(str(m.verdict) for m in matches) == ["None", "true"]


def test_summary_of_a_synthetic_corpus(tmp_path: Path) -> None:
    manifest = write_corpus(tmp_path)
    outcomes = replay.replay([manifest], tmp_path, fake_linter(FOUND))
    s = replay.summarize(outcomes)
    assert s["files"] == 2 and s["missing"] == [] and s["changed"] == []
    assert s["findings"] == 5
    assert s["true_kept"] == 1
    assert s["true_lost"] == ["alpha.nix:7 CUDA301 x"]
    assert s["false_left"] == ["alpha.nix:4 CUDA304 (cuda-only)"]
    assert s["false_gone"] == 1  # beta's recorded CUDA316 verdict has another text than the line now
    assert s["debatable"] == 1
    assert s["unjudged"] == ["alpha.nix:2 CUDA309 no arches", "nested/beta.nix:3 CUDA316 release package"]
    assert s["clean_files"] == 1 and s["clean_flagged"] == ["nested/beta.nix"] and s["clean_flagged_share"] == 1.0
    assert s["rules"]["CUDA304"] == {"true": 0, "false": 1, "debatable": 1, "unjudged": 0, "precision": 0.0}
    assert s["rules"]["CUDA303"]["precision"] == 1.0
    assert s["rules"]["CUDA309"]["precision"] is None
    assert s["precision"] == 0.5
    assert replay.strict_failure(s)


def test_info_findings_do_not_flag_a_clean_file(tmp_path: Path) -> None:
    manifest = write_corpus(tmp_path)
    manifest["files"][0]["clean"] = True
    manifest["files"][1]["clean"] = False
    found = {"alpha.nix": [Finding("CUDA309", 2, "no arches", "info")]}
    s = replay.summarize(replay.replay([manifest], tmp_path, fake_linter(found)))
    assert s["clean_files"] == 1 and s["clean_flagged"] == [] and s["clean_flagged_share"] == 0.0


def test_missing_and_changed_files_are_reported_and_not_linted(tmp_path: Path) -> None:
    manifest = write_corpus(tmp_path)
    (tmp_path / "synthetic" / "example+repo" / "alpha.nix").write_text(ALPHA + "# edited\n", encoding="utf-8")
    (tmp_path / "synthetic" / "example+repo" / "nested" / "beta.nix").unlink()
    seen: list[str] = []

    def lint(paths: Sequence[Path], target: str | None) -> dict[Path, list[Any]]:
        seen.extend(p.name for p in paths)
        return {}

    s = replay.summarize(replay.replay([manifest], tmp_path, lint))
    assert s["missing"] == ["synthetic:nested/beta.nix"]
    assert s["changed"] == ["synthetic:alpha.nix"]
    assert seen == ["alpha.nix"]
    # a missing file's recorded true positives are not counted as lost
    assert s["true_lost"] == ["alpha.nix:1 CUDA303 default", "alpha.nix:7 CUDA301 x"]


def test_strict_passes_when_everything_is_judged_and_kept(tmp_path: Path) -> None:
    manifest = write_corpus(tmp_path)
    manifest["files"] = manifest["files"][:1]
    manifest["files"][0]["findings"] = [f for f in manifest["files"][0]["findings"] if f["verdict"] != "false" and f["code"] != "CUDA301"]
    found = {"alpha.nix": [Finding("CUDA303", 1, "m", "warning"), Finding("CUDA304", 5, "m", "warning")]}
    s = replay.summarize(replay.replay([manifest], tmp_path, fake_linter(found)))
    assert not replay.strict_failure(s)


def test_changed_lines_are_those_the_fix_inserted_or_replaced() -> None:
    before = ["a\n", "b\n", "c\n"]
    after = ["a\n", "B\n", "c\n", "d\n"]
    assert replay.changed_lines(before, after) == {2, 4}


def test_main_prints_json_and_strict_exit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    manifest_path = tmp_path / "synthetic.json"
    manifest_path.write_text(json.dumps(write_corpus(tmp_path)), encoding="utf-8")
    monkeypatch.setattr(replay, "has_preview", lambda command: True)
    monkeypatch.setattr(replay, "make_linter", lambda command, preview, extra=(): fake_linter(FOUND))
    assert replay.main([str(manifest_path), "--root", str(tmp_path), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["preview"] is True
    assert data["corpora"]["synthetic"]["true_lost"] == ["alpha.nix:7 CUDA301 x"]
    assert data["overall"]["findings"] == 5
    assert replay.main([str(manifest_path), "--root", str(tmp_path), "--strict"]) == 1


def test_text_report_lists_what_needs_attention(tmp_path: Path) -> None:
    s = replay.summarize(replay.replay([write_corpus(tmp_path)], tmp_path, fake_linter(FOUND)))
    out = io.StringIO()
    replay.print_summary("synthetic", s, out)
    text = out.getvalue()
    assert "LOST alpha.nix:7 CUDA301" in text
    assert "FP alpha.nix:4 CUDA304" in text
    assert "? nested/beta.nix:3 CUDA316 release package" in text
    assert "clean files with a warning or error: 1/1 (100.0%)" in text


def test_an_entry_kept_elsewhere_is_read_from_its_local_path(tmp_path: Path) -> None:
    manifest = write_corpus(tmp_path)
    older = tmp_path / "synthetic" / "example+repo@1234567" / "alpha.nix"
    older.parent.mkdir(parents=True)
    (tmp_path / "synthetic" / "example+repo" / "alpha.nix").rename(older)
    manifest["files"][0]["local"] = "example+repo@1234567/alpha.nix"
    s = replay.summarize(replay.replay([manifest], tmp_path, fake_linter(FOUND)))
    assert s["missing"] == []
    assert s["changed"] == []
    assert "alpha.nix:1 CUDA303 default" not in s["true_lost"]
