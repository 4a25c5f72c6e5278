"""Input no real package contains must neither crash the engine nor make it blow up: deep
nesting, huge curried chains, huge lines, unterminated strings, thousands of findings in one
string. (Speed is measured by benchmarks, not asserted here; these inputs used to raise or take
minutes.)"""

from __future__ import annotations

import random

import pytest

from cudalint.lint.engine import MAX_RULE_DEPTH, lint
from cudalint.lint.fixing import fix_file
from cudalint.lint.settings import LintSettings
from cudalint.nix.parsing import parse, syntax_problems
from cudalint.nix.source import SourceFile

CASES = {
    "nested parentheses": "(" * 10000 + "cudatoolkit" + ")" * 10000,
    "nested attrsets": "x: " + "{ a = " * 3000 + "[ cudatoolkit ]" + "; }" * 3000,
    "nested with": "with cudaPackages; " * 3000 + "[ cudatoolkit ]",
    "nested if": "if c then " * 3000 + "[ cudatoolkit ]" + " else [ ]" * 3000,
    "nested functions": "a: " * 5000 + "cudatoolkit",
    "long let chain": "let a0 = cudaPackages.cuda_nvcc; " + " ".join(f"a{i} = a{i - 1};" for i in range(1, 3000)) + " in { nativeBuildInputs = [ a2999 ]; }",
    "long curried chain": "lib.optionals c " * 3000 + "[ cudatoolkit ]",
    "long concatenation": "{ buildInputs = " + " ++ ".join(["[ cudatoolkit ]"] * 3000) + "; }",
    # conditions are split and negated term by term (CUDA304's guards, CUDA311's `meta.broken`)
    "long condition in an assert": "{ cudaSupport, stdenv, cudaPackages }: assert cudaSupport -> "
    + " && ".join(["x != null"] * 3000)
    + "; assert "
    + " && ".join(["cudaSupport"] * 3000)
    + "; stdenv.mkDerivation { src = ./.; buildInputs = [ cudaPackages.cuda_cudart ]; }",
    "random bytes": bytes(random.Random(7).getrandbits(8) for _ in range(50000)).decode("latin-1"),
    "unterminated string": "{ x = ''" + "a" * 100000,
    "five megabyte line": '{ a = "' + "x" * 5_000_000 + '"; }',
    "NUL characters": '{ a = "\x00\x00"; b = [ cudatoolkit ]; }',
    # tree-sitter's parent and sibling lookups recurse in C: this crashed the syntax check
    "trailing comma 10,000 levels deep": "(" * 10000 + "{ cudatoolkit, b, }: cudatoolkit" + ")" * 10000,
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_engine_and_fixes_survive(name: str) -> None:
    source = SourceFile("hostile.nix", CASES[name])
    result = lint(source, LintSettings())
    assert not result.internal_errors
    errors_before = len(syntax_problems(parse(source), source))
    outcome = fix_file(source, LintSettings(), unsafe=True)
    fixed = SourceFile("hostile.nix", outcome.text)
    assert len(syntax_problems(parse(fixed), fixed)) <= errors_before


def test_rules_stop_below_the_depth_limit_and_say_so() -> None:
    result = lint(SourceFile("deep.nix", CASES["nested parentheses"]), LintSettings())
    assert result.notes and str(MAX_RULE_DEPTH) in result.notes[0]
    shallow = lint(SourceFile("ok.nix", "{ stdenv, cudatoolkit }: stdenv.mkDerivation { buildInputs = [ cudatoolkit ]; }"), LintSettings())
    assert not shallow.notes


def test_thousands_of_findings_in_one_string_fix_in_a_few_passes() -> None:
    text = "{ stdenv }: stdenv.mkDerivation { postFixup = ''\n" + "export LD_LIBRARY_PATH=/run/opengl-driver/lib\n" * 2000 + "''; }\n"
    source = SourceFile("many.nix", text)
    assert len([d for d in lint(source, LintSettings()).diagnostics if d.code == "CUDA101"]) == 2000
    outcome = fix_file(source, LintSettings(), unsafe=True)
    assert outcome.passes <= 5
    assert "LD_LIBRARY_PATH" not in outcome.text and "autoAddDriverRunpath" in outcome.text
    assert not fix_file(SourceFile("many.nix", outcome.text), LintSettings(), unsafe=True).changed
