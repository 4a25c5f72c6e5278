"""Issue 22: a fix never writes a name its target nixpkgs lacks.

Fix-all (`--fix --unsafe-fixes`, in process) runs on every fixture, every rule's docs examples,
the best-practice files and the review-request snippets, under every NixOS release the reference
set models (22.05 .. 25.11) and the newest nixpkgs. Every dated name of the vocabulary
(nix/vocabulary.nix: hooks, `backendStdenv`, `flags` and its members, `lib.getInclude`, ...), every
CUDA package and every output a fix adds to the text must exist on that target; so must the
dated names a message advises (`use autoAddDriverRunpath`), unless the file writes them itself.
"""

from __future__ import annotations

import re
from collections import Counter
from functools import cache
from pathlib import Path

import pytest

from cudalint.knowledge import reference
from cudalint.lint.engine import lint
from cudalint.lint.fixing import fix_file
from cudalint.lint.registry import all_rules, known_codes
from cudalint.lint.settings import LintSettings
from cudalint.nix.source import SourceFile

TESTS = Path(__file__).parent
TARGETS = (*sorted(reference.load().data["nixos"]), None)
# packages a fix may name although a target release lacks them: the monolithic toolkit (CUDA001
# writes it only where it is the file's own idiom)
_UNDATED_PACKAGES = frozenset({"cudatoolkit"})
# a whole name that is read: not with a fallback (`x.y or z` evaluates where `y` is absent), not
# the attribute path of a binding (`config.cudaSupport = true;` sets it)
_IDENTIFIER = r"(?<![\w'-]){}(?![\w'-])(?!\s*or\b)(?!\s*=(?!=))"


def inputs() -> list[tuple[str, str]]:
    found = [(str(path.relative_to(TESTS)), path.read_text(encoding="utf-8")) for path in sorted((TESTS / "fixtures").rglob("*.nix"))]
    found += [(str(path.relative_to(TESTS)), path.read_text(encoding="utf-8")) for path in sorted((TESTS / "review_requests" / "snippets").glob("*.nix"))]
    for rule in all_rules():
        for section in ("Example", "Use instead"):
            found += [(f"{rule.code} {section} {index}", example) for index, example in enumerate(rule.examples(section))]
    return found


@cache
def _patterns() -> dict[str, tuple[re.Pattern[str], tuple[str, ...]]]:
    """Each vocabulary word's written tail (`autoAddDriverRunpath`, `flags.gencodeString`,
    `addDriverRunpath.driverLink`, `getInclude`) -> a pattern finding it and the words it may be."""
    tails: dict[str, list[str]] = {}
    for name in reference.load().words:
        parts = name.split(".")
        if parts[0] in {"cudaPackages", "lib"}:
            parts = parts[1:]
        tails.setdefault(".".join(parts[-2:]), []).append(name)
    return {tail: (re.compile(_IDENTIFIER.format(re.escape(tail))), tuple(names)) for tail, names in tails.items()}


_SELECTED = re.compile(r"(?<![\w'-])([A-Za-z_][\w'-]*)(?=\.([A-Za-z_][\w'-]*)(?![\w'-]))")
_GET_OUTPUT = re.compile(r'\bgetOutput\s+"(\w+)"\s+\(?(?:[\w\'-]+\.)*([\w\'-]+)')
_WORD = re.compile(r"[A-Za-z_][\w'-]*")


def _counts(text: str) -> tuple[Counter, Counter, Counter]:
    ref = reference.load()
    words = Counter({tail: len(pattern.findall(text)) for tail, (pattern, _) in _patterns().items()})
    packages = Counter(name for name in _WORD.findall(text) if ref.is_known(name))
    outputs = Counter((package, output) for package, output in _SELECTED.findall(text) if ref.is_known(package) and output in ref.output_names)
    outputs.update((package, output) for output, package in _GET_OUTPUT.findall(text) if ref.is_known(package))
    return words, packages, outputs


def absent_names(before: str, after: str, nixpkgs: str | None) -> list[str]:
    """The names `after` has more of than `before` that the target lacks."""
    ref = reference.load()
    target = reference.target(nixpkgs)
    old_words, old_packages, old_outputs = _counts(before)
    new_words, new_packages, new_outputs = _counts(after)
    problems = []
    for tail in new_words - old_words:
        names = _patterns()[tail][1]
        if not any(ref.has(name, target) for name in names):
            problems.append(ref.words[names[0]].why_absent(target))
    for package in new_packages - old_packages:
        if package not in _UNDATED_PACKAGES and not ref.exists(package, target):
            problems.append(f"`{package}` is not a package of {target.describe()}")
    for package, output in new_outputs - old_outputs:
        outputs = ref.outputs(package, target)
        if outputs and output not in outputs:
            problems.append(f"`{package}` has no output `{output}` on {target.describe()} ({' '.join(outputs)})")
    return problems


