"""Applying fixes: non-overlapping edits per pass, re-lint, repeat until nothing changes.

A pass never keeps text with more syntax errors than the file had: a batch that breaks parsing
is retried fix by fix, and a fix that alone breaks it is dropped. When no fix is left, what
fixes of separate findings did together is tidied: an input the fixes listed twice in one list
loses its later copy, and formals that the original file used and the fixes left unused are
removed (a fix rewriting the last use of `config` or `addOpenGLRunpath` cannot see that another
fix rewrote the others).
"""

from __future__ import annotations

import bisect
import time
from dataclasses import dataclass, field

from cudalint.frontend.newcode import Scope
from cudalint.lint import edits as edit_builders
from cudalint.lint.engine import LintResult, lint
from cudalint.lint.model import Applicability, Diagnostic, Edit, Fix
from cudalint.lint.settings import LintSettings
from cudalint.nix.parsing import parse
from cudalint.nix.semantic import Semantic
from cudalint.nix.source import SourceFile

MAX_PASSES = 25


def apply_edits(data: bytes, edits: list[Edit]) -> bytes:
    """Apply non-overlapping edits (byte offsets into `data`)."""
    out = []
    position = 0
    for edit in sorted(edits, key=lambda e: (e.start, e.end)):
        if edit.start < position:
            raise ValueError(f"overlapping edits at byte {edit.start}")
        out.append(data[position : edit.start])
        out.append(edit.content.encode("utf-8", "surrogatepass"))
        position = edit.end
    out.append(data[position:])
    return b"".join(out)


class _Spans:
    """Non-overlapping byte spans chosen so far, sorted, for O(log n) conflict checks.

    Edits that meet also conflict (`_touches`): insertions at one point, whose order would be
    arbitrary, and an insertion right after a node another fix rewrites. Two deletions that meet
    do not: nothing is written between them (thousands of adjacent lines removed in one pass)."""

    def __init__(self) -> None:
        self._starts: list[int] = []
        self._ends: list[int] = []
        self._deletions: list[bool] = []

    def conflicts(self, start: int, end: int, deletion: bool = False) -> bool:
        index = bisect.bisect_right(self._starts, start)
        for neighbour in (index - 1, index):
            if 0 <= neighbour < len(self._starts):
                other = (self._starts[neighbour], self._ends[neighbour])
                if _overlaps((start, end), other) if deletion and self._deletions[neighbour] and start < end and other[0] < other[1] else _touches((start, end), other):
                    return True
        return False

    def add(self, start: int, end: int, deletion: bool = False) -> None:
        index = bisect.bisect_right(self._starts, start)
        self._starts.insert(index, start)
        self._ends.insert(index, end)
        self._deletions.insert(index, deletion)


def _overlaps(a: tuple[int, int], b: tuple[int, int]) -> bool:
    return (a[0] < b[1] and b[0] < a[1]) or a[0] == b[0]


def applicable_fix(diagnostic: Diagnostic, unsafe: bool) -> bool:
    """Whether `--fix` (with `unsafe`: `--fix --unsafe-fixes`) may apply the finding's fix."""
    fix = diagnostic.fix
    return fix is not None and (fix.applicability is Applicability.SAFE or (unsafe and fix.applicability is Applicability.UNSAFE))


def _touches(a: tuple[int, int], b: tuple[int, int]) -> bool:
    """Edits of two fixes conflict when they overlap or meet: an insertion after a rewritten node
    (`++ [ x ]` after a list another fix wraps in a guard) must see the rewrite."""
    return a[0] <= b[1] and b[0] <= a[1]


def select_fixes(diagnostics: list[Diagnostic], unsafe: bool) -> list[tuple[Diagnostic, Fix]]:
    """The fixes one pass applies: applicable, in file order, pairwise non-overlapping, at most
    one per isolation group."""
    chosen: list[tuple[Diagnostic, Fix]] = []
    taken = _Spans()
    groups: set[str] = set()
    candidates = [(d, d.fix) for d in diagnostics if applicable_fix(d, unsafe)]
    for diagnostic, fix in sorted(candidates, key=lambda pair: pair[1].span):
        assert fix is not None
        if fix.isolation is not None and fix.isolation in groups:
            continue
        own = sorted((e.start, e.end, not e.content) for e in fix.edits)
        if any(_overlaps(a[:2], b[:2]) for a, b in zip(own, own[1:])) or any(taken.conflicts(*span) for span in own):
            continue
        chosen.append((diagnostic, fix))
        for span in own:
            taken.add(*span)
        if fix.isolation is not None:
            groups.add(fix.isolation)
    return chosen


@dataclass
class FixOutcome:
    original: str
    text: str
    result: LintResult  # the lint of the final text
    applied: list[tuple[str, str]] = field(default_factory=list)  # (code, fix title)
    passes: int = 0
    dropped: list[tuple[str, str]] = field(default_factory=list)  # fixes that broke parsing
    out_of_time: bool = False  # the time budget ended the loop with fixes left to apply
    scope: Scope | None = None  # `--new-from-rev`: the new regions of `text`
    tidied: bool = False  # inputs listed twice or formals left unused by the fixes were removed

    @property
    def changed(self) -> bool:
        return self.text != self.original


