"""Suppression comments: placement, shell comments inside strings, ignore-file, CUDA901."""

from __future__ import annotations

from cudalint.lint.engine import lint
from cudalint.lint.fixing import fix_file
from cudalint.lint.settings import LintSettings
from cudalint.nix.source import SourceFile

HEAD = "{ stdenv, cudatoolkit }:\nstdenv.mkDerivation {\n"
# The rules these tests speak of; others (CUDA302 on HEAD's plain stdenv) are beside the point.
RULES = LintSettings(enabled=frozenset({"CUDA001", "CUDA102", "CUDA105", "CUDA900", "CUDA901"}))


def codes(text: str, settings: LintSettings = RULES) -> list[tuple[int, str]]:
    source = SourceFile("t.nix", text)
    return [(source.location(d.start)[0], d.code) for d in lint(source, settings).diagnostics]


def test_end_of_line_suppression() -> None:
    text = HEAD + "  nativeBuildInputs = [ cudatoolkit ]; # cudalint: ignore[CUDA001] -- legacy\n}\n"
    assert codes(text) == []


def test_own_line_suppression_covers_the_next_code_line_only() -> None:
    text = HEAD + "  # cudalint: ignore[CUDA001]\n\n  # another comment\n  nativeBuildInputs = [ cudatoolkit ];\n  buildInputs = [ cudatoolkit ];\n}\n"
    assert codes(text) == [(7, "CUDA001")]


def test_suppression_of_another_code_does_not_apply_and_is_reported() -> None:
    text = HEAD + "  nativeBuildInputs = [ cudatoolkit ]; # cudalint: ignore[CUDA102]\n}\n"
    assert sorted(codes(text)) == [(3, "CUDA001"), (3, "CUDA901")]


def test_several_codes_and_lowercase() -> None:
    text = HEAD + "  nativeBuildInputs = [ cudatoolkit ]; # cudalint: ignore[cuda001, CUDA900]\n}\n"
    assert codes(text) == [(3, "CUDA901")]  # CUDA900 matched nothing


def test_shell_comment_inside_a_nix_string_counts() -> None:
    text = HEAD + "  postFixup = ''\n    # cudalint: ignore[CUDA001] -- kept for the old branch\n    ln -s ${cudatoolkit} $out/cuda\n  '';\n}\n"
    assert codes(text) == []


def test_ignore_file_in_leading_comments_only() -> None:
    leading = "# cudalint: ignore-file[CUDA001]\n" + HEAD + "  nativeBuildInputs = [ cudatoolkit ];\n}\n"
    assert codes(leading) == []
    later = HEAD + "  # cudalint: ignore-file[CUDA001]\n  nativeBuildInputs = [ cudatoolkit ];\n}\n"
    assert (4, "CUDA001") in codes(later)


def test_unknown_codes_and_missing_codes_are_reported() -> None:
    text = "# cudalint: ignore[CUDA999]\n1 # cudalint: ignore\n"
    assert codes(text) == [(1, "CUDA901"), (2, "CUDA901")]


def test_disabled_rules_do_not_make_suppressions_unused() -> None:
    text = HEAD + "  nativeBuildInputs = [ ]; # cudalint: ignore[CUDA001]\n}\n"
    assert codes(text, LintSettings(enabled=frozenset({"CUDA901"}))) == []
    assert codes(text) == [(3, "CUDA901")]


def test_unused_suppression_fix_removes_only_the_comment() -> None:
    text = "[\n  # cudalint: ignore[CUDA001]\n  1 # cudalint: ignore[CUDA001]\n]\n"
    outcome = fix_file(SourceFile("t.nix", text), RULES)
    assert outcome.text == "[\n  1\n]\n"
    mixed = HEAD + "  nativeBuildInputs = [ cudatoolkit ]; # cudalint: ignore[CUDA001, CUDA102]\n}\n"
    fixed = fix_file(SourceFile("t.nix", mixed), RULES).text
    assert "# cudalint: ignore[CUDA001]\n" in fixed


# ----- `cudalint check --add-suppressions` ----------------------------------------------------


def _adopt(tmp_path, capsys, *extra: str) -> tuple[int, str, str]:
    from cudalint.frontend.cli import main

    code = main(["check", "--no-respect-gitignore", "--isolated", *extra, str(tmp_path)])
    out, err = capsys.readouterr()
    return code, out, err


def test_add_suppressions_leaves_a_tree_that_checks_clean(tmp_path, capsys) -> None:
    """Every rule's firing fixtures (the engine's own findings aside: a syntax error or an unused
    suppression is not hidden) take their suppressions, and then check clean: no finding, and no
    CUDA901 saying a new comment suppresses nothing."""
    import shutil
    from pathlib import Path

    fixtures = Path(__file__).parent / "fixtures" / "rules"
    copied = 0
    for path in sorted(fixtures.glob("*/fire_*.nix")):
        if path.parent.name in {"CUDA900", "CUDA901"}:
            continue
        shutil.copy(path, tmp_path / f"{path.parent.name}_{path.name}")
        copied += 1
    code, out, err = _adopt(tmp_path, capsys)
    assert code == 1 and copied > 100
    code, out, err = _adopt(tmp_path, capsys, "--add-suppressions", "--reason", "adopted before the CUDA review")
    added = int(err.split("Added ")[1].split()[0])
    assert code == 0 and added >= copied, err
    code, out, err = _adopt(tmp_path, capsys)
    assert code == 0 and "All checks passed!" in out, out + err
    assert sum(p.read_text().count("-- adopted before the CUDA review") for p in tmp_path.glob("*.nix")) == added
    code, out, err = _adopt(tmp_path, capsys, "--add-suppressions")
    assert code == 0 and "Added 0 suppression comments to 0 files." in err


def test_add_suppressions_joins_the_codes_of_a_line_and_an_existing_comment(tmp_path, capsys) -> None:
    (tmp_path / "a.nix").write_text("{ cudaPackages }:\n{\n  a = [ cudaPackages_11.cudatoolkit ];\n  b = [ cudaPackages_11.cudatoolkit ]; # cudalint: ignore[CUDA002]\n}\n")
    code, out, err = _adopt(tmp_path, capsys, "--add-suppressions", "--select", "ALL")
    text = (tmp_path / "a.nix").read_text()
    assert "  a = [ cudaPackages_11.cudatoolkit ]; # cudalint: ignore[CUDA001, CUDA002]\n" in text, text
    assert "  b = [ cudaPackages_11.cudatoolkit ]; # cudalint: ignore[CUDA002, CUDA001]\n" in text, text
    code, out, err = _adopt(tmp_path, capsys, "--select", "ALL")
    assert code == 0, out


def test_add_suppressions_refuses_what_it_cannot_do(tmp_path, capsys) -> None:
    (tmp_path / "a.nix").write_text("{ cudatoolkit }: cudatoolkit\n")
    for extra in (["--reason", "x"], ["--add-suppressions", "--fix"], ["--add-suppressions", "--reason", "a ''quote"], ["--add-suppressions", "--reason", "${x}"]):
        code, out, err = _adopt(tmp_path, capsys, *extra)
        assert code == 2 and "error" in err.lower(), (extra, err)
    assert (tmp_path / "a.nix").read_text() == "{ cudatoolkit }: cudatoolkit\n"
