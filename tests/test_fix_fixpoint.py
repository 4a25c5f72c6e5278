"""Fix-all is a fixpoint of the whole rule set (issue 22): on every rule fixture, docs example,
best-practice file, fix-all regression and review-request snippet, under every modelled nixpkgs
era, `--fix --unsafe-fixes` leaves text where re-linting finds

- no syntax error the file did not have,
- no finding of any rule on a line the fixes wrote that the original did not have there,
- no input listed twice in one list of one derivation that was listed once before,
- no formal the original used and the fixed file no longer uses (orphaned),
- no added formal duplicating a name already in scope (`pkgs` next to the real argument, a
  formal for what a `with` or `let` already provides).

The few inputs that cannot reach a fixpoint are listed in EXCEPTIONS with the reason; an entry
that no longer fails makes the test fail, so the list only shrinks. The regressions in
tests/fixtures/fix_all/ also have the expected fixed text (`NAME.after`).
"""

from __future__ import annotations

import difflib
import re
from collections import Counter
from functools import cache
from pathlib import Path

import pytest

from cudalint.knowledge import reference
from cudalint.lint.engine import LintResult, lint
from cudalint.lint.fixing import fix_file
from cudalint.lint.registry import all_rules, known_codes
from cudalint.lint.settings import LintSettings
from cudalint.nix.parsing import parse
from cudalint.nix.semantic import Semantic
from cudalint.nix.source import SourceFile
from cudalint.nix.syntax import descendants, text
from snapshots import fixture_target

TESTS = Path(__file__).parent
FIX_ALL = TESTS / "fixtures" / "fix_all"
# every era the reference set models, from 22.05 (the first with the redistributables) on
ERAS = tuple(r for r in reference.releases() if r >= "22.05") + ("unstable",)


def _inputs() -> dict[str, str]:
    found = {str(p.relative_to(TESTS)): p.read_text(encoding="utf-8") for p in sorted((TESTS / "fixtures").rglob("*.nix"))}
    for rule in all_rules():
        for title in ("Example", "Use instead"):
            for index, example in enumerate(rule.examples(title)):
                found[f"docs/{rule.code}/{title}/{index}"] = example
    found.update({str(p.relative_to(TESTS)): p.read_text(encoding="utf-8") for p in sorted((TESTS / "review_requests" / "snippets").glob("*.nix"))})
    return found


INPUTS = _inputs()

# (input, era or "*", problem prefix) -> why that input cannot reach a fixpoint there.
_KEEPS_RELEASE = (
    "CUDA006 renames a removed name to the versioned set that still has it on the target, keeping the CUDA release "
    "(a fix never changes it); CUDA002 then warns that the set throws later, and CUDA001 that a 10.x/11.x toolkit is the "
    "runfile one: moving to another release changes the closure, the user's decision"
)
EXCEPTIONS: dict[tuple[str, str, str], str] = {
    **{
        (name, "*", problem): _KEEPS_RELEASE
        for name in (
            "fixtures/rules/CUDA006/fire_deprecated_cuda11.nix",
            "fixtures/rules/CUDA006/fire_renamed_fixable.nix",
            "fixtures/rules/CUDA006/fire_removed_toolkits.nix",
            "fixtures/rules/CUDA006/fire_old_cuda.nix",
            "docs/CUDA006/Example/0",
        )
        for problem in ("new CUDA002", "new CUDA001")
        if (name, problem) != ("fixtures/rules/CUDA006/fire_deprecated_cuda11.nix", "new CUDA001")
    },
    ("docs/CUDA109/Example/0", "*", "new CUDA101"): (
        "the misspelled directory hid the driver from CUDA101; corrected, the session-wide LD_LIBRARY_PATH is CUDA101's "
        "own finding (no fix in a home-manager session), which a typo fix must not remove silently"
    ),
    ("fixtures/rules/CUDA001/fire_formal_in_inputs.nix", "*", "new CUDA315"): (
        "`cudatoolkit.cc` becomes `cudaPackages.backendStdenv.cc`, the same compiler, which CUDA315 can now see is used "
        "without the switch; choosing another compiler when CUDA is off changes non-CUDA builds"
    ),
    ("fixtures/rules/CUDA310/fire_make_cuda_home.nix", "*", "new CUDA309"): (
        "once the build uses backendStdenv, CUDA309 sees that it compiles CUDA without architectures: a defect of the original that no fix can know the architectures for"
    ),
}


