"""Checking files: read, lint, fix (write or diff), in a process pool across files.

Each file becomes a `Processed`: its `FileResult` for the reporters (None when the file was
skipped), notices for stderr, and whether something went wrong that the user must act on
(exit 2). Results come back in the order of the tasks (sorted by path by the caller).
"""

from __future__ import annotations

import collections
import copyreg
import dataclasses
import functools
import itertools
import os
import re
import sys
import traceback
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from cudalint.frontend import files
from cudalint.frontend.config import DEFERRED_PIN, FileSettings, with_pin
from cudalint.frontend.newcode import NewLines, Scope
from cudalint.knowledge.pins import Pin
from cudalint.lint.results import FileResult, ReportedTarget
from cudalint.nix.source import SourceFile

if TYPE_CHECKING:
    from concurrent.futures import Future, ProcessPoolExecutor

CHECK, FIX, DIFF = "check", "fix", "diff"


@dataclass(frozen=True)
class AddSuppressions:
    """The mode of `check --add-suppressions`: a suppression comment (with `reason`) for every finding."""

    reason: str | None = None


Mode = str | AddSuppressions
# Below this many files a process pool costs more than it saves.
PARALLEL_THRESHOLD = 16

# The run's pin lookup (`Resolver.pin`) for tasks whose settings deferred it (`DEFERRED_PIN`):
# set by `run` before it forks the workers, which inherit it.
_pin_lookup: Callable[[str], Pin] | None = None


def can_defer_pins() -> bool:
    """Whether workers can look pins up themselves: forked workers inherit the lookup. (Where
    `os.fork` exists multiprocessing offers the fork start method; asking multiprocessing
    itself imports it, and a single-file run needs no pool.)"""
    return hasattr(os, "fork")


# A SourceFile crosses process boundaries as (path, text); its derived fields are rebuilt.
copyreg.pickle(SourceFile, lambda s: (SourceFile, (s.path, s.text)))

# Problems that skip a file found by walking a directory with only a notice; any problem with a
# file the user named, and the others (binary, not UTF-8, unreadable), are errors.
_WALK_NOTICES = frozenset({"too-large", "loop", "missing", "not-regular", "directory"})


@dataclass(frozen=True)
class Task:
    path: str | None  # absolute path to read; None for stdin (text given)
    display: str
    settings: int  # index into the settings table given to the workers
    explicit: bool
    text: bytes | None = None  # stdin's bytes
    new: NewLines | None = None  # `--new-from-rev`: report and fix only findings on these lines


@dataclass
class Processed:
    result: FileResult | None
    notices: list[str] = field(default_factory=list)
    failed: bool = False  # a problem the user must act on (exit 2)
    output: bytes | None = None  # the fixed bytes of stdin (with --fix)


# ---------------------------------------------------------------------------------------------
# Text-level helpers


def _lines(text: str) -> list[str]:
    """Lines with their endings, split on LF only (str.splitlines also splits on \\x0c, ...)."""
    return re.findall(r"[^\n]*\n|[^\n]+$", text)


_GIT_ESCAPES = {7: "\\a", 8: "\\b", 9: "\\t", 10: "\\n", 11: "\\v", 12: "\\f", 13: "\\r", 34: '\\"', 92: "\\\\"}


def git_quoted(name: str) -> str:
    """A path as git writes it in a patch header: as it is, or in double quotes with C escapes
    (octal for bytes outside printable ASCII) when it holds a control character, a quote, a
    backslash or a non-ASCII byte (a name with a newline otherwise breaks the patch)."""
    raw = os.fsencode(name)
    if all(0x20 <= byte < 0x7F and byte not in (34, 92) for byte in raw):
        return name
    return '"' + "".join(_GIT_ESCAPES.get(byte) or (chr(byte) if 0x20 <= byte < 0x7F else f"\\{byte:03o}") for byte in raw) + '"'


