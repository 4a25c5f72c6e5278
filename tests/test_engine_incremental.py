"""The editor's fast path: `relint` after one edit re-checks the attribute that holds it and
keeps the other findings, shifted. Where nothing outside that attribute depends on the edit it
must equal a full lint; otherwise it is marked provisional (a full lint follows it)."""

from __future__ import annotations

from pathlib import Path

import pytest
from tree_sitter import Point

from cudalint.lint.engine import lint, relint
from cudalint.lint.registry import known_codes
from cudalint.lint.settings import LintSettings
from cudalint.nix.parsing import parse
from cudalint.nix.source import SourceFile
from cudalint.nix.syntax import descendants

# Syntax-error fixtures are left out: the fast path never applies to a file with errors.
FIXTURES = sorted(p for p in (Path(__file__).parent / "fixtures" / "rules").glob("*/fire_*.nix") if p.parent.name != "CUDA900")
SETTINGS = LintSettings(enabled=known_codes())  # every rule, those in preview too


def _point(source: SourceFile, offset: int) -> Point:
    line = source.line_of(offset)
    return Point(line, offset - source.line_start(line))


def edited(source: SourceFile, start: int, end: int, text: str):
    """The new source and its incrementally re-parsed tree after replacing `start:end`."""
    tree = parse(source)
    content = text.encode()
    data = source.data[:start] + content + source.data[end:]
    new_source = SourceFile(source.path, data.decode("utf-8"))
    start_point = _point(source, start)
    tree.edit(
        start_byte=start,
        old_end_byte=end,
        new_end_byte=start + len(content),
        start_point=start_point,
        old_end_point=_point(source, end),
        new_end_point=_point(new_source, start + len(content)),
    )
    return new_source, parse(new_source, tree)


def findings(result) -> list[tuple]:
    return [(d.code, d.start, d.end, d.message, d.severity) for d in result.diagnostics]


def fixes(result) -> set[tuple]:
    return {(d.code, f.title, f.edits) for d in result.diagnostics for f in d.fixes}


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_whitespace_inside_each_attribute_changes_nothing_but_positions(path):
    source = SourceFile(path.name, path.read_text(encoding="utf-8"))
    previous = lint(source, SETTINGS)
    assert previous.tree is not None and not previous.syntax_errors
    equals = [n for n in descendants(previous.tree.root_node) if n.type == "="]
    for node in equals[:12]:
        new_source, tree = edited(source, node.end_byte, node.end_byte, " ")
        fast = relint(previous, new_source, tree, node.end_byte, node.end_byte, node.end_byte + 1, SETTINGS)
        assert fast is not None and fast.provisional
        full = lint(new_source, SETTINGS)
        assert findings(fast) == findings(full), f"space after the `=` at byte {node.end_byte}"
        # a fix computed from the old text of the attribute is dropped, never offered stale
        assert fixes(fast) <= fixes(full), f"space after the `=` at byte {node.end_byte}"


@pytest.mark.parametrize("path", FIXTURES[::7], ids=lambda p: f"{p.parent.name}/{p.name}")
def test_a_chain_of_fast_results_stays_equal_to_full_lints(path):
    """Each keystroke's `relint` starts from the previous one's result (and the extents of its
    findings, which it carries instead of recomputing): typing and deleting spaces in one
    attribute after another, every step must still equal a full lint."""
    source = SourceFile(path.name, path.read_text(encoding="utf-8"))
    previous = lint(source, SETTINGS)
    assert previous.tree is not None
    steps = 0
    for index in range(8):
        equals = [n for n in descendants(previous.tree.root_node) if n.type == "="]
        if not equals:
            break
        node = equals[(index * 5) % len(equals)]
        if index % 2 == 0:
            new_source, tree = edited(source, node.end_byte, node.end_byte, " ")
            fast = relint(previous, new_source, tree, node.end_byte, node.end_byte, node.end_byte + 1, SETTINGS)
        elif source.data[node.end_byte : node.end_byte + 1] == b" ":
            new_source, tree = edited(source, node.end_byte, node.end_byte + 1, "")
            fast = relint(previous, new_source, tree, node.end_byte, node.end_byte + 1, node.end_byte, SETTINGS)
        else:
            continue
        assert fast is not None
        full = lint(new_source, SETTINGS)
        assert findings(fast) == findings(full), f"step {index}: at byte {node.end_byte}"
        assert fixes(fast) <= fixes(full), f"step {index}: at byte {node.end_byte}"
        source, previous, steps = new_source, fast, steps + 1
    assert steps >= 2


def test_an_edit_inside_an_input_list_is_rechecked_there():
    text = '{ stdenv, cudaPackages }:\nstdenv.mkDerivation {\n  pname = "x";\n  buildInputs = [ cudaPackages.cuda_nvcc ];\n  env.P = "/run/opengl-driver/lib";\n}\n'
    source = SourceFile("x.nix", text)
    previous = lint(source, SETTINGS)
    assert "CUDA301" in {d.code for d in previous.diagnostics}
    start = text.index("buildInputs")
    new_source, tree = edited(source, start, start, "native")
    n = start + len("native")
    fast = relint(previous, new_source, tree, start, start, n, SETTINGS)
    full = lint(new_source, SETTINGS)
    assert findings(fast) == findings(full)
    assert "CUDA301" not in {d.code for d in fast.diagnostics}
    assert "CUDA102" in {d.code for d in fast.diagnostics}  # kept from before, shifted


def test_findings_outside_the_attribute_that_depend_on_it_wait_for_the_full_lint():
    # CUDA302 judges the builder call by the nvcc its inputs hold: it is reported at the call,
    # outside the attribute that changes, and kept until the full lint.
    text = '{ stdenv, cudatoolkit, cudaPackages }:\nstdenv.mkDerivation {\n  pname = "x";\n  src = ./.;\n  nativeBuildInputs = [ cudatoolkit ];\n  buildPhase = "nvcc x.cu";\n}\n'
    settings = LintSettings(enabled=frozenset({"CUDA302"}), nixpkgs="24.05")
    source = SourceFile("x.nix", text)
    previous = lint(source, settings)
    assert [d.code for d in previous.diagnostics] == ["CUDA302"]
    start = text.index("cudatoolkit ]")
    end = start + len("cudatoolkit")
    new_source, tree = edited(source, start, end, "cudaPackages.cuda_nvcc")
    fast = relint(previous, new_source, tree, start, end, start + len("cudaPackages.cuda_nvcc"), settings)
    assert fast is not None and fast.provisional
    assert [d.code for d in fast.diagnostics] == ["CUDA302"]
    assert lint(new_source, settings).diagnostics == []


def test_no_fast_path_with_syntax_errors_or_outside_any_attribute():
    text = "{ cudaPackages }:\n{\n  a = cudaPackages.cuda_nvcc;\n}\n"
    source = SourceFile("x.nix", text)
    previous = lint(source, SETTINGS)
    start = text.index("cudaPackages }")
    new_source, tree = edited(source, start, start, "x ")
    assert relint(previous, new_source, tree, start, start, start + 2, SETTINGS) is None
    broken_source, broken_tree = edited(source, text.index("a ="), text.index("a =") + 1, "= =")
    assert relint(previous, broken_source, broken_tree, text.index("a ="), text.index("a =") + 1, text.index("a =") + 3, SETTINGS) is None
