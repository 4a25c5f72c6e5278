"""The rule registry: every module in `cudalint.rules` named `cudaNNN_*` holding a `RULE`."""

from __future__ import annotations

import importlib
import pkgutil
import re
from functools import cache, lru_cache

from cudalint.lint.rule import Rule

_MODULE_NAME = re.compile(r"^cuda\d{3}_[a-z0-9_]+$")


@lru_cache(maxsize=1)
def all_rules() -> tuple[Rule, ...]:
    import cudalint.rules as package

    rules: list[Rule] = []
    for info in pkgutil.iter_modules(package.__path__):
        if not _MODULE_NAME.match(info.name):
            continue
        module = importlib.import_module(f"{package.__name__}.{info.name}")
        rule: Rule = module.RULE
        rule.docs = (module.__doc__ or "").strip()
        expected = f"{rule.code.lower()}_{rule.name.replace('-', '_')}"
        if info.name != expected:
            raise RuntimeError(f"rule module {info.name} should be named {expected}")
        rules.append(rule)
    rules.sort(key=lambda r: r.code)
    codes = [r.code for r in rules]
    if len(set(codes)) != len(codes):
        raise RuntimeError(f"duplicate rule codes: {codes}")
    return tuple(rules)


@cache
def _by_code() -> dict[str, Rule]:
    return {r.code: r for r in all_rules()}


def rule_by_code(code: str) -> Rule:
    return _by_code()[code]


def known_codes() -> frozenset[str]:
    return frozenset(_by_code())


@cache
def stable_codes() -> frozenset[str]:
    """The rules a run enables by default: all but those in preview."""
    return frozenset(r.code for r in all_rules() if not r.preview)


@cache
def preview_codes() -> frozenset[str]:
    return frozenset(r.code for r in all_rules() if r.preview)


def resolve_selector(selector: str) -> frozenset[str]:
    """Codes a selector names: `ALL`, a full code, or a prefix (`CUDA1`, `CUDA10`).

    Raises KeyError for a selector that names no rule."""
    selector = selector.strip().upper()
    if selector == "ALL":
        return known_codes()
    matched = frozenset(c for c in known_codes() if c.startswith(selector))
    if not matched or not selector.startswith("CUDA"):
        raise KeyError(selector)
    return matched