def absent_advice(message: str, text: str, nixpkgs: str | None) -> list[str]:
    """Names quoted in a finding's message (`use autoAddDriverRunpath`) that the target lacks and
    the file does not write itself (a message may quote what the file wrote). Settings of nixpkgs'
    `config` are the user's to set on any target: only reading them is dated."""
    ref = reference.load()
    target = reference.target(nixpkgs)
    problems = []
    for quoted in re.findall(r"`([^`]*)`", message):
        for pattern, names in _patterns().values():
            if names[0].startswith("config."):
                continue
            if pattern.search(quoted) and not pattern.search(text) and not any(ref.has(name, target) for name in names):
                problems.append(f"{message!r} names {names[0]}")
    return problems


@pytest.mark.parametrize("nixpkgs", TARGETS, ids=lambda t: t or "unstable")
def test_fix_all_writes_only_names_the_target_has(nixpkgs) -> None:
    # no time budget: a loaded machine must not end fix-all early (and hide a fix)
    settings = LintSettings(enabled=known_codes(), nixpkgs=nixpkgs, time_budget=float("inf"))
    described = reference.target(nixpkgs).describe()
    failures = []
    for label, text in inputs():
        source = SourceFile("input.nix", text)
        first = lint(source, settings)
        for diagnostic in first.diagnostics:
            failures += [f"{label}: {diagnostic.code} {problem} ({described})" for problem in absent_advice(diagnostic.message, text, nixpkgs)]
        fixed = fix_file(source, settings, unsafe=True, first=first).text
        if fixed != text:
            failures += [f"{label}: {problem} ({described})" for problem in absent_names(text, fixed, nixpkgs)]
    assert not failures, "\n".join(failures)


def test_the_scan_sees_absent_names() -> None:
    """The check can fail: names each target lacks, added by an edit, are found."""
    before = "{ stdenv, cudaPackages }: stdenv.mkDerivation { }\n"
    after = "{ stdenv, cudaPackages, autoAddDriverRunpath }: cudaPackages.backendStdenv.mkDerivation { nativeBuildInputs = [ autoAddDriverRunpath ]; }\n"
    assert absent_names(before, after, "22.11") == [
        "`autoAddDriverRunpath` arrived in nixpkgs on 2024-04-01",
        "`cudaPackages.backendStdenv` arrived in nixpkgs on 2023-03-09",
    ]
    assert absent_names(before, after, "24.05") == []
    # read with a fallback, an absent name evaluates
    assert absent_names("{ config }: 1\n", "{ config, cudaSupport ? config.cudaSupport or false }: 1\n", "22.05") == []
    assert absent_names("{ config }: 1\n", "{ config, cudaSupport ? config.cudaSupport }: 1\n", "22.05") == ["`config.cudaSupport` arrived in nixpkgs on 2023-04-30"]
    outputs = absent_names("{ cudaPackages }: [ ]\n", '{ cudaPackages, lib }: [ cudaPackages.cuda_nvcc.bin (lib.getOutput "stubs" cudaPackages.cuda_cudart) ]\n', "25.11")
    assert any("`cuda_nvcc` has no output `bin`" in p for p in outputs)
    assert absent_names("{ cudaPackages }: [ ]\n", "{ cudaPackages }: [ cudaPackages.cudaPackages_12.autoAddOpenGLRunpathHook ]\n", None) == [
        "`cudaPackages.autoAddOpenGLRunpathHook` left nixpkgs on 2024-07-30"
    ]


# The idioms a fix writes, per modelled release: (driver-runpath hook, driver package, stdenv, flags).
IDIOMS = {
    "22.05": ("cudaPackages.autoAddOpenGLRunpathHook", "addOpenGLRunpath", None, None),
    "22.11": ("cudaPackages.autoAddOpenGLRunpathHook", "addOpenGLRunpath", None, None),
    "23.05": ("cudaPackages.autoAddOpenGLRunpathHook", "addOpenGLRunpath", "cudaPackages.backendStdenv", "cudaPackages.cudaFlags"),
    "23.11": ("cudaPackages.autoAddOpenGLRunpathHook", "addOpenGLRunpath", "cudaPackages.backendStdenv", "cudaPackages.cudaFlags"),
    "24.05": ("autoAddDriverRunpath", "addDriverRunpath", "cudaPackages.backendStdenv", "cudaPackages.flags"),
    "25.11": ("autoAddDriverRunpath", "addDriverRunpath", "cudaPackages.backendStdenv", "cudaPackages.flags"),
    None: ("autoAddDriverRunpath", "addDriverRunpath", "cudaPackages.backendStdenv", "cudaPackages.flags"),
}


@pytest.mark.parametrize("nixpkgs", IDIOMS, ids=lambda t: t or "unstable")
def test_each_release_has_its_era_idioms(nixpkgs) -> None:
    ref = reference.load()
    target = reference.target(nixpkgs)
    concepts = ("driverRunpathHook", "driverRunpath", "backendStdenv", "capabilityFlags")
    assert tuple(ref.idiom(concept, target) for concept in concepts) == IDIOMS[nixpkgs]