def unified_diff(display: str, before: str, after: str) -> str:
    """A patch `git apply` / `patch -p1` accept (a/ b/ prefixes for relative paths), with
    `\\ No newline at end of file` markers where needed."""
    if os.path.isabs(display):
        old, new = git_quoted(display), git_quoted(display)
    else:
        old, new = git_quoted(f"a/{display}"), git_quoted(f"b/{display}")
    out = []
    import difflib

    for line in difflib.unified_diff(_lines(before), _lines(after), old, new):
        if line.endswith("\n"):
            out.append(line)
        else:
            out.append(line + "\n\\ No newline at end of file\n")
    return "".join(out)


def keep_style(original: str, fixed: str) -> str:
    """Make fixed text keep the original's line endings and final-newline presence: fixes may
    insert bare "\\n" into a CRLF file, or add/remove the last newline."""
    lf = original.count("\n")
    crlf = original.count("\r\n")
    all_crlf = crlf > 0 and crlf == lf
    if all_crlf:
        fixed = re.sub(r"(?<!\r)\n", "\r\n", fixed)
    if original and fixed:
        if original.endswith("\n") and not fixed.endswith("\n"):
            fixed += "\r\n" if all_crlf else "\n"
        elif not original.endswith("\n") and fixed.endswith("\n"):
            fixed = fixed[:-2] if fixed.endswith("\r\n") else fixed[:-1]
    return fixed


# ---------------------------------------------------------------------------------------------
# One file


def process_source(display: str, read: files.ReadSource, settings: FileSettings, mode: Mode, write_path: str | None, new: NewLines | None = None) -> Processed:
    """Lint one decoded file; with FIX write the fixes to `write_path` (or return them as
    `output` when it is None: stdin); with DIFF return them as a diff. With `new`, only the
    findings on those lines are reported and fixed."""
    from cudalint.lint import engine

    processed = Processed(None)
    if (new is not None and new.none) or not engine.may_find(read.raw, settings.lint.enabled):
        # the prefilter: nothing to find, so nothing to parse, fix or send back but the name
        processed.result = FileResult(display, None, unchanged=new is not None and new.none)
        if mode == FIX and write_path is None:
            processed.output = read.raw
        return processed
    if settings.pin == DEFERRED_PIN:
        assert _pin_lookup is not None and write_path is not None, "a deferred pin needs the run's lookup and the file's path"
        settings = with_pin(settings, _pin_lookup(os.path.dirname(write_path)))
    settings, target = file_target(read.text, display, settings, os.path.dirname(write_path) if write_path else None)
    processed = _process_parsed(display, read, settings, mode, write_path, new)
    if processed.result is not None:
        processed.result.target = target
    return processed


