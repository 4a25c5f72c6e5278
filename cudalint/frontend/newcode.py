"""`--new-from-rev REV`: report (and fix) only findings on lines added or changed since REV.

Semantics (golangci-lint's): the working tree, uncommitted changes included, is compared with
the revision, `git diff REV`; files git does not track yet (and does not ignore) are new as a
whole; renamed files count only their changed lines (`git diff -M`). `REV...` compares with the
merge base of REV and HEAD instead (for a pull request: `origin/main...`), the working tree
still included. Lines only deleted leave nothing to report.

A finding is new when its own span touches a new line. Its fix may edit old lines (adding a
`cudaPackages` formal at the top of the file, say): `--fix` applies the whole fix of a new
finding, and never a fix of a finding on old lines, even one whose edits reach new lines.

While `--fix` rewrites a file, the new regions follow the edits (`Scope.moved`), and text a fix
inserts counts as new, so a finding that a fix creates is fixed in the same run.
"""

from __future__ import annotations

import bisect
import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from cudalint.lint.model import Diagnostic, Edit
from cudalint.nix.source import SourceFile


class NewCodeError(Exception):
    """The revision or repository cannot be used (a usage error: exit 2)."""


# ---------------------------------------------------------------------------------------------
# Which lines are new: git


@dataclass(frozen=True)
class Changes:
    """New lines per file since a revision. `lines[path]` is a sorted tuple of 1-based line
    numbers, or None for a file that is new as a whole; paths are absolute, symlinks resolved."""

    revision: str
    base: str  # the commit compared with
    lines: dict[str, tuple[int, ...] | None]

    def for_path(self, path: str) -> NewLines:
        """The new lines of a file (none for an unchanged file)."""
        return NewLines(self.lines.get(os.path.realpath(path), ()))


_HUNK = re.compile(r"^@@ -\d+(?:,\d+)? \+(\d+)(?:,(\d+))? @@")


def _git(top: str, *arguments: str) -> str:
    import subprocess  # (only --new-from-rev runs git: other runs do not pay its import)

    try:
        completed = subprocess.run(["git", "-c", "core.quotepath=off", *arguments], cwd=top, capture_output=True, text=True, encoding="utf-8", errors="surrogateescape")
    except FileNotFoundError:
        raise NewCodeError("--new-from-rev needs git, which is not installed (or not on PATH)") from None
    if completed.returncode != 0:
        raise NewCodeError(f"git {arguments[0]} failed: {completed.stderr.strip() or completed.returncode}")
    return completed.stdout


def repository_root(directory: str) -> str:
    import subprocess

    try:
        completed = subprocess.run(["git", "rev-parse", "--show-toplevel"], cwd=directory, capture_output=True, text=True)
    except FileNotFoundError:
        raise NewCodeError("--new-from-rev needs git, which is not installed (or not on PATH)") from None
    except OSError as error:
        raise NewCodeError(f"--new-from-rev: cannot run git in {directory}: {error}") from None
    if completed.returncode != 0:
        raise NewCodeError(f"--new-from-rev needs a git repository, and {directory} is not inside one")
    return os.path.realpath(completed.stdout.strip())


def resolve_revision(top: str, revision: str) -> str:
    """The commit to compare with: REV itself, or with `REV...` its merge base with HEAD."""
    merge_base = revision.endswith("...")
    name = revision[:-3] if merge_base else revision
    if not name or name.startswith("-"):
        raise NewCodeError(f"--new-from-rev: `{revision}` is not a revision")
    import subprocess

    completed = subprocess.run(["git", "rev-parse", "--verify", "--quiet", "--end-of-options", f"{name}^{{commit}}"], cwd=top, capture_output=True, text=True)
    if completed.returncode != 0:
        raise NewCodeError(f"--new-from-rev: unknown revision `{name}` in the repository {top}")
    commit = completed.stdout.strip()
    if merge_base:
        found = subprocess.run(["git", "merge-base", commit, "HEAD"], cwd=top, capture_output=True, text=True)
        if found.returncode != 0:
            raise NewCodeError(f"--new-from-rev: `{name}` and HEAD have no merge base")
        commit = found.stdout.strip()
    return commit


def changes_since(revision: str, directory: str) -> Changes:
    """The new lines of every file of the repository holding `directory` since `revision`."""
    top = repository_root(directory)
    base = resolve_revision(top, revision)
    diff = _git(top, "diff", "--no-color", "--no-ext-diff", "--no-textconv", "-U0", "-M", "--src-prefix=a/", "--dst-prefix=b/", base, "--")
    lines = {os.path.join(top, path): tuple(new) for path, new in parse_diff(diff).items()}
    untracked = _git(top, "ls-files", "-z", "--others", "--exclude-standard")
    for path in filter(None, untracked.split("\0")):
        lines[os.path.join(top, path)] = None
    return Changes(revision, base, lines)


