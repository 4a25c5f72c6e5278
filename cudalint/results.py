"""What a check of one file produced: the contract between the runner and the reporters."""

from __future__ import annotations

from dataclasses import dataclass, field

from cudalint.model import Diagnostic
from cudalint.source import SourceFile


@dataclass
class FileResult:
    """One file's outcome. `path` is as shown to the user (relative to the working directory
    where possible); `error` is a per-file problem (unreadable, not UTF-8, too large, ...), in
    which case `source` may be None and `diagnostics` empty."""

    path: str
    source: SourceFile | None
    diagnostics: list[Diagnostic] = field(default_factory=list)
    error: str | None = None
    fixed: int = 0  # fixes applied (with --fix) or that would be applied (with --diff)
    diff: str | None = None  # unified diff of the fixes (with --diff)
    internal_errors: list[str] = field(default_factory=list)
