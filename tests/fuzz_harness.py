"""What every input must survive, checked in a child process with a time limit.

`examine(text)` runs the engine as the CLI and the server do (lint, every single fix as an editor
applies it, fix-all with and without unsafe fixes, fix-all again) and returns the broken
promises plus the texts Nix's parser must judge: the input (accepted exactly when cudalint
reports no CUDA900) and every fixed text of an input that parses (which must parse too).

`Watchdog` runs `examine` in a forked child, so that neither a hang nor a crash of the engine
takes the test run down: past the per-input limit the child is killed and the input reported.
"""

from __future__ import annotations

import difflib
import hashlib
import multiprocessing
import re
import traceback
from dataclasses import dataclass, field
from pathlib import Path

from cudalint.lint.engine import lint
from cudalint.lint.fixing import apply_edits, fix_file
from cudalint.lint.model import Applicability
from cudalint.lint.settings import LintSettings
from cudalint.nix.parsing import parse, syntax_problems
from cudalint.nix.source import SourceFile
from cudalint.nix.syntax import descendants
from nix_oracle import nix_verdicts

REGRESSIONS = Path(__file__).parent / "fixtures" / "regressions"
# Fix-all converges in a few passes on real files (each pass applies every non-overlapping fix).
FIX_ALL_PASSES = 8
# Single fixes checked per input: each costs a full lint, and a mutated file can have thousands.
SINGLE_FIXES = 40
# Suppression comments are what CUDA901's fix removes; any other comment a safe fix must keep.
SUPPRESSION = b"cudalint:"


@dataclass
class Examination:
    problems: list[str] = field(default_factory=list)
    # (what, text, whether Nix must accept it)
    oracle: list[tuple[str, str, bool]] = field(default_factory=list)


def syntax_errors(source: SourceFile) -> int:
    """CUDA900's count, asked of the parser directly (the engine may skip parsing a file that
    mentions nothing its rules look for)."""
    return len(syntax_problems(parse(source), source))


_TOKENS = re.compile(r"(\s*)(\S+)")


def reformatted(before: str, after: str) -> list[str]:
    """Where an edit rewrote the white space between two tokens it keeps (outside its edits a
    fix changes nothing by construction): the tokens of the replaced text and of the new text
    are matched up (difflib), and inside each run of kept tokens the white space before every
    token but the run's first must be the same."""
    old = _TOKENS.findall(before)
    new = _TOKENS.findall(after)
    matcher = difflib.SequenceMatcher(None, [t for _, t in old], [t for _, t in new], autojunk=False)
    found = []
    for block in matcher.get_matching_blocks():
        for offset in range(1, block.size):
            space_before, token = old[block.a + offset]
            space_after = new[block.b + offset][0]
            if space_before != space_after:
                found.append(f"the white space before the kept token {token!r} changed from {space_before!r} to {space_after!r}")
                break
    return found


NO_EXPRESSION = "an input without an expression"


def has_expression(tree) -> bool:
    return any(child.type != "comment" for child in tree.root_node.named_children)


def _comments(tree) -> list[tuple[int, int]]:
    return [(n.start_byte, n.end_byte) for n in descendants(tree.root_node) if n.type == "comment"]