def _process_parsed(display: str, read: files.ReadSource, settings: FileSettings, mode: Mode, write_path: str | None, new: NewLines | None) -> Processed:
    from cudalint.lint import engine, fixing

    processed = Processed(None)
    source = SourceFile(display, read.text, read.raw[len(files.BOM) :] if read.bom else read.raw)
    first = engine.lint(source, settings.lint)
    scope = Scope.of_lines(source, new.lines) if new is not None else None
    if scope is not None:
        first.diagnostics = scope.select(first.diagnostics)
    processed.notices.extend(first.notes)
    if first.internal_errors:
        processed.failed = True
    if mode == CHECK:
        processed.result = FileResult(display, source, first.diagnostics, internal_errors=first.internal_errors)
        return processed
    if isinstance(mode, AddSuppressions):
        return _add_suppressions(processed, display, read, source, first, settings, mode.reason, write_path)

    def unchanged() -> Processed:
        processed.result = FileResult(display, source, first.diagnostics, internal_errors=first.internal_errors)
        if mode == FIX and write_path is None:
            processed.output = read.raw
        return processed

    if first.syntax_errors:
        if fixing.select_fixes(first.diagnostics, settings.unsafe_fixes):
            processed.notices.append("not fixed: the file has syntax errors; fix them first (cudalint never rewrites code it cannot parse)")
        return unchanged()
    outcome = fixing.fix_file(source, settings.lint, settings.unsafe_fixes, first=first, scope=scope)
    for code, title in outcome.dropped:
        processed.notices.append(f"a fix of {code} ({title}) was not applied: it would have broken the syntax")
    if outcome.out_of_time:
        processed.notices.append(f"fixing stopped when the time budget of {settings.lint.time_budget:g} s ran out; run again to apply the rest (or raise `time-budget` in the configuration)")
    if not outcome.changed:
        return unchanged()
    text = keep_style(read.text, outcome.text)
    # the findings (and syntax check) of exactly the text to be written
    final = outcome.result if text == outcome.result.source.text else engine.lint(SourceFile(display, text), settings.lint, prefilter=False)
    if outcome.scope is not None:
        scope = outcome.scope
        if text != outcome.text:  # keep_style changed line endings: the same lines, other offsets
            scope = Scope.of_lines(final.source, scope.line_numbers(SourceFile(display, outcome.text)))
        final.diagnostics = scope.select(final.diagnostics)
    internal = list(dict.fromkeys(first.internal_errors + final.internal_errors))
    if final.syntax_errors > first.syntax_errors:
        # fix_file guarantees this cannot happen; never write if it does.
        processed.failed = True
        processed.result = FileResult(display, source, first.diagnostics, error="not fixed: the fixed text would not parse (a cudalint bug; please report it)")
        return processed
    data = (files.BOM if read.bom else b"") + text.encode("utf-8")
    fixed = len(outcome.applied)
    # a fix can reveal a finding that is then fixed too (the counts of a check and of --fix differ by these)
    revealed = max(0, fixed - sum(1 for d in first.diagnostics if fixing.applicable_fix(d, settings.unsafe_fixes)))
    if mode == DIFF:
        diff = unified_diff(display, read.text, text)
        processed.result = FileResult(display, final.source, final.diagnostics, fixed=fixed, revealed=revealed, diff=diff, internal_errors=internal)
        return processed
    if write_path is None:
        processed.output = data
    else:
        try:
            files.write_atomic(write_path, data, read.raw)
        except files.WriteError as error:
            processed.failed = True
            processed.result = FileResult(display, source, first.diagnostics, error=str(error), internal_errors=first.internal_errors)
            return processed
    processed.result = FileResult(display, final.source, final.diagnostics, fixed=fixed, revealed=revealed, internal_errors=internal)
    return processed


def file_target(text: str, display: str, settings: FileSettings, directory: str | None = None) -> tuple[FileSettings, ReportedTarget]:
    """The settings to lint a file with and the target they mean: the file's own nixpkgs fetch
    (or that of a file it imports from `directory`) overrides a pin found around it (not a
    configured target). The language server uses it too."""
    from cudalint.knowledge import pins
    from cudalint.knowledge.reference import target

    pin = settings.pin
    if not pin.explicit and not display.endswith("flake.nix"):  # a flake's inputs are its lock's business
        fetched = pins.fetch_pin(text, display)
        if fetched is None and directory is not None and "import" in text:
            fetched = pins.imported_pin(text, directory)
        # an undated commit leaves a pin that dates the files around it (a lock) in place
        if fetched is not None and not (fetched.undated and pin.source is not None):
            pin = fetched
    if pin is not settings.pin or settings.lint.undated_pin != bool(pin.undated):
        settings = dataclasses.replace(settings, lint=dataclasses.replace(settings.lint, nixpkgs=pin.nixpkgs, undated_pin=bool(pin.undated)), pin=pin)
    judged = target(settings.lint.nixpkgs, settings.lint.cuda)
    return settings, ReportedTarget(settings.lint.nixpkgs, pin.source, judged.era.id, judged.releases, pin.undated)


def read_problem(display: str, problem: files.ReadProblem, explicit: bool) -> Processed:
    if not explicit and problem.kind in _WALK_NOTICES:
        return Processed(None, [problem.message])
    return Processed(FileResult(display, None, error=problem.message), failed=True)


