"""SARIF 2.1.0 output (GitHub code scanning and other SARIF viewers).

One run; `tool.driver.rules` lists every rule (so `ruleIndex` is stable across runs); regions are
1-based with columns in UTF-16 code units (SARIF's default `columnKind`); fixes become SARIF
`fixes` with `deletedRegion` + `insertedContent` replacements; per-file and internal errors become
`invocations[0].toolExecutionNotifications`; the targets the files were judged against are the
run's `properties.targets`. `partialFingerprints` carry the baseline fingerprint,
which does not depend on line numbers.
"""

from __future__ import annotations

import json
import os
from pathlib import Path, PurePosixPath
from typing import Any, TextIO
from urllib.parse import quote

from cudalint import __version__
from cudalint.frontend.baseline import fingerprint
from cudalint.frontend.reporters import ReportOptions, findings, targets
from cudalint.lint.model import Applicability, Diagnostic, FixAvailability, Severity
from cudalint.lint.results import FileResult
from cudalint.lint.rule import Rule
from cudalint.nix.source import SourceFile

SCHEMA_URI = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
INFORMATION_URI = "https://github.com/cudalint/cudalint"
SRCROOT = "%SRCROOT%"
FINGERPRINT_KEY = "cudalint/v1"

LEVEL = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "note"}


def _first_paragraph(docs: str) -> str:
    return docs.split("\n\n", 1)[0].strip()


def _docs_text(rule: Rule) -> str:
    return rule.docs or rule.summary


def rule_descriptor(rule: Rule) -> dict[str, Any]:
    docs = _docs_text(rule)
    return {
        "id": rule.code,
        "name": rule.name,
        "shortDescription": {"text": rule.summary},
        "fullDescription": {"text": _first_paragraph(docs) or rule.summary},
        "help": {"text": docs, "markdown": docs},
        "helpUri": rule.url,
        "defaultConfiguration": {"level": LEVEL[rule.severity]},
        "properties": {"tags": ["nix", "cuda"], "fix": rule.fix.value, "fixAvailability": rule.availability.value},
    }


def artifact_location(path: str) -> dict[str, str]:
    """A relative path becomes a relative URI reference against %SRCROOT%; an absolute one a
    file: URI."""
    # (percent-encoded from the name's bytes: a name that is not UTF-8 has lone surrogates here)
    if os.path.isabs(path):
        return {"uri": "file://" + quote(os.fsencode(PurePosixPath(Path(path).as_posix())), safe="/")}
    posix = PurePosixPath(Path(path).as_posix())
    return {"uri": quote(os.fsencode(posix), safe="/"), "uriBaseId": SRCROOT}


def region(source: SourceFile, start: int, end: int) -> dict[str, int]:
    """A 1-based region with UTF-16 columns; `endColumn` is one past the last character."""
    start = max(0, min(start, len(source.data)))
    end = max(start, min(end, len(source.data)))
    start_line, start_character = source.utf16_position(start)
    end_line, end_character = source.utf16_position(end)
    return {
        "startLine": start_line + 1,
        "startColumn": start_character + 1,
        "endLine": end_line + 1,
        "endColumn": end_character + 1,
    }


def _fixes(path: str, source: SourceFile, diagnostic: Diagnostic) -> list[dict[str, Any]]:
    fixes = []
    for fix in diagnostic.fixes:
        if not fix.edits:
            continue
        description = fix.title
        if fix.applicability is Applicability.UNSAFE:
            description += " (unsafe fix: may change what is built)"
        fixes.append(
            {
                "description": {"text": description},
                "artifactChanges": [
                    {
                        "artifactLocation": artifact_location(path),
                        "replacements": [{"deletedRegion": region(source, edit.start, edit.end), "insertedContent": {"text": edit.content}} for edit in sorted(fix.edits)],
                    }
                ],
            }
        )
    return fixes


def _directory_uri(directory: Path) -> str:
    uri = artifact_location(str(directory))["uri"]
    return uri if uri.endswith("/") else uri + "/"


def sarif_log(results: list[FileResult]) -> dict[str, Any]:
    from cudalint.lint.registry import all_rules

    rules = list(all_rules())
    index = {rule.code: i for i, rule in enumerate(rules)}
    sarif_results = []
    for result, diagnostic in findings(results):
        source = result.source
        assert source is not None
        if diagnostic.code not in index:  # a code no registered rule has: describe it minimally
            index[diagnostic.code] = len(rules)
            rules.append(
                Rule(
                    code=diagnostic.code,
                    name=diagnostic.code.lower(),
                    severity=diagnostic.severity,
                    fix=Applicability.NONE,
                    availability=FixAvailability.NEVER,
                    summary=diagnostic.code,
                )
            )
        item: dict[str, Any] = {
            "ruleId": diagnostic.code,
            "ruleIndex": index[diagnostic.code],
            "level": LEVEL[diagnostic.severity],
            "message": {"text": diagnostic.message},
            "locations": [
                {
                    "physicalLocation": {
                        "artifactLocation": artifact_location(result.path),
                        "region": region(source, diagnostic.start, diagnostic.end),
                    }
                }
            ],
            "partialFingerprints": {FINGERPRINT_KEY: fingerprint(source, diagnostic)},
        }
        fixes = _fixes(result.path, source, diagnostic)
        if fixes:
            item["fixes"] = fixes
        sarif_results.append(item)

    notifications = []
    for result in sorted(results, key=lambda r: r.path):
        location = [{"physicalLocation": {"artifactLocation": artifact_location(result.path)}}]
        if result.error is not None:
            notifications.append({"level": "error", "message": {"text": f"{result.path}: {result.error}"}, "locations": location})
        for message in result.internal_errors:
            notifications.append({"level": "error", "message": {"text": f"{result.path}: {message}"}, "locations": location})

    run: dict[str, Any] = {
        "tool": {
            "driver": {
                "name": "cudalint",
                "version": __version__,
                "semanticVersion": __version__,
                "informationUri": INFORMATION_URI,
                "rules": [rule_descriptor(rule) for rule in rules],
            }
        },
        "originalUriBaseIds": {SRCROOT: {"uri": _directory_uri(Path.cwd())}},
        "invocations": [{"executionSuccessful": not notifications, "toolExecutionNotifications": notifications}],
        "results": sarif_results,
        "columnKind": "utf16CodeUnits",
        # what the files were judged against, once per run (not in every message)
        "properties": {"targets": [target.as_json() | {"description": target.describe()} for target in targets(results)]},
    }
    return {"$schema": SCHEMA_URI, "version": "2.1.0", "runs": [run]}


def report(results: list[FileResult], out: TextIO, options: ReportOptions) -> None:
    json.dump(sarif_log(results), out, indent=2)
    out.write("\n")
