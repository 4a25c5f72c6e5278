"""`--statistics`: how many findings each rule produced, most frequent first, like ruff.

      3  CUDA001  [-] runfile-toolkit
      1  CUDA900  [ ] syntax-error
      4  total
    [*] every finding fixable with --fix, [-] some need --unsafe-fixes or have no fix, [ ] no fix

The legend is printed under the rows; `--output-format json` gives the same rows as a JSON list.
"""

from __future__ import annotations

import json
from collections import Counter
from typing import TextIO

from cudalint.frontend.reporters import fix_status, rule_of
from cudalint.knowledge import sizes
from cudalint.lint.model import Applicability
from cudalint.lint.results import FileResult


def statistics(results: list[FileResult]) -> list[tuple[int, str, str, str]]:
    """(count, code, name, marker) rows, most frequent first."""
    counts: Counter[str] = Counter()
    statuses: dict[str, set[Applicability]] = {}
    for result in results:
        if result.source is None:
            continue
        for diagnostic in result.diagnostics:
            counts[diagnostic.code] += 1
            statuses.setdefault(diagnostic.code, set()).add(fix_status(diagnostic))
    rows = []
    for code, count in sorted(counts.items(), key=lambda item: (-item[1], item[0])):
        seen = statuses[code]
        if seen == {Applicability.SAFE}:
            marker = "[*]"
        elif seen == {Applicability.NONE}:
            marker = "[ ]"
        else:
            marker = "[-]"
        rule = rule_of(code)
        rows.append((count, code, rule.name if rule else "", marker))
    return rows


LEGEND = "[*] every finding fixable with --fix, [-] some need --unsafe-fixes or have no fix, [ ] no fix"
_FIXABLE = {"[*]": "all", "[-]": "some", "[ ]": "none"}


def write_statistics(results: list[FileResult], out: TextIO) -> None:
    rows = statistics(results)
    if not rows:
        out.write("No findings.\n")
        return
    total = sum(count for count, *_ in rows)
    count_width = len(str(total))
    code_width = max(len("total"), *(len(code) for _, code, _, _ in rows))
    for count, code, name, marker in rows:
        out.write(f"{count:>{count_width}}  {code:<{code_width}}  {marker} {name}".rstrip() + "\n")
    out.write(f"{total:>{count_width}}  total\n{LEGEND}\n")
    download = sizes.report_total(results)
    if download is not None:
        text = download.describe()
        out.write(text[:1].upper() + text[1:] + ".\n")


def write_statistics_json(results: list[FileResult], out: TextIO) -> None:
    """The rows as JSON (ruff's shape): code, name, count, and whether `--fix` fixes all, some or none."""
    rows = [{"code": code, "name": name, "count": count, "fixable": _FIXABLE[marker]} for count, code, name, marker in statistics(results)]
    out.write(json.dumps(rows, indent=2) + "\n")
