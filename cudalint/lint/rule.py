"""A rule's declarative metadata (`Rule`); its check function and module docstring come with it.

The registry (registry.py) finds the rules; the model (model.py) is what their findings are made of.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from cudalint.lint.model import Applicability, FixAvailability, Severity

if TYPE_CHECKING:
    import tree_sitter

    from cudalint.lint.context import Context

# docs/rules.md is generated from the rule modules (python -m cudalint.frontend.ruledocs --write-reference).
DOCS_URL = "https://github.com/cudalint/cudalint/blob/main/docs/rules.md#{anchor}"

Check = Callable[["tree_sitter.Node", "Context"], None]

_DOC_SECTION = re.compile(r"^## (.+)$", re.M)


@dataclass
class Rule:
    """A rule's declarative metadata; its module docstring is its documentation.

    `node_types` dispatch the check during the single tree walk; `patterns` are byte strings of
    which at least one must occur in a file for the rule to possibly fire (a cheap prefilter);
    `attrpath_patterns` do the same per `binding`: the engine hands a binding to the check only
    when its attribute path's text holds one of them (empty: every binding);
    `cuda_references_only` does the same per `variable_expression`: the check is run only on a
    variable that starts a reference to a CUDA package (`semantic.cuda_ref` of its
    `reference_root`), which the engine asks once for all such rules.
    `fix` is the riskiest applicability any fix of the rule may have (alternatives included) and
    `availability` whether its findings have fixes at all; tests/test_rule_fixtures.py holds
    every rule to both over the fixtures and the docs' examples.
    `preview` rules (ruff's model) are off unless preview mode is on: a new or changed rule stays
    there until the real-world corpora (tests/realworld/) show a precision of at least 0.95;
    `precision` says what was measured, for `cudalint rules`, the rule's docs and hover.
    `removals`: the rule's errors say the target nixpkgs removed a name (it throws there); when
    the file's pin cannot be dated (the newest nixpkgs is assumed), `Context.report` makes them
    warnings that suggest `--nixpkgs`.
    """

    code: str
    name: str
    severity: Severity
    fix: Applicability
    availability: FixAvailability
    summary: str
    node_types: tuple[str, ...] = ()
    patterns: tuple[bytes, ...] = ()
    attrpath_patterns: tuple[bytes, ...] = ()
    cuda_references_only: bool = False
    removals: bool = False
    preview: bool = False
    precision: str = ""
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
    def preview_note(self) -> str:
        """What `cudalint rule`, the docs and hover say of a rule in preview."""
        measured = self.precision or "not yet measured on the real-world corpora"
        return f"preview, off unless --preview or `preview = true` (precision: {measured})"

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
