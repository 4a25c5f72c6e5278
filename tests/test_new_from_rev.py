"""`--new-from-rev`: only findings on lines added or changed since a revision, in a real
temporary git repository (committed files, edits, renames, untracked files, subdirectories,
`--fix`), and the usage errors."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from cudalint.frontend.cli import main
from cudalint.frontend.newcode import Scope, parse_diff
from cudalint.lint.model import Diagnostic, Edit, Severity
from cudalint.nix.source import SourceFile
from requirements import require_executable

# Three references to the toolkit on lines 4, 5 and 6.
PACKAGE = """\
{ stdenv, cudatoolkit }:
stdenv.mkDerivation {
  pname = "x";
  nativeBuildInputs = [ cudatoolkit ];
  buildInputs = [ cudatoolkit ];
  checkInputs = [ cudatoolkit ];
}
"""
OPTIONS = ["--isolated", "--select", "CUDA001", "--output-format", "json"]


def git(repo: Path, *arguments: str) -> str:
    return subprocess.run(["git", *arguments], cwd=repo, check=True, capture_output=True, text=True).stdout


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    require_executable("git", "--new-from-rev asks git what changed")
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    git(root, "config", "user.email", "test@example.com")
    git(root, "config", "user.name", "test")
    git(root, "config", "commit.gpgsign", "false")
    (root / "pkgs" / "x").mkdir(parents=True)
    (root / "pkgs" / "x" / "default.nix").write_text(PACKAGE)
    (root / "old.nix").write_text(PACKAGE)
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", "base")
    git(root, "tag", "base")
    return root


def check(repo: Path, cwd: Path, monkeypatch, capsys, *arguments: str) -> tuple[int, list[tuple[str, int]], str]:
    monkeypatch.chdir(cwd)
    code = main(["check", *OPTIONS, *arguments])
    captured = capsys.readouterr()
    findings = json.loads(captured.out) if captured.out.strip() else []
    return code, [(f["filename"], f["location"]["row"]) for f in findings], captured.err


def test_an_unchanged_tree_has_no_new_findings(repo: Path, monkeypatch, capsys) -> None:
    code, findings, _ = check(repo, repo, monkeypatch, capsys, "--new-from-rev", "base")
    assert (code, findings) == (0, [])
    # the same tree without the flag has six
    _, everything, _ = check(repo, repo, monkeypatch, capsys)
    assert len(everything) == 6


def test_only_changed_lines_are_reported(repo: Path, monkeypatch, capsys) -> None:
    path = repo / "pkgs" / "x" / "default.nix"
    lines = PACKAGE.splitlines(keepends=True)
    lines[4] = "  buildInputs = [ cudatoolkit ]; # edited\n"  # line 5: changed, with a finding
    lines.insert(2, "  # a new line without a finding\n")  # now line 3; the old lines 3.. move down one
    path.write_text("".join(lines))
    code, findings, _ = check(repo, repo, monkeypatch, capsys, "--new-from-rev", "base")
    assert code == 1 and findings == [("pkgs/x/default.nix", 6)]


def test_committed_changes_after_the_revision_count(repo: Path, monkeypatch, capsys) -> None:
    (repo / "old.nix").write_text(PACKAGE.replace("checkInputs = [ cudatoolkit ];", "checkInputs = [ cudatoolkit stdenv ];"))
    git(repo, "commit", "-q", "-am", "edit")
    _, findings, _ = check(repo, repo, monkeypatch, capsys, "--new-from-rev", "base")
    assert findings == [("old.nix", 6)]
    _, findings, _ = check(repo, repo, monkeypatch, capsys, "--new-from-rev", "HEAD")
    assert findings == []


def test_untracked_files_are_new_as_a_whole(repo: Path, monkeypatch, capsys) -> None:
    (repo / "fresh.nix").write_text(PACKAGE)
    (repo / ".gitignore").write_text("ignored.nix\n")
    (repo / "ignored.nix").write_text(PACKAGE)
    _, findings, _ = check(repo, repo, monkeypatch, capsys, "--new-from-rev", "base", "fresh.nix", "old.nix")
    assert findings == [("fresh.nix", 4), ("fresh.nix", 5), ("fresh.nix", 6)]


def test_a_renamed_file_counts_only_its_changed_lines(repo: Path, monkeypatch, capsys) -> None:
    git(repo, "mv", "old.nix", "renamed.nix")
    text = (repo / "renamed.nix").read_text().replace('pname = "x";', 'pname = "x";\n  extra = [ cudatoolkit ];')
    (repo / "renamed.nix").write_text(text)
    git(repo, "commit", "-q", "-am", "rename")
    _, findings, _ = check(repo, repo, monkeypatch, capsys, "--new-from-rev", "base")
    assert findings == [("renamed.nix", 4)]


def test_a_subdirectory_as_path_and_as_working_directory(repo: Path, monkeypatch, capsys) -> None:
    sub = repo / "pkgs" / "x"
    (sub / "default.nix").write_text(PACKAGE.replace("nativeBuildInputs = [ cudatoolkit ];", "nativeBuildInputs = [ cudatoolkit ]; # new"))
    (repo / "old.nix").write_text(PACKAGE.replace("buildInputs = [ cudatoolkit ];", "buildInputs = [ cudatoolkit ]; # new"))
    _, findings, _ = check(repo, repo, monkeypatch, capsys, "--new-from-rev", "base", "pkgs")
    assert findings == [("pkgs/x/default.nix", 4)]
    _, findings, _ = check(repo, sub, monkeypatch, capsys, "--new-from-rev", "base")
    assert findings == [("default.nix", 4)]


def test_merge_base_form(repo: Path, monkeypatch, capsys) -> None:
    git(repo, "checkout", "-q", "-b", "feature")
    (repo / "old.nix").write_text(PACKAGE.replace("checkInputs = [ cudatoolkit ];", "checkInputs = [ cudatoolkit ]; # feature"))
    git(repo, "commit", "-q", "-am", "feature")
    git(repo, "checkout", "-q", "main")
    (repo / "pkgs" / "x" / "default.nix").write_text(PACKAGE.replace("nativeBuildInputs = [ cudatoolkit ];", "nativeBuildInputs = [ cudatoolkit ]; # main"))
    git(repo, "commit", "-q", "-am", "main")
    git(repo, "checkout", "-q", "feature")
    # against main itself, main's own later edit looks like a change of the branch; against the
    # merge base only the branch's edit is new
    _, findings, _ = check(repo, repo, monkeypatch, capsys, "--new-from-rev", "main")
    assert findings == [("old.nix", 6), ("pkgs/x/default.nix", 4)]
    _, findings, _ = check(repo, repo, monkeypatch, capsys, "--new-from-rev", "main...")
    assert findings == [("old.nix", 6)]


def test_fix_applies_only_the_new_findings(repo: Path, monkeypatch, capsys) -> None:
    path = repo / "old.nix"
    path.write_text(PACKAGE.replace("buildInputs = [ cudatoolkit ];", "buildInputs = [ cudatoolkit ]; # edited"))
    code, remaining, _ = check(repo, repo, monkeypatch, capsys, "--new-from-rev", "base", "--fix", "--unsafe-fixes", "old.nix")
    fixed = path.read_text().splitlines()
    assert code == 0 and remaining == []
    # the fix of line 5 (with the `cudaPackages` formal it needs) was applied; lines 4 and 6,
    # whose findings have fixes too, kept the toolkit
    assert fixed[4] == "  buildInputs = [ cudaPackages.cuda_cudart cudaPackages.cuda_cccl ]; # edited"
    assert [fixed[3], fixed[5]] == [PACKAGE.splitlines()[3], PACKAGE.splitlines()[5]]
    assert fixed[0] == "{ stdenv, cudatoolkit, cudaPackages }:"
    # a full run still sees the two old findings
    _, everything, _ = check(repo, repo, monkeypatch, capsys, "old.nix")
    assert everything == [("old.nix", 4), ("old.nix", 6)]


def test_usage_errors(repo: Path, tmp_path: Path, monkeypatch, capsys) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "a.nix").write_text(PACKAGE)
    code, _, err = check(repo, outside, monkeypatch, capsys, "--new-from-rev", "HEAD")
    assert code == 2 and "needs a git repository" in err and str(outside) in err
    code, _, err = check(repo, repo, monkeypatch, capsys, "--new-from-rev", "no-such-branch")
    assert code == 2 and "unknown revision `no-such-branch`" in err
    code, _, err = check(repo, repo, monkeypatch, capsys, "--new-from-rev=--output=x")
    assert code == 2 and "is not a revision" in err
    code, _, err = check(repo, repo, monkeypatch, capsys, "--new-from-rev", "HEAD", "-")
    assert code == 2 and "--stdin-filename" in err


# units


def test_parse_diff_added_lines_and_quoted_names() -> None:
    diff = (
        "diff --git a/a.nix b/a.nix\n--- a/a.nix\n+++ b/a.nix\n@@ -3,0 +4,2 @@\n+x\n+y\n@@ -9 +11 @@\n-a\n+b\n@@ -20,2 +21,0 @@\n-c\n-d\n"
        'diff --git "a/t\\tb.nix" "b/t\\tb.nix"\n--- "a/t\\tb.nix"\n+++ "b/t\\tb.nix"\n@@ -1 +1 @@\n-a\n+b\n'
        "diff --git a/gone.nix b/gone.nix\n--- a/gone.nix\n+++ /dev/null\n@@ -1 +0,0 @@\n-a\n"
    )
    assert parse_diff(diff) == {"a.nix": [4, 5, 11], "t\tb.nix": [1]}


def test_scope_follows_edits_and_counts_inserted_text_as_new() -> None:
    source = SourceFile("a.nix", "one\ntwo\nthree\n")
    scope = Scope.of_lines(source, [2])  # "two\n": bytes 4..8
    finding = lambda start, end: Diagnostic("CUDA001", "m", start, end, Severity.WARNING)  # noqa: E731
    assert scope.contains(finding(4, 7)) and not scope.contains(finding(0, 3)) and not scope.contains(finding(8, 13))
    moved = scope.moved([Edit(0, 3, "ONE!!")])  # two bytes longer, before the region
    assert moved.contains(finding(6, 9)) and not moved.contains(finding(10, 15))
    assert moved.contains(finding(0, 5))  # the inserted text is new
    assert moved.line_numbers(SourceFile("a.nix", "ONE!!\ntwo\nthree\n")) == (1, 2)


def test_summary_names_unchanged_files_apart_from_files_without_cuda_names(repo: Path, monkeypatch, capsys) -> None:
    (repo / "pkgs" / "x" / "default.nix").write_text(PACKAGE.replace('pname = "x";', 'pname = "x2";'))
    (repo / "plain.nix").write_text("{ }: 1\n")
    monkeypatch.chdir(repo)
    main(["check", "--isolated", "--select", "CUDA001", "--new-from-rev", "base", "."])
    out = capsys.readouterr().out
    assert "Checked 1 file; skipped 1 file without CUDA names and 1 file without new lines since the --new-from-rev revision (not parsed)." in out
