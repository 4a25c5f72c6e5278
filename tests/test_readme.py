"""The README's example session is real: each `$ cudalint ...` command, run from the repository
root, prints exactly what the README shows. `python tests/test_readme.py --update` rewrites it."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"


def session() -> list[tuple[str, str]]:
    text = README.read_text(encoding="utf-8")
    block = re.search(r"<!-- session:start -->\n```console\n(.*?)```\n<!-- session:end -->", text, re.S)
    assert block, "README.md has no example session"
    commands: list[tuple[str, str]] = []
    for chunk in re.split(r"^\$ ", block.group(1), flags=re.M)[1:]:
        command, _, output = chunk.partition("\n")
        commands.append((command, output.rstrip("\n")))
    return commands


def run(command: str) -> str:
    argv = shlex.split(command)
    assert argv[0] == "cudalint"
    done = subprocess.run([sys.executable, "-m", "cudalint", *argv[1:]], cwd=ROOT, capture_output=True, text=True, env={"NO_COLOR": "1", "PATH": ""})
    return (done.stdout + done.stderr).rstrip("\n")


def test_readme_session_matches_real_output() -> None:
    commands = session()
    assert commands
    for command, expected in commands:
        assert run(command) == expected, f"README output of `{command}` is out of date: python tests/test_readme.py --update"


def update() -> None:
    text = README.read_text(encoding="utf-8")
    body = "\n\n".join(f"$ {command}\n{run(command)}" for command, _ in session())
    text = re.sub(
        r"(<!-- session:start -->\n```console\n).*?(```\n<!-- session:end -->)",
        lambda m: m.group(1) + body + "\n" + m.group(2),
        text,
        flags=re.S,
    )
    README.write_text(text, encoding="utf-8")


if __name__ == "__main__" and sys.argv[1:] == ["--update"]:
    update()
