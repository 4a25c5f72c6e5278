"""Edit builders keep the file's style, and the fix loop's guarantees."""

from __future__ import annotations

import pytest

from cudalint.lint import edits
from cudalint.lint.engine import lint
from cudalint.lint.fixing import apply_edits, fix_file, select_fixes
from cudalint.lint.model import Applicability, Diagnostic, Edit, Fix, Severity
from cudalint.lint.settings import LintSettings
from cudalint.nix.parsing import parse
from cudalint.nix.source import SourceFile
from cudalint.nix.syntax import descendants


def first(source: SourceFile, node_type: str):
    return next(n for n in descendants(parse(source).root_node) if n.type == node_type)


def apply(source: SourceFile, edit: Edit | None) -> str:
    assert edit is not None
    return apply_edits(source.data, [edit]).decode()


@pytest.mark.parametrize(
    ("before", "after"),
    [
        ("[ a b ]", "[ a b c ]"),
        ("[ ]", "[ c ]"),
        ("[]", "[ c ]"),
        ("[\n  a\n  b\n]", "[\n  a\n  b\n  c\n]"),
        ("[\n  a # why\n]", "[\n  a # why\n  c\n]"),
        ("[\n]", "[\n  c\n]"),
    ],
)
def test_append_to_list_keeps_style(before: str, after: str) -> None:
    source = SourceFile("t.nix", before)
    assert apply(source, edits.append_to_list(source, first(source, "list_expression"), ["c"])) == after


def test_append_skips_present_items() -> None:
    source = SourceFile("t.nix", "[ a c ]")
    assert edits.append_to_list(source, first(source, "list_expression"), ["c"]) is None


@pytest.mark.parametrize(
    ("before", "after"),
    [
        ("{ a, b }: a", "{ a, b, c }: a"),
        ("{ a, ... }: a", "{ a, c, ... }: a"),
        ("{\n  a,\n  b,\n}: a", "{\n  a,\n  b,\n  c,\n}: a"),
        ("{ a\n, b\n}: a", "{ a\n, b\n, c\n}: a"),
        ("{ }: a", "{ c }: a"),
    ],
)
def test_add_formal_keeps_style(before: str, after: str) -> None:
    source = SourceFile("t.nix", before)
    result = apply(source, edits.add_formal(source, first(source, "formals"), "c"))
    assert result == after


@pytest.mark.parametrize(
    ("before", "after"),
    [
        ("{ a, b, c }: a", "{ a, c }: a"),
        ("{ a, b }: a", "{ a }: a"),
        ("{\n  a,\n  b,\n  c,\n}: a", "{\n  a,\n  c,\n}: a"),
    ],
)
def test_remove_formal(before: str, after: str) -> None:
    source = SourceFile("t.nix", before)
    formal = [n for n in descendants(parse(source).root_node) if n.type == "formal"][1]
    assert apply(source, edits.remove_formal(source, formal)) == after


@pytest.mark.parametrize(
    ("before", "after"),
    [
        ("{ x = 1; }", "{ nativeBuildInputs = [ c ]; x = 1; }"),
        ("{\n  x = 1;\n}", "{\n  nativeBuildInputs = [ c ];\n  x = 1;\n}"),
        ("{ nativeBuildInputs = [ a ]; }", "{ nativeBuildInputs = [ a c ]; }"),
        ("{ nativeBuildInputs = deps; }", "{ nativeBuildInputs = deps ++ [ c ]; }"),
        ("{ nativeBuildInputs = [ a ] ++ more; }", "{ nativeBuildInputs = [ a c ] ++ more; }"),
    ],
)
def test_add_to_input(before: str, after: str) -> None:
    source = SourceFile("t.nix", before)
    attrset = first(source, "attrset_expression")
    result = apply_edits(source.data, edits.add_to_input(source, attrset, "nativeBuildInputs", ["c"])).decode()
    assert result == after


def test_overlapping_edits_are_refused() -> None:
    with pytest.raises(ValueError):
        apply_edits(b"abcdef", [Edit(0, 3, "x"), Edit(2, 4, "y")])