def _add_suppressions(processed: Processed, display: str, read: files.ReadSource, source: SourceFile, first, settings: FileSettings, reason: str | None, write_path: str | None) -> Processed:
    """Write a suppression comment for each line with findings (the engine's own findings, such
    as an unused suppression, are not suppressible) and report what is left."""
    from cudalint.lint import engine
    from cudalint.lint.fixing import apply_edits
    from cudalint.lint.suppression_edits import suppression_edits

    processed.result = FileResult(display, source, first.diagnostics, internal_errors=first.internal_errors)
    wanted = [d for d in first.diagnostics if d.code not in engine.ENGINE_RULES]
    if not wanted or first.tree is None or write_path is None:
        return processed
    if first.syntax_errors:
        processed.notices.append("no suppressions added: the file has syntax errors; fix them first")
        return processed
    edits = suppression_edits(source, first.tree, wanted, reason)
    if not edits:
        return processed
    text = apply_edits(source.data, edits).decode("utf-8", "surrogatepass")
    final = engine.lint(SourceFile(display, text), settings.lint, prefilter=False)
    if final.syntax_errors > first.syntax_errors:
        processed.failed = True  # the edits are checked one by one; never write if together they break the file
        processed.result.error = "no suppressions added: the edited text would not parse (a cudalint bug; please report it)"
        return processed
    try:
        files.write_atomic(write_path, (files.BOM if read.bom else b"") + text.encode("utf-8"), read.raw)
    except files.WriteError as error:
        processed.failed = True
        processed.result.error = str(error)
        return processed
    internal = list(dict.fromkeys(first.internal_errors + final.internal_errors))
    processed.result = FileResult(display, final.source, final.diagnostics, suppressions_added=len(edits), internal_errors=internal)
    return processed


# `process_task(..., large=N)` for a file of N bytes or more: not checked (see `LARGE_FILE`)
LARGE = Processed(None)


def process_task(task: Task, settings: FileSettings, mode: Mode, large: int | None = None) -> Processed:
    try:
        if task.path is None:
            assert task.text is not None
            if len(task.text) > settings.max_file_size:
                return Processed(
                    FileResult(task.display, None, error=f"standard input is larger than the limit of {files.format_size(settings.max_file_size)}"),
                    failed=True,
                )
            read = files.decode_source(task.text)
        else:
            read = files.read_source(task.path, settings.max_file_size)
        if isinstance(read, files.ReadProblem):
            return read_problem(task.display, read, task.explicit)
        if large is not None and len(read.raw) >= large:
            return LARGE
        return process_source(task.display, read, settings, mode, task.path, task.new)
    except Exception:
        return Processed(
            FileResult(task.display, None, error=f"internal error: {traceback.format_exc(limit=-4).strip()}"),
            failed=True,
        )


# ---------------------------------------------------------------------------------------------
# Many files

# Tasks handed to a worker at a time: few enough round trips that their cost vanishes, small
# enough that both workers stay busy to the end. (A run's files are mostly small: ~3 KB.)
BATCH = 128


@dataclass(frozen=True)
class _Batch:
    tasks: tuple[Task, ...]
    settings: dict[int, FileSettings]  # those the tasks refer to (the table grows as paths are found)
    mode: Mode


def _init(parent: int | None = None) -> None:
    # Ctrl-C is the parent's to handle: it cancels what has not started and exits.
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _die_with_parent(parent)


# prctl(2): the signal a process gets when its parent dies.
_PR_SET_PDEATHSIG = 1


def _die_with_parent(parent: int | None) -> None:
    """A worker ends when the run that started it does, even by `kill -9` (which leaves no
    chance to stop the pool): Linux sends it SIGKILL then. Elsewhere, the pool's own shutdown."""
    if not sys.platform.startswith("linux"):
        return
    import ctypes
    import signal

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):
        return
    if parent is not None and os.getppid() != parent:
        os._exit(1)  # the parent died before the request: nobody would ever take the results


def _nothing_to_report(task: Task) -> Processed:
    return Processed(FileResult(task.display, None))


def _to_send(task: Task, processed: Processed) -> Processed | None:
    """What a worker sends back: None for "checked, nothing to parse" (most files), and a
    parsed file's result without its text when it has no findings (the reporters read text
    only at findings): the parent would otherwise unpickle and index every parsed file."""
    if processed == _nothing_to_report(task):
        return None
    result = processed.result
    if result is not None and result.source is not None and result.source.text and not result.diagnostics:
        result.source = SourceFile(result.source.path, "")
    return processed


