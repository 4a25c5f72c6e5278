"""GitHub Actions workflow commands: one annotation per finding.

    ::warning file=pkg/default.nix,line=9,col=25,endLine=9,endColumn=36,title=CUDA001 (runfile-toolkit)::message

Values are escaped per GitHub's rules (`%`, CR and LF in the message; also `:` and `,` in
properties). GitHub ignores column properties on annotations spanning several lines, so those
carry only `col`.
"""

from __future__ import annotations

from typing import TextIO

from cudalint.frontend.reporters import ReportOptions, findings, rule_of
from cudalint.lint.model import Severity
from cudalint.lint.results import FileResult

COMMAND = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "notice"}


def escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def _command(kind: str, properties: list[tuple[str, object]], message: str) -> str:
    props = ",".join(f"{key}={escape_property(str(value))}" for key, value in properties)
    return f"::{kind} {props}::{escape_data(message)}"


def report(results: list[FileResult], out: TextIO, options: ReportOptions) -> None:
    for result in sorted(results, key=lambda r: r.path):
        if result.error is not None:
            out.write(_command("error", [("file", result.path), ("title", "cudalint")], result.error) + "\n")
        for message in result.internal_errors:
            out.write(_command("error", [("file", result.path), ("title", "cudalint internal error")], message) + "\n")
    for result, diagnostic in findings(results):
        source = result.source
        assert source is not None
        row, column = source.location(diagnostic.start)
        end_row, end_column = source.location(max(diagnostic.end, diagnostic.start))
        rule = rule_of(diagnostic.code)
        title = f"{diagnostic.code} ({rule.name})" if rule else diagnostic.code
        properties: list[tuple[str, object]] = [("file", result.path), ("line", row), ("col", column), ("endLine", end_row)]
        if end_row == row:
            properties.append(("endColumn", end_column))
        properties.append(("title", title))
        out.write(_command(COMMAND[diagnostic.severity], properties, diagnostic.message) + "\n")
