"""Measurements the suite runs in a fresh process, printing one JSON object.

    python -m bench.workers parse PATH    # baseline: every file read and parsed with tree-sitter, one process
    python -m bench.workers engine TREE   # bare parse vs engine.lint on the files the prefilter keeps
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
    """Best-of-`passes` times, on the files the prefilter lets through, of a bare parse and of
    `engine.lint` (which parses too): the engine's cost relative to tree-sitter's."""
    from cudalint.lint import engine
    from cudalint.lint.settings import LintSettings
    from cudalint.nix.parsing import parse
    from cudalint.nix.source import SourceFile

    settings = LintSettings()
    sources = []
    for path in nix_files(root):
        with open(path, "rb") as handle:
            data = handle.read()
        if engine.may_find(data, settings.enabled):
            sources.append(SourceFile(path, data.decode("utf-8")))
    parse_times, lint_times = [], []
    findings = 0
    for _ in range(passes):
        began = time.perf_counter()
        for source in sources:
            parse(source)
        parse_times.append(time.perf_counter() - began)
        began = time.perf_counter()
        findings = sum(len(engine.lint(source, settings).diagnostics) for source in sources)
        lint_times.append(time.perf_counter() - began)
    return {
        "files": len(sources),
        "bytes": sum(len(s.data) for s in sources),
        "parse_seconds": min(parse_times),
        "lint_seconds": min(lint_times),
        "findings": findings,
    }


def main(argv: list[str]) -> int:
    kind, root = argv
    result = parse_everything(root) if kind == "parse" else engine_overhead(root)
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
