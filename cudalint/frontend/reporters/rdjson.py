"""reviewdog's Diagnostic Format (rdjson): one `DiagnosticResult` with every finding.

    cudalint check --output-format rdjson | reviewdog -f=rdjson -reporter=github-pr-review

Each finding whose fix `--fix` would apply (safe fixes; unsafe ones too with `--unsafe-fixes`)
carries that fix as ONE suggestion: the smallest range holding all of the fix's edits, replaced
by that range's fixed text, so that applying the suggestion writes what `--fix` writes for the
finding (reviewdog shows each suggestion as a GitHub "suggested change" a reviewer can commit).
Positions are 1-based lines and columns counted in UTF-8 bytes, ends exclusive (rdjson's rules).
Alternative fixes (editor actions) are not suggested: GitHub applies a suggestion as a whole.
"""

from __future__ import annotations

import json
from typing import Any, TextIO

from cudalint.frontend.reporters import ReportOptions, findings, is_applicable, rule_of
from cudalint.lint.fixing import apply_edits
from cudalint.lint.model import Edit, Fix, Severity
from cudalint.lint.results import FileResult
from cudalint.nix.source import SourceFile

SOURCE = {"name": "cudalint", "url": "https://github.com/cudalint/cudalint"}
SEVERITY = {Severity.ERROR: "ERROR", Severity.WARNING: "WARNING", Severity.INFO: "INFO"}


def position(source: SourceFile, byte: int) -> dict[str, int]:
    byte = max(0, min(byte, len(source.data)))
    line = source.line_of(byte)
    return {"line": line + 1, "column": byte - source.line_start(line) + 1}


def span_range(source: SourceFile, start: int, end: int) -> dict[str, Any]:
    return {"start": position(source, start), "end": position(source, max(start, end))}


def suggestion(source: SourceFile, fix: Fix) -> dict[str, Any]:
    """The fix as one replacement of the range its edits cover."""
    start, end = fix.span
    shifted = [Edit(edit.start - start, edit.end - start, edit.content) for edit in fix.edits]
    text = apply_edits(source.data[start:end], shifted).decode("utf-8", "surrogatepass")
    return {"range": span_range(source, start, end), "text": text}


def diagnostic_result(results: list[FileResult], options: ReportOptions) -> dict[str, Any]:
    diagnostics = []
    for result, diagnostic in findings(results):
        source = result.source
        assert source is not None
        rule = rule_of(diagnostic.code)
        item: dict[str, Any] = {
            "message": diagnostic.message,
            "location": {"path": result.path, "range": span_range(source, diagnostic.start, diagnostic.end)},
            "severity": SEVERITY[diagnostic.severity],
            "code": {"value": diagnostic.code, "url": rule.url} if rule else {"value": diagnostic.code},
        }
        if diagnostic.fix is not None and is_applicable(diagnostic, options.unsafe_fixes):
            item["suggestions"] = [suggestion(source, diagnostic.fix)]
        diagnostics.append(item)
    return {"source": SOURCE, "severity": "WARNING", "diagnostics": diagnostics}


def report(results: list[FileResult], out: TextIO, options: ReportOptions) -> None:
    json.dump(diagnostic_result(results, options), out, indent=2)
    out.write("\n")