def test_the_vocabulary_is_dated_with_evidence() -> None:
    ref = reference.load()
    for word in ref.words.values():
        assert word.start is None or word.end is None or word.start < word.end, word.name
        assert word.note, word.name
        assert all(e.startswith("https://github.com/NixOS/nixpkgs/") for e in word.evidence), word.name
        assert word.evidence or word.start is None, f"{word.name}: a date needs its evidence"
    for concept, names in ref.idioms.items():
        assert names and all(name in ref.words for name in names), concept
    # a date between two releases: the hook arrived 2024-04-01, the scope's old one left 2024-07-30
    assert not ref.has("autoAddDriverRunpath", reference.target("2024-03-31"))
    assert ref.has("autoAddDriverRunpath", reference.target("2024-04-01"))
    assert not ref.has("cudaPackages.autoAddOpenGLRunpathHook", reference.target("2024-07-30"))
    assert ref.has("cudaPackages.cuda_nvcc", reference.target("22.05"))
    assert not ref.has("cudaPackages.libcutensor", reference.target("24.05"))


def test_cuda_nvcc_keeps_bin_until_the_cuda_13_rework() -> None:
    """The output facts fixes rely on, per era: nvcc is in `cuda_nvcc.bin` from the split outputs
    (2023-07) to the CUDA 13 rework (PR #437723), after which `cuda_nvcc` has only `out`."""
    for nixpkgs in ("24.05", "24.11", "25.05", "2025-09-30"):
        assert "bin" in reference.outputs("cuda_nvcc", reference.target(nixpkgs)), nixpkgs
    for newer in ("25.11", None):
        assert reference.outputs("cuda_nvcc", reference.target(newer)) == ("out",), newer
    assert reference.outputs("cuda_nvcc", reference.target("22.11")) == ("out",)


def test_the_vocabulary_agrees_with_the_deprecations() -> None:
    """A name the vocabulary says left nixpkgs throws from that day in deprecations.nix too."""
    ref = reference.load()
    checked = 0
    for word in ref.words.values():
        scope, _, name = word.name.rpartition(".")
        deprecation = ref.deprecation(name)
        if word.end is None or deprecation is None or deprecation.scope != ("cudaPackages" if scope == "cudaPackages" else "top-level"):
            continue
        assert deprecation.throws_from == word.end, word.name
        checked += 1
    assert checked >= 3


# Issue 22's report: a package with `addOpenGLRunpath`, a `--prefix LD_LIBRARY_PATH` wrapper and a
# `config` formal, fixed for a target before the top-level hook.
WRAPPED = """\
{ config, stdenv, makeWrapper, addOpenGLRunpath, cudaPackages, cudaSupport ? config.cudaSupport }:
stdenv.mkDerivation {
  pname = "viewer";
  version = "1.0";
  src = ./.;
  nativeBuildInputs = [ makeWrapper addOpenGLRunpath cudaPackages.cuda_nvcc ];
  postInstall = ''
    wrapProgram $out/bin/viewer --prefix LD_LIBRARY_PATH : ${addOpenGLRunpath.driverLink}/lib
  '';
}
"""


@pytest.mark.parametrize(
    ("nixpkgs", "hook", "absent"),
    [("23.11", "cudaPackages.autoAddOpenGLRunpathHook", "autoAddDriverRunpath"), ("24.05", "autoAddDriverRunpath", "autoAddOpenGLRunpathHook")],
)
def test_the_driver_hook_fix_writes_the_targets_hook(nixpkgs, hook, absent) -> None:
    fixed = fix_file(SourceFile("viewer.nix", WRAPPED), LintSettings(enabled=known_codes(), nixpkgs=nixpkgs), unsafe=True).text
    assert hook in fixed and absent not in fixed, fixed
    # CUDA101 and CUDA108 do not both add it (a callPackage file taking `config` gets it as a formal, not through `pkgs`)
    assert fixed.split("}:", 1)[1].count(hook.rsplit(".", 1)[-1]) == 1 and "pkgs" not in fixed, fixed
    assert "LD_LIBRARY_PATH" not in fixed


def test_the_message_scan_sees_absent_advice() -> None:
    """The check can fail: advice naming a name the target lacks is found, a name the file writes
    itself (quoted back to it) is not."""
    message = "`stdenv.mkDerivation` compiles CUDA: build with `cudaPackages.backendStdenv`"
    assert absent_advice(message, "{ stdenv }: stdenv.mkDerivation { }", "22.11")
    assert not absent_advice(message, "{ stdenv }: stdenv.mkDerivation { }", "23.05")
    assert not absent_advice(message, "{ cudaPackages }: cudaPackages.backendStdenv.mkDerivation { }", "22.11")
