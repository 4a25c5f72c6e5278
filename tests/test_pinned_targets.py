"""Issue 12's knowledge: the nixpkgs a file is pinned to (and where that came from), the target
names users write, and top-level CUDA names that are silent before nixpkgs removed them and an
error after."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cudalint.frontend.cli import main
from cudalint.knowledge import pins, reference
from cudalint.knowledge.reference import load
from cudalint.lint.registry import rule_by_code
from test_config import _flake_lock


def check(folder: Path, monkeypatch, capsys, *argv: str) -> tuple[int, str, str]:
    monkeypatch.chdir(folder)
    code = main(["check", *argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def codes(output: str) -> list[tuple[int, str, str]]:
    return [(f["location"]["row"], f["code"], f["severity"]) for f in json.loads(output)]


# ----- target names ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("written", "canonical"),
    [
        ("23.05", "23.05"),
        ("nixos-23.05", "23.05"),
        ("nixos-23.05-small", "23.05"),
        ("nixpkgs-23.05-darwin", "23.05"),
        ("release-23.05", "23.05"),
        ("19.09", "19.09"),
        ("13.10", "13.10"),
        ("nixos-unstable", "unstable"),
        ("nixpkgs-unstable", "unstable"),
        ("master", "unstable"),
        ("unstable", "unstable"),
        ("2024-06-30", "2024-06-30"),
    ],
)
def test_target_names_as_users_write_them(written: str, canonical: str) -> None:
    assert reference.normalize(written) == canonical


@pytest.mark.parametrize("written", ["23.06", "21.03", "14.10", "nixos-stable", "yesterday", "2024-02-30"])
def test_other_target_names_are_usage_errors_listing_the_accepted_forms(written: str, tmp_path, monkeypatch, capsys) -> None:
    (tmp_path / "a.nix").write_text("{ cudaPackages }: cudaPackages.cuda_nvcc\n")
    code, out, err = check(tmp_path, monkeypatch, capsys, "--nixpkgs", written, "a.nix")
    assert code == 2 and out == ""
    assert ("accepted:" in err and "unstable" in err) or "not a valid date" in err, err


def test_an_old_target_is_accepted_with_a_note(tmp_path, monkeypatch, capsys) -> None:
    (tmp_path / "a.nix").write_text("{ pkgs }: pkgs.cudatoolkit_9\n")
    code, out, err = check(tmp_path, monkeypatch, capsys, "--nixpkgs", "nixos-20.09", "a.nix")
    assert code == 1 and "CUDA006" not in out  # CUDA 9 was still there in 20.09
    assert err.count("note: nixpkgs 20.09 is older than 22.05") == 1
    code, out, err = check(tmp_path, monkeypatch, capsys, "--nixpkgs", "21.05", "a.nix")
    assert "CUDA006" in out and "does not evaluate on nixpkgs 21.05" in out


def test_every_release_since_1310_has_a_branch_off_and_old_ones_are_judged_by_the_oldest_era() -> None:
    releases = reference.releases()
    assert {"13.10", "14.04", "14.12", "19.09", "20.03", "20.09", "21.05", "21.11", "22.05", "25.11"} <= set(releases)
    assert reference.before_modelled("20.09") is not None and "22.05" in reference.before_modelled("20.09")
    assert reference.before_modelled("2015-01-01") is not None
    assert reference.before_modelled("22.05") is None and reference.before_modelled("unstable") is None
    assert load().era_of("19.09").id == load().eras[0].id


# ----- pins -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "target"),
    [
        ("github:NixOS/nixpkgs/nixos-23.05", "23.05"),
        ("github:nixos/nixpkgs?ref=nixos-unstable", "unstable"),
        ("github:NixOS/nixpkgs/23.11", "23.11"),
        ("nixpkgs/nixos-24.05", "24.05"),
        ("https://github.com/NixOS/nixpkgs/archive/nixos-22.11.tar.gz", "22.11"),
        ("channel:nixos-21.05", "21.05"),
        ("https://nixos.org/channels/nixos-23.05/nixexprs.tar.xz", "23.05"),
        ("github:NixOS/nixpkgs/0123456789abcdef0123456789abcdef01234567", None),  # a commit: no date without a lock
        ("github:numtide/flake-utils", None),
        ("github:NixOS/nixpkgs", "unstable"),  # the default branch
        ("nixpkgs", "unstable"),  # the registry's nixpkgs
    ],
)
def test_nixpkgs_urls(url: str, target: str | None) -> None:
    assert pins.target_of_url(url) == target


def test_pins_in_nix_code_and_sources_files() -> None:
    assert pins.flake_input('{ inputs = { nixpkgs.url = "github:NixOS/nixpkgs/nixos-23.05"; utils.url = "github:numtide/flake-utils"; }; }') == "23.05"
    follows = '{ inputs.stable.url = "github:NixOS/nixpkgs/nixos-22.11"; inputs.x.inputs.nixpkgs.follows = "y"; inputs.nixpkgs.follows = "stable"; }'
    assert pins.flake_input(follows) == "22.11"
    assert pins.fetched_in('import (builtins.fetchTarball "https://github.com/NixOS/nixpkgs/archive/nixos-21.11.tar.gz") { }') == "21.11"
    assert pins.fetched_in('fetchFromGitHub { owner = "NixOS"; repo = "nixpkgs"; rev = "22.05"; hash = ""; }') == "22.05"
    assert pins.fetched_in('builtins.fetchGit { url = "https://github.com/NixOS/nixpkgs"; ref = "nixos-23.11"; }') == "23.11"
    assert pins.fetched_in("{ pkgs ? import <nixpkgs> { } }: pkgs.hello") is None
    assert pins.sources_json('{"nixpkgs": {"branch": "nixos-23.05", "rev": "abc"}}') == "23.05"
    assert pins.sources_json('{"pins": {"nixpkgs": {"type": "Channel", "name": "nixos-24.05"}}, "version": 3}') == "24.05"
    assert pins.sources_json("not json") is None


REMOVED_SET = "{ pkgs }: pkgs.mkShell { packages = [ pkgs.cudaPackages_11_8.cuda_nvcc ]; }\n"


def test_a_flake_nix_without_lock_pins_the_target_and_the_report_says_so(tmp_path, monkeypatch, capsys) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "flake.nix").write_text('{ inputs.nixpkgs.url = "github:NixOS/nixpkgs/nixos-23.05"; outputs = _: { }; }\n')
    (tmp_path / "shell.nix").write_text(REMOVED_SET)
    (tmp_path / "plain.nix").write_text("{ hello }: hello\n")
    _, out, _ = check(tmp_path, monkeypatch, capsys, "--select", "CUDA002", "--output-format", "json", "shell.nix")
    data = json.loads(out)
    # cudaPackages_11_8 throws from 2025-08-08: on 23.05 it is only a warning
    assert [f["severity"] for f in data] == ["warning"]
    assert data[0]["target"] == {"nixpkgs": "23.05", "source": "flake.nix inputs.nixpkgs.url", "undated": None, "era": "single-output", "cuda": ["11.7"]}
    _, out, _ = check(tmp_path, monkeypatch, capsys, "--select", "CUDA002", ".")
    assert out.count("Target: nixpkgs 23.05 (flake.nix inputs.nixpkgs.url), CUDA 11.7\n") == 1
    assert "Checked 1 file; skipped 2 files without CUDA names (not parsed).\n" in out
    assert "assumed" not in out
    # a lock next to it wins; without either, the newest nixpkgs
    _flake_lock(tmp_path / "flake.lock", 1767225600)  # 2026-01-01
    _, out, _ = check(tmp_path, monkeypatch, capsys, "--select", "CUDA002", "--output-format", "json", "shell.nix")
    assert [f["severity"] for f in json.loads(out)] == ["error"]
    assert json.loads(out)[0]["target"]["source"] == "flake.lock"


def test_a_files_own_fetch_and_niv_pin_the_target(tmp_path, monkeypatch, capsys) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "nix").mkdir()
    (tmp_path / "nix" / "sources.json").write_text('{"nixpkgs": {"branch": "nixos-24.05", "owner": "NixOS", "repo": "nixpkgs"}}')
    (tmp_path / "shell.nix").write_text(REMOVED_SET)
    own = 'let pkgs = import (fetchTarball "https://github.com/NixOS/nixpkgs/archive/nixos-22.11.tar.gz") { }; in\n' + REMOVED_SET.replace("{ pkgs }: ", "")
    (tmp_path / "own.nix").write_text(own)
    _, out, _ = check(tmp_path, monkeypatch, capsys, "--select", "CUDA002", "--output-format", "json", ".")
    by_file = {f["filename"]: f["target"] for f in json.loads(out)}
    assert by_file["shell.nix"]["nixpkgs"] == "24.05" and by_file["shell.nix"]["source"] == "nix/sources.json"
    assert by_file["own.nix"] == {"nixpkgs": "22.11", "source": "own.nix fetches nixpkgs", "undated": None, "era": "single-output", "cuda": ["11.7"]}
    # a configured target is not overridden by what a file fetches
    _, out, _ = check(tmp_path, monkeypatch, capsys, "--select", "CUDA002", "--output-format", "json", "--nixpkgs", "nixos-unstable", "own.nix")
    assert json.loads(out)[0]["target"]["source"] == "--nixpkgs"
    assert json.loads(out)[0]["severity"] == "error"


# ----- undated pins: a bare commit nothing dates -------------------------------------------------

COMMIT = "3f0a8d1c2b4e5f60718293a4b5c6d7e8f9012345"


@pytest.mark.parametrize(
    ("code", "line", "target"),
    [
        (f'import (fetchTarball "https://github.com/NixOS/nixpkgs/archive/{COMMIT}.tar.gz") {{ }}', 1, None),
        (f'{{ }}:\nbuiltins.fetchTarball {{\n  url = "https://github.com/nixos/nixpkgs/tarball/{COMMIT}";\n  sha256 = "";\n}}', 3, None),
        (f'fetchFromGitHub {{\n  owner = "NixOS";\n  repo = "nixpkgs";\n  rev = "{COMMIT}";\n  hash = "";\n}}', 1, None),
        (f'builtins.getFlake "github:NixOS/nixpkgs/{COMMIT}"', 1, None),
        # dated by what is written beside it: a channel name in a comment or a `ref`, or a date
        (f'let\n  # nixos-23.05, for the old driver\n  pkgs = import (fetchTarball "https://github.com/NixOS/nixpkgs/archive/{COMMIT}.tar.gz") {{ }};\nin pkgs', 3, "23.05"),
        (f'# pinned on 2024-03-01\nimport (fetchTarball "https://github.com/NixOS/nixpkgs/archive/{COMMIT}.tar.gz") {{ }}', 2, "2024-03-01"),
        (f'builtins.fetchGit {{ url = "https://github.com/NixOS/nixpkgs"; ref = "nixos-24.05"; rev = "{COMMIT}"; }}', 1, "24.05"),
        # a date says more than a moving branch: in a name, beside `ref = "...nixos-unstable"`
        (f'builtins.fetchGit {{\n  name = "nixos-unstable-2022-05-06";\n  url = "https://github.com/nixos/nixpkgs/";\n  rev = "{COMMIT}";\n}}', 1, "2022-05-06"),
        (f'# nixos-unstable as of 2021-03-17\nfetchGit {{ url = "https://github.com/nixos/nixpkgs/"; ref = "refs/heads/nixos-unstable"; rev = "{COMMIT}"; }}', 2, "2021-03-17"),
    ],
)
def test_a_commit_fetch_is_dated_by_what_is_written_beside_it(code: str, line: int, target: str | None) -> None:
    assert pins.fetched_in(code) is None
    assert pins.commit_fetch(code) == pins.CommitFetch(line, target)


def test_what_is_no_commit_pin_of_nixpkgs() -> None:
    assert pins.commit_fetch(f'fetchFromGitHub {{ owner = "NVIDIA"; repo = "cutlass"; rev = "{COMMIT}"; }}') is None
    assert pins.commit_fetch("{ pkgs ? import <nixpkgs> { } }: pkgs.hello") is None
    # a comment far above the fetch does not date it
    far = f'# nixos-23.05\n\n\n\nimport (fetchTarball "https://github.com/NixOS/nixpkgs/archive/{COMMIT}.tar.gz") {{ }}'
    assert pins.commit_fetch(far) == pins.CommitFetch(5, None)
    # an unquoted URI is a string too
    assert pins.fetched_in("import (fetchTarball\n  https://github.com/NixOS/nixpkgs/archive/nixos-23.11.tar.gz) { }") == "23.11"
    # a channel's release URL names its release, commit and all
    assert pins.fetched_in(f'import (fetchTarball "https://releases.nixos.org/nixos/23.05/nixos-23.05.5530.{COMMIT[:12]}/nixexprs.tar.xz") {{ }}') == "23.05"


UNDATED = f"""let
  pkgs = import (fetchTarball "https://github.com/NixOS/nixpkgs/archive/{COMMIT}.tar.gz") {{ }};
