"""The install and CI snippets a user copies from README.md and docs/ci.md, run as written.

GitHub is out of reach here, so git is told (`url.<clone>.insteadOf`) that
https://github.com/cudalint/cudalint is a bare clone of this repository whose `main` is this
checkout's HEAD; everything else in a snippet (its `rev`, its pip requirement, its commands) runs
unchanged. A snippet naming a revision that does not exist then fails here as it would for a
user (the `rev: v0.1.0` that no tag matched)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from editor_support import REPO, copy_fixture, cudalint_env
from requirements import require_executable

GITHUB = "https://github.com/cudalint/cudalint"
DOCS = {path: (REPO / path).read_text(encoding="utf-8") for path in ("README.md", "docs/ci.md")}


def blocks(language: str) -> list[tuple[str, str]]:
    """(document, text) of every fenced block of `language` in the documents."""
    return [(path, m.group(1)) for path, text in DOCS.items() for m in re.finditer(rf"```{language}\n(.*?)```", text, re.S)]


def precommit_configs() -> list[tuple[str, str]]:
    """Snippets that configure pre-commit with cudalint's hooks (a whole config or one repo entry)."""
    return [(path, text) for path, text in blocks("yaml") if "repo: " + GITHUB in text and "hooks:" in text]


def pip_installs() -> list[str]:
    """Every `pip install` of cudalint from git that the documents show, as written."""
    found: set[str] = set()
    for text in DOCS.values():
        found.update(m.group(0) for m in re.finditer(r'python3? -m pip install "cudalint @ git\+[^"]+"', text))
    return sorted(found)


@pytest.fixture(scope="module")
def github(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """An environment in which git reaches this checkout at cudalint's GitHub address."""
    git = require_executable("git", "the snippets install cudalint from git")
    if not (REPO / ".git").exists():
        pytest.skip("not a git checkout: the snippets install cudalint from git")
    root = tmp_path_factory.mktemp("github")
    bare = root / "cudalint.git"
    subprocess.run([git, "clone", "--quiet", "--bare", str(REPO), str(bare)], check=True)
    head = subprocess.run([git, "-C", str(REPO), "rev-parse", "HEAD"], check=True, capture_output=True, text=True).stdout.strip()
    subprocess.run([git, "-C", str(bare), "update-ref", "refs/heads/main", head], check=True)
    # configuration through the environment: pre-commit passes GIT_CONFIG_KEY_n/VALUE_n to git
    # (it drops most other GIT_* variables)
    return cudalint_env(
        GIT_CONFIG_COUNT="1",
        GIT_CONFIG_KEY_0=f"url.{bare.as_uri()}.insteadOf",
        GIT_CONFIG_VALUE_0=GITHUB,
        PRE_COMMIT_HOME=str(root / "pre-commit-home"),
    )


def test_the_documents_show_snippets() -> None:
    assert len(precommit_configs()) >= 2 and pip_installs()
    assert not re.search(r"cudalint@v\d|rev: v\d", "".join(DOCS.values())), "a snippet pins a release tag, and none exists"


@pytest.mark.parametrize(("document", "snippet"), precommit_configs(), ids=lambda value: value if value in DOCS else "")
def test_precommit_snippet(document: str, snippet: str, github: dict[str, str], tmp_path: Path) -> None:
    pre_commit = require_executable("pre-commit", "the snippet configures pre-commit")
    config = yaml.safe_load(snippet)
    if isinstance(config, list):  # one entry of `repos:`, as the README shows it
        config = {"repos": config}
    project = tmp_path / "project"
    project.mkdir()
    (project / ".pre-commit-config.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
    copy_fixture(project)
    subprocess.run(["git", "init", "--quiet"], cwd=project, check=True, env=github)
    subprocess.run(["git", "add", "."], cwd=project, check=True, env=github)
    run = subprocess.run([pre_commit, "run", "--all-files", "--color", "never"], cwd=project, env=github, capture_output=True, text=True, timeout=900)
    output = run.stdout + run.stderr
    # the hook ran cudalint (installed from the snippet's repo and rev) and failed on the finding
    assert run.returncode == 1 and "CUDA102" in output, output


def test_pip_and_gitlab_snippets(github: dict[str, str], tmp_path: Path) -> None:
    """`pip install "cudalint @ git+...@main"` into a fresh environment, then the GitLab job's
    commands in a project, as docs/ci.md writes them."""
    venv = tmp_path / "venv"
    # the environment's own packages serve cudalint's dependencies: the snippet's part is the install from git
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)], check=True)
    env = dict(github, PATH=f"{venv / 'bin'}{os.pathsep}{github['PATH']}", VIRTUAL_ENV=str(venv))
    for command in pip_installs():
        run = subprocess.run(["bash", "-c", command.replace("python3 ", "python ")], env=env, capture_output=True, text=True, timeout=900)
        assert run.returncode == 0, command + "\n" + run.stdout + run.stderr
    version = subprocess.run([str(venv / "bin" / "cudalint"), "--version"], env=env, capture_output=True, text=True)
    assert version.returncode == 0 and version.stdout.startswith("cudalint "), version.stderr
    (job,) = [yaml.safe_load(text) for _, text in blocks("yaml") if ".gitlab-ci.yml" in text]
    project = tmp_path / "project"
    project.mkdir()
    copy_fixture(project)
    statuses = []
    for line in job["cudalint"]["script"]:
        run = subprocess.run(["bash", "-c", line], cwd=project, env=env, capture_output=True, text=True, timeout=900)
        statuses.append(run.returncode)
        assert run.returncode in (0, 1), line + "\n" + run.stderr
    # the report is written and never fails the job; the readable run sets the job's status
    assert statuses[-2:] == [0, 1] and "CUDA102" in (project / "cudalint.json").read_text()
