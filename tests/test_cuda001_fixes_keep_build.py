"""CUDA001's fixes keep the build working: in a file that runs nvcc, every fix (fix-all and each
editor alternative alone) leaves `cuda_nvcc` where the toolkit provided the compiler, and no fix
changes the CUDA release of a versioned toolkit.

Run over every CUDA001 fire fixture and the purpose-built files in tests/fixtures/cuda001_fixes.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from cudalint.knowledge import catalog
from cudalint.lint.engine import lint
from cudalint.lint.fixing import apply_edits, fix_file
from cudalint.nix.parsing import parse
from cudalint.nix.semantic import Semantic
from cudalint.nix.source import SourceFile
from snapshots import FIXTURES, settings_for

HERE = Path(__file__).parent
FILES = sorted((FIXTURES / "CUDA001").glob("fire_*.nix")) + sorted((HERE / "fixtures" / "cuda001_fixes").glob("*.nix"))
# What makes a file compile CUDA code (stated here independently of the rule's own heuristics).
_RUNS_NVCC = re.compile(r"(?<![\w-])nvcc\b|\bcmake\b|CUDA_HOME|CUDA_PATH|\.cu\b")
_RELEASE = re.compile(r"\b(?:cudatoolkit|cudaPackages)_(\d+(?:_\d+)?)\b")
_UNVERSIONED_SET = re.compile(r"\bcudaPackages\.")


def _compiler_sites(text: str, path: str) -> int:
    """How many derivations or shells of the file get nvcc from their inputs: `cuda_nvcc` in
    `nativeBuildInputs` of a package or any list of a dev shell, or the toolkit in any input list
    (without `strictDeps` even `buildInputs` put its nvcc on PATH)."""
    source = SourceFile(path, text)
    semantic = Semantic(parse(source), source)
    owners = set()
    for ref in semantic.cuda_refs():
        if ref.package != "cuda_nvcc" and not catalog.is_runfile_toolkit(ref.package):
            continue
        place = semantic.place(ref.node)
        site = semantic.input_site(ref.node)
        if place.is_shell:
            owners.add(place.node.start_byte if place.node is not None else -1)
        elif site is not None and site.attr in catalog.INPUT_ATTRIBUTES and (catalog.is_runfile_toolkit(ref.package) or site.attr in catalog.NATIVE_INPUTS):
            owners.add(site.binding.parent.parent.start_byte)
    return len(owners)


def _fixed_texts(path: Path) -> list[tuple[str, str]]:
    text = path.read_text(encoding="utf-8")
    source = SourceFile(path.name, text)
    settings = settings_for("CUDA001", text)
    result = lint(source, settings)
    outcomes = [("fix-all", fix_file(source, settings, unsafe=True, first=result).text)]
    for diagnostic in result.diagnostics:
        for fix in diagnostic.fixes:
            outcomes.append((fix.title, apply_edits(source.data, list(fix.edits)).decode("utf-8")))
    return outcomes


def _uses_nvcc(path: Path) -> bool:
    text = path.read_text(encoding="utf-8")
    return bool(_RUNS_NVCC.search(text)) or _compiler_sites(text, path.name) > 0


# Files that neither run nvcc nor get it from their inputs have nothing to keep.
NVCC_FILES = [p for p in FILES if _uses_nvcc(p)]


def test_the_nvcc_check_has_files_to_judge() -> None:
    assert len(NVCC_FILES) >= 5


@pytest.mark.parametrize("path", NVCC_FILES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_fixes_keep_nvcc_where_it_runs(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    before = _compiler_sites(text, path.name)
    for title, fixed in _fixed_texts(path):
        assert _compiler_sites(fixed, path.name) >= before, f"{title!r} drops nvcc from {path.name}:\n{fixed}"


@pytest.mark.parametrize("path", FILES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_fixes_keep_the_cuda_release(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    releases = set(_RELEASE.findall(text))
    unversioned_toolkit = re.search(r"\bcudatoolkit\b(?!_\d)", text) is not None
    for title, fixed in _fixed_texts(path):
        added = set(_RELEASE.findall(fixed)) - releases
        assert not added, f"{title!r} introduces CUDA release(s) {sorted(added)} in {path.name}"
        if not unversioned_toolkit:
            assert len(_UNVERSIONED_SET.findall(fixed)) <= len(_UNVERSIONED_SET.findall(text)), f"{title!r} replaces a versioned toolkit with the unversioned `cudaPackages` in {path.name}:\n{fixed}"


def test_the_purpose_built_files_have_fixes() -> None:
    """The checks above must see real rewrites, not only files without fixes."""
    changed = [p.name for p in FILES if any(fixed != p.read_text(encoding="utf-8") for _, fixed in _fixed_texts(p))]
    assert {"cmake_package_toolkit_in_build_inputs.nix", "shell_toolkit_in_both_lists.nix", "versioned_toolkits_in_inputs.nix", "fhs_env_toolkit.nix"} <= set(changed)
