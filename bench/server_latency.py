"""Latency from a one-character didChange to diagnostics, on a generated 3000-line CUDA-heavy file.

Measures what the server does per change, in this process: apply the LSP change to the
document and re-parse incrementally (cudalint.server.documents), then re-lint incrementally
(cudalint.lint.engine.relint: the attribute that holds the edit, previous findings kept elsewhere);
against the full path (a fresh parse of the whole text, then a full lint). The debounce delay
is not included. It also counts the edits whose provisional result differed from the full lint
(the server confirms with a full lint when typing pauses).
Run: python bench/server_latency.py [--lines 3000] [--runs 60]
"""

from __future__ import annotations

import argparse
import statistics
import time

from lsprotocol import types

from cudalint.lint.engine import lint, relint
from cudalint.lint.settings import LintSettings
from cudalint.nix.parsing import parse
from cudalint.nix.source import SourceFile
from cudalint.server.app import prepare_for_editing
from cudalint.server.documents import DocumentStore

# Mostly current practice; every tenth package carries the classic mistakes.
PACKAGE = """\
  pkg{n} = backendStdenv.mkDerivation {{
    pname = "cuda-app-{n}";
    version = "1.{n}";
    src = ./src{n};
    nativeBuildInputs = [ cmake cudaPackages.cuda_nvcc autoAddDriverRunpath ];
    buildInputs = with cudaPackages; [ libcublas libcufft cuda_cudart ] ++ lib.optionals cudaSupport [ cudaPackages.cudnn ];
    cmakeFlags = [ (lib.cmakeFeature "CMAKE_CUDA_ARCHITECTURES" cudaPackages.flags.cmakeCudaArchitecturesString) ];
    postInstall = ''
      echo "built {n}"
    '';
    meta.description = "CUDA application number {n}";
  }};
"""
MISTAKES = """\
  bad{n} = stdenv.mkDerivation {{
    pname = "legacy-{n}";
    version = "0.{n}";
    nativeBuildInputs = [ cudatoolkit autoAddCudaCompatRunpath autoAddDriverRunpath ];
    postInstall = ''
      wrapProgram $out/bin/legacy{n} --prefix LD_LIBRARY_PATH : /run/opengl-driver/lib
    '';
  }};
"""


def generate(lines: int) -> str:
    head = "{ lib, stdenv, cmake, cudaPackages, cudatoolkit, autoAddDriverRunpath, autoAddCudaCompatRunpath, cudaSupport ? true }:\nlet inherit (cudaPackages) backendStdenv; in\nrec {\n"
    parts = [head]
    count = head.count("\n")
    n = 0
    while count < lines - 1:
        block = (MISTAKES if n % 10 == 9 else PACKAGE).format(n=n)
        parts.append(block)
        count += block.count("\n")
        n += 1
    parts.append("}\n")
    return "".join(parts)


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(fraction * (len(ordered) - 1))))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=3000)
    parser.add_argument("--runs", type=int, default=60)
    args = parser.parse_args()

    prepare_for_editing()  # what `cudalint server` does before its first document
    text = generate(args.lines)
    settings = LintSettings()
    store = DocumentStore()
    uri = "file:///bench/generated.nix"
    snapshot = store.open(uri, "/bench/generated.nix", 1, text)
    previous = lint(snapshot.source, settings, tree=snapshot.tree)
    findings = len(previous.diagnostics)
    differed = 0
    line = snapshot.source.line_count // 2
    incremental: list[float] = []
    full: list[float] = []
    reparse_only: list[float] = []
    parse_only: list[float] = []
    for run in range(args.runs):
        # type one character at the start of a line in the middle, or delete it again
        start = types.Position(line=line, character=0)
        end = types.Position(line=line, character=1 if run % 2 else 0)
        change = types.TextDocumentContentChangePartial(range=types.Range(start=start, end=end), text="" if run % 2 else " ")

        began = time.perf_counter()
        before = snapshot.version
        snapshot = store.change(uri, run + 2, [change])
        parsed = time.perf_counter()
        region = snapshot.changed_since(before)
        result = relint(previous, snapshot.source, snapshot.tree, region.start, region.old_end, region.new_end, settings) if region else None
        if result is None:
            result = lint(snapshot.source, settings, tree=snapshot.tree)
        incremental.append(time.perf_counter() - began)
        reparse_only.append(parsed - began)
        incremental_findings, previous = result.diagnostics, result

        began = time.perf_counter()
        source = SourceFile(snapshot.source.path, snapshot.source.text)
        tree = parse(source)
        parse_only.append(time.perf_counter() - began)
        full_findings = lint(source, settings, tree=tree).diagnostics
        full.append(time.perf_counter() - began)
        differed += [(d.code, d.start, d.end) for d in incremental_findings] != [(d.code, d.start, d.end) for d in full_findings]

    size = len(snapshot.source.data)
    print(f"file: {snapshot.source.line_count} lines, {size / 1024:.0f} KiB, {findings} findings; {args.runs} one-character edits")
    print(f"provisional results that differed from the full lint: {differed} of {args.runs}")
    for name, values in (("incremental re-parse + re-lint", incremental), ("  of which the re-parse", reparse_only), ("full parse + lint", full), ("  of which the parse", parse_only)):
        print(f"{name:30s} median {statistics.median(values) * 1000:7.1f} ms   p95 {percentile(values, 0.95) * 1000:7.1f} ms")


if __name__ == "__main__":
    main()
