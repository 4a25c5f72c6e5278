"""docs/cudalint.1, the man page, is generated from the argument parser by argparse-manpage; this
test regenerates it and fails when the committed page is stale (write it anew with
CUDALINT_UPDATE_SNAPSHOTS=1, then `man ./docs/cudalint.1` to read it)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from argparse_manpage.manpage import Manpage

from cudalint import __version__
from cudalint.frontend.cli import build_parser

PAGE = Path(__file__).resolve().parents[1] / "docs" / "cudalint.1"


def render(monkeypatch) -> str:
    monkeypatch.setenv("COLUMNS", "100")  # argparse wraps usage lines at the terminal's width
    data = {
        "project_name": "cudalint",
        "version": __version__,
        "description": "Lint Nix expressions that use NVIDIA CUDA packages.",
        "url": "https://github.com/cudalint/cudalint",
        "date": "",  # the version names the page: no build date, so the page is reproducible
        "manual_title": "cudalint manual",
    }
    return str(Manpage(build_parser(), _data=data)) + "\n"


def test_the_man_page_is_current(monkeypatch) -> None:
    text = render(monkeypatch)
    if os.environ.get("CUDALINT_UPDATE_SNAPSHOTS"):
        PAGE.write_text(text, encoding="utf-8")
    assert PAGE.read_text(encoding="utf-8") == text, "docs/cudalint.1 is stale: CUDALINT_UPDATE_SNAPSHOTS=1 python -m pytest tests/test_manpage.py"
    for option in ("--fix", "--fail-on", "--show-settings", "--preview", "completion"):
        assert option.replace("-", "\\-") in text


def test_man_renders_it(monkeypatch, tmp_path) -> None:
    man = shutil.which("man") or shutil.which("groff")
    if man is None:  # a syntax check of the roff where a formatter exists
        return
    command = [man, "-l", str(PAGE)] if man.endswith("man") else [man, "-man", "-Tutf8", str(PAGE)]
    shown = subprocess.run(command, capture_output=True, text=True, env=dict(os.environ, MANPAGER="cat", PAGER="cat", MANWIDTH="100"), timeout=60)
    assert shown.returncode == 0 and "cudalint" in shown.stdout
