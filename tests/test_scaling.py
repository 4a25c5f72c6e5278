"""Work grows linearly with the file: a file of 2N package functions costs about twice one of N.

Measured in tree nodes visited and names resolved, not in seconds (no timed assertions). Found
by the fuzzer's dense single line: CUDA302 walked the whole file once per `stdenv` formal, and
`Semantic.uses` resolved every variable of a name once per binding of that name.
"""

from __future__ import annotations

import sys

import pytest

from cudalint.lint import engine
from cudalint.lint.engine import lint
from cudalint.lint.registry import all_rules
from cudalint.lint.settings import LintSettings
from cudalint.nix import parsing, syntax
from cudalint.nix.semantic import Semantic
from cudalint.nix.source import SourceFile
from nix_generator import dense_list


def work(copies: int, monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    counts = {"nodes": 0, "resolved": 0}
    walk = syntax.descendants

    def counting_walk(*args, **kwargs):
        for node in walk(*args, **kwargs):
            counts["nodes"] += 1
            yield node

    all_rules()  # the rule modules are imported: their own `descendants` names are counted too
    for module in list(sys.modules.values()):
        if getattr(module, "descendants", None) is walk:
            monkeypatch.setattr(module, "descendants", counting_walk)
    resolve = Semantic.resolve

    def counting_resolve(self, *args, **kwargs):
        counts["resolved"] += 1
        return resolve(self, *args, **kwargs)

    monkeypatch.setattr(Semantic, "resolve", counting_resolve)
    # the engine's own walk and the tree-sitter queries rules ask visit nodes too
    engine_walk, typed = engine._walk, parsing.nodes_of_type

    def counting_engine_walk(root, *args, **kwargs):
        counts["nodes"] += root.descendant_count
        return engine_walk(root, *args, **kwargs)

    def counting_nodes_of_type(*args, **kwargs):
        found = typed(*args, **kwargs)
        counts["nodes"] += len(found)
        return found

    monkeypatch.setattr(engine, "_walk", counting_engine_walk)
    monkeypatch.setattr(parsing, "nodes_of_type", counting_nodes_of_type)
    text = dense_list(copies).decode("utf-8")
    result = lint(SourceFile("dense.nix", text), LintSettings(time_budget=600.0))
    assert not result.internal_errors and not result.notes
    monkeypatch.undo()
    return counts


@pytest.mark.parametrize("measure", ["nodes", "resolved"])
def test_work_is_linear_in_the_number_of_packages(measure: str, monkeypatch: pytest.MonkeyPatch) -> None:
    small = work(20, monkeypatch)[measure]
    large = work(40, monkeypatch)[measure]
    assert small > 0 and large <= 2.5 * small, (small, large)
