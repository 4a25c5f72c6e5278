"""action.yml (the composite GitHub Action): it parses, every input is used, the `cudalint`
commands it runs are accepted by the CLI, and its shell steps work when run here by bash."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from cudalint.frontend.cli import OUTPUT_FORMATS, build_parser, with_default_command
from editor_support import REPO
from requirements import require_executable

ACTION = yaml.safe_load((REPO / "action.yml").read_text(encoding="utf-8"))
STEPS = ACTION["runs"]["steps"]
# What the steps' environment variables stand for when the commands are checked.
SAMPLE_ENV = {"PATHS": ".", "BASE_ARGS": "--new-from-rev HEAD", "EXTRA_ARGS": "--select CUDA0", "RUNNER_TEMP": "/tmp"}
PACKAGE = '{ stdenv, cudatoolkit }:\nstdenv.mkDerivation {\n  pname = "x";\n  nativeBuildInputs = [ cudatoolkit ];\n}\n'


def step(name: str) -> dict:
    return next(s for s in STEPS if s.get("name") == name)


def cudalint_commands() -> list[str]:
    return [line.strip() for s in STEPS for line in s.get("run", "").splitlines() if line.strip().startswith("cudalint ")]


def test_composite_action_shape() -> None:
    assert ACTION["runs"]["using"] == "composite"
    assert ACTION["name"] and ACTION["description"]
    for s in STEPS:
        assert ("run" in s) != ("uses" in s)
        if "run" in s:
            assert s["shell"] == "bash"  # composite run steps must name their shell


def test_every_input_is_used() -> None:
    text = yaml.safe_dump(ACTION["runs"])
    for name in ACTION["inputs"]:
        assert f"inputs.{name}" in text, f"input {name} is never used"


def test_new_from_rev_defaults_to_the_pull_requests_base() -> None:
    assert ACTION["inputs"]["new-from-rev"]["default"] == "${{ github.event.pull_request.base.sha }}"
    assert ACTION["inputs"]["output"]["default"] == "github"


def test_it_installs_the_actions_own_checkout() -> None:
    install = step("Install cudalint")
    assert install["env"]["ACTION_PATH"] == "${{ github.action_path }}" and '"$ACTION_PATH"' in install["run"]


def test_the_outputs_it_offers_exist() -> None:
    offered = re.findall(r"\b(github|text|concise|json|sarif|rdjson|markdown)\b", ACTION["inputs"]["output"]["description"])
    assert set(offered) == set(OUTPUT_FORMATS)


@pytest.mark.parametrize("output", OUTPUT_FORMATS)
def test_its_commands_are_accepted_by_the_cli(output: str) -> None:
    commands = cudalint_commands()
    assert len(commands) == 4
    for command in commands:
        expanded = command
        for name, value in {**SAMPLE_ENV, "OUTPUT": output}.items():
            expanded = expanded.replace(f'"${name}"', value).replace(f"${name}", value)
        arguments = shlex.split(expanded.split(">")[0])[1:]
        try:
            build_parser().parse_args(with_default_command(arguments))
        except SystemExit as error:
            pytest.fail(f"`{expanded}` is rejected by cudalint's parser (exit {error.code})")


def _run_step(name: str, env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess:
    bash = require_executable("bash", "the action's steps are bash scripts")
    environment = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}", **env}
    return subprocess.run([bash, "-e", "-c", step(name)["run"]], cwd=cwd, env=environment, capture_output=True, text=True, timeout=120)


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    require_executable("git", "the action compares with the pull request's base")
    (tmp_path / "a.nix").write_text(PACKAGE)
    for command in (["init", "-q"], ["add", "."], ["-c", "user.email=t@example.com", "-c", "user.name=t", "commit", "-q", "-m", "base"]):
        subprocess.run(["git", *command], cwd=tmp_path, check=True, capture_output=True)
    (tmp_path / "b.nix").write_text(PACKAGE)  # what the "pull request" adds
    return tmp_path


def test_the_steps_run(workspace: Path) -> None:
    outputs = workspace / "github-output"
    outputs.write_text("")
    base = _run_step("Find the base revision", {"REV": "HEAD", "GITHUB_OUTPUT": str(outputs)}, workspace)
    assert base.returncode == 0, base.stderr
    assert outputs.read_text() == "args=--new-from-rev HEAD\n"
    common = {"PATHS": ".", "BASE_ARGS": "--new-from-rev HEAD", "EXTRA_ARGS": "--isolated --select CUDA001", "RUNNER_TEMP": str(workspace)}
    check = _run_step("cudalint check", {**common, "OUTPUT": "github"}, workspace)
    assert check.returncode == 0 and check.stdout.startswith("::warning file=b.nix,line=4"), check.stderr
    assert "a.nix" not in check.stdout  # old code is not reported
    summary = workspace / "summary.md"
    assert _run_step("Job summary", {**common, "GITHUB_STEP_SUMMARY": str(summary)}, workspace).returncode == 0
    assert "**1 finding** in 1 file." in summary.read_text()
    assert _run_step("Write SARIF", common, workspace).returncode == 0
    assert json.loads((workspace / "cudalint.sarif").read_text())["runs"][0]["results"][0]["ruleId"] == "CUDA001"
    for fail_on, code in (("warning", 1), ("error", 0), ("never", 0), ("bogus", 1)):
        outputs.write_text("")
        gate = _run_step("Gate on severity", {**common, "FAIL_ON": fail_on, "GITHUB_OUTPUT": str(outputs)}, workspace)
        assert gate.returncode == code, (fail_on, gate.stderr)
        if fail_on != "bogus":
            assert outputs.read_text() == "findings=1\n"
