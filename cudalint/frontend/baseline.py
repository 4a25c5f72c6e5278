"""Baselines: record today's findings so that only new ones fail a run (`--write-baseline FILE`,
then `--baseline FILE`).

A finding is identified by (path relative to the baseline file's directory, code, fingerprint),
where the fingerprint hashes the flagged text and the stripped text of the line(s) it sits on,
with whitespace runs collapsed, and by an anchor that hashes the code and the flagged text
alone. Line numbers are part of neither, so edits elsewhere that move lines keep findings
matched. Matching is a multiset, in three passes over what is left by the one before: exact
fingerprints, then anchors (a finding whose line was rewritten around it), then the rule alone
within the file (a finding whose flagged text another fix rewrote: `--fix` renaming
`addOpenGLRunpath` leaves CUDA108 on `addDriverRunpath`). So a file's findings of a rule stay
old up to the number baselined, and one more is new. Version 1 files (no anchors) are still read.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import re
import tempfile
from collections import Counter
from pathlib import Path

from cudalint import __version__
from cudalint.lint.model import Diagnostic
from cudalint.lint.results import FileResult
from cudalint.nix.source import SourceFile
from cudalint.regular_files import read_regular

# The largest baseline read (a finding takes about 200 bytes: a million of them).
MAX_BASELINE_SIZE = 256 * 1024 * 1024

VERSION = 2
READABLE_VERSIONS = (1, 2)
_WHITESPACE = re.compile(r"\s+")

Key = tuple[str, str, str]  # (path, code, fingerprint)


class BaselineError(Exception):
    """A baseline file that is missing, unreadable, corrupt or of an unknown version."""


def _normalise(text: str) -> str:
    return _WHITESPACE.sub(" ", text).strip()


def fingerprint(source: SourceFile, diagnostic: Diagnostic) -> str:
    """A line-number-free hash of a finding: its code, the flagged text, and the stripped text
    of the lines the flagged span covers."""
    start = max(0, min(diagnostic.start, len(source.data)))
    end = max(start, min(diagnostic.end, len(source.data)))
    first = source.line_of(start)
    last = source.line_of(max(start, end - 1))
    lines = " ".join(source.line_text(line).strip() for line in range(first, last + 1))
    material = "\x00".join((diagnostic.code, _normalise(source.slice(start, end)), _normalise(lines)))
    return hashlib.sha256(material.encode("utf-8", "surrogatepass")).hexdigest()[:20]


def anchor(source: SourceFile, diagnostic: Diagnostic) -> str:
    """The second-pass key: the finding's code and flagged text only (not the lines around it)."""
    start = max(0, min(diagnostic.start, len(source.data)))
    end = max(start, min(diagnostic.end, len(source.data)))
    material = "\x00".join((diagnostic.code, _normalise(source.slice(start, end))))
    return hashlib.sha256(material.encode("utf-8", "surrogatepass")).hexdigest()[:20]


def relative_path(path: str, root: Path) -> str:
    """`path` (as shown, relative to the working directory) relative to `root`, with `/`."""
    try:
        absolute = Path(os.path.abspath(path))
        relative = os.path.relpath(absolute, os.path.abspath(root))
    except ValueError:  # another drive on Windows
        return Path(path).as_posix()
    return Path(relative).as_posix()


def _keys(result: FileResult, root: Path) -> list[tuple[Key, Diagnostic]]:
    if result.source is None:
        return []
    path = relative_path(result.path, root)
    return [((path, d.code, fingerprint(result.source, d)), d) for d in result.diagnostics]


@dataclasses.dataclass
class Baseline:
    """Recorded findings, keyed relative to `root` (the baseline file's directory)."""

    root: Path
    counts: Counter[Key]
    # fingerprint key -> (path, code, anchor) of the same finding (version 2 files)
    anchors: dict[Key, Key] = dataclasses.field(default_factory=dict)
    unmatched: int = 0  # after `filter`: baselined findings no longer present (fixed since)

    def __len__(self) -> int:
        return sum(self.counts.values())

    def filter(self, results: list[FileResult]) -> tuple[list[FileResult], int]:
        """The results without baselined findings, and how many findings were dropped."""
        remaining = Counter(self.counts)
        # first pass: exact fingerprints, all files
        unmatched: list[tuple[Key, Diagnostic]] = []
        keep: list[set[int]] = []
        for index, result in enumerate(results):
            keep.append(set())
            for position, (key, diagnostic) in enumerate(_keys(result, self.root)):
                if remaining[key] > 0:
                    remaining[key] -= 1
                else:
                    keep[index].add(position)
                    assert result.source is not None
                    unmatched.append(((key[0], key[1], anchor(result.source, diagnostic)), diagnostic))
        # second pass: what is left, by anchor, against the baselined findings left
        by_anchor: dict[Key, list[Key]] = {}
        for key, count in remaining.items():
            if count > 0 and key in self.anchors:
                by_anchor.setdefault(self.anchors[key], []).append(key)
        matched_late: set[int] = set()
        for key, diagnostic in unmatched:
            candidates = by_anchor.get(key, [])
            while candidates and remaining[candidates[-1]] == 0:
                candidates.pop()
            if candidates:
                remaining[candidates[-1]] -= 1
                matched_late.add(id(diagnostic))
        # third pass: the rule within the file, against the baselined findings still left
        per_rule: Counter[tuple[str, str]] = Counter()
        for key, count in remaining.items():
            if count > 0:
                per_rule[key[0], key[1]] += count
        for key, diagnostic in unmatched:
            if id(diagnostic) not in matched_late and per_rule[key[0], key[1]] > 0:
                per_rule[key[0], key[1]] -= 1
                matched_late.add(id(diagnostic))
        kept_results: list[FileResult] = []
        dropped = 0
        for index, result in enumerate(results):
            if result.source is None or not result.diagnostics:
                kept_results.append(result)
                continue
            kept = [d for position, d in enumerate(result.diagnostics) if position in keep[index] and id(d) not in matched_late]
            dropped += len(result.diagnostics) - len(kept)
            kept_results.append(dataclasses.replace(result, diagnostics=kept))
        self.unmatched = sum(per_rule.values())
        return kept_results, dropped


