"""Rule documentation for people: `cudalint rule CODE`, `cudalint rules`, and the README's rule
table.

    python -m cudalint.frontend.ruledocs --write-readme README.md   # regenerate the README's table
    python -m cudalint.frontend.ruledocs --check-readme README.md   # exit 1 if it is out of date
    python -m cudalint.frontend.ruledocs --write-reference docs/rules.md   # every rule's documentation

The README holds the table between `<!-- rules:start -->` and `<!-- rules:end -->`.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

from cudalint.lint.model import Applicability, FixAvailability
from cudalint.lint.registry import all_rules
from cudalint.lint.rule import Rule

START_MARKER = "<!-- rules:start -->"
END_MARKER = "<!-- rules:end -->"

RESET = "\x1b[0m"
BOLD = "\x1b[1m"
DIM = "\x1b[2m"
UNDERLINE = "\x1b[4m"
RED = "\x1b[31m"
GREEN = "\x1b[32m"
YELLOW = "\x1b[33m"
CYAN = "\x1b[36m"

_SEVERITY_COLOR = {"error": RED, "warning": YELLOW, "info": CYAN}

# How risky a rule's riskiest fix is, and where it applies.
FIX_TEXT = {
    Applicability.SAFE: "safe (applied by --fix)",
    Applicability.UNSAFE: "up to unsafe (unsafe ones applied by --fix --unsafe-fixes)",
}


def fix_text(rule: Rule, long: bool = True) -> str:
    """`sometimes available, up to unsafe (...)`: the rule's fix availability and riskiest fix
    (like ruff's "Fix is sometimes available"); `long=False` leaves out where fixes apply."""
    if rule.availability is FixAvailability.NEVER:
        return "no automatic fix"
    risk = FIX_TEXT[rule.fix] if long else FIX_TEXT[rule.fix].split(" (")[0]
    return f"fix {rule.availability.value} available, {risk}"


def _paint(color: bool, text: str, *styles: str) -> str:
    return "".join(styles) + text + RESET if color and text else text


def _inline(text: str, color: bool) -> str:
    """Inline markdown for a terminal: `code` highlighted when coloured, kept as is otherwise."""
    if not color:
        return text
    return re.sub(r"`([^`\n]+)`", lambda m: _paint(True, m.group(1), CYAN), text)


def render_docs(docs: str, color: bool) -> str:
    """The docs markdown for a terminal: headings emphasised, fenced code indented."""
    out: list[str] = []
    fence: str | None = None
    for line in docs.splitlines():
        stripped = line.strip()
        if fence is not None:
            if stripped.startswith("```"):
                fence = None
                out.append("")
                continue
            out.append("    " + _paint(color, line, GREEN) if line else "")
            continue
        if stripped.startswith("```"):
            fence = stripped[3:].strip()
            if out and out[-1] != "":
                out.append("")
            continue
        heading = re.match(r"^(#{1,6})\s+(.*)$", line)
        if heading:
            title = heading.group(2).strip()
            out.append(_paint(color, title, BOLD, UNDERLINE) if color else f"{title}\n{'-' * len(title)}")
            continue
        if stripped or (out and out[-1] != ""):  # one blank line between blocks of prose
            out.append(_inline(line, color))
    return "\n".join(out).strip("\n")


def render_rule(rule: Rule, color: bool) -> str:
    severity = rule.severity.value
    lines = [
        f"{_paint(color, rule.code, BOLD)} {_paint(color, rule.name, BOLD)}",
        "",
        _inline(rule.summary, color),
        "",
        f"Severity: {_paint(color, severity, _SEVERITY_COLOR.get(severity, ''))}",
        f"Fix:      {fix_text(rule)}",
        f"Docs:     {rule.url}",
    ]
    if rule.preview:
        lines.insert(-1, f"Status:   {rule.preview_note}")
    docs = rule.docs.strip()
    if docs:
        lines += ["", render_docs(docs, color)]
    return "\n".join(lines) + "\n"


def render_rule_list(color: bool) -> str:
    rules = all_rules()
    header = ("Code", "Name", "Severity", "Fixable", "Fix", "Status", "Summary")
    rows = [(r.code, r.name, r.severity.value, r.availability.value, r.fix.value, "preview" if r.preview else "stable", r.summary) for r in rules]
    columns = len(header) - 1  # the summary is not padded
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(columns)]

    def line(cells: tuple[str, ...], styles: tuple[tuple[str, ...], ...]) -> str:
        parts = []
        for i, cell in enumerate(cells[:columns]):
            parts.append(_paint(color, cell, *styles[i]) + " " * (widths[i] - len(cell)))
        parts.append(cells[columns])
        return "  ".join(parts).rstrip()

    out = [line(header, ((BOLD,),) * columns)]
    for row in rows:
        severity_style = (_SEVERITY_COLOR.get(row[2], ""),)
        out.append(line(row, ((BOLD,), (), severity_style, (), (), ())))
    return "\n".join(out) + "\n"


