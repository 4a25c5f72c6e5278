"""Nix snippets and helpers shared by the reporter, SARIF and baseline tests."""

from __future__ import annotations

from cudalint.lint.engine import lint
from cudalint.lint.results import FileResult
from cudalint.lint.settings import LintSettings
from cudalint.nix.source import SourceFile

# Only the rules these tests are about, so that new rules cannot change their output.
SETTINGS = LintSettings(enabled=frozenset({"CUDA001", "CUDA900", "CUDA901"}))

TOOLKIT = """\
{ stdenv, cudatoolkit }:
stdenv.mkDerivation {
  pname = "saxpy";
  nativeBuildInputs = [ cudatoolkit ];
  dontUnpack = true; # builds something: a package, not a nix-shell environment
}
"""


def checked(path: str, text: str) -> FileResult:
    """A FileResult as the runner makes it for `text` linted with SETTINGS."""
    source = SourceFile(path, text)
    # the reporters must render any text: without the prefilter, which skips snippets that mention no CUDA
    result = lint(source, SETTINGS, prefilter=False)
    return FileResult(path, source, result.diagnostics, internal_errors=result.internal_errors)
