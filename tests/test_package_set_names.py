"""CUDA002 follows the reference set's removal dates; CUDA003's suggestions and its one fixable name."""

from __future__ import annotations

import datetime as dt

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cudalint.knowledge.reference import load
from cudalint.lint.engine import lint
from cudalint.lint.settings import LintSettings
from cudalint.nix.source import SourceFile
from cudalint.rules.cuda003_unknown_cuda_package import _distance

REMOVED_SETS = sorted(name for name in load().deprecations if load().removed_set(name) is not None)


def findings(code: str, text: str, **target) -> list:
    source = SourceFile("t.nix", text)
    return [d for d in lint(source, LintSettings(enabled=frozenset({code}), **target)).diagnostics if d.code == code]


def test_the_reference_set_lists_removed_sets() -> None:
    assert "cudaPackages_11_8" in REMOVED_SETS and "cudaPackages_10" in REMOVED_SETS


@pytest.mark.parametrize("name", REMOVED_SETS)
def test_removed_set_is_an_error_from_the_day_it_throws(name: str) -> None:
    throws = dt.date.fromisoformat(load().removed_set(name).throws_from)
    text = f"{{ pkgs }}: pkgs.{name}.cuda_nvcc\n"
    before = findings("CUDA002", text, nixpkgs=(throws - dt.timedelta(days=1)).isoformat())
    after = findings("CUDA002", text, nixpkgs=throws.isoformat())
    assert [d.severity.value for d in before] == ["warning"]
    assert [d.severity.value for d in after] == ["error"]
    assert throws.isoformat() in after[0].message and "`cudaPackages`" in after[0].message


def test_a_formal_is_reported_once_not_at_its_uses() -> None:
    text = "{ callPackage, cudaPackages_11 }:\n[ (callPackage ./a.nix { cudaPackages = cudaPackages_11; }) cudaPackages_11.nccl ]\n"
    assert [(d.start, d.end) for d in findings("CUDA002", text)] == [(text.index("cudaPackages_11"), text.index("cudaPackages_11") + len("cudaPackages_11"))]


@pytest.mark.parametrize(
    ("a", "b", "distance"),
    [("libcublas", "libcublas", 0), ("libcublass", "libcublas", 1), ("libcublsa", "libcublas", 1), ("cuda_nvcc", "cuda_nvtx", 2), ("", "nccl", 4)],
)
def test_distance_counts_a_swap_of_neighbours_as_one_edit(a: str, b: str, distance: int) -> None:
    assert _distance(a, b) == distance == _distance(b, a)


@given(st.text("abc_", max_size=8), st.text("abc_", max_size=8))
def test_distance_with_a_limit_agrees_with_the_full_distance(a: str, b: str) -> None:
    assert _distance(a, b, limit=2) == min(_distance(a, b), 3)


@pytest.mark.parametrize(
    ("written", "fixed"),
    [("libcublass", "libcublas"), ("libCublas", "libcublas"), ("cuda_nvccc", "cuda_nvcc"), ("nccl_tests", "nccl-tests"), ("cudaAtleast", "cudaAtLeast")],
)
def test_one_name_within_an_edit_is_suggested_and_fixed(written: str, fixed: str) -> None:
    (found,) = findings("CUDA003", f"{{ cudaPackages }}: cudaPackages.{written}\n")
    assert found.message.endswith(f"did you mean `{fixed}`?")
    assert [e.content for fix in found.fixes for e in fix.edits] == [fixed]


def test_two_names_within_an_edit_are_suggested_without_a_fix() -> None:
    (found,) = findings("CUDA003", "{ cudaPackages }: cudaPackages.libcudsa\n")
    assert "`libcudla`" in found.message and "`libcudss`" in found.message
    assert found.fixes == ()


def test_a_library_is_suggested_under_its_package_name_first() -> None:
    (found,) = findings("CUDA003", "{ cudaPackages }: cudaPackages.cublas\n")
    assert "did you mean `libcublas`" in found.message
