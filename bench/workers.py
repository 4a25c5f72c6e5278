"""Measurements the suite runs in a fresh process, printing one JSON object.

python -m bench.workers parse PATH    # baseline: every file read and parsed with tree-sitter, one process
python -m bench.workers engine TREE   # bare parse vs engine.lint on the files the prefilter keeps
python -m bench.workers large FILE    # bare parse vs engine.lint on one (large) file
"""

from __future__ import annotations

import json
import os
import sys
import time


def nix_files(root: str) -> list[str]:
    """The .nix files under a directory in a fixed order, or the one file named."""
    if os.path.isfile(root):
        return [root]
    found = []
    for directory, subdirectories, names in os.walk(root):
        subdirectories.sort()
        found.extend(os.path.join(directory, name) for name in sorted(names) if name.endswith(".nix"))
    return found


def parse_everything(root: str) -> dict:
    """What a linter without a prefilter pays at least: read and parse every file."""
    import tree_sitter
    import tree_sitter_nix

    began = time.perf_counter()
    parser = tree_sitter.Parser(tree_sitter.Language(tree_sitter_nix.language()))
    files = size = 0
    for path in nix_files(root):
        with open(path, "rb") as handle:
            data = handle.read()
        parser.parse(data)
        files += 1
        size += len(data)
    return {"files": files, "bytes": size, "seconds": time.perf_counter() - began}


def engine_overhead(root: str, passes: int = 3) -> dict:
    """Median-of-`passes` times, on the files the prefilter lets through, of a bare parse, of
    `engine.lint` (which parses too) and of the previous engine (`legacy_walk`), interleaved in
    each pass so that a change in the machine's load hits all three alike; and the steps of the
    engine: its walk, the syntax check fed by it, and the rules."""
    import statistics

    from cudalint.lint import engine
    from cudalint.lint.context import Context
    from cudalint.lint.settings import LintSettings
    from cudalint.nix.parsing import parse, syntax_problems
    from cudalint.nix.semantic import Semantic
    from cudalint.nix.source import SourceFile

    settings = LintSettings()
    sources = []
    for path in nix_files(root):
        with open(path, "rb") as handle:
            data = handle.read()
        if engine.may_find(data, settings.enabled):
            sources.append(SourceFile(path, data.decode("utf-8")))
    times: dict[str, list[float]] = {"parse": [], "lint": [], "legacy": [], "walk": [], "syntax": [], "rules": []}
    findings = legacy_findings = 0
    for _ in range(passes):
        began = time.perf_counter()
        trees = [parse(source) for source in sources]
        times["parse"].append(time.perf_counter() - began)
        began = time.perf_counter()
        findings = sum(len(engine.lint(source, settings).diagnostics) for source in sources)
        times["lint"].append(time.perf_counter() - began)
        began = time.perf_counter()
        legacy_findings = sum(len(engine.lint(source, settings, legacy_walk=True).diagnostics) for source in sources)
        times["legacy"].append(time.perf_counter() - began)
        # the steps, on the trees parsed above
        walk = syntax = rules = 0.0
        for source, tree in zip(sources, trees):
            began = time.perf_counter()
            dispatch = engine._dispatch(engine._rules_that_may_fire(source.data, settings.enabled))
            walked = engine._walk(tree.root_node, dispatch, engine.MAX_RULE_DEPTH, source.data)
            walk += time.perf_counter() - began
            began = time.perf_counter()
            syntax_problems(tree, source, walked.definitions)
            syntax += time.perf_counter() - began
            began = time.perf_counter()
            context = Context(source, tree, Semantic(tree, source, walked.scopes), settings)
            if dispatch:
                engine._dispatch_walked(walked, context, [], [])
            rules += time.perf_counter() - began
        times["walk"].append(walk)
        times["syntax"].append(syntax)
        times["rules"].append(rules)
    medians = {f"{name}_seconds": statistics.median(values) for name, values in times.items()}
    return {"files": len(sources), "bytes": sum(len(s.data) for s in sources), "findings": findings, "legacy_findings": legacy_findings, **medians}


def large_file(path: str, passes: int = 3) -> dict:
    """Median-of-`passes` times of a bare parse and of `engine.lint` on one file, interleaved."""
    import statistics

    from cudalint.lint import engine
    from cudalint.lint.settings import LintSettings
    from cudalint.nix.parsing import parse
    from cudalint.nix.source import SourceFile

    with open(path, encoding="utf-8") as handle:
        source = SourceFile(path, handle.read())
    settings = LintSettings()
    parse_times, lint_times, notes = [], [], []
    for _ in range(passes):
        began = time.perf_counter()
        parse(source)
        parse_times.append(time.perf_counter() - began)
        began = time.perf_counter()
        notes = engine.lint(source, settings).notes
        lint_times.append(time.perf_counter() - began)
    return {"parse_seconds": statistics.median(parse_times), "lint_seconds": statistics.median(lint_times), "notes": notes}


def main(argv: list[str]) -> int:
    kind, root = argv
    result = {"parse": parse_everything, "engine": engine_overhead, "large": large_file}[kind](root)
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
