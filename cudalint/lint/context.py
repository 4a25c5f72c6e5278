"""What a rule's check receives: the file, its tree, the semantic view, and `report`."""

from __future__ import annotations

import sys
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from tree_sitter import Node, Tree

from cudalint.lint.model import Diagnostic, Fix, Severity
from cudalint.lint.rule import Rule
from cudalint.nix.places import Place
from cudalint.nix.semantic import Semantic
from cudalint.nix.source import SourceFile

if TYPE_CHECKING:
    from cudalint.knowledge.reference import ReferenceSet, Target
    from cudalint.lint.settings import LintSettings


# Appended to a removed name's finding when the file's pin is undated (`Rule.removals`).
UNDATED_PIN = "(the pin is undated: pass --nixpkgs to judge it)"


@dataclass
class Context:
    source: SourceFile
    tree: Tree
    semantic: Semantic
    settings: LintSettings
    rule: Rule | None = None
    diagnostics: list[Diagnostic] = field(default_factory=list)
    # The node the engine handed to the rule, per finding: what an incremental re-lint re-checks.
    node: Node | None = None
    origins: dict[int, tuple[int, int]] = field(default_factory=dict)
    _target: Target | None = field(default=None, init=False, repr=False)

    def report(
        self,
        where: Node | tuple[int, int],
        message: str,
        *,
        fixes: Iterable[Fix | None] = (),
        severity: Severity | None = None,
    ) -> None:
        assert self.rule is not None
        severity = severity or self.rule.severity
        if severity is Severity.ERROR and self.rule.removals and self.settings.undated_pin:
            # the newest nixpkgs removed it, but the pinned one may not have
            severity, message = Severity.WARNING, f"{message} {UNDATED_PIN}"
        start, end = (where.start_byte, where.end_byte) if isinstance(where, Node) else where
        at = where if isinstance(where, Node) else self.tree.root_node.named_descendant_for_byte_range(start, end)
        diagnostic = Diagnostic(
            code=self.rule.code,
            message=sys.intern(message),  # the same finding repeats in generated files; an editor keeps them all
            start=start,
            end=end,
            severity=severity,
            fixes=tuple(f for f in fixes if f is not None and f.edits),
            context=self.place(at).kind.value if at is not None else None,
        )
        self.diagnostics.append(diagnostic)
        if self.node is not None:
            self.origins[id(diagnostic)] = (self.node.start_byte, self.node.end_byte)

    def place(self, node: Node) -> Place:
        """Where `node` stands (package, dev shell, module, override): advice follows it."""
        return self.semantic.place(node)

    # The reference set, for rules whose findings depend on the target nixpkgs and CUDA releases.

    @property
    def reference(self) -> ReferenceSet:
        from cudalint.knowledge.reference import load

        return load()

    @property
    def target(self) -> Target:
        # asked per node by the era-aware rules: looked up once per file
        found = self._target
        if found is None:
            from cudalint.knowledge.reference import target

            found = self._target = target(self.settings.nixpkgs, self.settings.cuda)
        return found
