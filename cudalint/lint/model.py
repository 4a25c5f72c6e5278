"""The data every stage shares: rule metadata, diagnostics, fixes and edits.

Fixes are data attached to diagnostics (as in libnixf): byte-offset edits that the CLI applies,
prints as a diff, or the language server turns into a WorkspaceEdit.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import tree_sitter

    from cudalint.knowledge.sizes import Download
    from cudalint.lint.context import Context

# docs/rules.md is generated from the rule modules (python -m cudalint.frontend.ruledocs --write-reference).
DOCS_URL = "https://github.com/cudalint/cudalint/blob/main/docs/rules.md#{anchor}"


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

    @property
    def rule(self) -> Rule:
        from cudalint.lint.registry import rule_by_code

        return rule_by_code(self.code)


Check = Callable[["tree_sitter.Node", "Context"], None]

_DOC_SECTION = re.compile(r"^## (.+)$", re.M)


@dataclass
class Rule:
    """A rule's declarative metadata; its module docstring is its documentation.

    `node_types` dispatch the check during the single tree walk; `patterns` are byte strings of
    which at least one must occur in a file for the rule to possibly fire (a cheap prefilter).
    `fix` is the riskiest applicability any fix of the rule may have (alternatives included) and
    `availability` whether its findings have fixes at all; tests/test_rule_fixtures.py holds
    every rule to both over the fixtures and the docs' examples.
    """

    code: str
    name: str
    severity: Severity
    fix: Applicability
    availability: FixAvailability
    summary: str
    node_types: tuple[str, ...] = ()
    patterns: tuple[bytes, ...] = ()
    docs: str = ""
    check: Check | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        if (self.availability is FixAvailability.NEVER) != (self.fix is Applicability.NONE):
            raise ValueError(f"{self.code}: a rule that never fixes declares `fix=Applicability.NONE`, and only such a rule")

    def __call__(self, check: Check) -> Check:
        """Used as a decorator on the rule's check function."""
        self.check = check
        return check

    @property
    def url(self) -> str:
        return DOCS_URL.format(anchor=f"{self.code.lower()}-{self.name}")

    def section(self, title: str) -> str:
        """A `## Title` section of the docs (without the heading), or ''."""
        parts = _DOC_SECTION.split(self.docs)
        for heading, body in zip(parts[1::2], parts[2::2]):
            if heading.strip().lower() == title.lower():
                return body.strip()
        return ""

    def examples(self, title: str) -> list[str]:
        """The ```nix blocks of one docs section."""
        return [m.strip("\n") for m in re.findall(r"```nix\n(.*?)```", self.section(title), re.S)]


def fix_titles(diagnostics: Iterable[Diagnostic]) -> list[str]:
    return [d.fix.title for d in diagnostics if d.fix]
