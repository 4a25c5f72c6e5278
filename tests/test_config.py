"""Configuration: discovery (closest wins), validation errors (exit 2, naming the file and the
key, with a did-you-mean), rule selection with command-line overrides, per-file-ignores,
exclude, nixpkgs from flake.lock."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from cudalint.frontend.cli import main
from cudalint.frontend.config import (
    ConfigError,
    Overrides,
    Resolver,
    Selection,
    load_config_file,
    parse_size,
    select_rules,
)
from cudalint.lint.registry import known_codes, stable_codes

FINDING = """{ stdenv, cudatoolkit }:
stdenv.mkDerivation {
  pname = "x";
  nativeBuildInputs = [ cudatoolkit ];
}
"""
CLEAN = "{ x }: x\n"


def run(argv: list[str], cwd: Path, monkeypatch, capsys) -> tuple[int, str, str]:
    monkeypatch.chdir(cwd)
    code = main(argv)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def codes_in(out: str) -> set[str]:
    return {entry["code"] for entry in json.loads(out)}


def files_in(out: str, code: str = "CUDA001") -> set[str]:
    """Files with findings of one rule (other rules may fire on the fixtures too)."""
    return {entry["filename"] for entry in json.loads(out) if entry["code"] == code}


# --------------------------------------------------------------------------------------------
# Discovery


def test_config_found_upward_and_closest_wins(tmp_path, monkeypatch, capsys) -> None:
    write(tmp_path / "cudalint.toml", 'ignore = ["CUDA001"]\n')
    write(tmp_path / "top.nix", FINDING)
    write(tmp_path / "pkgs" / "deep" / "inherits.nix", FINDING)
    write(tmp_path / "special" / ".cudalint.toml", 'select = ["CUDA001"]\n')
    write(tmp_path / "special" / "own.nix", FINDING)
    code, out, err = run(["check", "--output-format", "json", "."], tmp_path, monkeypatch, capsys)
    assert err == ""
    assert files_in(out) == {"special/own.nix"} and code == 1


def test_pyproject_without_the_table_is_skipped(tmp_path, monkeypatch, capsys) -> None:
    write(tmp_path / "cudalint.toml", 'ignore = ["CUDA001"]\n')
    write(tmp_path / "sub" / "pyproject.toml", '[project]\nname = "x"\n# cudalint is mentioned\n')
    write(tmp_path / "sub" / "a.nix", FINDING)
    _, out, _ = run(["check", "--output-format", "json", "sub"], tmp_path, monkeypatch, capsys)
    assert "CUDA001" not in codes_in(out)


def test_pyproject_tool_table_is_used(tmp_path, monkeypatch, capsys) -> None:
    write(tmp_path / "pyproject.toml", '[project]\nname = "x"\n\n[tool.cudalint]\nselect = ["CUDA901"]\n')
    write(tmp_path / "a.nix", FINDING)
    code, out, _ = run(["check", "--output-format", "json"], tmp_path, monkeypatch, capsys)
    assert json.loads(out) == [] and code == 0


def test_cudalint_toml_wins_over_pyproject_in_the_same_directory(tmp_path, monkeypatch, capsys) -> None:
    write(tmp_path / "pyproject.toml", '[tool.cudalint]\nignore = ["CUDA001"]\n')
    write(tmp_path / "cudalint.toml", 'select = ["CUDA001"]\n')
    write(tmp_path / "a.nix", FINDING)
    code, out, _ = run(["check", "--output-format", "json"], tmp_path, monkeypatch, capsys)
    assert codes_in(out) == {"CUDA001"}


def test_config_option_and_isolated(tmp_path, monkeypatch, capsys) -> None:
    write(tmp_path / "cudalint.toml", 'ignore = ["CUDA001"]\n')
    write(tmp_path / "other.toml", 'select = ["CUDA001"]\n')
    write(tmp_path / "a.nix", FINDING)
    _, out, _ = run(["check", "--output-format", "json"], tmp_path, monkeypatch, capsys)
    assert "CUDA001" not in codes_in(out)
    _, out, _ = run(["check", "--output-format", "json", "--config", "other.toml"], tmp_path, monkeypatch, capsys)
    assert codes_in(out) == {"CUDA001"}
    _, out, _ = run(["check", "--output-format", "json", "--isolated"], tmp_path, monkeypatch, capsys)
    assert "CUDA001" in codes_in(out)


def test_config_option_errors(tmp_path, monkeypatch, capsys) -> None:
    write(tmp_path / "a.nix", CLEAN)
    code, _, err = run(["check", "--config", "missing.toml"], tmp_path, monkeypatch, capsys)
    assert code == 2 and "missing.toml" in err and "no such configuration file" in err
    write(tmp_path / "pyproject.toml", '[project]\nname = "x"\n')
    code, _, err = run(["check", "--config", "pyproject.toml"], tmp_path, monkeypatch, capsys)
    assert code == 2 and "no [tool.cudalint] table" in err
    code, _, err = run(["check", "--config", "pyproject.toml", "--isolated"], tmp_path, monkeypatch, capsys)
    assert code == 2 and "cannot be used together" in err


# --------------------------------------------------------------------------------------------
# Validation errors: exit 2, the file, the key, a did-you-mean


@pytest.mark.parametrize(
    ("toml", "expected"),
    [
        ('selct = ["CUDA001"]\n', ["unknown key `selct`", "did you mean `select`?"]),
        ('extend_select = ["CUDA001"]\n', ["unknown key `extend_select`", "did you mean `extend-select`?"]),
        ("per_file_ignores = {}\n", ["did you mean `per-file-ignores`?"]),
        ('select = ["CUDA0001"]\n', ["`select`: unknown rule code or prefix `CUDA0001`", "did you mean `CUDA001`?"]),
        ('ignore = ["CUDA99"]\n', ["`ignore`: unknown rule code or prefix `CUDA99`"]),
        ('select = ["E501"]\n', ["unknown rule code or prefix `E501`"]),
        ('select = "CUDA001"\n', ["`select` must be an array of strings", "not a string"]),
        ("select = [1]\n", ["`select` must be an array of strings", "an integer"]),
        ('[per-file-ignores]\n"tests/*" = "CUDA001"\n', ['per-file-ignores."tests/*"', "must be an array"]),
        ('[per-file-ignores]\n"tests/*" = ["CUDA1234"]\n', ["unknown rule code or prefix `CUDA1234`"]),
        ('per-file-ignores = ["x"]\n', ["`per-file-ignores` must be a table"]),
        ('exclude = "vendor"\n', ["`exclude` must be an array of strings"]),
        ('unsafe-fixes = "yes"\n', ["`unsafe-fixes` must be true or false", "not a string"]),
        ("nixpkgs = 24.05\n", ['`nixpkgs` must be a string: write nixpkgs = "24.05"']),
        ('nixpkgs = "24.03"\n', ["`nixpkgs`:", "does not exist"]),
        ('nixpkgs = "yesterday"\n', ["`nixpkgs`:", "is not understood", "nixos-unstable", "nixpkgs-23.05-darwin"]),
        ('nixpkgs = "2024-02-30"\n', ["not a valid date"]),
        ("cuda = 12.4\n", ['`cuda` must be an array of CUDA releases: write cuda = ["12.4"]']),
        ('cuda = ["12"]\n', ["'12' is not a CUDA release"]),
        ('cuda = ["12.7"]\n', ["has no CUDA 12.7", "11.4 .. 13.0"]),
        ('max-file-size = "big"\n', ["cannot read 'big' as a size"]),
        ("max-file-size = -1\n", ["`max-file-size` must be positive"]),
        ("select = [\n", ["invalid TOML"]),
        ("[tool]\nx = 1\n", ["unknown key `tool`"]),
    ],
)
def test_config_errors(tmp_path, monkeypatch, capsys, toml: str, expected: list[str]) -> None:
    write(tmp_path / "cudalint.toml", toml)
    write(tmp_path / "a.nix", FINDING)
    code, out, err = run(["check", "a.nix"], tmp_path, monkeypatch, capsys)
    assert code == 2
    assert out == ""
    assert err.startswith("cudalint: cudalint.toml: error: "), err
    for fragment in expected:
        assert fragment in err


def test_pyproject_errors_name_the_table(tmp_path, monkeypatch, capsys) -> None:
    write(tmp_path / "pyproject.toml", '[tool.cudalint]\nignor = ["CUDA001"]\n')
    write(tmp_path / "a.nix", CLEAN)
    code, _, err = run(["check"], tmp_path, monkeypatch, capsys)
    assert code == 2
    assert "pyproject.toml: [tool.cudalint]: error: unknown key `ignor` (did you mean `ignore`?)" in err


def test_error_in_a_nested_config_is_reported_with_its_path(tmp_path, monkeypatch, capsys) -> None:
    write(tmp_path / "a.nix", CLEAN)
    write(tmp_path / "sub" / ".cudalint.toml", "unsafe_fixes = true\n")
    write(tmp_path / "sub" / "b.nix", CLEAN)
    code, _, err = run(["check"], tmp_path, monkeypatch, capsys)
    assert code == 2
    assert f"sub{os.sep}.cudalint.toml: error: unknown key `unsafe_fixes` (did you mean `unsafe-fixes`?)" in err


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["--select", "CUDA0001"], "--select: error: `--select`: unknown rule code or prefix `CUDA0001` (did you mean `CUDA001`?)"),
        (["--ignore", "CUDA001,NOPE"], "`--ignore`: unknown rule code or prefix `NOPE`"),
        (["--extend-select", "cuda9999"], "`--extend-select`: unknown rule code or prefix `cuda9999`"),
        (["--nixpkgs", "23.01"], "--nixpkgs: error: `--nixpkgs`: nixpkgs release '23.01' does not exist"),
    ],
)
def test_command_line_errors(tmp_path, monkeypatch, capsys, argv: list[str], expected: str) -> None:
    write(tmp_path / "a.nix", CLEAN)
    code, _, err = run(["check", *argv], tmp_path, monkeypatch, capsys)
    assert code == 2 and expected in err, err


def test_valid_values_load(tmp_path) -> None:
    path = write(
        tmp_path / "cudalint.toml",
        """