def _diagnostic(start: int, end: int, edits_: tuple[Edit, ...], isolation: str | None = None) -> Diagnostic:
    return Diagnostic("CUDA001", "m", start, end, Severity.WARNING, (Fix("t", Applicability.SAFE, edits_, isolation),))


def test_select_fixes_skips_overlaps_and_isolated_groups() -> None:
    a = _diagnostic(0, 2, (Edit(0, 2, "x"),))
    b = _diagnostic(1, 3, (Edit(1, 3, "y"),))
    c = _diagnostic(5, 6, (Edit(5, 6, "z"),), isolation="g")
    d = _diagnostic(8, 9, (Edit(8, 9, "w"),), isolation="g")
    chosen = [pair[0] for pair in select_fixes([a, b, c, d], unsafe=False)]
    assert chosen == [a, c]


def test_unsafe_fixes_need_opt_in() -> None:
    text = "{ stdenv, cudatoolkit }:\nstdenv.mkDerivation { nativeBuildInputs = [ cudatoolkit ]; }\n"
    source = SourceFile("t.nix", text)
    assert not fix_file(source, LintSettings()).changed
    assert "cuda_nvcc" in fix_file(source, LintSettings(), unsafe=True).text


def test_fix_all_converges_for_many_uses_of_a_formal() -> None:
    uses = "\n".join(f"  x{i} = [ cudatoolkit ];" for i in range(12))
    text = f"{{ stdenv, cudatoolkit }}:\nstdenv.mkDerivation {{\n  nativeBuildInputs = [ cudatoolkit ];\n  buildInputs = [ cudatoolkit ];\n{uses}\n}}\n"
    outcome = fix_file(SourceFile("t.nix", text), LintSettings(), unsafe=True)
    assert "nativeBuildInputs = [ cudaPackages.cuda_nvcc ]" in outcome.text
    # the formal stays while unfixable uses (x0..x11) remain
    assert "cudatoolkit }" in outcome.text or "cudatoolkit," in outcome.text
    assert not fix_file(SourceFile("t.nix", outcome.text), LintSettings(), unsafe=True).changed


def test_formal_is_renamed_with_its_last_use() -> None:
    text = "{ stdenv, cudatoolkit }:\nstdenv.mkDerivation { nativeBuildInputs = [ cudatoolkit ]; }\n"
    outcome = fix_file(SourceFile("t.nix", text), LintSettings(), unsafe=True)
    assert outcome.text.startswith("{ stdenv, cudaPackages }:")
    assert lint(SourceFile("t.nix", outcome.text), LintSettings()).syntax_errors == 0


def test_a_fix_that_breaks_parsing_is_dropped() -> None:
    source = SourceFile("t.nix", "[ a ]")
    breaking = _diagnostic(0, 1, (Edit(0, 1, "(("),))
    from cudalint.lint import fixing
    from cudalint.lint.engine import LintResult

    first_result = LintResult(source, parse(source), [breaking])
    outcome = fixing.fix_file(source, LintSettings(enabled=frozenset()), first=first_result)
    assert outcome.text == "[ a ]" and outcome.dropped


def _semantic(text: str):
    from cudalint.nix.semantic import Semantic

    source = SourceFile("default.nix", text)
    return source, Semantic(parse(source), source)


def _element(semantic, name: str):
    return next(n for n in descendants(semantic.tree.root_node) if n.type == "variable_expression" and n.text.decode() == name)


def test_moving_the_last_item_out_of_an_override_leaves_no_no_op() -> None:
    # `buildInputs = old.buildInputs or [ ];` would change nothing: the whole binding goes
    text = "{ p, cuda_nvcc }:\np.overrideAttrs (old: {\n  buildInputs = old.buildInputs or [ ] ++ [ cuda_nvcc ];\n})\n"
    source, semantic = _semantic(text)
    site = semantic.input_site(_element(semantic, "cuda_nvcc"))
    fixed = apply_edits(source.data, edits.move_element(source, semantic, site, "nativeBuildInputs")).decode()
    assert "buildInputs = old.buildInputs or [ ];" not in fixed
    assert "nativeBuildInputs = old.nativeBuildInputs or [ ] ++ [ cuda_nvcc ];" in fixed
    assert "\n  buildInputs" not in fixed


