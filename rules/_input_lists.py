"""Shared judgement of the rules about which input list a package belongs in (CUDA301, CUDA307)."""

from __future__ import annotations

from tree_sitter import Node

from cudalint.lint.context import Context
from cudalint.lint.model import Severity


def list_choice_severity(node: Node, ctx: Context) -> Severity | None:
    """A dev shell works either way (mkShell does not set strictDeps): the move is tidiness there,
    so info; elsewhere the rule's own severity (None)."""
    return Severity.INFO if ctx.place(node).is_shell else None
