"""The distribution users install today (cudalint is not on PyPI yet): `python -m build` makes
an sdist and a wheel; the wheel, installed alone in a fresh virtual environment, holds the
reference set and the rules/server packages, checks the example and serves LSP. Also: the
install instructions never offer a bare `pip install cudalint` as if it were released."""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from cudalint import __version__
from lsp_framing import read_messages, write_message
from requirements import IN_CI, REPO

# What a build needs from the repository (the rest, tests and editors, is not packaged).
BUILD_INPUTS = ("pyproject.toml", "README.md", "LICENSE", "cudalint", "rules", "server")
INSTALL_DOCS = ("README.md", "docs/ci.md", "editors/README.md", "editors/neovim/lua/cudalint/init.lua", "editors/emacs/cudalint.el")


def _require_build() -> None:
    if importlib.util.find_spec("build") is None:
        message = "the `build` package is missing (it is in the test extra: pip install -e '.[test]')"
        if IN_CI:
            pytest.fail(message)
        pytest.skip(message)


@pytest.fixture(scope="module")
def dist(tmp_path_factory) -> Path:
    _require_build()
    source = tmp_path_factory.mktemp("source")
    for name in BUILD_INPUTS:
        origin = REPO / name
        if origin.is_dir():
            shutil.copytree(origin, source / name, ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
        else:
            shutil.copy2(origin, source / name)
    out = tmp_path_factory.mktemp("dist")
    built = subprocess.run([sys.executable, "-m", "build", "--outdir", str(out), str(source)], capture_output=True, text=True, timeout=600)
    assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-3000:]
    return out


def test_sdist_and_wheel_are_built_with_what_runs(dist: Path) -> None:
    sdist = dist / f"cudalint-{__version__}.tar.gz"
    wheel = dist / f"cudalint-{__version__}-py3-none-any.whl"
    assert sdist.is_file() and wheel.is_file()
    names = set(zipfile.ZipFile(wheel).namelist())
    assert {"cudalint/knowledge/data/reference.json", "cudalint/rules/cuda001_runfile_toolkit.py", "cudalint/server/app.py", "cudalint/frontend/reporters/rdjson.py"} <= names
    assert not any(name.startswith(("rules/", "server/", "tests/")) for name in names)  # one namespace: cudalint


@pytest.fixture(scope="module")
def installed(dist: Path, tmp_path_factory) -> Path:
    """A fresh virtual environment with the wheel (and its dependencies) and nothing else."""
    venv = tmp_path_factory.mktemp("venv")
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    python = venv / "bin" / "python"
    wheel = next(dist.glob("cudalint-*.whl"))
    pip = subprocess.run([str(python), "-m", "pip", "install", "--quiet", str(wheel)], capture_output=True, text=True, timeout=600)
    assert pip.returncode == 0, pip.stderr[-3000:]
    return venv / "bin"


def test_installed_wheel_checks_the_example(installed: Path, tmp_path: Path) -> None:
    example = tmp_path / "legacy.nix"
    shutil.copy(REPO / "examples" / "legacy-cuda-package.nix", example)
    environment = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "CUDALINT_OUTPUT_FORMAT")}
    checked = subprocess.run([str(installed / "cudalint"), "check", "--isolated", example.name], cwd=tmp_path, capture_output=True, text=True, env=environment, timeout=120)
    assert checked.returncode == 1, checked.stderr
    assert "CUDA001 [warning]" in checked.stdout and re.search(r"^Found \d+ findings", checked.stdout, re.M)
    # the installed package, not this checkout
    where = subprocess.run([str(installed / "python"), "-c", "import cudalint; print(cudalint.__file__)"], cwd=tmp_path, capture_output=True, text=True, env=environment)
    assert str(installed.parent) in where.stdout


def test_installed_wheel_serves_lsp(installed: Path, tmp_path: Path) -> None:
    server = subprocess.Popen([str(installed / "cudalint"), "server"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, cwd=tmp_path)
    assert server.stdin is not None and server.stdout is not None
    try:
        write_message(server.stdin, {"id": 1, "method": "initialize", "params": {"processId": None, "rootUri": None, "capabilities": {}}})
        messages = read_messages(server.stdout)
        reply = next(m for m in messages if m.get("id") == 1)
        assert reply["result"]["serverInfo"]["name"] == "cudalint"
        assert "textDocumentSync" in reply["result"]["capabilities"]
        write_message(server.stdin, {"method": "initialized", "params": {}})
        write_message(server.stdin, {"id": 2, "method": "shutdown"})
        assert next(m for m in messages if m.get("id") == 2)["result"] is None
        write_message(server.stdin, {"method": "exit"})
        assert server.wait(timeout=60) == 0
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()


def test_install_instructions_do_not_assume_pypi() -> None:
    for name in INSTALL_DOCS:
        for line in (REPO / name).read_text(encoding="utf-8").splitlines():
            if re.search(r"pipx? install cudalint\b(?!\s*@)", line) or "pip install cudalint==" in line:
                assert "once" in line.lower(), f"{name}: {line.strip()}"
