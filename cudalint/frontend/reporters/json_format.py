"""JSON output in ruff's shape: a list of findings sorted by filename then position, with
1-based rows and columns counted in characters; each finding also names the `target` its file
was judged against (nixpkgs, where that came from, `undated`: the `FILE:LINE` of a pinned commit nothing
dates, era, CUDA releases). Per-file errors are not findings and are not
listed (the CLI reports them on stderr)."""

from __future__ import annotations

import json
from typing import Any, TextIO

from cudalint.frontend.reporters import ReportOptions, findings, rule_of
from cudalint.lint.model import Diagnostic
from cudalint.lint.results import FileResult
from cudalint.nix.source import SourceFile


def _location(source: SourceFile, byte: int) -> dict[str, int]:
    row, column = source.location(byte)
    return {"row": row, "column": column}


def finding(result: FileResult, diagnostic: Diagnostic) -> dict[str, Any]:
    source = result.source
    assert source is not None
    rule = rule_of(diagnostic.code)
    fix = diagnostic.fix
    return {
        "code": diagnostic.code,
        "rule": rule.name if rule else None,
        "message": diagnostic.message,
        "severity": diagnostic.severity.value,
        "filename": result.path,
        "location": _location(source, diagnostic.start),
        "end_location": _location(source, diagnostic.end),
        "context": diagnostic.context,
        "fix": None
        if fix is None
        else {
            "applicability": fix.applicability.value,
            "message": fix.title,
            "edits": [
                {
                    "content": edit.content,
                    "location": _location(source, edit.start),
                    "end_location": _location(source, edit.end),
                }
                for edit in sorted(fix.edits)
            ],
        },
        "url": rule.url if rule else None,
        "target": result.target.as_json() if result.target is not None else None,
    }


def report(results: list[FileResult], out: TextIO, options: ReportOptions) -> None:
    data = [finding(result, diagnostic) for result, diagnostic in findings(results)]
    json.dump(data, out, indent=2)  # ASCII-only: safe on any stdout encoding
    out.write("\n")