def _work(batch: _Batch) -> list[Processed | None]:
    results: list[Processed | None] = []
    for task in batch.tasks:
        processed = process_task(task, batch.settings[task.settings], batch.mode)
        results.append(_to_send(task, processed))
    return results


def _warm_up() -> None:
    from cudalint.lint import engine

    engine.warm_up()


def _pool(jobs: int) -> ProcessPoolExecutor:
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    try:
        context = multiprocessing.get_context("fork")
    except ValueError:
        context = multiprocessing.get_context()
    return ProcessPoolExecutor(jobs, mp_context=context, initializer=_init, initargs=(os.getpid(),))


def run(
    tasks: Iterable[Task],
    table: Sequence[FileSettings],
    mode: Mode,
    jobs: int,
    progress: Callable[[int], None] | None = None,
    pin_lookup: Callable[[str], Pin] | None = None,
) -> Iterator[tuple[Task, Processed]]:
    """Process tasks, yielding each with its result, in task order. `tasks` may be a generator
    (a directory walk): workers start on the first batches while it goes on. `table` is read as
    the tasks come (a task's settings index must be in it by the time the task is produced).
    `pin_lookup` answers the settings that deferred their pin (only with `can_defer_pins()`)."""
    global _pin_lookup
    _pin_lookup = pin_lookup
    _warm_up()
    pending = iter(tasks)
    first = list(itertools.islice(pending, PARALLEL_THRESHOLD))
    if jobs <= 1 or len(first) < PARALLEL_THRESHOLD:
        for index, task in enumerate(itertools.chain(first, pending)):
            yield task, process_task(task, table[task.settings], mode)
            if progress:
                progress(index + 1)
        return
    pool = _pool(jobs)
    try:
        submitted = []
        for start in itertools.count(0, BATCH):
            batch = first[start : start + BATCH] if start < len(first) else []
            batch += itertools.islice(pending, BATCH - len(batch))
            if not batch:
                break
            settings = {task.settings: table[task.settings] for task in batch}
            submitted.append((batch, pool.submit(_work, _Batch(tuple(batch), settings, mode))))
        done = 0
        for batch, future in submitted:
            for task, processed in zip(batch, future.result()):
                yield task, processed if processed is not None else _nothing_to_report(task)
                done += 1
                if progress:
                    progress(done)
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


# ---------------------------------------------------------------------------------------------
# A directory walk shared with the workers

# Subtrees handed out per job: enough that the workers stay busy to the end although subtrees
# differ in size, few enough that their round trips cost nothing.
SUBTREES_PER_JOB = 32
# A file this large is checked on its own, before the subtrees still waiting: one such file can
# take as long as a whole subtree (a generated package set), and started last it would be the
# run's tail.
LARGE_FILE = 1 << 20


def can_walk_in_parallel(jobs: int) -> bool:
    """Whether workers can walk subtrees: forked workers inherit the walk's state (elsewhere the
    parent walks, and hands out the files it finds)."""
    return jobs > 1 and can_defer_pins()


@dataclass(frozen=True)
class _WalkJob:
    """What a forked worker needs to list and check subtrees (set before the pool forks)."""

    walker: files.Walker
    task_for: Callable[[files.Found], Task]  # a worker's own copy: its settings go to its own table
    table: Sequence[FileSettings]
    mode: Mode | None  # None: list only (a run that writes checks the files after the whole walk)


_walk_job: _WalkJob | None = None
_UNCHECKED = Processed(None)


@dataclass
class _Subtree:
    """What a worker sends back for a subtree: the walk, the results by path (None: nothing to
    report), the large files it left unchecked and, for a run whose files the parent checks,
    what the walk learnt of the config and pin files (`Listings.of`)."""

    walked: files.Walked
    checked: dict[str, Processed | None]
    large: list[tuple[str, tuple[int, int]]]
    learnt: dict


def _is_large(path: str) -> bool:
    try:
        return os.stat(path).st_size >= LARGE_FILE
    except OSError:
        return False  # the check says why


