"""The engine's one-walk dispatch (and the duplicate-definition check fed by that walk) gives
exactly the findings of the previous engine (a generator walk per purpose), kept in
`engine.lint(..., legacy_walk=True)` for this comparison until it is removed.

Every fixture, example and rule-docs example is linted both ways with all rules, and with each
rule that fires alone; the hostile inputs (deep nesting, duplicate definitions) are compared too,
notes included. Findings are compared with their fixes, so the order rules see nodes in (which
decides which of several sites a rule reports) is covered. The previous engine hands every node
to every rule of its type, so the narrowing rules declare (`attrpath_patterns`,
`cuda_references_only`) is held here to skipping only calls that find nothing.
"""

from __future__ import annotations

import pytest

from cudalint.lint.engine import SYNTAX_ERROR, lint
from cudalint.lint.settings import LintSettings
from cudalint.nix import parsing
from cudalint.nix.parsing import duplicate_definitions, nodes_of_type, parse
from cudalint.nix.source import SourceFile
from cudalint.nix.syntax import descendants, node_key
from snapshots import fixture_target
from test_hostile_input import CASES
from test_prefilter import SAMPLES

# Notes are compared: a loaded machine must not run a budget out in one of the two runs only.
NO_DEADLINE = 1e6


def _outcome(source: SourceFile, settings: LintSettings, legacy: bool) -> tuple:
    result = lint(source, settings, legacy_walk=legacy)
    findings = [(d.code, d.start, d.end, d.message, d.severity, d.fixes, d.context) for d in result.diagnostics]
    return findings, result.notes, result.internal_errors, result.suppressed


@pytest.mark.parametrize("name,text", SAMPLES, ids=[name for name, _ in SAMPLES])
def test_one_walk_dispatch_finds_what_the_previous_engine_found(name: str, text: str) -> None:
    source = SourceFile(name, text)
    target = fixture_target(text)
    everything = LintSettings(time_budget=NO_DEADLINE, **target)
    previous = _outcome(source, everything, legacy=True)
    assert _outcome(source, everything, legacy=False) == previous
    for code in {finding[0] for finding in previous[0]} - {SYNTAX_ERROR}:
        alone = LintSettings(enabled=frozenset({code, SYNTAX_ERROR}), time_budget=NO_DEADLINE, **target)
        assert _outcome(source, alone, legacy=False) == _outcome(source, alone, legacy=True), code


@pytest.mark.parametrize("name", sorted(CASES))
def test_hostile_inputs_give_the_same_findings_and_notes(name: str) -> None:
    source = SourceFile("hostile.nix", CASES[name])
    unhurried = LintSettings(time_budget=NO_DEADLINE)
    assert _outcome(source, unhurried, legacy=False) == _outcome(source, unhurried, legacy=True)


DUPLICATES = {
    "repeated attribute": "{ a = 1; a = 2; }",
    "quoted and plain spelling": '{ a = 1; "a" = 2; }',
    "merged literals": "{ a = { x = 1; }; a.y = 2; a.x = 3; }",
    "leaf then path": "{ a = 1; a.b = 2; }",
    "inherit twice": "{ inherit a; inherit (b) a; }",
    "inside a let": "let x = 1; x = 2; in x",
    "nested literal": "{ a = { b = 1; b = 2; }; }",
    "escaped names are dynamic": '{ "a\\"" = 1; "a\\"" = 2; }',
    "interpolated names are dynamic": "{ ${x} = 1; ${x} = 2; }",
    "distinct": "{ a = 1; b.c = 2; inherit d; }",
    "repeated formal": "{ a, b, a }: a",
    "formal named like the whole argument": "args@{ args, b }: b",
    "whole argument after the formals": "{ a, b }@a: b",
    "formals of nested functions": "{ a }: x: { b, b ? 1 }: a",
    # the names of bindings and formals are read from the text where no error is near
    "repeated formal after a default": "{ a ? 1, b, a }: a",
    "repeated formal between comments": "{ a, # note\n  b /* c */, a }: a",
    "repeated formal with a trailing comma": "{ a, b, a, }: a",
    "repeated formal with primes": "{ a', a'-b, a' }: a'",
    "distinct formals and whole argument": "args@{ a, b, ... }: b",
    "quoted spelling first": '{ "a" = 1; a = 2; }',
    "names with primes and dashes": "{ a'-b = 1; a'-b = 2; }",
    "comment before the repeat": "{ a = 1; /* c */ a = 2; }",
    "repeat beside a syntax error": "{ a = 1; a = 2; b = ; }",
    "semicolon in a string before a repeat": '{ a = "x;"; b = "y"; b = 2; }',
    "name after a semicolon in a string": '{ a = "; b"; b = 1; }',
    "nested names are not first names": "{ a = { b = 1; c = 2; }; c = 3; }",
    "computed first name beside a repeat": "{ ${x} = 1; a = 1; a = 2; }",
    "repeat in a large binding set": "{ " + " ".join(f"a{i} = {i};" for i in range(1000)) + " a0 = 1; }",
}
WITHOUT_DUPLICATES = {
    "distinct",
    "distinct formals and whole argument",
    "escaped names are dynamic",
    "interpolated names are dynamic",
    "nested names are not first names",
    "name after a semicolon in a string",
}


@pytest.mark.parametrize("name", sorted(DUPLICATES))
def test_duplicate_check_from_the_walk_matches_the_full_one(name: str) -> None:
    """The walk hands the duplicate check only functions, `formals` and `binding_set` nodes
    (a function's formals follow it), and binding sets without a repeated first name skip the
    merge: none of it may lose a duplicate."""
    source = SourceFile("d.nix", DUPLICATES[name])
    root = parse(source).root_node
    stack, definitions = [root], []
    while stack:
        node = stack.pop()
        if node.type in {"function_expression", "formals", "binding_set"}:
            definitions.append(node)
        stack.extend(reversed(node.children))
    found: dict = {}
    for node in definitions:  # every binding set merged, as before the repeated-name shortcut
        if node.type == "formals":
            parsing._duplicate_formals(node, found)  # (its function found as its parent)
        elif node.type == "binding_set":
            parsing._insert_bindings({}, node, found, report=True)
    expected = list(found.values())
    assert duplicate_definitions(root, definitions) == expected
    assert duplicate_definitions(root) == expected
    assert bool(expected) == (name not in WITHOUT_DUPLICATES)


_TYPES = (("assert_expression",), ("binding",), ("apply_expression",), ("variable_expression",), ("indented_string_expression", "string_expression"))


@pytest.mark.parametrize("name,text", SAMPLES + [(f"hostile {name}", text) for name, text in CASES.items()], ids=lambda value: str(value)[:60])
def test_nodes_of_type_are_the_walks_nodes_in_its_order(name: str, text: str) -> None:
    """Rules that look at every node of a type in a file get them from a tree-sitter query:
    exactly the nodes, in the order, of a walk of the whole tree."""
    root = parse(SourceFile(name, text)).root_node
    walked = list(descendants(root))
    for types in _TYPES:
        expected = [node_key(n) for n in walked if n.type in types]
        assert [node_key(n) for n in nodes_of_type(root, types)] == expected, types