def test_moving_keeps_other_items_of_an_override_list() -> None:
    text = "{ p, cuda_nvcc, zlib }:\np.overrideAttrs (old: {\n  buildInputs = old.buildInputs or [ ] ++ [ cuda_nvcc zlib ];\n})\n"
    source, semantic = _semantic(text)
    site = semantic.input_site(_element(semantic, "cuda_nvcc"))
    fixed = apply_edits(source.data, edits.move_element(source, semantic, site, "nativeBuildInputs")).decode()
    assert "buildInputs = old.buildInputs or [ ] ++ [ zlib ];" in fixed


def _add_nvcc_next_to_cudart(text: str):
    """`add_input_item` of `cudaPackages.cuda_nvcc` to nativeBuildInputs, beside the cuda_cudart input."""
    source, semantic = _semantic(text)
    cudart = next(n for n in descendants(semantic.tree.root_node) if n.type == "select_expression" and n.text == b"cudaPackages.cuda_cudart")
    site = semantic.input_site(cudart)
    return edits.add_input_item(source, site, site.binding.parent.parent, "nativeBuildInputs", "cudaPackages.cuda_nvcc")


def test_an_item_already_under_another_guard_is_not_added_twice() -> None:
    text = (
        "{ lib, stdenv, cudaPackages, cudaSupport }:\nstdenv.mkDerivation {\n"
        "  nativeBuildInputs = [ ] ++ lib.optionals cudaSupport [ cudaPackages.cuda_nvcc ];\n"
        "  buildInputs = [ cudaPackages.cuda_cudart ];\n}\n"
    )
    assert _add_nvcc_next_to_cudart(text) == []


def test_an_added_item_follows_the_guard_and_the_one_per_line_style() -> None:
    text = (
        "{ lib, stdenv, cudaPackages, cudaSupport }:\nlet\n  inherit (lib) optionals;\nin\nstdenv.mkDerivation {\n"
        "  nativeBuildInputs = [\n    cmake\n  ] ++ optionals cudaSupport [\n    ninja\n  ];\n"
        "  buildInputs = optionals cudaSupport [ cudaPackages.cuda_cudart ];\n}\n"
    )
    source = SourceFile("default.nix", text)
    fixed = apply_edits(source.data, _add_nvcc_next_to_cudart(text)).decode()
    assert "] ++ optionals cudaSupport [\n    ninja\n    cudaPackages.cuda_nvcc\n  ];" in fixed


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("{ stdenv, pkgs }: stdenv.mkDerivation { X = HERE; }", "pkgs.addDriverRunpath"),
        ("{ stdenv }: stdenv.mkDerivation { X = HERE; }", "addDriverRunpath + formal"),
        # a NixOS module's arguments are not packages: the fix asks for `pkgs` (CUDA101/102/109 and
        # the runpath-hook rules used to disagree here)
        ("{ config, lib, ... }: { environment.variables.X = HERE; }", "pkgs.addDriverRunpath + formal"),
        ("with pkgs; { X = HERE; }", "addDriverRunpath"),
        # a fragment that takes its names from where it is evaluated, and a closed one
        ("{ buildInputs = [ cudaPackages.cuda_cudart ]; X = HERE; }", "addDriverRunpath"),
        ("{ X = HERE; }", None),
    ],
)
def test_one_answer_to_how_a_fix_writes_a_top_level_package(text: str, expected: str | None) -> None:
    source, semantic = _semantic(text.replace("HERE", '"/run/opengl-driver/lib"'))
    at = next(n for n in descendants(semantic.tree.root_node) if n.type == "string_expression")
    spelled = edits.toplevel_reference(source, semantic, at, "addDriverRunpath")
    got = None if spelled is None else spelled[0] + (" + formal" if spelled[1] else "")
    assert got == expected
