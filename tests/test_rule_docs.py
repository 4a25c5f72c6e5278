"""Each rule's docs are complete, and their examples behave as the docs claim."""

from __future__ import annotations

import re

import pytest

from cudalint.lint.engine import lint
from cudalint.lint.model import Applicability, Severity
from cudalint.lint.registry import all_rules
from cudalint.nix.source import SourceFile
from snapshots import settings_for

RULES = all_rules()


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.code)
def test_metadata_is_complete(rule) -> None:
    assert re.fullmatch(r"CUDA\d{3}", rule.code)
    assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", rule.name)
    assert isinstance(rule.severity, Severity) and isinstance(rule.fix, Applicability)
    assert rule.summary and not rule.summary.endswith(".")
    assert rule.code in ("CUDA900", "CUDA901") or (rule.check is not None and rule.node_types), "a rule needs a check"
    for title in ("Why", "Example", "Use instead", "References"):
        assert rule.section(title), f"{rule.code} docs lack a `## {title}` section"
    assert rule.examples("Example") and rule.examples("Use instead")
    assert re.search(r"https?://", rule.section("References"))


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.code)
def test_bad_example_fires_and_good_example_is_silent(rule) -> None:
    for example in rule.examples("Example"):
        # an example for one era names its target like a fixture (`# fixture-target: nixpkgs=24.05`)
        result = lint(SourceFile("example.nix", example), settings_for(rule.code, example))
        assert any(d.code == rule.code for d in result.diagnostics), f"{rule.code}: its bad example does not fire"
    for example in rule.examples("Use instead"):
        result = lint(SourceFile("example.nix", example), settings_for(rule.code, example))
        assert not [d for d in result.diagnostics if d.code == rule.code], f"{rule.code}: its good example fires"
        assert result.syntax_errors == 0