def _link_count(directory: str) -> int:
    """2 + the subdirectories of a directory on most file systems (1 on some: unknown)."""
    try:
        return os.stat(directory).st_nlink
    except OSError:
        return 1


def _walk_subtree(start: files.Pending) -> _Subtree:
    """In a worker: walk a subtree and check the files found in it, each once."""
    job = _walk_job
    assert job is not None, "a subtree job runs in a forked worker"
    walker = job.walker
    learnt = walker.listings.mark()
    walked = walker.walk_subtree(start)
    subtree = _Subtree(walked, {}, [], {})
    if job.mode is None:
        subtree.learnt = walker.listings.since(learnt)
        return subtree
    seen: set[tuple[int, int]] = set()
    for path, key in walked.files:
        if key in seen:
            continue
        seen.add(key)
        task = job.task_for(files.Found(path, False, key))
        processed = process_task(task, job.table[task.settings], job.mode, large=LARGE_FILE)
        if processed is LARGE:
            subtree.large.append((path, key))
        else:
            subtree.checked[path] = _to_send(task, processed)
    return subtree


class _Scheduler:
    """Keeps `2 * jobs` jobs in flight, the urgent ones (large files) first. The parent drives it
    (`step`) while it waits for a result."""

    def __init__(self, pool: ProcessPoolExecutor, jobs: int) -> None:
        self.pool = pool
        self.limit = 2 * jobs
        self.urgent: collections.deque = collections.deque()
        self.waiting: collections.deque = collections.deque()
        self.running: dict[Future, Callable] = {}

    def add(self, function: Callable, argument, on_done: Callable, urgent: bool = False) -> None:
        (self.urgent if urgent else self.waiting).append((function, argument, on_done))
        self._fill()

    def _fill(self) -> None:
        while len(self.running) < self.limit and (self.urgent or self.waiting):
            function, argument, on_done = (self.urgent or self.waiting).popleft()
            self.running[self.pool.submit(function, argument)] = on_done

    def step(self) -> None:
        """Wait for jobs to finish and hand their results on."""
        from concurrent.futures import FIRST_COMPLETED, wait

        assert self.running, "waiting for a job that was never started"
        done, _ = wait(self.running, return_when=FIRST_COMPLETED)
        for future in done:
            self.running.pop(future)(future.result())
        self._fill()


@dataclass
class _RootWalk:
    """The parallel walk of one directory the user named: the listings (the parent's, and the
    workers' as they come), the subtrees and files still out, the results by path."""

    walker: files.Walker
    scheduler: _Scheduler
    task_for: Callable[[files.Found], Task]
    table: Sequence[FileSettings]
    mode: Mode
    listed: dict[str, files.Listed] = field(default_factory=dict)
    walked: dict[str, files.Walked] = field(default_factory=dict)  # by top directory
    subtrees: set[str] = field(default_factory=set)  # top directories of the subtrees out
    files_out: set[str] = field(default_factory=set)  # files out in batches
    checked: dict[str, Processed | None] = field(default_factory=dict)

    def check(self, found: list[tuple[str, tuple[int, int]]], urgent: bool) -> None:
        size = 1 if urgent else BATCH
        for begin in range(0, len(found), size):
            paths = [path for path, _ in found[begin : begin + size]]
            batch = tuple(self.task_for(files.Found(path, False, key)) for path, key in found[begin : begin + size])
            self.files_out.update(paths)
            settings = {task.settings: self.table[task.settings] for task in batch}
            self.scheduler.add(_work, _Batch(batch, settings, self.mode), functools.partial(self._checked, paths), urgent)

    def _checked(self, paths: list[str], results: list[Processed | None]) -> None:
        for path, processed in zip(paths, results):
            self.files_out.discard(path)
            self.checked[path] = processed

    def walk_subtree(self, start: files.Pending) -> None:
        self.subtrees.add(start.directory)
        self.scheduler.add(_walk_subtree, start, functools.partial(self._walked, start.directory))

    def _walked(self, directory: str, subtree: _Subtree) -> None:
        self.subtrees.discard(directory)
        self.walked[directory] = subtree.walked
        self.walker.listings.update(subtree.learnt)
        self.checked.update(subtree.checked)
        self.check(subtree.large, urgent=True)

    def recorded(self, directory: str) -> files.Listed | files.Walked | None:
        while directory in self.subtrees:
            self.scheduler.step()
        return self.listed.pop(directory, None) or self.walked.pop(directory, None)

    def result(self, path: str) -> Processed | None:
        """A file's result (None: nothing to report), or `_UNCHECKED`."""
        while path in self.files_out:
            self.scheduler.step()
        return self.checked.pop(path, _UNCHECKED)


