"""The per-file time budget (config `time-budget`): the rules and the fix loop stop when it runs
out and say so; the syntax check still covers the whole file. An expired budget (negative) makes
the tests independent of the machine's speed."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from cudalint.frontend import files, runner
from cudalint.frontend.config import ConfigError, FileSettings, Resolver, load_config_file
from cudalint.lint import engine
from cudalint.lint.engine import lint
from cudalint.lint.fixing import fix_file
from cudalint.lint.registry import known_codes
from cudalint.lint.settings import DEFAULT_TIME_BUDGET, LintSettings
from cudalint.nix import parsing
from cudalint.nix.source import SourceFile

FINDING = "{ stdenv, cudatoolkit }:\nstdenv.mkDerivation {\n  nativeBuildInputs = [ cudatoolkit ];\n  x = ;\n}\n"
EXPIRED = LintSettings(time_budget=-1.0)


def test_the_budget_covers_the_parse(monkeypatch: pytest.MonkeyPatch) -> None:
    source = SourceFile("t.nix", FINDING)
    assert parsing.parse_until(source, time.monotonic() + 600) is not None
    assert parsing.parse_until(source, time.monotonic() - 1) is None
    monkeypatch.setattr(engine, "_PARSE_SECONDS_PER_BYTE", 0.0)  # (no share for a large file)
    result = lint(source, EXPIRED)
    assert result.diagnostics == [] and result.tree is None and not result.internal_errors
    assert len(result.notes) == 1 and result.notes[0].startswith("not checked: parsing took longer than the time budget"), result.notes


def test_rules_stop_when_the_budget_is_spent_and_say_where(monkeypatch: pytest.MonkeyPatch) -> None:
    source = SourceFile("t.nix", FINDING)
    assert "CUDA001" in [d.code for d in lint(source, LintSettings()).diagnostics]
    monkeypatch.setattr(engine, "parse_until", lambda source, deadline: parsing.parse(source))  # the parse is done in time
    result = lint(source, EXPIRED)
    assert [d.code for d in result.diagnostics] == ["CUDA900"]  # the syntax check is not budgeted
    assert not result.internal_errors
    assert len(result.notes) == 1 and result.notes[0].startswith("not fully checked: the time budget") and "line 1" in result.notes[0]
    assert "time-budget" in result.notes[0]


def test_fix_loop_stops_when_the_budget_is_spent() -> None:
    source = SourceFile("t.nix", FINDING.replace("  x = ;\n", ""))
    first = lint(source, LintSettings())
    spent = fix_file(source, EXPIRED, unsafe=True, first=first)
    assert spent.out_of_time and not spent.changed and spent.passes == 0
    assert not fix_file(source, LintSettings(), unsafe=True, first=first).out_of_time


def test_the_runner_passes_the_note_on_and_writes_nothing(tmp_path: Path) -> None:
    text = FINDING.replace("  x = ;\n", "")
    path = tmp_path / "t.nix"
    path.write_text(text)
    read = files.read_source(str(path), files.DEFAULT_MAX_FILE_SIZE)
    assert isinstance(read, files.ReadSource)
    expired = FileSettings(EXPIRED, True, files.DEFAULT_MAX_FILE_SIZE, None)
    processed = runner.process_source("t.nix", read, expired, runner.FIX, str(path))
    assert [n for n in processed.notices if "time budget" in n and "ran out" in n], processed.notices
    assert not processed.failed and path.read_text() == text


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ('"10s"', "`time-budget` must be a number of seconds (e.g. time-budget = 30), not a string"),
        ("true", "not a boolean"),
        ("0", "`time-budget` must be a positive number of seconds, not 0"),
        ("-2.5", "must be a positive number of seconds"),
        ("inf", "must be a positive number of seconds"),
    ],
)
def test_time_budget_is_validated(tmp_path: Path, value: str, expected: str) -> None:
    path = tmp_path / "cudalint.toml"
    path.write_text(f"time-budget = {value}\n")
    with pytest.raises(ConfigError) as error:
        load_config_file(str(path))
    assert expected in str(error.value)


def test_time_budget_reaches_the_engine(tmp_path: Path) -> None:
    (tmp_path / "cudalint.toml").write_text("time-budget = 2.5\n")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "cudalint.toml").write_text("select = ['CUDA001']\n")
    resolver = Resolver(cwd=str(tmp_path))
    assert resolver.settings_for(str(tmp_path / "a.nix")).lint.time_budget == 2.5
    assert resolver.settings_for(str(tmp_path / "sub" / "b.nix")).lint.time_budget == DEFAULT_TIME_BUDGET


class _Clock:
    """A clock that advances one second each time it is read: a budget of N seconds lasts N
    looks at the clock, whatever the machine's speed."""

    def __init__(self) -> None:
        self.now = 0.0

    def monotonic(self) -> float:
        self.now += 1.0
        return self.now


def test_a_file_too_large_to_check_whole_is_checked_where_the_rules_patterns_are_first(monkeypatch: pytest.MonkeyPatch) -> None:
    """A generated list of a hundred thousand names ending in `cudatoolkit` (the 9.8 MB case,
    smaller): the budget runs out during the walk, and the toolkit is still reported, with the
    note that the file was not fully checked."""
    source = SourceFile("big.nix", "[ " + "a " * (engine._LARGE_TREE // 2) + "cudatoolkit ]\n")
    tree = parsing.parse(source)
    monkeypatch.setattr(engine, "time", _Clock())
    result = lint(source, LintSettings(time_budget=20.0), tree=tree)
    assert [d.code for d in result.diagnostics] == ["CUDA001"]
    assert source.slice(result.diagnostics[0].start, result.diagnostics[0].end) == "cudatoolkit"
    assert len(result.notes) == 1 and result.notes[0].startswith("not fully checked: the time budget of 20 s ran out at line 1"), result.notes


def test_checking_the_patterns_first_finds_what_the_walk_in_order_finds(monkeypatch: pytest.MonkeyPatch) -> None:
    """With time to check everything, the order (hot spots first, in any tree) changes nothing."""
    from nix_generator import dense_list

    source = SourceFile("dense.nix", dense_list(5).decode())
    settings = LintSettings(enabled=known_codes(), time_budget=600.0)
    in_order = lint(source, settings)
    monkeypatch.setattr(engine, "_LARGE_TREE", 0)
    hot_first = lint(source, settings)
    assert [(d.code, d.start, d.end, d.message) for d in hot_first.diagnostics] == [(d.code, d.start, d.end, d.message) for d in in_order.diagnostics]
    assert len(in_order.diagnostics) > 5
