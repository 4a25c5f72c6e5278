"""docs/ci.md stays true: its YAML examples parse, the hooks it names exist, and every
`cudalint` command it shows is accepted by the command line's parser."""

from __future__ import annotations

import re
import shlex

import pytest
import yaml

from cudalint.frontend.cli import build_parser, with_default_command
from editor_support import REPO

DOC = (REPO / "docs" / "ci.md").read_text(encoding="utf-8")
YAML_BLOCKS = re.findall(r"```yaml\n(.*?)```", DOC, re.S)


def cudalint_commands() -> list[str]:
    commands = []
    for line in DOC.splitlines():
        match = re.search(r"(?:^|[\s`:-])(cudalint (?:check|rule|rules|server)\b[^`>#|]*)", line)
        if match:
            commands.append(match.group(1).strip())
    return commands


def test_doc_shows_the_formats_and_the_baseline() -> None:
    commands = " ".join(cudalint_commands())
    for option in ("--output-format github", "--output-format sarif", "--write-baseline", "--baseline", "--new-from-rev"):
        assert option in commands


def test_doc_shows_the_action_and_the_reviewdog_recipe() -> None:
    assert "uses: cudalint/cudalint@" in DOC
    assert any("--output-format rdjson" in c for c in cudalint_commands())
    assert "reviewdog -f=rdjson" in DOC and "-reporter=github-pr-review" in DOC
    assert any("--output-format markdown" in c for c in cudalint_commands())


def test_install_commands_work_without_pypi() -> None:
    """cudalint is not on PyPI: a plain `pip install cudalint` is only shown as for later."""
    for line in DOC.splitlines():
        if re.search(r"pipx? install cudalint\b", line):
            assert "once" in line.lower(), line


@pytest.mark.parametrize("block", YAML_BLOCKS, ids=lambda b: b.splitlines()[0][:40])
def test_yaml_examples_parse(block: str) -> None:
    # Workflow fragments (steps only) are indented list items: dedent them to parse alone.
    lines = block.splitlines()
    indent = min(len(line) - len(line.lstrip()) for line in lines if line.strip())
    assert yaml.safe_load("\n".join(line[indent:] for line in lines)) is not None


@pytest.mark.parametrize("command", cudalint_commands())
def test_commands_are_accepted_by_the_cli(command: str) -> None:
    arguments = shlex.split(command)[1:]
    parser = build_parser()
    try:
        parser.parse_args(with_default_command(arguments))
    except SystemExit as error:  # argparse's way of rejecting
        pytest.fail(f"`{command}` is rejected by cudalint's parser (exit {error.code})")


def test_precommit_hook_ids_exist() -> None:
    declared = {hook["id"] for hook in yaml.safe_load((REPO / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))}
    named = set(re.findall(r"- id: (\S+)", DOC))
    assert named and named <= declared
