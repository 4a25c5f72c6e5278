"""CUDA900: syntax errors, the trailing-comma grammar gap, and Nix itself as the oracle."""

from __future__ import annotations

from pathlib import Path

import pytest

from cudalint.lint.engine import lint
from cudalint.lint.settings import LintSettings
from cudalint.nix.parsing import parse, syntax_problems
from cudalint.nix.source import SourceFile
from nix_oracle import nix_accepts, nix_parser, nix_verdicts

TOLERATED = [
    "{ a, b, }: a",
    "{ a, b ? a, }: b",
    "{ a ? 1, }: a",
    "{ a, }: a",
    "args@{ a, b, }: a",
    "{ a, b, }@args: a",
    "{\n  lib,\n  stdenv,\n  cudaSupport ? config.cudaSupport,\n}:\nstdenv.mkDerivation { }\n",
    '{ a, b, }: "a\x0bb\x0c" # text, not white space: \x0b\x0c',
    # comments after the trailing comma (nixfmt keeps a note there) and around it
    '{ cudaPackages, v ? "0", # note\n}: v',
    "{ a, /* c */ }: a",
    "{ a ? 1, /* c */ }: a",
    "{ a ? 1 /* c */ , }: a",
    "{ a, # c\n # d\n}@args: a",
    "args @ /* c */ { a, # c\n }: a",
    "{ a /* c */ , /* d */ b /* e */ , /* f */ }: a",
]
# Nix merges attrset literals; every other second definition is a parse error.
MERGED = [
    "{ a = { x = 1; }; a.y = 2; }",
    "{ a.y = 2; a = rec { x = 1; }; }",
    "{ a = ({ x = 1; }); a.y = 2; }",
    "let a.b = 1; a.c = 2; in a",
    "{ a = { b.c = 1; }; a.b.d = 2; }",
    "{ a = {}; a = {}; }",
    "{ a = { x = { y = 1; }; }; a.x.z = 2; }",
]
DUPLICATES = [
    "{ a, a }: 1",
    "a@{ a }: 1",
    "{ a = 1; a = 2; }",
    "{ a = 1; a.y = 2; }",
    "{ inherit a; a = 1; }",
    "let a = 1; a = 2; in a",
    '{ "a" = 1; a = 2; }',
    "{ a = { inherit x; }; a.x = 1; }",
    "{ a = { x = 1; }; a = { x = 2; }; }",
    "{ a = { b = 1; }; a.b.d = 2; }",
    "{ inherit (x) a; a.b = 1; }",
    "{ a = 1; a = {}; }",
    "{ x = { a = 1; a = 2; }; }",
]
REJECTED = DUPLICATES + [
    "{ a, ..., }: a",
    "{ a,, }: a",
    "{ a, , b }: a",
    "{ a, /* c */ , }: a",
    "{ a, # c\n, }: a",
    "{ a, # c\n ..., # d\n}: a",
    "{ a b }: a",
    "{ a, b, }: { x = ; }",
    "[ 1 2",
    "let x = 1 in x",
    "{ a = 1; ",
    # the grammar skips vertical tabs and form feeds; Nix rejects them between tokens
    "{ a = 1;\x0bb = 2; }",
    "{\x0c a, b, }: a",
    # the one documented exception to "Nix accepts <=> no CUDA900": Nix 2.24+ parses the pipe
    # operators behind the experimental `pipe-operators` feature; Nix 2.8 and the grammar do not
    "1 |> (x: x)",
    "(x: x) <| 1",
]


def problems(text: str) -> list:
    source = SourceFile("t.nix", text)
    return syntax_problems(parse(source), source)


@pytest.mark.parametrize("text", MERGED)
def test_merged_attrset_literals_are_not_duplicates(text: str) -> None:
    assert problems(text) == []


@pytest.mark.parametrize("text", TOLERATED)
def test_trailing_comma_in_formals_is_not_an_error(text: str) -> None:
    assert problems(text) == []


@pytest.mark.parametrize("text", REJECTED)
def test_real_syntax_errors_are_reported(text: str) -> None:
    assert problems(text)


def test_gap_does_not_hide_an_error_elsewhere() -> None:
    found = problems("{\n  a,\n  b,\n}:\n{ x = ; }\n")
    assert len(found) == 1
    assert SourceFile("t", "{\n  a,\n  b,\n}:\n{ x = ; }\n").location(found[0].start)[0] == 5


def test_rules_still_run_on_a_file_with_a_syntax_error() -> None:
    text = "{ stdenv, cudatoolkit }:\nstdenv.mkDerivation {\n  nativeBuildInputs = [ cudatoolkit ];\n  x = ;\n}\n"
    codes = [d.code for d in lint(SourceFile("t.nix", text), LintSettings()).diagnostics]
    assert "CUDA900" in codes and "CUDA001" in codes


def all_nix_fixtures() -> list[Path]:
    root = Path(__file__).parent / "fixtures"
    return sorted(root.rglob("*.nix"))


@pytest.mark.parametrize("text", TOLERATED + MERGED + REJECTED)
def test_snippets_agree_with_nix(text: str, tmp_path: Path) -> None:
    nix = nix_parser()
    path = tmp_path / "snippet.nix"
    path.write_text(text)
    accepted = nix_accepts(nix, path)
    assert accepted == (problems(text) == []), f"nix accepts={accepted} but cudalint found {problems(text)}"


def test_every_fixture_agrees_with_nix() -> None:
    paths = all_nix_fixtures()
    texts = [path.read_text(encoding="utf-8") for path in paths]
    disagreements = []
    for path, text, (accepted, error) in zip(paths, texts, nix_verdicts(nix_parser(), texts)):
        if accepted != (problems(text) == []):
            disagreements.append(f"{path}: nix accepts={accepted} {error}")
    assert not disagreements, "\n".join(disagreements)