select = ["CUDA0", "cuda9"]
ignore = ["CUDA901"]
extend-select = ["ALL"]
exclude = ["vendor/", "**/generated/*.nix"]
unsafe-fixes = true
nixpkgs = 2024-06-30
cuda = ["12.4", "12.8"]
max-file-size = "2MiB"

[per-file-ignores]
"tests/*" = ["CUDA001"]
""",
    )
    config = load_config_file(str(path))
    assert config is not None
    assert config.select == ("CUDA0", "CUDA9") and config.ignore == ("CUDA901",)
    assert config.unsafe_fixes is True and config.nixpkgs == "2024-06-30"
    assert config.cuda == ("12.4", "12.8") and config.max_file_size == 2 * 1024 * 1024
    assert config.per_file_ignores[0][1] == frozenset({"CUDA001"})
    assert len(config.exclude) == 2


@pytest.mark.parametrize(
    ("value", "size"),
    [(1000, 1000), ("10MB", 10_000_000), ("10 MiB", 10 * 1024 * 1024), ("512kb", 512_000), ("1.5GiB", int(1.5 * 1024**3)), ("77", 77)],
)
def test_parse_size(value, size: int) -> None:
    assert parse_size(value, "x") == size


def test_parse_size_rejects_booleans() -> None:
    with pytest.raises(ConfigError):
        parse_size(True, "x")


# --------------------------------------------------------------------------------------------
# Rule selection (ruff's semantics)


def test_select_rules_default_is_every_stable_rule() -> None:
    assert select_rules([Selection()]) == stable_codes()
    assert select_rules([Selection()], preview=True) == known_codes()


def test_select_rules_layers() -> None:
    every = stable_codes()
    config = Selection(select=("CUDA0",), ignore=("CUDA001",))
    cuda0 = {c for c in every if c.startswith("CUDA0")}
    # the config alone
    assert select_rules([config]) == frozenset(cuda0 - {"CUDA001"})
    # --ignore adds to the config's ignore
    assert select_rules([config, Selection(ignore=("CUDA9",))]) == frozenset(cuda0 - {"CUDA001"})
    # --extend-select adds to the config's selection
    assert select_rules([config, Selection(extend_select=("CUDA901",))]) == frozenset(cuda0 - {"CUDA001"} | {"CUDA901"})
    # --select replaces the config's selection, its ignores included
    assert select_rules([config, Selection(select=("CUDA001",))]) == frozenset({"CUDA001"})
    # --extend-select can re-enable what the config ignores
    assert "CUDA001" in select_rules([config, Selection(extend_select=("CUDA001",))])


def test_select_rules_more_specific_selector_wins() -> None:
    every = stable_codes()
    # ignore a prefix, select one code in it: the code stays
    assert select_rules([Selection(select=("ALL",), ignore=("CUDA9",), extend_select=("CUDA901",))]) == frozenset({c for c in every if not c.startswith("CUDA9")} | {"CUDA901"})
    # select a prefix, ignore one code: the code goes
    assert select_rules([Selection(select=("CUDA9",), ignore=("CUDA900",))]) == frozenset({c for c in every if c.startswith("CUDA9")} - {"CUDA900"})


def test_cli_select_overrides_config(tmp_path, monkeypatch, capsys) -> None:
    write(tmp_path / "cudalint.toml", 'ignore = ["CUDA001"]\n')
    write(tmp_path / "a.nix", FINDING)
    _, out, _ = run(["check", "--output-format", "json", "--select", "CUDA001"], tmp_path, monkeypatch, capsys)
    assert codes_in(out) == {"CUDA001"}
    _, out, _ = run(["check", "--output-format", "json", "--extend-select", "CUDA001"], tmp_path, monkeypatch, capsys)
    assert "CUDA001" in codes_in(out)
    _, out, _ = run(["check", "--output-format", "json", "--isolated", "--select", "ALL", "--ignore", "CUDA0"], tmp_path, monkeypatch, capsys)
    assert not any(c.startswith("CUDA0") for c in codes_in(out))


# --------------------------------------------------------------------------------------------
# per-file-ignores and exclude


def test_per_file_ignores(tmp_path, monkeypatch, capsys) -> None:
    write(
        tmp_path / "cudalint.toml",
        'select = ["CUDA001"]\n\n[per-file-ignores]\n"tests/*" = ["CUDA001"]\n"legacy.nix" = ["CUDA0"]\n"!pkgs/**" = ["CUDA001"]\n',
    )
    for name in ["tests/a.nix", "tests/deep/b.nix", "sub/legacy.nix", "pkgs/c.nix", "pkgs/legacy.nix", "other/d.nix"]:
        write(tmp_path / name, FINDING)
    _, out, _ = run(["check", "--output-format", "json"], tmp_path, monkeypatch, capsys)
    # tests/* covers the directory's whole subtree; `legacy.nix` matches at any level; the
    # negated glob ignores CUDA001 everywhere outside pkgs/
    assert files_in(out) == {"pkgs/c.nix"}


def test_per_file_ignores_are_relative_to_the_config_file(tmp_path, monkeypatch, capsys) -> None:
    write(tmp_path / "project" / "cudalint.toml", 'select = ["CUDA001"]\n[per-file-ignores]\n"/a.nix" = ["CUDA001"]\n')
    write(tmp_path / "project" / "a.nix", FINDING)
    write(tmp_path / "project" / "sub" / "a.nix", FINDING)
    _, out, _ = run(["check", "--output-format", "json", "project"], tmp_path, monkeypatch, capsys)
    assert files_in(out) == {"project/sub/a.nix"}
    # also when the config is given explicitly from elsewhere
    _, out, _ = run(["check", "--output-format", "json", "--config", "project/cudalint.toml", "project"], tmp_path, monkeypatch, capsys)
    assert files_in(out) == {"project/sub/a.nix"}


def test_exclude_when_walking_but_not_for_named_files(tmp_path, monkeypatch, capsys) -> None:
    write(tmp_path / "cudalint.toml", 'select = ["CUDA001"]\nexclude = ["vendor/", "*.gen.nix", "/only-top.nix"]\n')
    for name in ["a.nix", "vendor/b.nix", "x.gen.nix", "sub/y.gen.nix", "only-top.nix", "sub/only-top.nix"]:
        write(tmp_path / name, FINDING)
    _, out, _ = run(["check", "--output-format", "json"], tmp_path, monkeypatch, capsys)
    assert files_in(out) == {"a.nix", "sub/only-top.nix"}
    _, out, _ = run(["check", "--output-format", "json", "vendor/b.nix", "x.gen.nix"], tmp_path, monkeypatch, capsys)
    assert files_in(out) == {"vendor/b.nix", "x.gen.nix"}


def test_unsafe_fixes_from_config(tmp_path, monkeypatch, capsys) -> None:
    write(tmp_path / "cudalint.toml", 'select = ["CUDA001"]\nunsafe-fixes = true\n')
    target = write(tmp_path / "a.nix", FINDING)
    code, _, _ = run(["check", "--fix"], tmp_path, monkeypatch, capsys)
    assert "cudaPackages.cuda_nvcc" in target.read_text() and code == 0
    target.write_text(FINDING)
    run(["check", "--fix", "--no-unsafe-fixes"], tmp_path, monkeypatch, capsys)
    assert target.read_text() == FINDING


def test_max_file_size_from_config(tmp_path, monkeypatch, capsys) -> None:
    write(tmp_path / "cudalint.toml", "max-file-size = 100\n")
    write(tmp_path / "big.nix", "# " + "x" * 200 + "\n" + FINDING)
    write(tmp_path / "small.nix", CLEAN)
    code, _, err = run(["check"], tmp_path, monkeypatch, capsys)
    assert code == 0 and "big.nix: warning: skipped:" in err and "100 bytes" in err
    code, _, err = run(["check", "big.nix"], tmp_path, monkeypatch, capsys)
    assert code == 2 and "big.nix: error: skipped:" in err


# --------------------------------------------------------------------------------------------
# nixpkgs: config, command line, flake.lock


def _flake_lock(path: Path, timestamp: int, name: str = "nixpkgs") -> None:
    lock = {
        "nodes": {
            "root": {"inputs": {name: "nixpkgs_2", "utils": "utils"}},
            "nixpkgs_2": {"locked": {"lastModified": timestamp, "owner": "NixOS", "repo": "nixpkgs", "type": "github"}, "original": {"owner": "NixOS", "repo": "nixpkgs", "type": "github"}},
            "utils": {"locked": {"lastModified": 1}, "original": {"owner": "numtide", "repo": "flake-utils"}},
        },
        "root": "root",
        "version": 7,
    }
    path.write_text(json.dumps(lock))


def test_nixpkgs_from_flake_lock(tmp_path) -> None:
    (tmp_path / ".git").mkdir()
    _flake_lock(tmp_path / "flake.lock", 1719705600)  # 2024-06-30
    (tmp_path / "pkgs" / "x").mkdir(parents=True)
    resolver = Resolver(Overrides(), cwd=str(tmp_path))
    assert resolver.settings_for(str(tmp_path / "pkgs" / "x" / "a.nix")).lint.nixpkgs == "2024-06-30"
    # an input with another name that is nixpkgs
    _flake_lock(tmp_path / "pkgs" / "flake.lock", 1700000000, name="nixpkgs-stable")
    assert Resolver(Overrides(), cwd=str(tmp_path)).settings_for(str(tmp_path / "pkgs" / "a.nix")).lint.nixpkgs == "2023-11-14"
    # the config and the command line win over flake.lock
    (tmp_path / "cudalint.toml").write_text('nixpkgs = "24.05"\n')
    assert Resolver(Overrides(), cwd=str(tmp_path)).settings_for(str(tmp_path / "a.nix")).lint.nixpkgs == "24.05"
    resolver = Resolver(Overrides(nixpkgs="unstable"), cwd=str(tmp_path))
    assert resolver.settings_for(str(tmp_path / "a.nix")).lint.nixpkgs == "unstable"


def test_cuda_from_config_and_command_line(tmp_path, monkeypatch, capsys) -> None:
    (tmp_path / "cudalint.toml").write_text('cuda = ["12.8"]\n')
    assert Resolver(Overrides(), cwd=str(tmp_path)).settings_for(str(tmp_path / "a.nix")).lint.cuda == ("12.8",)
    resolver = Resolver(Overrides(cuda=("13.0", "12.9")), cwd=str(tmp_path))
    assert resolver.settings_for(str(tmp_path / "a.nix")).lint.cuda == ("13.0", "12.9")
    write(tmp_path / "a.nix", FINDING)
    code, _, err = run(["check", "--cuda", "12.8,12.7", "a.nix"], tmp_path, monkeypatch, capsys)
    assert code == 2 and "--cuda" in err and "has no CUDA 12.7" in err


def test_flake_lock_not_looked_up_above_the_repository(tmp_path) -> None:
    _flake_lock(tmp_path / "flake.lock", 1719705600)
    (tmp_path / "repo" / ".git").mkdir(parents=True)
    resolver = Resolver(Overrides(), cwd=str(tmp_path))
    assert resolver.settings_for(str(tmp_path / "repo" / "a.nix")).lint.nixpkgs is None


def test_broken_flake_lock_is_ignored(tmp_path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "flake.lock").write_text("{not json")
    assert Resolver(Overrides(), cwd=str(tmp_path)).settings_for(str(tmp_path / "a.nix")).lint.nixpkgs is None


def test_settings_are_shared_between_files_with_the_same_configuration(tmp_path) -> None:
    resolver = Resolver(Overrides(), cwd=str(tmp_path))
    a = resolver.settings_for(str(tmp_path / "a.nix"))
    b = resolver.settings_for(str(tmp_path / "b.nix"))
    assert a == b and a.lint is b.lint
