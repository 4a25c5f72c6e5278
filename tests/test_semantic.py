"""The semantic view: bindings, input lists, guards, calls and name resolution."""

from __future__ import annotations

from cudalint.nix.parsing import parse
from cudalint.nix.semantic import Semantic
from cudalint.nix.source import SourceFile
from cudalint.nix.syntax import descendants, text

FILE = """{ lib, stdenv, cudaPackages, cudatoolkit, cudaSupport ? false, pkgs }:
let
  inherit (cudaPackages) cuda_nvcc libcublas;
  cp = pkgs.cudaPackages_12_4;
  deps = with cudaPackages; [ cuda_cudart (lib.getDev libcusparse) ];
  tk = cudatoolkit;
in
stdenv.mkDerivation (finalAttrs: {
  nativeBuildInputs = [ cuda_nvcc ] ++ lib.optionals cudaSupport [ cudaPackages.cuda_cccl ];
  buildInputs = deps ++ (if cudaSupport then [ libcublas.dev cp.libcufft ] else [ ]) ++ [ tk ];
  env.EXTRA = "${lib.getOutput "static" cudaPackages.cuda_cudart}";
  shadow = let cuda_nvcc = 1; in cuda_nvcc;
  fromWith = with pkgs; [ cudatoolkit ];
})
"""


def view() -> tuple[Semantic, SourceFile]:
    source = SourceFile("t.nix", FILE)
    return Semantic(parse(source), source), source


def refs_by_text() -> dict:
    semantic, _ = view()
    return {text(r.node): r for r in semantic.cuda_refs()}


def test_reference_forms_resolve_to_packages_and_outputs() -> None:
    refs = refs_by_text()
    assert (refs["cuda_cudart"].package, refs["cuda_cudart"].via) == ("cuda_cudart", "with")
    assert (refs["(lib.getDev libcusparse)"].output, refs["(lib.getDev libcusparse)"].getter) == ("dev", "getDev")
    assert refs["libcublas.dev"].via == "inherit" and refs["libcublas.dev"].output == "dev"
    assert refs["cp.libcufft"].set_name == "cudaPackages_12_4"
    assert refs['lib.getOutput "static" cudaPackages.cuda_cudart'].output == "static"
    assert refs["tk"].package == "cudatoolkit" and refs["tk"].via == "let"
    assert refs["cudaPackages.cuda_cccl"].via == "select"


def test_lexical_bindings_win_over_with_and_shadow_outer_names() -> None:
    semantic, source = view()
    # `with pkgs; [ cudatoolkit ]`: the formal is lexical, so it wins over `with`
    in_with = [n for n in descendants(semantic.tree.root_node) if n.type == "variable_expression" and text(n) == "cudatoolkit"][-1]
    assert source.location(in_with.start_byte)[0] == 13
    assert semantic.resolve(in_with).kind == "formal"
    shadowed = [n for n in descendants(semantic.tree.root_node) if n.type == "variable_expression" and text(n) == "cuda_nvcc"][-1]
    assert semantic.resolve(shadowed).kind == "let"
    assert semantic.cuda_ref(shadowed) is None


def test_input_sites_follow_list_syntax_and_let_variables() -> None:
    semantic, _ = view()
    refs = {text(r.node): r for r in semantic.cuda_refs()}
    assert semantic.input_site(refs["cuda_nvcc"].node).attr == "nativeBuildInputs"
    assert semantic.input_site(refs["cudaPackages.cuda_cccl"].node).attr == "nativeBuildInputs"
    assert semantic.input_site(refs["libcublas.dev"].node).attr == "buildInputs"
    assert semantic.input_site(refs["cuda_cudart"].node) is None
    assert semantic.input_attrs(refs["cuda_cudart"].node) == {"buildInputs"}


def test_input_site_of_an_optional_item_is_the_item() -> None:
    """`[ cmake ] ++ lib.optional c x`: `x` is the element (a fix replaces it, keeping the guard)."""
    source = SourceFile("t.nix", "{ lib, c, cmake, cudaPackages }:\n{ nativeBuildInputs = [ cmake ] ++ lib.optional c cudaPackages.cuda_nvcc; }\n")
    semantic = Semantic(parse(source), source)
    (ref,) = semantic.cuda_refs()
    site = semantic.input_site(ref.node)
    assert site is not None and site.attr == "nativeBuildInputs" and site.list_node is None
    assert text(site.element) == "cudaPackages.cuda_nvcc"


def test_guards_binding_paths_and_calls() -> None:
    semantic, _ = view()
    refs = {text(r.node): r for r in semantic.cuda_refs()}
    assert [g.text for g in semantic.guards(refs["cudaPackages.cuda_cccl"].node)] == ["cudaSupport"]
    assert [(g.text, g.positive) for g in semantic.guards(refs["libcublas.dev"].node)] == [("cudaSupport", True)]
    static = refs['lib.getOutput "static" cudaPackages.cuda_cudart']
    assert semantic.binding_path(static.node) == ("env", "EXTRA")
    call = semantic.enclosing_call(static.node)
    assert call is not None and call.name == "mkDerivation" and call.dotted == "stdenv.mkDerivation"


def test_deep_nesting_does_not_recurse() -> None:
    depth = 20000
    source = SourceFile("deep.nix", "[" * depth + "]" * depth)
    tree = parse(source)
    assert sum(1 for _ in descendants(tree.root_node)) > depth


def test_negated_conditions_flip_the_guard() -> None:
    source = SourceFile("t.nix", 'lib.optionals (!(cudaAtLeast "11.4")) [ x ] ++ (if !c then [ y ] else [ z ])')
    semantic = Semantic(parse(source), source)
    variables = {text(n): n for n in descendants(semantic.tree.root_node) if n.type == "variable_expression"}
    [x_guard] = semantic.guards(variables["x"])
    assert (x_guard.text, x_guard.positive) == ('cudaAtLeast "11.4"', False)
    assert [(g.text, g.positive) for g in semantic.guards(variables["y"])] == [("c", False)]
    assert [(g.text, g.positive) for g in semantic.guards(variables["z"])] == [("c", True)]


def test_lookup_table_is_an_attrset_keyed_by_versions() -> None:
    text_ = """{ pkgs }:
{
  sets = { "11.8" = pkgs.cudaPackages_11_8; cuda12 = { toolkit = pkgs.cudaPackages_12.cuda_nvcc; }; };
  named = { old = pkgs.cudaPackages_11_8; new = pkgs.cudaPackages_12; };
  single = { "11.8" = pkgs.cudaPackages_11_8; };
}
"""
    source = SourceFile("t.nix", text_)
    semantic = Semantic(parse(source), source)
    selects = {(text(n), n.start_byte): n for n in descendants(semantic.tree.root_node) if n.type == "select_expression"}
    in_table = [key for key, n in selects.items() if semantic.lookup_table(n) is not None]
    # the nested entry climbs to the version-keyed attrset; other attrsets and one-entry sets are not tables
    assert sorted(t for t, _ in in_table) == ["pkgs.cudaPackages_11_8", "pkgs.cudaPackages_12.cuda_nvcc"]
    table = semantic.lookup_table(selects[next(k for k in selects if k[0] == "pkgs.cudaPackages_12.cuda_nvcc")])
    assert table is not None and len(table.entries) == 2
    assert table.count(lambda entry: "cudaPackages_" in text(entry)) == 2
