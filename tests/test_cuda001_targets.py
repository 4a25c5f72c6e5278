"""CUDA001's fixes, applied one at a time under every era and several CUDA releases, give Nix that
parses and name only packages the target release has."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from cudalint.knowledge import reference
from cudalint.lint.engine import lint
from cudalint.lint.fixing import apply_edits
from cudalint.lint.settings import LintSettings
from cudalint.nix.parsing import parse, syntax_problems
from cudalint.nix.source import SourceFile
from requirements import require_executable

FIXTURES = sorted((Path(__file__).parent / "fixtures" / "rules" / "CUDA001").glob("fire_*.nix"))
TARGETS = [("23.05", ("11.4",)), ("24.05", ()), ("25.05", ("12.8",)), ("25.11", ("13.0",)), (None, ())]
_NAME = re.compile(r"[A-Za-z_][\w'-]*")


@pytest.mark.parametrize("nixpkgs,cuda", TARGETS)
def test_every_cuda001_fix_parses_and_names_packages_of_the_target(nixpkgs, cuda, tmp_path):
    nix = require_executable("nix-instantiate", "the ground-truth Nix parser")
    ref = reference.load()
    target = reference.target(nixpkgs, cuda)
    settings = LintSettings(enabled=frozenset({"CUDA001"}), nixpkgs=nixpkgs, cuda=cuda)
    applied = 0
    for path in FIXTURES:
        source = SourceFile(path.name, path.read_text(encoding="utf-8"))
        for diagnostic in lint(source, settings).diagnostics:
            for fix in diagnostic.fixes:
                written = {name for edit in fix.edits for name in _NAME.findall(edit.content)}
                packages = {name for name in written if ref.is_known(name) and name not in {"cudatoolkit"}}
                assert all(ref.exists(p, target) for p in packages), (path.name, fix.title, packages)
                fixed = apply_edits(source.data, list(fix.edits))
                out = tmp_path / f"fixed{applied}.nix"
                out.write_bytes(fixed)
                fixed_source = SourceFile(out.name, fixed.decode("utf-8"))
                assert not syntax_problems(parse(fixed_source), fixed_source), (path.name, fix.title)
                result = subprocess.run([nix, "--parse", str(out)], capture_output=True, text=True)
                assert result.returncode == 0 or "undefined variable" in result.stderr, (path.name, fix.title, result.stderr)
                applied += 1
    assert applied >= 10
