"""Issue 3's done-when: the same file gives different CUDA004/CUDA202 findings under
`--nixpkgs 24.05` and `--nixpkgs 25.11` exactly where the eras differ, and a `flake.lock` next to
it selects the era.

The file marks each line with the findings it must give per target (`# 24.05: CUDA202`); a line
without a marker for a target must give none there.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from pathlib import Path

import pytest

from cudalint.frontend.cli import main
from test_config import _flake_lock

ERA_DEPENDENT = """\
{ lib, stdenv, cudaPackages }:
stdenv.mkDerivation {
  pname = "era-dependent";
  version = "1.0";
  src = ./.;
  nativeBuildInputs = [ cudaPackages.cuda_nvcc ];
  buildInputs = [
    cudaPackages.cuda_cudart # 24.05: CUDA202
    cudaPackages.cuda_nvcc.dev # 25.11: CUDA004
    cudaPackages.libcublas.stubs # 24.05: CUDA004
    cudaPackages.libcufft.dev
    cudaPackages.libcufft.lib
  ];
  propagatedBuildInputs = [ (lib.getLib cudaPackages.libcurand) ]; # 24.05: CUDA202
  makeFlags = [
    "CUBLAS=${cudaPackages.libcublas}/lib" # 25.11: CUDA202
    "NVCC=${cudaPackages.cuda_nvcc}/bin/nvcc"
  ];
}
"""

TARGETS = ("24.05", "25.11")
# a day inside each target's era, as flake.lock's nixpkgs `lastModified` would say
ERA_DAYS = {"24.05": dt.date(2024, 6, 30), "25.11": dt.date(2025, 12, 1)}
_MARKER = re.compile(r"# (\d\d\.\d\d): (CUDA\d{3})$")


def expected(target: str) -> set[tuple[int, str]]:
    found = set()
    for row, line in enumerate(ERA_DEPENDENT.splitlines(), start=1):
        match = _MARKER.search(line)
        if match and match.group(1) == target:
            found.add((row, match.group(2)))
    return found


def findings(folder: Path, monkeypatch, capsys, *flags: str) -> set[tuple[int, str]]:
    monkeypatch.chdir(folder)
    main(["check", "--preview", "--select", "CUDA004,CUDA202", "--output-format", "json", *flags, "package.nix"])
    return {(d["location"]["row"], d["code"]) for d in json.loads(capsys.readouterr().out)}


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    (tmp_path / ".git").mkdir()
    (tmp_path / "package.nix").write_text(ERA_DEPENDENT)
    return tmp_path


def test_the_markers_differ_between_the_targets() -> None:
    assert expected("24.05") and expected("25.11") and expected("24.05") != expected("25.11")


@pytest.mark.parametrize("target", TARGETS)
def test_nixpkgs_flag_selects_the_era(target: str, folder: Path, monkeypatch, capsys) -> None:
    assert findings(folder, monkeypatch, capsys, "--nixpkgs", target) == expected(target)


@pytest.mark.parametrize("target", TARGETS)
def test_flake_lock_selects_the_era(target: str, folder: Path, monkeypatch, capsys) -> None:
    day = ERA_DAYS[target]
    _flake_lock(folder / "flake.lock", int(dt.datetime(day.year, day.month, day.day, tzinfo=dt.UTC).timestamp()))
    assert findings(folder, monkeypatch, capsys) == expected(target)


def test_messages_leave_the_target_to_the_report(folder: Path, monkeypatch, capsys) -> None:
    """The target is stated once per run by the reporters, not at the end of every message."""
    monkeypatch.chdir(folder)
    main(["check", "--preview", "--select", "CUDA004,CUDA202", "--output-format", "json", "--nixpkgs", "24.05", "package.nix"])
    messages = [d["message"] for d in json.loads(capsys.readouterr().out)]
    assert messages and not any("assumed" in m or "24.05" in m or "--nixpkgs" in m for m in messages)