def examine(text: str, thorough: bool = True, settings: LintSettings | None = None) -> Examination:
    """`thorough=False` (for inputs of many megabytes) lints and runs fix-all once: every other
    check costs a full lint per fix."""
    settings = settings or LintSettings()
    found = Examination()
    source = SourceFile("fuzz.nix", text)
    result = lint(source, settings)
    found.problems.extend(result.internal_errors)
    errors = syntax_errors(source)
    valid = errors == 0
    if "\0" not in text:  # a C string ends at a NUL: Nix cannot be asked
        if has_expression(result.tree or parse(source)):
            found.oracle.append(("the input", text, valid))
        else:  # Nix rejects a file of only white space and comments; cudalint lets it be
            found.oracle.append((NO_EXPRESSION, text, False))
    comments = _comments(result.tree) if result.tree is not None else []

    singles = [(d, f) for d in result.diagnostics for f in d.fixes][: SINGLE_FIXES if thorough else 0]
    counts: dict[str, int] = {}
    for d in result.diagnostics:
        counts[d.code] = counts.get(d.code, 0) + 1
    for diagnostic, fix in singles:
        where = f"{diagnostic.code} fix {fix.title!r} at byte {diagnostic.start}"
        try:
            fixed = SourceFile("fuzz.nix", apply_edits(source.data, list(fix.edits)).decode("utf-8", "surrogatepass"))
        except (ValueError, UnicodeDecodeError) as error:
            found.problems.append(f"{where}: cannot be applied: {error}")
            continue
        after = lint(fixed, settings)
        found.problems.extend(after.internal_errors)
        errors_after = syntax_errors(fixed)
        if errors_after > errors or (valid and errors_after):
            found.problems.append(f"{where}: the fixed text has {errors_after} syntax errors, the input {errors}")
            continue
        if valid:
            found.oracle.append((where, fixed.text, True))
            if sum(d.code == diagnostic.code for d in after.diagnostics) >= counts[diagnostic.code]:
                found.problems.append(f"{where}: {diagnostic.code} reports as many findings after the fix as before")
        if fix.applicability is Applicability.SAFE:
            for edit in fix.edits:
                replaced = source.data[edit.start : edit.end].decode("utf-8", "replace")
                found.problems.extend(f"{where}: {p}" for p in reformatted(replaced, edit.content))
        if fix.applicability is Applicability.SAFE and diagnostic.code != "CUDA901":
            for start, end in comments:
                comment = source.data[start:end]
                for edit in fix.edits:
                    kept = comment in edit.content.encode("utf-8", "surrogatepass")
                    if edit.start < end and start < edit.end and not kept and SUPPRESSION not in comment:
                        found.problems.append(f"{where}: a safe fix deletes the comment {comment.decode('utf-8', 'replace')!r}")

    for unsafe in (False, True) if thorough else (True,):
        label = "fix-all" + (" --unsafe-fixes" if unsafe else "")
        outcome = fix_file(source, settings, unsafe=unsafe, first=result)
        found.problems.extend(outcome.result.internal_errors)
        if outcome.passes > FIX_ALL_PASSES:
            found.problems.append(f"{label}: took {outcome.passes} passes (bound {FIX_ALL_PASSES})")
        if outcome.changed and syntax_errors(SourceFile("fuzz.nix", outcome.text)) > errors:
            found.problems.append(f"{label}: the fixed text has more syntax errors than the input")
        if not thorough:
            continue
        again = fix_file(SourceFile("fuzz.nix", outcome.text), settings, unsafe=unsafe)
        if again.changed:
            found.problems.append(f"{label}: a second fix-all still changed the text ({again.applied[:3]})")
        if valid and outcome.changed:
            found.oracle.append((label, outcome.text, True))
    return found


# ---------------------------------------------------------------------------------------------
# The child process


def _serve(connection) -> None:
    while True:
        try:
            text, thorough = connection.recv()
        except EOFError:
            return
        try:
            connection.send(("done", examine(text, thorough)))
        except Exception:
            connection.send(("raised", traceback.format_exc(limit=-6)))


class Watchdog:
    """Examines inputs in a forked child; one that takes longer than `limit` seconds is reported
    as a hang and the child replaced."""

    def __init__(self, limit: float) -> None:
        self.limit = limit
        self._context = multiprocessing.get_context("fork")
        self._start()

    def _start(self) -> None:
        self._connection, child = self._context.Pipe()
        self._process = self._context.Process(target=_serve, args=(child,), daemon=True)
        self._process.start()
        child.close()

    def examine(self, text: str, thorough: bool = True) -> Examination:
        try:
            self._connection.send((text, thorough))
            if self._connection.poll(self.limit):
                status, value = self._connection.recv()
                return value if status == "done" else Examination([f"the engine raised:\n{value}"])
            problem = f"did not finish within {self.limit:g} s"
        except (EOFError, OSError, BrokenPipeError):
            problem = f"the checking process died (exit code {self._process.exitcode})"
        self.close()
        self._start()
        return Examination([problem])

    def close(self) -> None:
        self._process.kill()
        self._process.join()
        self._connection.close()


def disagreements(examined: Examination, nix: str) -> list[str]:
    """Where Nix's parser and the promise disagree: the input judged wrong by CUDA900, or a fixed
    text that Nix rejects."""
    verdicts = nix_verdicts(nix, [text for _, text, _ in examined.oracle])
    found = []
    for (what, _, must_accept), (accepted, error) in zip(examined.oracle, verdicts):
        if accepted is None or accepted == must_accept:
            continue
        if what == NO_EXPRESSION:
            found.append("Nix accepts an input without an expression")
        elif what == "the input":
            found.append(f"Nix {'accepts' if accepted else 'rejects'} the input but cudalint {'reports' if accepted else 'does not report'} CUDA900 ({error})")
        else:
            found.append(f"{what}: Nix rejects the fixed text: {error}")
    return found


def broken_promises(text: str, watchdog: Watchdog, nix: str, thorough: bool = True) -> list[str]:
    examined = watchdog.examine(text, thorough)
    return examined.problems + disagreements(examined, nix)


def as_text(data: bytes) -> str:
    """What the engine sees of raw bytes: an editor shows invalid UTF-8 as U+FFFD."""
    return data.decode("utf-8", "replace")


def save_regression(data: bytes, problems: list[str]) -> Path:
    """Keep a failing input (named by its hash) for test_fuzz to replay, with why it failed."""
    REGRESSIONS.mkdir(parents=True, exist_ok=True)
    name = hashlib.sha256(data).hexdigest()[:12]
    path = REGRESSIONS / f"{name}.input"
    path.write_bytes(data)
    (REGRESSIONS / f"{name}.why").write_text("\n".join(problems) + "\n", encoding="utf-8")
    return path
