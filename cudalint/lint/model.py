"""The data every stage shares: diagnostics, fixes and edits, and the enums rules declare with.

A leaf (like ruff_diagnostics): it imports no other module of the project at run time.

Fixes are data attached to diagnostics (as in libnixf): byte-offset edits that the CLI applies,
prints as a diff, or the language server turns into a WorkspaceEdit.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from cudalint.knowledge.sizes import Download


class Severity(enum.Enum):
    ERROR = "error"
    WARNING = "warning"
    INFO = "info"


class Applicability(enum.Enum):
    """Fix safety: `safe` fixes keep the meaning; `unsafe` ones change the closure or build.

    Listed from least to most risky (`risk`)."""

    NONE = "none"
    SAFE = "safe"
    UNSAFE = "unsafe"

    @property
    def risk(self) -> int:
        return list(Applicability).index(self)


class FixAvailability(enum.Enum):
    """Whether a rule's findings come with a fix (ruff's fix availability), apart from how risky
    those fixes are (`Rule.fix`): `always` every finding has one, `sometimes` some have, `never`
    none has."""

    ALWAYS = "always"
    SOMETIMES = "sometimes"
    NEVER = "never"


@dataclass(frozen=True, order=True)
class Edit:
    start: int
    end: int
    content: str


@dataclass(frozen=True)
class Fix:
    """Edits that together resolve a diagnostic.

    Fixes sharing an `isolation` key are applied one per pass of fix-all (their edits depend on
    each other's results, e.g. removing a formal once its last use is rewritten)."""

    title: str
    applicability: Applicability
    edits: tuple[Edit, ...]
    isolation: str | None = None
    # what the fix changes in NVIDIA archive downloads (cudalint/knowledge/sizes.py), for reports' totals
    download: Download | None = None

    @property
    def span(self) -> tuple[int, int]:
        return min(e.start for e in self.edits), max(e.end for e in self.edits)


@dataclass(frozen=True)
class Diagnostic:
    code: str
    message: str
    start: int
    end: int
    severity: Severity
    fixes: tuple[Fix, ...] = ()
    # where the finding stands (cudalint.nix.places.Kind value: package, dev shell, module, override)
    context: str | None = None

    @property
    def fix(self) -> Fix | None:
        """The primary fix (the first); other entries are alternatives offered in editors."""
        return self.fixes[0] if self.fixes else None