def parse_diff(diff: str) -> dict[str, list[int]]:
    """Added or changed lines (1-based, new side) per path of a `git diff -U0` output."""
    files: dict[str, list[int]] = {}
    current: list[int] | None = None
    for line in diff.splitlines():
        if line.startswith("+++ "):
            target = line[4:]
            if target == "/dev/null":  # deleted
                current = None
                continue
            path = _unquote(target)
            current = files.setdefault(path[2:] if path.startswith("b/") else path, [])
        elif current is not None and line.startswith("@@"):
            match = _HUNK.match(line)
            if match:
                start, count = int(match.group(1)), int(match.group(2) or 1)
                current.extend(range(start, start + count))
    return files


def _unquote(path: str) -> str:
    """git C-quotes names with unusual characters even with core.quotepath off: `"b/a\\tb.nix"`."""
    if not (path.startswith('"') and path.endswith('"')):
        return path
    raw = path[1:-1].encode("latin-1", "backslashreplace").decode("unicode_escape")
    return raw.encode("latin-1", "surrogateescape").decode("utf-8", "surrogateescape")


# ---------------------------------------------------------------------------------------------
# Which findings are new: byte regions that follow the fixes


@dataclass(frozen=True)
class NewLines:
    """A file's new lines, as a task carries them: `lines` None when the whole file is new."""

    lines: tuple[int, ...] | None

    @property
    def none(self) -> bool:
        return self.lines == ()


@dataclass(frozen=True)
class Scope:
    """The new regions of one file's current text: sorted, disjoint byte intervals."""

    regions: tuple[tuple[int, int], ...]

    @classmethod
    def of_lines(cls, source: SourceFile, lines: Sequence[int] | None) -> Scope:
        if lines is None:
            return cls(((0, len(source.data) + 1),))
        count = source.line_of(len(source.data)) + 1
        regions: list[tuple[int, int]] = []
        for line in lines:
            if 1 <= line <= count:
                start = source.line_start(line - 1)
                end = source.line_start(line) if line < count else len(source.data) + 1
                if regions and regions[-1][1] >= start:
                    regions[-1] = (regions[-1][0], max(regions[-1][1], end))
                else:
                    regions.append((start, end))
        return cls(tuple(regions))

    @property
    def empty(self) -> bool:
        return not self.regions

    def contains(self, diagnostic: Diagnostic) -> bool:
        start, end = diagnostic.start, max(diagnostic.end, diagnostic.start + 1)
        index = bisect.bisect_right(self.regions, (start, float("inf"))) - 1
        for candidate in (index, index + 1):
            if 0 <= candidate < len(self.regions):
                low, high = self.regions[candidate]
                if low < end and start < high:
                    return True
        return False

    def line_numbers(self, source: SourceFile) -> tuple[int, ...]:
        """The 1-based lines of `source` the regions touch."""
        lines: dict[int, None] = {}
        for low, high in self.regions:
            first = source.line_of(min(low, len(source.data)))
            last = source.line_of(min(max(low, high - 1), len(source.data)))
            lines.update(dict.fromkeys(range(first + 1, last + 2)))
        return tuple(sorted(lines))

    def select(self, diagnostics: Iterable[Diagnostic]) -> list[Diagnostic]:
        return [d for d in diagnostics if self.contains(d)]

    def moved(self, edits: Iterable[Edit]) -> Scope:
        """The regions in the text the (non-overlapping) edits make; inserted text is new."""
        ordered = sorted(edits, key=lambda e: (e.start, e.end))
        starts = [e.start for e in ordered]
        shifts = [0]
        for edit in ordered:
            shifts.append(shifts[-1] + len(edit.content.encode("utf-8", "surrogatepass")) - (edit.end - edit.start))

        def position(byte: int) -> int:
            index = bisect.bisect_right(starts, byte)
            if index and byte < ordered[index - 1].end:  # inside a replaced range: its start
                return ordered[index - 1].start + shifts[index - 1]
            return byte + shifts[index]

        regions = [(position(low), position(high)) for low, high in self.regions]
        for index, edit in enumerate(ordered):
            length = len(edit.content.encode("utf-8", "surrogatepass"))
            if length:
                regions.append((edit.start + shifts[index], edit.start + shifts[index] + length))
        merged: list[tuple[int, int]] = []
        for low, high in sorted(r for r in regions if r[1] > r[0]):
            if merged and merged[-1][1] >= low:
                merged[-1] = (merged[-1][0], max(merged[-1][1], high))
            else:
                merged.append((low, high))
        return Scope(tuple(merged))
