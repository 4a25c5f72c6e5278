"""Output formats for `cudalint check`: text (ruff/rustc style), concise (a line a finding), json (ruff's shape), sarif
(SARIF 2.1.0), github (workflow commands), rdjson (reviewdog, fixes as suggestions) and
markdown (a review summary), plus `--statistics`.

A reporter is a callable `(results, out, options) -> None`; `get_reporter(name)` returns one.
Reporters print findings only: per-file errors appear where a format has room for them (text,
SARIF notifications, GitHub annotations), never as findings, and `FileResult.diff` is the CLI's.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TextIO

from cudalint.lint.model import Applicability, Diagnostic
from cudalint.lint.results import FileResult, ReportedTarget
from cudalint.lint.rule import Rule


@dataclass(frozen=True)
class ReportOptions:
    color: bool = False
    unsafe_fixes: bool = False  # whether `--unsafe-fixes` is on (unsafe fixes are applicable)
    show_fixes: bool = True  # print fix titles (text format)
    summary: bool = True  # the text format's closing lines (targets, files, counts); off with --quiet


Reporter = Callable[[list[FileResult], TextIO, ReportOptions], None]

# name -> module holding a `report(results, out, options)` function (or "module:function")
_MODULES = {
    "text": "cudalint.frontend.reporters.text",
    "concise": "cudalint.frontend.reporters.text:report_concise",
    "json": "cudalint.frontend.reporters.json_format",
    "sarif": "cudalint.frontend.reporters.sarif",
    "github": "cudalint.frontend.reporters.github",
    "rdjson": "cudalint.frontend.reporters.rdjson",
    "markdown": "cudalint.frontend.reporters.markdown",
}
FORMATS: tuple[str, ...] = tuple(_MODULES)


class UnknownFormatError(KeyError, ValueError):
    """An output format cudalint does not have (catch as KeyError or ValueError)."""

    def __str__(self) -> str:
        return f"unknown output format {self.args[0]!r} (choose from {', '.join(FORMATS)})"


def get_reporter(name: str) -> Reporter:
    """The reporter for an output format name; raises UnknownFormatError (a KeyError and a
    ValueError) for other names. Modules are imported lazily to keep CLI start-up fast."""
    try:
        module_name = _MODULES[name]
    except (KeyError, TypeError):
        raise UnknownFormatError(name) from None
    module, _, function = module_name.partition(":")
    return getattr(importlib.import_module(module), function or "report")


# Helpers shared by the reporters.


def findings(results: list[FileResult]) -> Iterator[tuple[FileResult, Diagnostic]]:
    """Every finding of files that have a source, sorted by filename then position."""
    for result in sorted(results, key=lambda r: r.path):
        if result.source is None:
            continue
        for diagnostic in sorted(result.diagnostics, key=lambda d: (d.start, d.end, d.code)):
            yield result, diagnostic


def targets(results: list[FileResult]) -> list[ReportedTarget]:
    """The distinct targets the parsed files were judged against, in order of first use."""
    return list(dict.fromkeys(r.target for r in sorted(results, key=lambda r: r.path) if r.target is not None))


def rule_of(code: str) -> Rule | None:
    from cudalint.lint.registry import rule_by_code

    try:
        return rule_by_code(code)
    except KeyError:
        return None


def fix_status(diagnostic: Diagnostic) -> Applicability:
    """How the primary fix applies: SAFE (with --fix), UNSAFE (with --unsafe-fixes) or NONE."""
    fix = diagnostic.fix
    if fix is None or not fix.edits:
        return Applicability.NONE
    return fix.applicability


def is_applicable(diagnostic: Diagnostic, unsafe_fixes: bool) -> bool:
    status = fix_status(diagnostic)
    return status is Applicability.SAFE or (unsafe_fixes and status is Applicability.UNSAFE)
