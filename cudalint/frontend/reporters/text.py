"""Human output, like ruff and rustc: a header per finding, the source line with the flagged span
underlined, the fix as a help line, and a summary.

    default.nix:9:25: CUDA001 [warning] `cudatoolkit` is the monolithic runfile CUDA toolkit ...
       |
     9 |   nativeBuildInputs = [ cudatoolkit ];
       |                         ^^^^^^^^^^^
       = help: Replace the runfile toolkit with `cuda_nvcc` (unsafe fix: enable with --unsafe-fixes)
"""

from __future__ import annotations

import unicodedata
from typing import TextIO

from cudalint.frontend.reporters import ReportOptions, fix_status, targets
from cudalint.knowledge import sizes
from cudalint.lint.model import Applicability, Diagnostic, Severity
from cudalint.lint.results import FileResult
from cudalint.nix.source import SourceFile

TAB_WIDTH = 4
MAX_LINE_WIDTH = 200  # longer source lines are cut around the flagged span

RESET = "\x1b[0m"
BOLD = "\x1b[1m"
DIM = "\x1b[2m"
RED = "\x1b[31m"
GREEN = "\x1b[32m"
YELLOW = "\x1b[33m"
BLUE = "\x1b[34m"
CYAN = "\x1b[36m"

SEVERITY_COLOR = {Severity.ERROR: RED, Severity.WARNING: YELLOW, Severity.INFO: CYAN}


class _Painter:
    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled

    def __call__(self, text: str, *styles: str) -> str:
        if not self.enabled or not styles or not text:
            return text
        return "".join(styles) + text + RESET


def char_width(char: str) -> int:
    """Terminal cells one character takes: 2 for East Asian wide/fullwidth, 0 for combining
    marks and zero-width characters, 1 otherwise."""
    if unicodedata.combining(char) or char in "\u200b\u200c\u200d\u2060\ufeff":
        return 0
    if unicodedata.east_asian_width(char) in ("W", "F"):
        return 2
    return 1


_INVISIBLE_LAYOUT = frozenset("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")


def printable(text: str) -> str:
    """Text for one terminal line: control characters and line breaks escaped."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() or c == "\t" else repr(c)[1:-1] for c in text)


def expand_line(text: str) -> tuple[str, list[int]]:
    """The line as displayed (tabs expanded to tab stops, control characters made visible) and
    the display column at which each character of `text` starts (one more entry: the end)."""
    shown: list[str] = []
    columns: list[int] = []
    column = 0
    for char in text:
        columns.append(column)
        if char == "\t":
            width = TAB_WIDTH - column % TAB_WIDTH
            shown.append(" " * width)
        elif unicodedata.category(char) == "Cc":
            # C0/C1 controls would move the cursor or ring a bell; show the Unicode picture.
            picture = chr(0x2400 + ord(char)) if ord(char) < 0x20 else "\ufffd"
            shown.append(picture)
            width = 1
        elif char in _INVISIBLE_LAYOUT or unicodedata.category(char) in ("Zl", "Zp"):
            # Line separators break the line; bidi overrides reorder it (Trojan Source).
            shown.append("\ufffd")
            width = 1
        else:
            shown.append(char)
            width = char_width(char)
        column += width
    columns.append(column)
    return "".join(shown), columns


def _underline(source: SourceFile, diagnostic: Diagnostic) -> tuple[int, str, int, int, bool]:
    """(0-based line, displayed line, underline start, underline width, continues) for the first
    line of the diagnostic's span; very long lines are cut to a window around the span."""
    line = source.line_of(min(diagnostic.start, len(source.data)))
    line_start = source.line_start(line)
    line_end = source.line_end(line)
    text = source.line_text(line).rstrip()
    start_char = len(source.slice(line_start, min(diagnostic.start, line_end)))
    end_char = len(source.slice(line_start, min(max(diagnostic.end, diagnostic.start), line_end)))
    prefix = ""
    if len(text) > MAX_LINE_WIDTH:
        left = max(0, start_char - 40)
        right = max(left + MAX_LINE_WIDTH, min(end_char, start_char + MAX_LINE_WIDTH - 40))
        if right < len(text):
            text = text[:right] + "…"
        if left > 0:
            text, prefix = text[left:], "…"
            start_char, end_char = start_char - left, end_char - left
    start_char, end_char = min(start_char, len(text)), min(end_char, len(text))
    shown, columns = expand_line(text)
    width = max(columns[end_char] - columns[start_char], 1)
    continues = source.line_of(max(diagnostic.start, diagnostic.end - 1)) > line
    return line, prefix + shown, len(prefix) + columns[start_char], width, continues


def _fix_help(diagnostic: Diagnostic, options: ReportOptions) -> str | None:
    fix = diagnostic.fix
    status = fix_status(diagnostic)
    if fix is None or status is Applicability.NONE:
        return None
    if status is Applicability.SAFE:
        return fix.title
    if options.unsafe_fixes:
        return f"{fix.title} (unsafe)"
    return f"{fix.title} (unsafe fix, hidden: enable with --unsafe-fixes)"