def walk_and_run(
    walker: files.Walker,
    roots: Sequence[str],
    mode: Mode,
    jobs: int,
    task_for: Callable[[files.Found], Task],
    table: Sequence[FileSettings],
    display: Callable[[str], str],
    leftovers: list[files.Found],
    progress: Callable[[int], None] | None = None,
    pin_lookup: Callable[[str], Pin] | None = None,
) -> Iterator[tuple[Task, Processed]]:
    """Walk `roots` (absolute directories, in order) with the workers (`can_walk_in_parallel`):
    the parent lists the top directories and hands the subtrees below to the workers, which
    walk them and check their files; the parent applies its listings and their walks in the
    order of a walk done in one process (`Walker.walking`), so `walker.found` and
    `walker.notices` are exactly those, and so is the first broken configuration raised. Yields the files the workers
    checked with their results (tasks that carry no settings); appends the other files found to
    `leftovers` (all of them when `mode` writes files: they are checked after the whole walk).
    `task_for` makes a file's task (in a worker: its settings go to the worker's copy of `table`)."""
    global _pin_lookup, _walk_job
    _pin_lookup = pin_lookup
    _warm_up()
    writes = mode == FIX or isinstance(mode, AddSuppressions)
    _walk_job = _WalkJob(walker, task_for, table, None if writes else mode)
    pool = None
    scheduler = None
    walks: list[_RootWalk | dict[str, files.Listed] | None] = []
    recorded = walker.recorded
    try:
        for root in roots:
            start = walker.start(root)
            if isinstance(start, OSError):
                walks.append(None)  # `walking` says why
                continue
            top, below = walker.split(start, SUBTREES_PER_JOB * jobs)
            if not below:
                walks.append(top)  # a small tree: the parent listed it all
                continue
            if scheduler is None:
                pool = _pool(jobs)
                scheduler = _Scheduler(pool, jobs)
            # The largest subtrees first, so that small ones fill the end (largest: by the
            # subdirectories a directory's link count shows; file systems without one keep the
            # walk's order). A directory without subdirectories the parent lists itself: a large
            # file in it (a generated package set) then starts first, not last.
            subdirectories = {pending.directory: _link_count(pending.directory) - 2 for pending in below}
            for pending in below:
                if subdirectories[pending.directory] == 0:
                    top[pending.directory] = walker.list_directory(pending)
            walk = _RootWalk(walker, scheduler, task_for, table, mode, top)
            walks.append(walk)
            if not writes:  # the files of the directories the parent listed go first
                top_files = [found for listed in top.values() for found in listed.files]
                walk.check([(path, key) for path, key in top_files if _is_large(path)], urgent=True)
                walk.check([(path, key) for path, key in top_files if path not in walk.files_out], urgent=False)
            for pending in sorted(below, key=lambda pending: subdirectories[pending.directory], reverse=True):
                if pending.directory not in top:
                    walk.walk_subtree(pending)
        done = 0
        for root, walk in zip(roots, walks):
            if isinstance(walk, dict):
                walker.recorded = lambda directory, listed=walk: listed.pop(directory, None)
            else:
                walker.recorded = walk.recorded if walk is not None else recorded
            for found in walker.walking(root):
                processed = walk.result(found.path) if isinstance(walk, _RootWalk) else _UNCHECKED
                if processed is _UNCHECKED:
                    leftovers.append(found)
                    continue
                task = Task(found.path, display(found.path), -1, found.explicit)
                yield task, processed or _nothing_to_report(task)
                done += 1
                if progress:
                    progress(done)
    finally:
        walker.recorded = recorded
        _walk_job = None
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)
