"""`cudalint rule CODE`, `cudalint rules` and the README's rule table."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from cudalint.frontend import ruledocs
from cudalint.frontend.ruledocs import (
    END_MARKER,
    START_MARKER,
    main,
    readme_block,
    render_rule,
    render_rule_list,
    rules_markdown_table,
)
from cudalint.lint.registry import all_rules, rule_by_code

README = Path(__file__).resolve().parent.parent / "README.md"
ANSI = re.compile(r"\x1b\[[0-9;]*m")


@pytest.mark.parametrize("rule", all_rules(), ids=lambda r: r.code)
def test_render_rule_plain(rule) -> None:
    text = render_rule(rule, color=False)
    assert "\x1b[" not in text
    assert text.startswith(f"{rule.code} {rule.name}\n")
    assert rule.summary in text
    assert f"Severity: {rule.severity.value}" in text
    assert "Fix:" in text
    assert rule.url in text
    # Headings become plain titles; every nix example is shown indented as code, without fences.
    assert "```" not in text and "## " not in text
    assert "Why\n---" in text
    for title in ("Example", "Use instead"):
        for example in rule.examples(title):
            indented = "\n".join("    " + line if line else "" for line in example.splitlines())
            assert indented in text


def test_render_rule_fix_availability() -> None:
    assert "Fix:      fix sometimes available, up to unsafe (unsafe ones applied by --fix --unsafe-fixes)\n" in render_rule(rule_by_code("CUDA001"), color=False)
    assert "Fix:      fix always available, safe (applied by --fix)\n" in render_rule(rule_by_code("CUDA901"), color=False)
    assert "Fix:      no automatic fix\n" in render_rule(rule_by_code("CUDA900"), color=False)


def test_render_rule_colour() -> None:
    rule = rule_by_code("CUDA001")
    coloured = render_rule(rule, color=True)
    assert "\x1b[" in coloured
    stripped = ANSI.sub("", coloured)
    assert rule.code in stripped and "Why" in stripped and "nativeBuildInputs = [ cudatoolkit ];" in stripped


def test_render_rule_list() -> None:
    text = render_rule_list(color=False)
    lines = text.splitlines()
    assert lines[0].split() == ["Code", "Name", "Severity", "Fixable", "Fix", "Status", "Summary"]
    assert len(lines) == 1 + len(all_rules())
    for line, rule in zip(lines[1:], all_rules()):
        assert line.split()[:5] == [rule.code, rule.name, rule.severity.value, rule.availability.value, rule.fix.value]
        assert line.endswith(rule.summary)
    # Columns line up.
    assert len({line.index(rule.summary) for line, rule in zip(lines[1:], all_rules())}) == 1
    coloured = render_rule_list(color=True)
    assert "\x1b[" in coloured and ANSI.sub("", coloured) == text


def test_markdown_table() -> None:
    table = rules_markdown_table()
    lines = table.splitlines()
    assert lines[0] == "| Code | Name | Severity | Fix | Summary |"
    assert len(lines) == 2 + len(all_rules())
    for line, rule in zip(lines[2:], all_rules()):
        anchor = rule.url.rsplit("#", 1)[1]
        assert line.startswith(f"| [{rule.code}](docs/rules.md#{anchor}) | `{rule.name}` | {rule.severity.value} |")
        assert line.count(" | ") == 4  # no unescaped pipe in a summary breaks the row


def test_readme_table_is_up_to_date() -> None:
    if not README.exists():
        pytest.skip("no README.md")
    text = README.read_text(encoding="utf-8")
    block = readme_block(text)
    if block is None:
        pytest.skip("README.md has no rules block")
    assert block.strip() == rules_markdown_table().strip(), "the README's rule table is out of date: run python -m cudalint.frontend.ruledocs --write-readme README.md"


def test_write_and_check_readme(tmp_path, capsys) -> None:
    readme = tmp_path / "README.md"
    readme.write_text(f"# cudalint\n\n## Rules\n\n{START_MARKER}\nstale\n{END_MARKER}\n\nMore text.\n", encoding="utf-8")
    assert main(["--check-readme", str(readme)]) == 1
    assert "out of date" in capsys.readouterr().err
    assert main(["--write-readme", str(readme)]) == 0
    text = readme.read_text(encoding="utf-8")
    assert text == f"# cudalint\n\n## Rules\n\n{START_MARKER}\n{rules_markdown_table()}{END_MARKER}\n\nMore text.\n"
    assert main(["--check-readme", str(readme)]) == 0
    assert main(["--write-readme", str(readme)]) == 0
    assert readme.read_text(encoding="utf-8") == text


def test_readme_without_markers_is_an_error(tmp_path, capsys) -> None:
    readme = tmp_path / "README.md"
    readme.write_text("# cudalint\n", encoding="utf-8")
    assert main(["--write-readme", str(readme)]) == 2
    assert "rules:start" in capsys.readouterr().err
    readme.write_text(f"{START_MARKER}\n", encoding="utf-8")
    assert main(["--write-readme", str(readme)]) == 2
    assert main(["--write-readme", str(tmp_path / "missing.md")]) == 2


def test_main_prints_the_table(capsys) -> None:
    assert main([]) == 0
    assert capsys.readouterr().out == rules_markdown_table()


def test_module_docstring_documents_the_command() -> None:
    assert "--write-readme README.md" in ruledocs.__doc__


def test_rules_reference_is_up_to_date() -> None:
    from cudalint.frontend.ruledocs import REFERENCE_PATH, rules_reference_markdown

    reference = README.parent / REFERENCE_PATH
    assert reference.exists(), f"{REFERENCE_PATH} is missing: run python -m cudalint.frontend.ruledocs --write-reference {REFERENCE_PATH}"
    assert reference.read_text(encoding="utf-8") == rules_reference_markdown(), f"{REFERENCE_PATH} is out of date: run python -m cudalint.frontend.ruledocs --write-reference {REFERENCE_PATH}"


def test_every_rule_url_points_at_its_reference_section() -> None:
    from cudalint.frontend.ruledocs import rules_reference_markdown
    from cudalint.lint.registry import all_rules

    reference = rules_reference_markdown()
    for rule in all_rules():
        anchor = rule.url.rsplit("#", 1)[1]
        assert f"\n## {rule.code} {rule.name}\n" in reference and anchor == f"{rule.code.lower()}-{rule.name}"


def test_rules_json(capsys) -> None:
    import json

    from cudalint.frontend.cli import main

    assert main(["rules", "--output-format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [row["code"] for row in rows] == [rule.code for rule in all_rules()]
    first = rows[0]
    assert set(first) == {"code", "name", "summary", "severity", "fix", "fixable", "preview", "precision", "url", "explanation"}
    assert first["explanation"] == rule_by_code(first["code"]).docs and first["preview"] in (True, False)