def header_line(result: FileResult, diagnostic: Diagnostic, options: ReportOptions) -> str:
    """`path:row:col: CODE [severity] message`: the first line of a finding, and all of it in the
    concise format."""
    paint = _Painter(options.color)
    assert result.source is not None
    row, column = result.source.location(diagnostic.start)
    color = SEVERITY_COLOR.get(diagnostic.severity, "")
    return f"{paint(printable(result.path), BOLD)}:{row}:{column}: {paint(diagnostic.code, BOLD, color)} [{paint(diagnostic.severity.value, color)}] {printable(diagnostic.message)}"


def format_diagnostic(result: FileResult, diagnostic: Diagnostic, options: ReportOptions) -> str:
    paint = _Painter(options.color)
    source = result.source
    assert source is not None
    color = SEVERITY_COLOR.get(diagnostic.severity, "")
    lines = [header_line(result, diagnostic, options)]
    if source.data:
        line, shown, start_col, width, continues = _underline(source, diagnostic)
        number = str(line + 1)
        gutter = " " * len(number)
        bar = paint("|", BLUE, BOLD)
        marker = "^" * width + ("..." if continues else "")
        lines.append(f"{gutter} {bar}")
        lines.append(f"{paint(number, BLUE, BOLD)} {bar} {shown}".rstrip())
        lines.append(f"{gutter} {bar} {' ' * start_col}{paint(marker, BOLD, color)}")
        help_text = _fix_help(diagnostic, options) if options.show_fixes else None
        if help_text:
            lines.append(f"{gutter} {paint('=', BLUE, BOLD)} {paint('help', BOLD)}: {printable(help_text)}")
    return "\n".join(lines)


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


def summary(results: list[FileResult], options: ReportOptions) -> str:
    diagnostics = [d for r in results if r.source is not None for d in r.diagnostics]
    total = len(diagnostics)
    failed = sum(1 for r in results if r.error is not None)
    internal = sum(len(r.internal_errors) for r in results)
    fixed = sum(r.fixed for r in results)
    would = any(r.diff is not None for r in results)
    safe = sum(1 for d in diagnostics if fix_status(d) is Applicability.SAFE)
    unsafe = sum(1 for d in diagnostics if fix_status(d) is Applicability.UNSAFE)

    notes: list[str] = []
    if fixed:
        verb = "would be fixed" if would else "fixed"
        revealed = sum(r.revealed for r in results)
        after = f" ({revealed} appeared once other fixes were applied)" if revealed else ""
        notes.append(f"{fixed} {verb}{after}, {total} remaining")
    applicable = safe + unsafe if options.unsafe_fixes else safe
    if applicable:
        notes.append(f"{applicable} fixable with --fix")
    if unsafe and not options.unsafe_fixes:
        notes.append(f"{unsafe} {'more' if applicable else 'fixable'} with --unsafe-fixes")
    download = sizes.report_total(results)
    if download is not None:
        notes.append(download.describe())
    tail = []
    if failed:
        tail.append(f"{_plural(failed, 'file')} could not be checked")
    if internal:
        tail.append(f"{_plural(internal, 'internal error')}")

    if total + fixed == 0 and not tail:
        return "All checks passed!"
    if total + fixed == 0:
        return "No findings; " + "; ".join(tail) + "."
    text = f"Found {_plural(total + fixed, 'finding')}"
    if notes:
        text += f" ({'; '.join(notes)})"
    if tail:
        text += "; " + "; ".join(tail)
    return text + "."


def context_lines(results: list[FileResult]) -> list[str]:
    """What the findings were judged against and what was looked at: each distinct target with
    its source, and how many files were parsed or skipped by the CUDA prefilter."""
    lines = [f"Target: {target.describe()}" for target in targets(results)]
    parsed = sum(1 for r in results if r.source is not None)
    unparsed = [r for r in results if r.source is None and r.error is None]
    unchanged = sum(1 for r in unparsed if r.unchanged)
    skipped = [
        f"{_plural(len(unparsed) - unchanged, 'file')} without CUDA names" if len(unparsed) > unchanged else "",
        f"{_plural(unchanged, 'file')} without new lines since the --new-from-rev revision" if unchanged else "",
    ]
    if unparsed:
        lines.append(f"Checked {_plural(parsed, 'file')}; skipped {' and '.join(s for s in skipped if s)} (not parsed).")
    elif parsed:
        lines.append(f"Checked {_plural(parsed, 'file')}.")
    return lines


def report(results: list[FileResult], out: TextIO, options: ReportOptions) -> None:
    _report(results, out, options, lambda result, diagnostic: format_diagnostic(result, diagnostic, options) + "\n\n")


def report_concise(results: list[FileResult], out: TextIO, options: ReportOptions) -> None:
    """`--output-format concise`: one line per finding (ruff's concise format), then the summary."""
    _report(results, out, options, lambda result, diagnostic: header_line(result, diagnostic, options) + "\n")


def _report(results: list[FileResult], out: TextIO, options: ReportOptions, render) -> None:
    paint = _Painter(options.color)
    for result in sorted(results, key=lambda r: r.path):
        # a file's error (unreadable, too large, ...) and internal errors go to standard error
        # once, from the CLI; the summary counts them
        if result.source is None:
            continue
        for diagnostic in sorted(result.diagnostics, key=lambda d: (d.start, d.end, d.code)):
            out.write(render(result, diagnostic))
    if not options.summary:
        return
    for line in context_lines(results):
        out.write(paint(line, DIM) + "\n")
    out.write(paint(summary(results, options), BOLD) + "\n")
