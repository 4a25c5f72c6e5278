"""CUDA302 depends on the target nixpkgs: before December 2023 the redistributable `cuda_nvcc`
had no setup hook pointing nvcc at backendStdenv's compiler, so the plain stdenv is flagged
even with it. A join or the toolkit loses that hook and stays flagged after PR #465329
(2025-11-26, backported to 25.11, `cuda_nvcc` pins its compiler itself): reviewers kept asking
for backendStdenv there (revised 2026-11-25), since the rest of the package is built by
another compiler than nvcc's."""

from __future__ import annotations

import pytest

from cudalint.lint.engine import lint
from cudalint.lint.fixing import fix_file
from cudalint.lint.settings import LintSettings
from cudalint.nix.source import SourceFile

REDIST = """{ lib, stdenv, cudaPackages }:
stdenv.mkDerivation {
  pname = "redist";
  version = "1.0";
  src = ./.;
  nativeBuildInputs = [ cudaPackages.cuda_nvcc ];
  buildPhase = "nvcc -o saxpy saxpy.cu";
}
"""
JOIN = REDIST.replace("[ cudaPackages.cuda_nvcc ]", '[ (symlinkJoin { name = "j"; paths = [ cudaPackages.cuda_nvcc ]; }) ]')


def findings(text: str, nixpkgs: str | None) -> list[str]:
    settings = LintSettings(enabled=frozenset({"CUDA302"}), nixpkgs=nixpkgs)
    return [d.message for d in lint(SourceFile("t.nix", text), settings).diagnostics]


def severities(text: str, nixpkgs: str | None) -> list[str]:
    settings = LintSettings(enabled=frozenset({"CUDA302"}), nixpkgs=nixpkgs)
    return [d.severity.value for d in lint(SourceFile("t.nix", text), settings).diagnostics]


@pytest.mark.parametrize("target", ["22.11", "23.05", "23.11", "2023-11-30"])
def test_redistributable_nvcc_is_flagged_before_its_setup_hook(target: str) -> None:
    (message,) = findings(REDIST, target)
    assert "December 2023" in message and target not in message  # the target is stated once per run


@pytest.mark.parametrize("target", [None, "unstable", "24.05", "25.11", "2023-12-01"])
def test_redistributable_nvcc_is_silent_once_its_hook_sets_the_compiler(target: str | None) -> None:
    assert findings(REDIST, target) == []


@pytest.mark.parametrize("target", ["23.05", "24.05", "25.05", "2025-11-25"])
def test_a_join_loses_the_hook_until_nvcc_pins_its_compiler(target: str) -> None:
    (message,) = findings(JOIN, target)
    assert "setup hook" in message


@pytest.mark.parametrize("target", [None, "unstable", "25.11", "2025-11-26"])
def test_a_join_is_still_flagged_once_cuda_nvcc_pins_its_compiler(target: str | None) -> None:
    assert severities(JOIN, target) == ["warning"]
    (message,) = findings(JOIN, target)
    assert "setup hook" not in message and "backendStdenv" in message


@pytest.mark.parametrize("target", ["22.05", "22.11"])
def test_no_backend_stdenv_fix_before_it_existed(target: str) -> None:
    settings = LintSettings(enabled=frozenset({"CUDA302"}), nixpkgs=target)
    (diagnostic,) = lint(SourceFile("t.nix", REDIST), settings).diagnostics
    assert not diagnostic.fixes and "cudatoolkit.cc" in diagnostic.message


def test_old_target_fix_builds_with_backend_stdenv() -> None:
    settings = LintSettings(enabled=frozenset({"CUDA302"}), nixpkgs="23.05")
    outcome = fix_file(SourceFile("t.nix", REDIST), settings, unsafe=True)
    assert "cudaPackages.backendStdenv.mkDerivation {" in outcome.text
    assert findings(outcome.text, "23.05") == []


def test_fix_all_with_cuda001_adds_cudapackages_once() -> None:
    """CUDA001 renames the toolkit formal to `cudaPackages`; CUDA302 waits for that instead of
    adding a second `cudaPackages` formal in the same pass. On 24.05 CUDA001's
    `cuda_nvcc` settles CUDA302 too; on 23.05 CUDA302 then switches to backendStdenv."""
    text = '{ stdenv, cudatoolkit }:\nstdenv.mkDerivation { src = ./.; nativeBuildInputs = [ cudatoolkit ]; buildPhase = "nvcc x.cu"; }\n'
    current = LintSettings(enabled=frozenset({"CUDA001", "CUDA302"}), nixpkgs="24.05")
    outcome = fix_file(SourceFile("t.nix", text), current, unsafe=True)
    assert outcome.text == text.replace("stdenv, cudatoolkit", "stdenv, cudaPackages").replace("[ cudatoolkit ]", "[ cudaPackages.cuda_nvcc ]")
    old = LintSettings(enabled=frozenset({"CUDA001", "CUDA302"}), nixpkgs="23.05")
    outcome = fix_file(SourceFile("t.nix", text), old, unsafe=True)
    formals, _, body = outcome.text.partition(":\n")
    assert body.startswith("cudaPackages.backendStdenv.mkDerivation {")
    assert formals.count("cudaPackages") == 1 and "cudatoolkit" not in outcome.text  # (a `stdenv` left unused may go)
    assert not [d for d in outcome.result.diagnostics if d.code == "CUDA302"]
