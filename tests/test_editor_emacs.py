"""editors/emacs in a real, headless Emacs (Debian's 28.2 with elpa-eglot 1.9) against the real
server. The round trip itself is tests/editors/emacs_roundtrip.el."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path

from editor_support import EDITOR_TESTS, REPO, cli_fixed_text, copy_fixture, cudalint_env
from requirements import require_executable

EMACS_PACKAGE = REPO / "editors" / "emacs"
ROUND_TRIP = EDITOR_TESTS / "emacs_roundtrip.el"


def test_package_byte_compiles_without_warnings(tmp_path: Path) -> None:
    emacs = require_executable("emacs", "apt-get install emacs-nox elpa-eglot")
    source = tmp_path / "cudalint.el"
    source.write_bytes((EMACS_PACKAGE / "cudalint.el").read_bytes())
    run = subprocess.run(
        [emacs, "--batch", "-Q", "--eval", "(setq byte-compile-error-on-warn t)", "-f", "batch-byte-compile", str(source)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr
    assert (tmp_path / "cudalint.elc").exists()


def test_eglot_round_trip(tmp_path: Path) -> None:
    emacs = require_executable("emacs", "apt-get install emacs-nox elpa-eglot")
    document = copy_fixture(tmp_path)
    expected = tmp_path / "expected.nix"
    expected.write_text(cli_fixed_text(tmp_path), encoding="utf-8")
    env = cudalint_env(CUDALINT_EMACS_DIR=str(EMACS_PACKAGE), CUDALINT_EXPECTED=str(expected), HOME=str(tmp_path))
    run = subprocess.run(
        [emacs, "--batch", "-l", str(ROUND_TRIP), str(document)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
    )
    output = run.stdout + run.stderr
    assert run.returncode == 0, output
    assert "cudalint round trip: ok" in output, output
    assert re.search(r"^Emacs \S+, Eglot \S+, server \(\"cudalint\" \"server\"\)$", output, re.M), output


def test_flymake_backend_next_to_another_eglot_server(tmp_path: Path) -> None:
    """The setup for users of nil or nixd under Eglot, in an Emacs without nix-mode: Eglot keeps
    their server (a stand-in here), cudalint's findings come from `cudalint-flymake'."""
    emacs = require_executable("emacs", "apt-get install emacs-nox elpa-eglot")
    document = copy_fixture(tmp_path)
    stub = f"{shlex.quote(sys.executable)} {shlex.quote(str(EDITOR_TESTS / 'stub_lsp_server.py'))}"
    env = cudalint_env(CUDALINT_EMACS_DIR=str(EMACS_PACKAGE), CUDALINT_STUB_SERVER=stub, HOME=str(tmp_path))
    run = subprocess.run([emacs, "--batch", "-l", str(EDITOR_TESTS / "emacs_flymake.el"), str(document)], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=180)
    output = run.stdout + run.stderr
    assert run.returncode == 0 and "cudalint flymake: ok" in output, output