def rules_json() -> str:
    """`cudalint rules --output-format json`: every rule's metadata and docs (ruff's fields, plus
    severity and status)."""
    rows = [
        {
            "code": r.code,
            "name": r.name,
            "summary": r.summary,
            "severity": r.severity.value,
            "fix": r.fix.value,
            "fixable": r.availability.value,
            "preview": r.preview,
            "precision": r.precision or None,
            "url": r.url,
            "explanation": r.docs,
        }
        for r in all_rules()
    ]
    return json.dumps(rows, indent=2) + "\n"


def _cell(text: str) -> str:
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")


REFERENCE_PATH = "docs/rules.md"


def _anchor(rule: Rule) -> str:
    return f"{rule.code.lower()}-{rule.name}"


def rules_markdown_table() -> str:
    """The README's table; codes link to the rule's section of docs/rules.md."""
    lines = ["| Code | Name | Severity | Fix | Summary |", "| --- | --- | --- | --- | --- |"]
    for rule in all_rules():
        fix = "" if rule.availability is FixAvailability.NEVER else f"{rule.availability.value}, {fix_text(rule, long=False).split(', ')[1]}"
        summary = ("(preview) " if rule.preview else "") + rule.summary
        lines.append(f"| [{rule.code}]({REFERENCE_PATH}#{_anchor(rule)}) | `{rule.name}` | {rule.severity.value} | {fix} | {_cell(summary)} |")
    return "\n".join(lines) + "\n"


def rules_reference_markdown() -> str:
    """docs/rules.md: every rule's documentation, the page `Rule.url` points into."""
    parts = [
        "# cudalint rules\n",
        "Generated from the rule modules by `python -m cudalint.frontend.ruledocs --write-reference docs/rules.md`; do not edit by hand.\n",
    ]
    for rule in all_rules():
        docs = re.sub(r"^## ", "### ", rule.docs, flags=re.M)
        status = f"\n\n**Status:** {rule.preview_note}" if rule.preview else ""
        parts.append(f"## {rule.code} {rule.name}\n\n*{rule.severity.value}, {fix_text(rule, long=False)}*{status}\n\n{docs}\n")
    return "\n".join(parts)


class ReadmeError(Exception):
    pass


def readme_block(text: str) -> str | None:
    """The text between the markers, or None when the README has no (complete) block."""
    start = text.find(START_MARKER)
    if start == -1:
        return None
    end = text.find(END_MARKER, start)
    if end == -1:
        raise ReadmeError(f"{START_MARKER} without a following {END_MARKER}")
    return text[start + len(START_MARKER) : end]


def update_readme(text: str) -> str:
    """`text` with the block between the markers replaced by the current table."""
    if readme_block(text) is None:
        raise ReadmeError(f"no {START_MARKER} ... {END_MARKER} block")
    start = text.index(START_MARKER) + len(START_MARKER)
    end = text.index(END_MARKER, start)
    return text[:start] + "\n" + rules_markdown_table() + text[end:]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m cudalint.frontend.ruledocs", description=__doc__.split("\n\n")[0])
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--write-readme", metavar="README", help="replace the rule table between the markers")
    group.add_argument("--check-readme", metavar="README", help="exit 1 when the rule table is out of date")
    group.add_argument("--write-reference", metavar="PATH", help=f"write the rules reference ({REFERENCE_PATH})")
    group.add_argument("--check-reference", metavar="PATH", help="exit 1 when the rules reference is out of date")
    args = parser.parse_args(argv)
    if args.write_reference or args.check_reference:
        return _reference(Path(args.write_reference or args.check_reference), write=bool(args.write_reference))
    target = args.write_readme or args.check_readme
    if target is None:
        sys.stdout.write(rules_markdown_table())
        return 0
    path = Path(target)
    try:
        text = path.read_text(encoding="utf-8")
        updated = update_readme(text)
    except (OSError, ReadmeError) as error:
        print(f"error: {path}: {error}", file=sys.stderr)
        return 2
    if args.check_readme:
        if updated != text:
            print(f"{path}: the rule table is out of date; run python -m cudalint.frontend.ruledocs --write-readme {path}", file=sys.stderr)
            return 1
        return 0
    if updated != text:
        path.write_text(updated, encoding="utf-8", newline="")
    return 0


def _reference(path: Path, write: bool) -> int:
    wanted = rules_reference_markdown()
    current = path.read_text(encoding="utf-8") if path.exists() else None
    if write:
        if current != wanted:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(wanted, encoding="utf-8", newline="")
        return 0
    if current != wanted:
        print(f"{path}: the rules reference is out of date; run python -m cudalint.frontend.ruledocs --write-reference {path}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
