"""A review summary in Markdown, for a pull-request comment or `$GITHUB_STEP_SUMMARY`:

    cudalint check --new-from-rev origin/main... --output-format markdown >> "$GITHUB_STEP_SUMMARY"

A heading with the count, a table of findings per rule (linked to the rule's docs, with how
they can be fixed), what the fixes save in NVIDIA archive downloads (cudalint/knowledge/sizes.py), then
the findings themselves, at most MAX_LISTED of them (GitHub cuts comments at 65,536 characters).
"""

from __future__ import annotations

from collections import Counter
from typing import TextIO

from cudalint.frontend.reporters import ReportOptions, findings, fix_status, rule_of
from cudalint.knowledge import sizes
from cudalint.lint.model import Applicability
from cudalint.lint.results import FileResult

MAX_LISTED = 100
FIX_WORDS = {Applicability.SAFE: "`--fix`", Applicability.UNSAFE: "`--unsafe-fixes`", Applicability.NONE: "by hand"}


def _cell(text: str) -> str:
    """Text for one table cell or list item: on one line, `|` escaped."""
    return " ".join(text.split()).replace("|", "\\|")


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


def _rule_link(code: str) -> str:
    rule = rule_of(code)
    return f"[{code}]({rule.url}) `{rule.name}`" if rule else code


def render(results: list[FileResult], options: ReportOptions) -> str:
    shown = list(findings(results))
    failed = [r for r in results if r.error is not None or r.internal_errors]
    lines = ["## cudalint", ""]
    if not shown:
        lines.append("No findings." if not failed else "No findings, but some files could not be checked (below).")
    else:
        files = len({result.path for result, _ in shown})
        lines += [f"**{_plural(len(shown), 'finding')}** in {_plural(files, 'file')}.", ""]
        counts = Counter(d.code for _, d in shown)
        fixes: dict[str, Counter[Applicability]] = {}
        for _, diagnostic in shown:
            fixes.setdefault(diagnostic.code, Counter())[fix_status(diagnostic)] += 1
        lines += ["| rule | findings | fixable with |", "|---|---:|---|"]
        for code, count in sorted(counts.items(), key=lambda item: (-item[1], item[0])):
            how = ", ".join(f"{FIX_WORDS[status]}: {n}" for status, n in sorted(fixes[code].items(), key=lambda item: item[0].value))
            lines.append(f"| {_rule_link(code)} | {count} | {how} |")
        total = sizes.report_total(results)
        if total is not None:
            lines += ["", f"Downloads: {total.describe()} (compressed sizes of NVIDIA's redistributable archives, not Nix closure sizes)."]
        lines += ["", "### Findings", ""]
        for result, diagnostic in shown[:MAX_LISTED]:
            source = result.source
            assert source is not None
            row, column = source.location(diagnostic.start)
            item = f"- `{_cell(result.path)}:{row}:{column}` {_rule_link(diagnostic.code)} ({diagnostic.severity.value}): {_cell(diagnostic.message)}"
            status = fix_status(diagnostic)
            if diagnostic.fix is not None and status is not Applicability.NONE:
                unsafe = " (unsafe)" if status is Applicability.UNSAFE else ""
                item += f"<br>fix{unsafe}: {_cell(diagnostic.fix.title)}"
            lines.append(item)
        if len(shown) > MAX_LISTED:
            lines.append(f"- … and {len(shown) - MAX_LISTED} more (run `cudalint check` for all of them)")
    if failed:
        lines += ["", "### Files that could not be checked", ""]
        for result in sorted(failed, key=lambda r: r.path):
            for problem in ([result.error] if result.error else []) + result.internal_errors:
                lines.append(f"- `{_cell(result.path)}`: {_cell(problem.splitlines()[0])}")
    return "\n".join(lines) + "\n"


def report(results: list[FileResult], out: TextIO, options: ReportOptions) -> None:
    out.write(render(results, options))