def _written_lines(before: str, after: str) -> dict[int, tuple[int, int]]:
    """Lines of `after` (0-based) the fixes wrote, each with the range of `before` it replaced."""
    written = {}
    matcher = difflib.SequenceMatcher(None, before.splitlines(), after.splitlines(), autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag in ("replace", "insert"):
            for line in range(j1, j2):
                written[line] = (i1, i2)
    return written


def _formals(semantic: Semantic) -> dict[str, object]:
    function = semantic.top_function()
    formals = function.child_by_field_name("formals") if function is not None else None
    if formals is None:
        return {}
    return {text(name): f for f in formals.children_by_field_name("formal") if (name := f.child_by_field_name("name")) is not None}


def _used_names(semantic: Semantic) -> Counter[str]:
    """Names used as variables or inherited without a source, anywhere in the file (stated here
    apart from the fix loop's own account of uses)."""
    return Counter(text(n) for n in descendants(semantic.tree.root_node) if n.type == "identifier" and n.parent is not None and n.parent.type in ("variable_expression", "inherited_attrs"))


def _inputs_of(semantic: Semantic) -> Counter[tuple[int, str, str]]:
    """(derivation ordinal, input attribute, element) for each element of each input list; an
    element is named by the CUDA package and output it denotes, else its text without `pkgs.`."""
    found: Counter[tuple[int, str, str]] = Counter()
    owners: dict[int, int] = {}
    for node in descendants(semantic.tree.root_node):
        if node.type not in ("variable_expression", "select_expression") or node.parent is None or node.parent.type != "list_expression":
            continue
        site = semantic.input_site(node)
        if site is None or site.element != node or site.binding.parent is None:
            continue
        ref = semantic.cuda_ref(node)
        name = f"{ref.set_name}.{ref.package}.{ref.output}" if ref is not None else re.sub(r"^pkgs\.", "", re.sub(r"\s+", "", text(node)))
        owner = owners.setdefault(site.binding.parent.start_byte, len(owners))
        found[(owner, site.attr, name)] += 1
    return found


def problems_of(before: str, first: LintResult, after: str, final: LintResult) -> list[str]:
    problems = []
    if final.syntax_errors > first.syntax_errors:
        problems.append("syntax error")
    written = _written_lines(before, after)
    for diagnostic in final.diagnostics:
        line = final.source.line_of(diagnostic.start)
        if line not in written:
            continue
        start, end = written[line]
        there = any(o.code == diagnostic.code and start <= first.source.line_of(o.start) < max(end, start + 1) for o in first.diagnostics)
        moved = any(o.code == diagnostic.code and o.message == diagnostic.message for o in first.diagnostics)
        if not there and not moved:
            problems.append(f"new {diagnostic.code} on fixed line {line + 1} `{after.splitlines()[line].strip()}`: {diagnostic.message}")
    original = Semantic(parse(first.source), first.source)
    fixed = Semantic(parse(final.source), final.source)
    had = _inputs_of(original)
    for key, count in _inputs_of(fixed).items():
        if count > 1 and had[key] < count:
            problems.append(f"duplicate input {key[2]} in {key[1]}")
    formals_before, formals_after = _formals(original), _formals(fixed)
    used_before, used_after = _used_names(original), _used_names(fixed)
    for name in formals_before.keys() & formals_after.keys():
        if used_before[name] and not used_after[name]:
            problems.append(f"orphaned formal {name}")
    function = original.top_function()
    for name in formals_after.keys() - formals_before.keys():
        if name == "pkgs":
            doubled = sorted(n for n in formals_after if n != "pkgs" and re.search(rf"\bpkgs\.{re.escape(n)}\b", after))
            if doubled:
                problems.append(f"added formal pkgs beside {doubled}")
        elif "pkgs" in formals_after and re.search(rf"\bpkgs\.{re.escape(name)}\b", after):
            problems.append(f"added formal {name} beside pkgs.{name}")
        body = function.child_by_field_name("body") if function is not None else None
        if body is not None and original.resolve_name(name, body).kind != "free":
            problems.append(f"added formal {name} already in scope ({original.resolve_name(name, body).kind})")
    return problems


@cache
def fixed(name: str, era: str) -> tuple[str, LintResult, LintResult]:
    before = INPUTS[name]
    settings = LintSettings(enabled=known_codes(), nixpkgs=era, cuda=fixture_target(before).get("cuda", ()))  # type: ignore[arg-type]
    source = SourceFile(name, before)
    first = lint(source, settings)
    if not any(d.fix is not None for d in first.diagnostics):
        return before, first, first
    outcome = fix_file(source, settings, unsafe=True, first=first)
    return outcome.text, first, outcome.result


def _problems(name: str, era: str) -> list[str]:
    after, first, final = fixed(name, era)
    if after == INPUTS[name]:
        return []
    return problems_of(INPUTS[name], first, after, final)


def _excused(name: str, era: str, problem: str) -> bool:
    return any(problem.startswith(prefix) for (who, when, prefix) in EXCEPTIONS if who == name and when in ("*", era))


@pytest.mark.parametrize("name", sorted(INPUTS))
def test_fix_all_is_a_fixpoint(name: str) -> None:
    failures = [f"@{era}: {p}" for era in ERAS for p in _problems(name, era) if not _excused(name, era, p)]
    assert not failures, f"{name}:\n" + "\n".join(failures)


def test_exceptions_still_fail() -> None:
    """An exception that no longer fails must be deleted: the list only records what is so."""
    stale = [key for key in EXCEPTIONS if not any(p.startswith(key[2]) for era in (ERAS if key[1] == "*" else (key[1],)) for p in _problems(key[0], era))]
    assert not stale, stale


def test_the_inputs_are_many_and_fixed() -> None:
    """The property is checked on real rewrites: most fixable rules' fixtures change under fix-all."""
    changed = {name for name in INPUTS for era in ("22.11", "24.05", "unstable") if fixed(name, era)[0] != INPUTS[name]}
    assert len(INPUTS) >= 500 and len(changed) >= 150


@pytest.mark.parametrize("path", sorted(FIX_ALL.glob("*.nix")), ids=lambda p: p.name)
def test_fix_all_regressions_give_the_expected_text(path: Path) -> None:
    """Each regression of issue 22 (header comment: what went wrong) fixed as a maintainer would."""
    text_ = path.read_text(encoding="utf-8")
    target = fixture_target(text_)
    settings = LintSettings(enabled=known_codes(), **target)  # type: ignore[arg-type]
    outcome = fix_file(SourceFile(path.name, text_), settings, unsafe=True)
    assert outcome.text == path.with_suffix(".after").read_text(encoding="utf-8")


def test_the_checks_can_fail() -> None:
    """Each check of `problems_of` catches the defect it is for."""
    before = "{ lib, stdenv, config, addDriverRunpath }:\nstdenv.mkDerivation {\n  nativeBuildInputs = [ addDriverRunpath ];\n  meta.broken = !config.cudaSupport;\n}\n"
    after = (
        "{ lib, stdenv, config, addDriverRunpath, autoAddDriverRunpath, pkgs }:\nstdenv.mkDerivation {\n"
        "  nativeBuildInputs = [ autoAddDriverRunpath pkgs.autoAddDriverRunpath ];\n  meta.broken = true;\n}\n"
    )
    first = lint(SourceFile("a.nix", before), LintSettings())
    final = lint(SourceFile("a.nix", after), LintSettings())
    found = problems_of(before, first, after, final)
    assert any(p.startswith("duplicate input autoAddDriverRunpath") for p in found), found
    assert "orphaned formal config" in found and "orphaned formal addDriverRunpath" in found, found
    assert any(p.startswith("added formal pkgs beside") for p in found), found
    broken = lint(SourceFile("a.nix", before.replace("];", "]")), LintSettings())
    assert "syntax error" in problems_of(before, first, before.replace("];", "]"), broken)