def fix_file(source: SourceFile, settings: LintSettings, unsafe: bool = False, first: LintResult | None = None, scope: Scope | None = None) -> FixOutcome:
    """Apply fixes until none is left; with a `scope` (`--new-from-rev`), only fixes of findings
    in it, the scope following the edits (`outcome.scope` is that of the final text)."""
    result = first if first is not None else lint(source, settings)
    baseline_errors = result.syntax_errors
    outcome = FixOutcome(source.text, source.text, result, scope=scope)
    rejected: set[tuple[str, int, int, str]] = set()
    before = _Before(source, result)
    # every pass re-lints the file: the loop as a whole keeps to the time budget of one lint
    deadline = time.monotonic() + settings.time_budget
    for _ in range(MAX_PASSES):
        current = outcome.result.source
        pending = [d for d in outcome.result.diagnostics if (d.code, d.start, d.end, d.message) not in rejected]
        if outcome.scope is not None:
            pending = outcome.scope.select(pending)
        chosen = select_fixes(pending, unsafe)
        if not chosen:
            if not outcome.changed or time.monotonic() > deadline or not _tidy(outcome, before, baseline_errors, settings):
                break
            continue
        if time.monotonic() > deadline:
            outcome.out_of_time = True
            break
        outcome.passes += 1
        applied = [e for _, fix in chosen for e in fix.edits]
        candidate = _relint(current, applied, settings)
        if candidate.syntax_errors <= baseline_errors:
            outcome.applied.extend((d.code, f.title) for d, f in chosen)
        else:
            # The batch breaks parsing (two fixes adding the same formal, say): apply the first
            # fix that is fine alone, drop those that are not, and re-lint.
            candidate = None
            for diagnostic, fix in chosen:
                if time.monotonic() > deadline:
                    outcome.out_of_time = True
                    break
                trial = _relint(current, list(fix.edits), settings)
                if trial.syntax_errors <= baseline_errors:
                    candidate, applied = trial, list(fix.edits)
                    outcome.applied.append((diagnostic.code, fix.title))
                    break
                outcome.dropped.append((diagnostic.code, fix.title))
                rejected.add((diagnostic.code, diagnostic.start, diagnostic.end, diagnostic.message))
            if candidate is None:
                continue
        outcome.text = candidate.source.text
        outcome.result = candidate
        if outcome.scope is not None:
            outcome.scope = outcome.scope.moved(applied)
        rejected = set()
        # before the next pass moves one copy elsewhere (under a guard, to another list)
        current = outcome.result.source
        if time.monotonic() <= deadline:
            _apply_tidying(outcome, edit_builders.remove_duplicated_inputs(current, _semantic(current, outcome.result), before.inputs), baseline_errors, settings)
    return outcome


class _Before:
    """The original file's formals in use and input counts, which tidying compares with: read
    only once a fix has changed the file (a file nothing fixes pays nothing for them)."""

    def __init__(self, source: SourceFile, result: LintResult) -> None:
        self._source, self._result = source, result
        self._used: tuple[frozenset[str], frozenset[str]] | None = None
        self._inputs: dict[tuple[str, ...], int] | None = None

    @property
    def used(self) -> tuple[frozenset[str], frozenset[str]]:
        if self._used is None:
            self._used = edit_builders.used_formals(_semantic(self._source, self._result))
        return self._used

    @property
    def inputs(self) -> dict[tuple[str, ...], int]:
        if self._inputs is None:
            self._inputs = edit_builders.input_counts(_semantic(self._source, self._result))
        return self._inputs


def _semantic(source: SourceFile, result: LintResult) -> Semantic:
    return Semantic(result.tree if result.tree is not None else parse(source), source)


def _tidy(outcome: FixOutcome, before: _Before, baseline_errors: int, settings: LintSettings) -> bool:
    """Remove inputs the fixes listed twice, else the formals they left unused (see the module
    docstring); whether anything went."""
    current = outcome.result.source
    semantic = _semantic(current, outcome.result)
    removals = edit_builders.remove_duplicated_inputs(current, semantic, before.inputs) or edit_builders.remove_orphaned_formals(current, semantic, before.used)
    return _apply_tidying(outcome, removals, baseline_errors, settings)


def _apply_tidying(outcome: FixOutcome, removals: list[Edit], baseline_errors: int, settings: LintSettings) -> bool:
    current = outcome.result.source
    if not removals:
        return False
    candidate = _relint(current, removals, settings)
    if candidate.syntax_errors > baseline_errors:
        return False
    outcome.text = candidate.source.text
    outcome.result = candidate
    outcome.tidied = True
    if outcome.scope is not None:
        outcome.scope = outcome.scope.moved(removals)
    return True


def _relint(current: SourceFile, edits: list[Edit], settings: LintSettings) -> LintResult:
    """Lint the text `edits` make of `current` (its syntax-error count decides whether to keep it)."""
    text = apply_edits(current.data, edits).decode("utf-8", "surrogatepass")
    # always parsed: a fix may remove the last word the prefilter looks for, and the syntax check must still run
    return lint(SourceFile(current.path, text), settings, prefilter=False)