def load_baseline(path: str | os.PathLike[str]) -> Baseline:
    path = Path(path)
    try:
        raw = read_regular(str(path), MAX_BASELINE_SIZE).decode("utf-8")
    except FileNotFoundError:
        raise BaselineError(f"baseline file {path} does not exist (create it with --write-baseline {path})") from None
    except (OSError, UnicodeDecodeError) as error:
        raise BaselineError(f"cannot read baseline file {path}: {error}") from None
    try:
        data = json.loads(raw)
    except json.JSONDecodeError as error:
        raise BaselineError(f"baseline file {path} is not valid JSON ({error}); regenerate it with --write-baseline") from None
    if not isinstance(data, dict) or "version" not in data:
        raise BaselineError(f"{path} is not a cudalint baseline (no version field)")
    if data["version"] not in READABLE_VERSIONS:
        readable = " and ".join(map(str, READABLE_VERSIONS))
        raise BaselineError(f"baseline file {path} has version {data['version']!r}; this cudalint reads versions {readable}: regenerate it with --write-baseline")
    entries = data.get("findings")
    if not isinstance(entries, list):
        raise BaselineError(f"baseline file {path} is corrupt: `findings` must be a list")
    counts: Counter[Key] = Counter()
    anchors: dict[Key, Key] = {}
    for index, entry in enumerate(entries):
        try:
            key = (entry["path"], entry["code"], entry["fingerprint"])
            count = entry.get("count", 1)
            anchor_value = entry.get("anchor")
        except (TypeError, KeyError, AttributeError):
            raise BaselineError(f"baseline file {path} is corrupt: finding #{index + 1} needs `path`, `code` and `fingerprint`") from None
        if not all(isinstance(part, str) for part in key) or not isinstance(count, int) or count < 1 or not isinstance(anchor_value, (str, type(None))):
            raise BaselineError(f"baseline file {path} is corrupt: finding #{index + 1} has values of the wrong type")
        counts[key] += count
        if anchor_value is not None:
            anchors[key] = (key[0], key[1], anchor_value)
    return Baseline(path.parent, counts, anchors)


def _file_mode(path: Path) -> int:
    """The existing file's mode, else what a plain `open(path, "w")` would create."""
    try:
        return path.stat().st_mode & 0o7777
    except OSError:
        umask = os.umask(0o022)
        os.umask(umask)
        return 0o666 & ~umask


def write_baseline(path: str | os.PathLike[str], results: list[FileResult]) -> int:
    """Record every finding of `results` in `path` (atomically); returns how many."""
    path = Path(path)
    root = path.parent
    entries: dict[Key, dict] = {}
    for result in results:
        for key, diagnostic in _keys(result, root):
            if key in entries:
                entries[key]["count"] += 1
                continue
            assert result.source is not None
            entries[key] = {
                "path": key[0],
                "code": key[1],
                "fingerprint": key[2],
                "anchor": anchor(result.source, diagnostic),
                "count": 1,
                # For people reading the file; not used for matching.
                "line": result.source.location(diagnostic.start)[0],
                "message": diagnostic.message,
            }
    findings = sorted(entries.values(), key=lambda e: (e["path"], e["line"], e["code"], e["fingerprint"]))
    for entry in findings:
        if entry["count"] == 1:
            del entry["count"]
    document = {"version": VERSION, "tool": "cudalint", "tool_version": __version__, "findings": findings}
    text = json.dumps(document, indent=2) + "\n"
    directory = root if str(root) else Path(".")
    directory.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(handle, "w", encoding="utf-8", newline="\n") as stream:
            stream.write(text)
        os.chmod(temporary, _file_mode(path))
        os.replace(temporary, path)
    except BaseException:
        try:
            os.unlink(temporary)
        except OSError:
            pass
        raise
    return sum(entry.get("count", 1) for entry in findings)
