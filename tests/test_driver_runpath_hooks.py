"""CUDA104-CUDA108 beyond the per-rule fixtures: the target nixpkgs of CUDA104, and the fixes of
the five driver-runpath rules applied together (they touch the same names and lists)."""

from __future__ import annotations

from pathlib import Path

import pytest

from cudalint.lint.engine import SYNTAX_ERROR, lint
from cudalint.lint.fixing import fix_file
from cudalint.lint.model import Severity
from cudalint.lint.settings import LintSettings
from cudalint.nix.parsing import parse, syntax_problems
from cudalint.nix.semantic import Semantic
from cudalint.nix.source import SourceFile
from cudalint.nix.syntax import descendants, text
from snapshots import FIXTURES

CODES = ("CUDA104", "CUDA105", "CUDA106", "CUDA107", "CUDA108")
HOOK_NAMES = {"addDriverRunpath", "autoAddDriverRunpath", "autoAddCudaCompatRunpath", "addOpenGLRunpath", "autoAddOpenGLRunpathHook"}


def _settings(*codes: str, nixpkgs: str | None = None) -> LintSettings:
    return LintSettings(enabled=frozenset({*codes, SYNTAX_ERROR}), nixpkgs=nixpkgs)


OLD_NAMES = """{ stdenv, addOpenGLRunpath, cudaPackages }:
stdenv.mkDerivation {
  pname = "x";
  version = "1";
  nativeBuildInputs = [ addOpenGLRunpath cudaPackages.autoAddCudaCompatRunpathHook ];
  dontUseAutoAddOpenGLRunpath = true;
  postFixup = "addOpenGLRunpath $out/bin/x";
}
"""


def _findings(text_: str, nixpkgs: str | None) -> list[tuple[str, Severity, str]]:
    result = lint(SourceFile("t.nix", text_), _settings("CUDA104", nixpkgs=nixpkgs))
    return [(text_[d.start : d.end], d.severity, d.message) for d in result.diagnostics if d.code == "CUDA104"]


def test_newest_nixpkgs_throws_on_the_old_names() -> None:
    found = _findings(OLD_NAMES, None)
    assert [(span, severity) for span, severity, _ in found] == [
        ("addOpenGLRunpath", Severity.ERROR),
        ("cudaPackages.autoAddCudaCompatRunpathHook", Severity.ERROR),
        ("dontUseAutoAddOpenGLRunpath", Severity.WARNING),  # still honoured, with a notice
        ("addOpenGLRunpath", Severity.ERROR),
    ]
    # the status is said, the assumed target is not (the reporters state it once per run)
    assert all("throws" in message or "does not exist" in message or "deprecated" in message for _, _, message in found)
    assert not any("nixpkgs" in message for _, _, message in found)


def test_release_with_deprecated_aliases_warns() -> None:
    found = _findings(OLD_NAMES, "24.05")
    severities = {span: severity for span, severity, _ in found}
    assert severities["addOpenGLRunpath"] is Severity.WARNING
    assert severities["cudaPackages.autoAddCudaCompatRunpathHook"] is Severity.ERROR  # renamed without an alias
    assert not any("24.05" in message for _, _, message in found)  # the target is the reporters' to state
    assert {s for _, s, _ in _findings(OLD_NAMES, "24.11")} == {Severity.ERROR, Severity.WARNING}
    assert dict((span, s) for span, s, _ in _findings(OLD_NAMES, "2024-11-16"))["addOpenGLRunpath"] is Severity.WARNING


def test_releases_before_the_new_names_are_silent() -> None:
    assert _findings(OLD_NAMES, "23.11") == []


def _fix_all(text_: str) -> str:
    settings = _settings(*CODES)
    outcome = fix_file(SourceFile("t.nix", text_), settings, unsafe=True)
    fixed = SourceFile("t.nix", outcome.text)
    assert not syntax_problems(parse(fixed), fixed)
    assert not fix_file(fixed, settings, unsafe=True).changed, "a second fix-all still changes the file"
    return outcome.text


def _unbound_hook_names(text_: str) -> list[str]:
    """Hook names the fixed file uses without binding them, in files that have arguments."""
    source = SourceFile("t.nix", text_)
    tree = parse(source)
    semantic = Semantic(tree, source)
    function = semantic.top_function()
    if function is None or function.child_by_field_name("formals") is None:
        return []
    return [text(node) for node in descendants(tree.root_node) if node.type == "variable_expression" and text(node) in HOOK_NAMES and semantic.resolve(node).kind == "free"]


def _duplicate_formals(text_: str) -> list[str]:
    source = SourceFile("t.nix", text_)
    function = Semantic(parse(source), source).top_function()
    formals = function.child_by_field_name("formals") if function is not None else None
    if formals is None:
        return []
    names = [text(f.child_by_field_name("name")) for f in formals.children_by_field_name("formal") if f.child_by_field_name("name") is not None]
    return sorted({n for n in names if names.count(n) > 1})


@pytest.mark.parametrize("path", sorted(p for code in CODES for p in (FIXTURES / code).glob("*.nix")), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_all_five_rules_fix_together(path: Path) -> None:
    fixed = _fix_all(path.read_text(encoding="utf-8"))
    assert _unbound_hook_names(fixed) == []
    assert _duplicate_formals(fixed) == []


def test_uncalled_old_function_becomes_the_automatic_hook() -> None:
    fixed = _fix_all(
        """{ stdenv, addOpenGLRunpath }:
stdenv.mkDerivation {
  pname = "x";
  version = "1";
  nativeBuildInputs = [ addOpenGLRunpath ];
}
"""
    )
    assert "{ stdenv, autoAddDriverRunpath }:" in fixed
    assert "nativeBuildInputs = [ autoAddDriverRunpath ];" in fixed
    assert "OpenGL" not in fixed


def test_old_loop_and_old_hook_end_as_one_automatic_hook() -> None:
    fixed = _fix_all(
        """{ stdenv, addOpenGLRunpath, autoAddOpenGLRunpathHook }:
stdenv.mkDerivation {
  pname = "x";
  version = "1";
  nativeBuildInputs = [ addOpenGLRunpath ];
  buildInputs = [ autoAddOpenGLRunpathHook ];
  postFixup = ''
    for f in $out/lib/*.so; do
      addOpenGLRunpath "$f"
    done
  '';
}
"""
    )
    assert "OpenGL" not in fixed and "postFixup" not in fixed
    assert "buildInputs = [ ]" not in fixed and "  buildInputs" not in fixed
    assert fixed.count("autoAddDriverRunpath") >= 2  # the formal and the native input