in
pkgs.mkShell {{
  packages = [ pkgs.cudaPackages_11_8.cuda_nvcc pkgs.cudatoolkit_11 ];
  shellHook = "addOpenGLRunpath $out/lib/libx.so";
}}
"""
REMOVALS = ["--select", "CUDA002,CUDA006,CUDA104"]


def test_an_undated_pin_is_said_so_and_its_removed_names_are_warnings(tmp_path, monkeypatch, capsys) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "shell.nix").write_text(UNDATED)
    _, out, _ = check(tmp_path, monkeypatch, capsys, *REMOVALS, "shell.nix")
    assert "Target: the newest nixpkgs (undated pin at shell.nix:2; pass --nixpkgs to choose the target), CUDA " in out
    _, out, _ = check(tmp_path, monkeypatch, capsys, *REMOVALS, "--output-format", "json", "shell.nix")
    data = json.loads(out)
    # what the newest nixpkgs removed may be in the pinned one: warnings that say how to choose
    assert sorted(codes(out)) == [(5, "CUDA002", "warning"), (5, "CUDA006", "warning"), (6, "CUDA104", "warning")]
    assert all(f["message"].endswith("(the pin is undated: pass --nixpkgs to judge it)") for f in data)
    assert data[0]["target"] == {"nixpkgs": "unstable", "source": None, "undated": "shell.nix:2", "era": "split-redist", "cuda": data[0]["target"]["cuda"]}
    _, out, _ = check(tmp_path, monkeypatch, capsys, *REMOVALS, "--output-format", "sarif", "shell.nix")
    [described] = json.loads(out)["runs"][0]["properties"]["targets"]
    assert described["undated"] == "shell.nix:2" and "undated pin at shell.nix:2" in described["description"]
    # with --nixpkgs the target is chosen: the removals are errors again, and nothing is undated
    _, out, _ = check(tmp_path, monkeypatch, capsys, *REMOVALS, "--output-format", "json", "--nixpkgs", "unstable", "shell.nix")
    assert {f["severity"] for f in json.loads(out)} == {"error"}
    assert {(f["target"]["source"], f["target"]["undated"]) for f in json.loads(out)} == {("--nixpkgs", None)}
    assert not any("undated" in f["message"] for f in json.loads(out))


def test_a_channel_url_or_a_lock_dates_what_a_bare_commit_does_not(tmp_path, monkeypatch, capsys) -> None:
    (tmp_path / ".git").mkdir()
    channel = f"https://releases.nixos.org/nixos/23.05/nixos-23.05.5530.{COMMIT[:12]}/nixexprs.tar.xz"
    (tmp_path / "shell.nix").write_text(UNDATED.replace(f"https://github.com/NixOS/nixpkgs/archive/{COMMIT}.tar.gz", channel))
    _, out, _ = check(tmp_path, monkeypatch, capsys, *REMOVALS, "--output-format", "json", "shell.nix")
    # on 23.05 nothing of it throws yet
    assert {(f["target"]["nixpkgs"], f["target"]["undated"], f["severity"]) for f in json.loads(out)} == {("23.05", None, "warning")}
    _, out, _ = check(tmp_path, monkeypatch, capsys, *REMOVALS, "shell.nix")
    assert "Target: nixpkgs 23.05 (shell.nix fetches nixpkgs)" in out and "undated" not in out
    # a lock around the file dates the files there; a commit fetched without a date leaves it in place
    (tmp_path / "shell.nix").write_text(UNDATED)
    _flake_lock(tmp_path / "flake.lock", 1684108800)  # 2023-05-15
    _, out, _ = check(tmp_path, monkeypatch, capsys, *REMOVALS, "--output-format", "json", "shell.nix")
    assert {(f["target"]["nixpkgs"], f["target"]["source"], f["target"]["undated"]) for f in json.loads(out)} == {("2023-05-15", "flake.lock", None)}


def test_a_devenv_lock_dates_the_devenv_module_beside_it(tmp_path, monkeypatch, capsys) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "devenv.nix").write_text("{ pkgs, ... }: { packages = [ pkgs.cudaPackages_11_8.cuda_nvcc ]; }\n")
    _flake_lock(tmp_path / "devenv.lock", 1684108800)  # 2023-05-15: cudaPackages_11_8 still evaluates
    _, out, _ = check(tmp_path, monkeypatch, capsys, "--select", "CUDA002", "--output-format", "json", "devenv.nix")
    assert [(f["severity"], f["target"]["nixpkgs"], f["target"]["source"]) for f in json.loads(out)] == [("warning", "2023-05-15", "devenv.lock")]


def test_an_undated_pin_next_to_the_file_or_imported_by_it_is_said_so(tmp_path, monkeypatch, capsys) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "nix").mkdir()
    (tmp_path / "nix" / "pin.nix").write_text(f'# the nixpkgs of the cluster\nimport (fetchTarball "https://github.com/NixOS/nixpkgs/archive/{COMMIT}.tar.gz")\n')
    (tmp_path / "gpu.nix").write_text("let pkgs = import ./nix/pin.nix { }; in\n" + REMOVED_SET.replace("{ pkgs }: ", ""))
    _, out, _ = check(tmp_path, monkeypatch, capsys, "--select", "CUDA002", "gpu.nix")
    assert "undated pin at nix/pin.nix:2;" in out and "CUDA002 [warning]" in out
    # a default.nix beside the file pins the directory
    (tmp_path / "env").mkdir()
    (tmp_path / "env" / "default.nix").write_text(f'{{ pkgs ? import (fetchTarball "https://github.com/NixOS/nixpkgs/archive/{COMMIT}.tar.gz") {{ }} }}:\npkgs.hello\n')
    (tmp_path / "env" / "cuda.nix").write_text(REMOVED_SET)
    _, out, _ = check(tmp_path, monkeypatch, capsys, "--select", "CUDA002", "env/cuda.nix")
    assert "undated pin at env/default.nix:1;" in out and "CUDA002 [warning]" in out
    # so does a flake whose nixpkgs input is a commit, without a lock
    (tmp_path / "flk").mkdir()
    (tmp_path / "flk" / "flake.nix").write_text(f'{{\n  inputs.nixpkgs.url = "github:NixOS/nixpkgs/{COMMIT}";\n  outputs = _: {{ }};\n}}\n')
    (tmp_path / "flk" / "shell.nix").write_text(REMOVED_SET)
    _, out, _ = check(tmp_path, monkeypatch, capsys, "--select", "CUDA002", "flk/shell.nix")
    assert "undated pin at flk/flake.nix:2;" in out and "CUDA002 [warning]" in out


# ----- removed top-level names ----------------------------------------------------------------

TOPLEVEL = """\
{ pkgs }:
pkgs.mkShell {
  packages = [
    pkgs.cudnn_cudatoolkit_9
    pkgs.cudatoolkit_10_2
    pkgs.nccl
    pkgs.cudatoolkit_11
  ];
}
"""


@pytest.mark.parametrize(
    ("target", "expected"),
    [
        # before 2021-04-18 every name existed: the runfile toolkits are CUDA001's
        ("20.09", [(5, "CUDA001", "warning"), (7, "CUDA001", "warning")]),
        ("21.05", [(4, "CUDA006", "error"), (5, "CUDA001", "warning"), (7, "CUDA001", "warning")]),
        ("22.05", [(4, "CUDA006", "error"), (5, "CUDA006", "error"), (6, "CUDA006", "error"), (7, "CUDA001", "warning")]),
        ("24.11", [(4, "CUDA006", "error"), (5, "CUDA006", "error"), (6, "CUDA006", "error"), (7, "CUDA006", "warning")]),
        ("unstable", [(4, "CUDA006", "error"), (5, "CUDA006", "error"), (6, "CUDA006", "error"), (7, "CUDA006", "error")]),
    ],
)
def test_removed_names_are_silent_before_their_throw_date_and_errors_after(target, expected, tmp_path, monkeypatch, capsys) -> None:
    (tmp_path / "shell.nix").write_text(TOPLEVEL)
    _, out, _ = check(tmp_path, monkeypatch, capsys, "--select", "CUDA001,CUDA006", "--nixpkgs", target, "--output-format", "json", "shell.nix")
    assert sorted(codes(out)) == expected


def test_every_removed_toplevel_name_reaches_the_rule() -> None:
    """The prefilter patterns cover every name (and family) the reference set knows."""
    patterns = rule_by_code("CUDA006").patterns
    reference = load()
    names = [name for name in reference.deprecations if reference.toplevel_change(name) or reference.toplevel_change(name, "python")]
    assert len(names) > 60
    for name in names:
        assert any(p.decode() in name for p in patterns), name
    assert reference.toplevel_change("cudnn_cudatoolkit_11_3").name == "cudnn_*cudatoolkit_*"
    assert reference.toplevel_change("addOpenGLRunpath") is None  # CUDA104's
    assert reference.toplevel_change("cudaPackages_11") is None  # CUDA002's
