"""Unsafe means "changes the closure", never "might not build" (issue 22 item 4): every fix of
every rule that emits fixes (fix-all, with every rule on, and each editor alternative alone)

- keeps `cuda_nvcc` where the toolkit or nvcc provided the compiler (tests/
  test_cuda001_fixes_keep_build.py's judgement, here for every rule),
- introduces no CUDA release the file did not name (the CUDA major is kept),
- leaves no CUDA input unguarded that was under the file's `cudaSupport` switch,
- keeps, in a CMake build of the symlink-farm era (nixpkgs 23.11, 24.05), the static CUDA
  runtime CMake's CUDA check links (a plain `cuda_cudart` there includes it; named outputs must
  name `static` too).

Run over every fire fixture of those rules, the fix-all regressions and CUDA001's purpose-built
files, under each file's own target.
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

import pytest

from cudalint.lint.engine import lint
from cudalint.lint.fixing import apply_edits, fix_file
from cudalint.lint.model import Applicability
from cudalint.lint.registry import all_rules, known_codes
from cudalint.lint.settings import LintSettings
from cudalint.nix.parsing import parse
from cudalint.nix.semantic import Semantic
from cudalint.nix.source import SourceFile
from snapshots import FIXTURES, fixture_target
from test_cuda001_fixes_keep_build import _RELEASE, _compiler_sites, _uses_nvcc

HERE = Path(__file__).parent
FIXING = sorted(r.code for r in all_rules() if r.fix is not Applicability.NONE)
FILES = sorted(p for code in FIXING for p in (FIXTURES / code).glob("fire_*.nix")) + sorted((HERE / "fixtures" / "fix_all").glob("*.nix")) + sorted((HERE / "fixtures" / "cuda001_fixes").glob("*.nix"))
_SWITCH = re.compile(r"\bcudaSupport\b")
_SYMLINK_FARM = ("23.11", "24.05")


def label(path: Path) -> str:
    return f"{path.parent.name}/{path.name}"


@cache
def outcomes(path: Path, nixpkgs: str | None = None) -> list[tuple[str, str]]:
    """(what was applied, the fixed text): fix-all with unsafe fixes, and each fix alone."""
    text = path.read_text(encoding="utf-8")
    target = fixture_target(text)
    settings = LintSettings(enabled=known_codes(), nixpkgs=nixpkgs or target.get("nixpkgs"), cuda=target.get("cuda", ()))  # type: ignore[arg-type]
    source = SourceFile(path.name, text)
    result = lint(source, settings)
    found = [("fix-all", fix_file(source, settings, unsafe=True, first=result).text)]
    for diagnostic in result.diagnostics:
        for fix in diagnostic.fixes:
            found.append((f"{diagnostic.code}: {fix.title}", apply_edits(source.data, list(fix.edits)).decode("utf-8")))
    return found


def _semantic(text: str) -> Semantic:
    source = SourceFile("x.nix", text)
    return Semantic(parse(source), source)


def guarded_only(text: str) -> set[str]:
    """CUDA packages of the input lists that the `cudaSupport` switch guards wherever they are."""
    semantic = _semantic(text)
    guarded: set[str] = set()
    unguarded: set[str] = set()
    for ref in semantic.cuda_refs():
        if semantic.input_site(ref.node) is not None:
            under = any(_SWITCH.search(g.text) for g in semantic.guards(ref.node))
            (guarded if under else unguarded).add(ref.package)
    return guarded - unguarded


def unguarded(text: str) -> set[str]:
    semantic = _semantic(text)
    return {ref.package for ref in semantic.cuda_refs() if semantic.input_site(ref.node) is not None and not any(_SWITCH.search(g.text) for g in semantic.guards(ref.node))}


def keeps_static_runtime(text: str) -> bool:
    """In each derivation with `cmake` among its native inputs: `cuda_cudart` in `buildInputs`
    whole (its `out` links every output in the symlink-farm era) or with its `static` output
    named, or no `cuda_cudart` there at all."""
    semantic = _semantic(text)
    outputs: dict[int, set[str | None]] = {}
    for ref in semantic.cuda_refs():
        site = semantic.input_site(ref.node)
        if ref.package != "cuda_cudart" or site is None or site.attr != "buildInputs" or site.binding.parent is None:
            continue
        owner = site.binding.parent.parent
        if owner is not None and re.search(r"nativeBuildInputs\s*=[^;]*\bcmake\b", owner.text.decode() if owner.text else ""):
            outputs.setdefault(owner.start_byte, set()).add(ref.output)
    return all(found & {None, "out", "static"} for found in outputs.values())


def test_the_files_have_fixes_to_judge() -> None:
    changed = [p for p in FILES if any(fixed != p.read_text(encoding="utf-8") for _, fixed in outcomes(p))]
    assert len(FILES) >= 150 and len(changed) >= 100


@pytest.mark.parametrize("path", [p for p in FILES if _uses_nvcc(p)], ids=label)
def test_fixes_keep_nvcc_where_it_runs(path: Path) -> None:
    before = _compiler_sites(path.read_text(encoding="utf-8"), path.name)
    for title, fixed in outcomes(path):
        assert _compiler_sites(fixed, path.name) >= before, f"{title!r} drops nvcc from {path.name}:\n{fixed}"


@pytest.mark.parametrize("path", FILES, ids=label)
def test_fixes_keep_the_cuda_release(path: Path) -> None:
    releases = set(_RELEASE.findall(path.read_text(encoding="utf-8")))
    for title, fixed in outcomes(path):
        added = set(_RELEASE.findall(fixed)) - releases
        assert not added, f"{title!r} introduces CUDA release(s) {sorted(added)} in {path.name}"


@pytest.mark.parametrize("path", [p for p in FILES if _SWITCH.search(p.read_text(encoding="utf-8"))], ids=label)
def test_fixes_keep_guards(path: Path) -> None:
    """A CUDA package the switch guarded everywhere is nowhere unguarded after a fix."""
    before = guarded_only(path.read_text(encoding="utf-8"))
    for title, fixed in outcomes(path):
        lost = before & unguarded(fixed)
        assert not lost, f"{title!r} takes {sorted(lost)} out of the `cudaSupport` guard in {path.name}:\n{fixed}"


CMAKE_FILES = [p for p in FILES if re.search(r"\bcmake\b", p.read_text(encoding="utf-8")) and "cuda_cudart" in p.read_text(encoding="utf-8")]


@pytest.mark.parametrize("path", CMAKE_FILES, ids=label)
@pytest.mark.parametrize("nixpkgs", _SYMLINK_FARM)
def test_cmake_builds_keep_the_static_runtime(path: Path, nixpkgs: str) -> None:
    if not keeps_static_runtime(path.read_text(encoding="utf-8")):
        pytest.skip("the file itself names cuda_cudart's outputs without `static`")
    for title, fixed in outcomes(path, nixpkgs):
        assert keeps_static_runtime(fixed), f"{title!r} drops cuda_cudart's static runtime from a CMake build of {path.name} on {nixpkgs}:\n{fixed}"


def test_the_checks_can_fail() -> None:
    assert keeps_static_runtime("{ cudaPackages }: { buildInputs = [ cudaPackages.cuda_cudart.lib ]; }")  # no CMake
    assert keeps_static_runtime("{ cmake, cudaPackages }: { nativeBuildInputs = [ cmake ]; buildInputs = [ cudaPackages.cuda_cudart.lib cudaPackages.cuda_cudart.static ]; }")
    assert not keeps_static_runtime("{ cudaPackages, cmake }: { nativeBuildInputs = [ cmake ]; buildInputs = [ cudaPackages.cuda_cudart.lib ]; }")
    guarded = "{ lib, cudaSupport, cudaPackages }: { buildInputs = lib.optionals cudaSupport [ cudaPackages.libcublas ]; }"
    assert guarded_only(guarded) == {"libcublas"} and not unguarded(guarded)
    assert unguarded(guarded.replace("lib.optionals cudaSupport ", "")) == {"libcublas"}
    assert len(CMAKE_FILES) >= 3
