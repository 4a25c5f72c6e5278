"""What a check of one file produced: the contract between the runner and the reporters."""

from __future__ import annotations

from dataclasses import dataclass, field

from cudalint.lint.model import Diagnostic
from cudalint.nix.source import SourceFile


@dataclass(frozen=True)
class ReportedTarget:
    """The nixpkgs and CUDA releases a file was judged against, and where the nixpkgs came from."""

    nixpkgs: str | None  # "23.05", "unstable", a date; None: the newest
    source: str | None  # "flake.nix inputs.nixpkgs.url", "--nixpkgs", ...; None: nothing pins it
    era: str
    cuda: tuple[str, ...]
    undated: str | None = None  # "FILE:LINE" of a pinned commit nothing dates (the newest nixpkgs stands in)

    def describe(self) -> str:
        where = "the newest nixpkgs" if self.nixpkgs in (None, "unstable") else f"nixpkgs {self.nixpkgs}"
        if self.undated:
            source = f" (undated pin at {self.undated}; pass --nixpkgs to choose the target)"
        else:
            source = f" ({self.source})" if self.source else " (nothing pins it)"
        return f"{where}{source}, CUDA {', '.join(self.cuda)}"

    def as_json(self) -> dict:
        return {"nixpkgs": self.nixpkgs or "unstable", "source": self.source, "undated": self.undated, "era": self.era, "cuda": list(self.cuda)}


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
    revealed: int = 0  # of those, findings that only appeared once other fixes were applied
    unchanged: bool = False  # not parsed: --new-from-rev found no new line in it
    diff: str | None = None  # unified diff of the fixes (with --diff)
    suppressions_added: int = 0  # suppression comments written (with --add-suppressions)
    internal_errors: list[str] = field(default_factory=list)
    target: ReportedTarget | None = None  # for files that were parsed
