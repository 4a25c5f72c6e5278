"""`--output-format rdjson` (reviewdog): validates against reviewdog's published schema, and each
suggestion, applied as reviewdog applies it, writes what `--fix` writes for that finding."""

from __future__ import annotations

import io
import json
import shutil
from functools import lru_cache
from pathlib import Path

import jsonschema
import pytest

from cudalint.frontend.cli import main
from cudalint.frontend.newcode import Scope
from cudalint.frontend.reporters import ReportOptions, get_reporter, is_applicable
from cudalint.lint import fixing
from cudalint.lint.engine import lint
from cudalint.lint.results import FileResult
from cudalint.nix.source import SourceFile
from samples import TOOLKIT, checked
from snapshots import settings_for

SCHEMA = Path(__file__).parent / "schemas" / "rdjson-DiagnosticResult.json"
FIXTURES = sorted((Path(__file__).parent / "fixtures" / "rules").glob("*/fire_*.nix"))
UNSAFE = ReportOptions(unsafe_fixes=True)


@lru_cache(maxsize=1)
def validator() -> jsonschema.Draft4Validator:
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    jsonschema.Draft4Validator.check_schema(schema)
    return jsonschema.Draft4Validator(schema)


def render(results: list[FileResult], options: ReportOptions = UNSAFE) -> dict:
    out = io.StringIO()
    get_reporter("rdjson")(results, out, options)
    return json.loads(out.getvalue())


def offset(data: bytes, position: dict) -> int:
    """A byte offset from an rdjson position (1-based line, 1-based UTF-8 byte column)."""
    lines = data.split(b"\n")
    return sum(len(line) + 1 for line in lines[: position["line"] - 1]) + position["column"] - 1


def apply_suggestion(data: bytes, suggestion: dict) -> bytes:
    start, end = offset(data, suggestion["range"]["start"]), offset(data, suggestion["range"]["end"])
    return data[:start] + suggestion["text"].encode("utf-8") + data[end:]


def fixture_result(path: Path) -> FileResult:
    text = path.read_text(encoding="utf-8")
    source = SourceFile(path.name, text)
    result = lint(source, settings_for(path.parent.name, text), prefilter=False)
    return FileResult(path.name, source, result.diagnostics)


def test_every_fire_fixture_validates() -> None:
    document = render([fixture_result(path) for path in FIXTURES])
    errors = sorted(validator().iter_errors(document), key=str)
    assert not errors, errors[0]
    assert document["source"]["name"] == "cudalint"
    assert sum("suggestions" in d for d in document["diagnostics"]) > 20


def test_fields() -> None:
    document = render([checked("pkgs/a.nix", TOOLKIT)], ReportOptions(unsafe_fixes=False))
    (diagnostic,) = document["diagnostics"]
    assert diagnostic["code"]["value"] == "CUDA001" and diagnostic["code"]["url"].endswith("#cuda001-runfile-toolkit")
    assert diagnostic["location"] == {"path": "pkgs/a.nix", "range": {"start": {"line": 4, "column": 25}, "end": {"line": 4, "column": 36}}}
    assert diagnostic["severity"] == "WARNING"
    assert "suggestions" not in diagnostic  # unsafe, and --unsafe-fixes is off
    (with_unsafe,) = render([checked("pkgs/a.nix", TOOLKIT)])["diagnostics"]
    assert len(with_unsafe["suggestions"]) == 1


def test_columns_count_utf8_bytes() -> None:
    text = '{ cudatoolkit }:\n{ name = "日本"; x = [ cudatoolkit ]; }\n'
    (diagnostic,) = render([checked("a.nix", text)])["diagnostics"]
    line = text.splitlines()[1].encode()
    assert diagnostic["location"]["range"]["start"] == {"line": 2, "column": line.index(b"cudatoolkit") + 1}


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_each_suggestion_writes_what_fix_writes_for_its_finding(path: Path) -> None:
    """The suggestion against the text `fix_file` writes when only that finding may be fixed
    (a scope of its span, as `--new-from-rev` makes one), where that takes one pass and no
    tidying (a suggestion is the fix's own edits: the formals it leaves unused, which fix-all
    removes, stay for the reviewer)."""
    result = fixture_result(path)
    source = result.source
    assert source is not None
    settings = settings_for(path.parent.name, source.text)
    document = render([result])
    suggested = [(d, item) for d, item in zip(sorted(result.diagnostics, key=lambda d: (d.start, d.end, d.code)), document["diagnostics"])]
    for diagnostic, item in suggested:
        assert item["code"]["value"] == diagnostic.code
        if not is_applicable(diagnostic, True):
            assert "suggestions" not in item
            continue
        (suggestion,) = item["suggestions"]
        applied = apply_suggestion(source.data, suggestion)
        assert applied == fixing.apply_edits(source.data, list(diagnostic.fix.edits))
        only = Scope(((diagnostic.start, max(diagnostic.end, diagnostic.start + 1)),))
        outcome = fixing.fix_file(source, settings, unsafe=True, scope=only)
        if outcome.passes == 1 and len(outcome.applied) == 1 and not outcome.tidied:
            assert applied.decode("utf-8") == outcome.text


def test_cli_suggestion_equals_a_single_finding_fix(tmp_path: Path, monkeypatch, capsys) -> None:
    original = tmp_path / "a.nix"
    original.write_text(TOOLKIT)
    copy = tmp_path / "b.nix"
    shutil.copy(original, copy)
    monkeypatch.chdir(tmp_path)
    options = ["--isolated", "--select", "CUDA001", "--unsafe-fixes"]
    assert main(["check", *options, "--output-format", "rdjson", "a.nix"]) == 1
    (item,) = json.loads(capsys.readouterr().out)["diagnostics"]
    assert main(["check", *options, "--fix", "b.nix"]) == 0
    capsys.readouterr()
    assert apply_suggestion(original.read_bytes(), item["suggestions"][0]) == copy.read_bytes()
    assert copy.read_text() != TOOLKIT
