"""Finding, reading and writing files: .gitignore matching, the walk, per-file read problems,
atomic writes."""

from __future__ import annotations

import os
import stat

import pytest

from cudalint.frontend import files
from cudalint.frontend.files import GlobPattern, IgnoreFile, Walker, decode_source, read_source, write_atomic

# --------------------------------------------------------------------------------------------
# .gitignore patterns


@pytest.mark.parametrize(
    ("pattern", "path", "is_dir", "expected"),
    [
        ("*.nix", "a.nix", False, True),
        ("*.nix", "deep/er/a.nix", False, True),  # no slash: any level
        ("*.nix", "a.nix.bak", False, False),
        ("/top.nix", "top.nix", False, True),  # leading slash: anchored
        ("/top.nix", "sub/top.nix", False, False),
        ("sub/x.nix", "sub/x.nix", False, True),  # a middle slash anchors too
        ("sub/x.nix", "a/sub/x.nix", False, False),
        ("build/", "build", True, True),  # trailing slash: directories only
        ("build/", "build", False, False),
        ("build/", "a/build", True, True),
        ("**/gen/*.nix", "gen/a.nix", False, True),
        ("**/gen/*.nix", "x/y/gen/a.nix", False, True),
        ("**/gen/*.nix", "x/gen/sub/a.nix", False, False),  # `*` does not cross `/`
        ("vendor/**", "vendor/a/b.nix", False, True),
        ("vendor/**", "vendor", True, True),  # git: the directory itself matches too (`vendor/`)
        ("a/**/b.nix", "a/b.nix", False, True),
        ("a/**/b.nix", "a/x/y/b.nix", False, True),
        ("a**b", "axxb", False, True),  # other `**` are plain `*`
        ("a**b", "ax/xb", False, False),
        ("?.nix", "a.nix", False, True),
        ("?.nix", "ab.nix", False, False),
        ("[a-c].nix", "b.nix", False, True),
        ("[a-c].nix", "d.nix", False, False),
        ("[!a-c].nix", "d.nix", False, True),
        ("[!a-c].nix", "b.nix", False, False),
        ("\\#hash.nix", "#hash.nix", False, True),
        ("\\!bang.nix", "!bang.nix", False, True),
        ("trailing.nix   ", "trailing.nix", False, True),  # unescaped trailing spaces dropped
        ("space\\ ", "space ", False, True),
        ("*.NIX", "a.nix", False, False),  # case-sensitive, like git on Linux
        ("/build/", "build", True, True),  # anchored and directories only
        ("/build/", "sub/build", True, False),
        ("/build/", "build", False, False),
        ("gen/", "a/gen", True, True),  # a directory-only pattern without a middle slash floats
        ("**/gen", "gen", True, True),  # leading `**/`: at the top too
        ("**/gen", "a/b/gen", False, True),
        ("a/**", "a", False, False),  # trailing `/**`: inside only, never a file named `a`
        ("a/**/b/", "a/x/b", True, True),
        ("a/**/b/", "a/x/b", False, False),
        ("!keep.nix", "keep.nix", False, True),  # a negation matches (and re-includes)
    ],
)
def test_glob_pattern(pattern: str, path: str, is_dir: bool, expected: bool) -> None:
    parsed = GlobPattern.parse(pattern)
    assert parsed is not None
    assert parsed.matches(path, is_dir) is expected


@pytest.mark.parametrize("line", ["", "   ", "# a comment", "!", "/", "[unclosed"])  # git: an unclosed class never matches
def test_glob_pattern_blank_and_comments(line: str) -> None:
    assert GlobPattern.parse(line) is None


def test_negation_last_match_wins(tmp_path) -> None:
    ignore = IgnoreFile.from_lines(str(tmp_path), ["*.gen.nix", "!keep.gen.nix", "also.gen.nix"])
    assert ignore.decide(str(tmp_path / "x.gen.nix"), False) is True
    assert ignore.decide(str(tmp_path / "keep.gen.nix"), False) is False
    assert ignore.decide(str(tmp_path / "plain.nix"), False) is None
    # a later pattern wins over an earlier negation
    assert ignore.decide(str(tmp_path / "also.gen.nix"), False) is True
    # paths outside the ignore file's directory never match
    assert ignore.decide(str(tmp_path.parent / "x.gen.nix"), False) is None


def test_negated_directory_and_file_under_an_ignored_directory(tmp_path) -> None:
    ignore = IgnoreFile.from_lines(str(tmp_path), ["build/", "!build/", "out/", "!out/keep.nix"])
    assert ignore.decide(str(tmp_path / "build"), True) is False  # the last pattern wins
    assert ignore.decide(str(tmp_path / "out"), True) is True  # the walk never enters `out`
    assert ignore.decide(str(tmp_path / "out"), False) is None  # a file named `out`


_GIT_CASES = (
    ["*.gen.nix", "!keep.gen.nix", "/build/", "/top-only.nix", "**/fixtures/*.nix", "vendor/**", "a/**/b.nix", "doc/", "!doc/", "[unclosed", "x[!0-9].nix", "tr\\ ", "\\#hash.nix"],
    [
        "x.gen.nix",
        "d/keep.gen.nix",
        "build/",
        "sub/build/",
        "top-only.nix",
        "sub/top-only.nix",
        "fixtures/a.nix",
        "t/fixtures/a.nix",
        "vendor/",
        "vendor/c.nix",
        "a/b.nix",
        "a/q/r/b.nix",
        "doc/",
        "[unclosed",
        "xa.nix",
        "x1.nix",
        "tr ",
        "#hash.nix",
        "plain.nix",
    ],
)


def test_gitignore_decisions_agree_with_git(tmp_path) -> None:
    """The oracle: `git check-ignore` on the same patterns and paths (directories end in `/`)."""
    import subprocess

    from requirements import require_executable

    git = require_executable("git", "git check-ignore is the oracle of .gitignore matching")
    patterns, paths = _GIT_CASES
    subprocess.run([git, "init", "-q", str(tmp_path)], check=True)
    (tmp_path / ".gitignore").write_text("\n".join(patterns) + "\n")
    ignore = IgnoreFile.from_lines(str(tmp_path), patterns)
    for path in paths:
        result = subprocess.run([git, "-C", str(tmp_path), "check-ignore", "-v", "-n", path], capture_output=True, text=True, check=False)
        # `-v -n` prints `::\tpath` for no match, `source:line:!pattern\tpath` for a re-inclusion
        source_and_pattern = result.stdout.split("\t", 1)[0]
        ignored = source_and_pattern != "::" and not source_and_pattern.split(":", 2)[2].startswith("!")
        assert bool(ignore.decide(str(tmp_path / path.rstrip("/")), path.endswith("/"))) is ignored, path


def test_matches_path_or_parent() -> None:
    pattern = GlobPattern.parse("tests")
    assert pattern is not None
    assert pattern.matches_path_or_parent("tests/a/b.nix")
    assert pattern.matches_path_or_parent("pkgs/tests/b.nix")
    assert not pattern.matches_path_or_parent("pkgs/b.nix")


# --------------------------------------------------------------------------------------------
# Walking


def _write(path, text: str = "{ x }: x\n") -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def _walk(root, **kwargs) -> tuple[list[str], Walker]:
    walker = Walker(**kwargs)
    walker.walk(str(root))
    return sorted(os.path.relpath(f.path, root) for f in walker.found), walker


def test_walk_finds_nix_files_and_skips_git(tmp_path) -> None:
    _write(tmp_path / "a.nix")
    _write(tmp_path / "README.md")
    _write(tmp_path / "sub" / "b.nix")
    _write(tmp_path / ".hidden" / "c.nix")
    _write(tmp_path / ".git" / "d.nix")
    found, _ = _walk(tmp_path)
    assert found == [".hidden/c.nix", "a.nix", "sub/b.nix"]


def test_walk_honours_gitignore_with_negation_and_nesting(tmp_path) -> None:
    (tmp_path / ".gitignore").write_text("# generated code\n*.gen.nix\n!keep.gen.nix\n/build/\n/top-only.nix\n**/fixtures/*.nix\n")
    for name in [
        "a.nix",
        "x.gen.nix",
        "keep.gen.nix",
        "build/b.nix",
        "sub/build/kept-because-anchored.nix",
        "top-only.nix",
        "sub/top-only.nix",
        "t/fixtures/f.nix",
        "sub/y.gen.nix",
        "sub/local.nix",
        "sub/readd.gen.nix",
        "sub/deeper/z.nix",
    ]:
        _write(tmp_path / name)
    # a nested .gitignore: its patterns are relative to its directory and win over the root's
    (tmp_path / "sub" / ".gitignore").write_text("local.nix\n!readd.gen.nix\ndeeper/\n")
    found, _ = _walk(tmp_path)
    assert found == [
        "a.nix",
        "keep.gen.nix",
        "sub/build/kept-because-anchored.nix",
        "sub/readd.gen.nix",
        "sub/top-only.nix",
    ]
    everything, _ = _walk(tmp_path, respect_gitignore=False)
    assert len(everything) == 12


def test_walk_uses_gitignore_above_the_root_inside_a_repository(tmp_path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "info").mkdir()
    (tmp_path / ".git" / "info" / "exclude").write_text("excluded-by-info.nix\n")
    (tmp_path / ".gitignore").write_text("pkgs/ignored.nix\n")
    _write(tmp_path / "pkgs" / "ignored.nix")
    _write(tmp_path / "pkgs" / "excluded-by-info.nix")
    _write(tmp_path / "pkgs" / "kept.nix")
    found, _ = _walk(tmp_path / "pkgs")
    assert found == ["kept.nix"]


def test_walk_ignores_gitignore_above_the_root_outside_a_repository(tmp_path) -> None:
    (tmp_path / ".gitignore").write_text("*.nix\n")
    _write(tmp_path / "pkgs" / "a.nix")
    found, _ = _walk(tmp_path / "pkgs")
    assert found == ["a.nix"]


def test_walk_exclude_callback(tmp_path) -> None:
    _write(tmp_path / "vendor" / "a.nix")
    _write(tmp_path / "b.nix")
    found, _ = _walk(tmp_path, exclude=lambda path, is_dir: os.path.basename(path) == "vendor" and is_dir)
    assert found == ["b.nix"]


def test_walk_survives_directory_symlink_loops(tmp_path) -> None:
    _write(tmp_path / "a.nix")
    _write(tmp_path / "sub" / "b.nix")
    os.symlink(".", tmp_path / "loop")  # points to its own directory
    os.symlink("..", tmp_path / "sub" / "up")  # points to an ancestor
    os.symlink("sub", tmp_path / "alias")  # a second name for a directory
    found, _ = _walk(tmp_path)
    # every file once, under its real path
    assert found == ["a.nix", "sub/b.nix"]


def test_walk_follows_directory_symlinks_to_new_places(tmp_path) -> None:
    outside = tmp_path / "outside"
    _write(outside / "o.nix")
    root = tmp_path / "root"
    root.mkdir()
    os.symlink(outside, root / "linked")
    found, _ = _walk(root)
    assert found == ["linked/o.nix"]


def test_walk_reports_file_symlink_loops_and_broken_links(tmp_path) -> None:
    _write(tmp_path / "a.nix")
    os.symlink("loop2.nix", tmp_path / "loop1.nix")
    os.symlink("loop1.nix", tmp_path / "loop2.nix")
    os.symlink("missing.nix", tmp_path / "broken.nix")
    os.symlink("a.nix", tmp_path / "same.nix")  # another name for a.nix: checked once
    found, walker = _walk(tmp_path)
    assert found == ["a.nix"]
    messages = {os.path.basename(n.path): n.message for n in walker.notices}
    assert "symlink loop" in messages["loop1.nix"]
    assert "broken symlink" in messages["broken.nix"]
    assert not any(n.error for n in walker.notices)


def test_walk_skips_fifos_with_a_notice(tmp_path) -> None:
    os.mkfifo(tmp_path / "pipe.nix")
    found, walker = _walk(tmp_path)
    assert found == []
    assert "not a regular file" in walker.notices[0].message


def test_walk_directory_vanishing(tmp_path, monkeypatch) -> None:
    _write(tmp_path / "gone" / "a.nix")
    _write(tmp_path / "b.nix")
    real_scandir = os.scandir

    def scandir(path):
        if str(path).endswith("gone"):
            raise FileNotFoundError(2, "No such file or directory")
        return real_scandir(path)

    monkeypatch.setattr(files.os, "scandir", scandir)
    found, walker = _walk(tmp_path)
    assert found == ["b.nix"]
    assert "vanished" in walker.notices[0].message and not walker.notices[0].error


def test_walk_unreadable_directory_is_an_error(tmp_path, monkeypatch) -> None:
    # Tests run as root, where chmod 000 does not stop reading: provoke EACCES by mocking.
    _write(tmp_path / "locked" / "a.nix")
    real_scandir = os.scandir

    def scandir(path):
        if str(path).endswith("locked"):
            raise PermissionError(13, "Permission denied")
        return real_scandir(path)

    monkeypatch.setattr(files.os, "scandir", scandir)
    _, walker = _walk(tmp_path)
    assert walker.notices[0].error and "permission denied" in walker.notices[0].message


# --------------------------------------------------------------------------------------------
# Reading


def test_read_accepts_and_reports_bom(tmp_path) -> None:
    path = tmp_path / "bom.nix"
    path.write_bytes(files.BOM + b"{ x }: x\n")
    read = read_source(str(path), files.DEFAULT_MAX_FILE_SIZE)
    assert isinstance(read, files.ReadSource)
    assert read.bom and read.text == "{ x }: x\n" and read.raw.startswith(files.BOM)


def test_read_empty_file(tmp_path) -> None:
    path = tmp_path / "empty.nix"
    path.write_bytes(b"")
    read = read_source(str(path), 10)
    assert isinstance(read, files.ReadSource) and read.text == ""


def test_read_binary_names_the_nul_byte() -> None:
    problem = decode_source(b"abc\0def")
    assert isinstance(problem, files.ReadProblem) and problem.kind == "binary"
    assert "byte offset 3" in problem.message


def test_read_invalid_utf8_names_the_byte() -> None:
    problem = decode_source('{\n  a = "é";\n'.encode("latin-1"))
    assert isinstance(problem, files.ReadProblem) and problem.kind == "encoding"
    assert "0xe9" in problem.message and "byte offset 9" in problem.message and "line 2, column 8" in problem.message


def test_read_too_large(tmp_path) -> None:
    path = tmp_path / "big.nix"
    path.write_bytes(b"#" * 2048)
    problem = read_source(str(path), 1024)
    assert isinstance(problem, files.ReadProblem) and problem.kind == "too-large"
    assert "2 KB" in problem.message and "max-file-size" in problem.message


def test_read_fifo_does_not_block(tmp_path) -> None:
    os.mkfifo(tmp_path / "pipe.nix")
    problem = read_source(str(tmp_path / "pipe.nix"), 1024)
    assert isinstance(problem, files.ReadProblem) and problem.kind == "not-regular" and "FIFO" in problem.message


def test_read_symlink_loop_and_missing(tmp_path) -> None:
    os.symlink("self.nix", tmp_path / "self.nix")
    loop = read_source(str(tmp_path / "self.nix"), 1024)
    assert isinstance(loop, files.ReadProblem) and loop.kind == "loop"
    missing = read_source(str(tmp_path / "nope.nix"), 1024)
    assert isinstance(missing, files.ReadProblem) and missing.kind == "missing"


def test_read_permission_denied(tmp_path, monkeypatch) -> None:
    # Running as root, chmod 000 would not stop the read; mock os.open instead.
    path = tmp_path / "locked.nix"
    path.write_text("x")

    def denied(*args, **kwargs):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(files.os, "open", denied)
    problem = read_source(str(path), 1024)
    assert isinstance(problem, files.ReadProblem) and problem.kind == "unreadable" and "permission denied" in problem.message


# --------------------------------------------------------------------------------------------
# Writing


def test_write_atomic_keeps_mode_and_leaves_no_temp_files(tmp_path) -> None:
    path = tmp_path / "a.nix"
    path.write_bytes(b"old\n")
    os.chmod(path, 0o751)
    write_atomic(str(path), b"new\n", b"old\n")
    assert path.read_bytes() == b"new\n"
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o751
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.nix"]


def test_write_atomic_refuses_when_the_file_changed(tmp_path) -> None:
    path = tmp_path / "a.nix"
    path.write_bytes(b"changed by someone else\n")
    with pytest.raises(files.WriteError, match="changed on disk"):
        write_atomic(str(path), b"new\n", b"old\n")
    assert path.read_bytes() == b"changed by someone else\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.nix"]


def test_write_atomic_keeps_symlinks(tmp_path) -> None:
    target = tmp_path / "real.nix"
    target.write_bytes(b"old\n")
    link = tmp_path / "link.nix"
    os.symlink("real.nix", link)
    write_atomic(str(link), b"new\n", b"old\n")
    assert link.is_symlink() and target.read_bytes() == b"new\n"


def test_write_atomic_cleans_up_when_the_write_fails(tmp_path, monkeypatch) -> None:
    path = tmp_path / "a.nix"
    path.write_bytes(b"old\n")

    def broken_replace(src, dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(files.os, "replace", broken_replace)
    with pytest.raises(files.WriteError, match="No space left"):
        write_atomic(str(path), b"new\n", b"old\n")
    assert path.read_bytes() == b"old\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.nix"]


def test_walk_does_not_follow_links_into_the_nix_store(tmp_path, monkeypatch) -> None:
    store = tmp_path / "store"
    _write(store / "abc-cuda-pkg" / "default.nix")
    root = tmp_path / "project"
    _write(root / "default.nix")
    os.symlink(store / "abc-cuda-pkg", root / "result")  # what `nix build` leaves behind
    monkeypatch.setattr(files, "NIX_STORE", str(store) + os.sep)
    found, walker = _walk(root)
    assert found == ["default.nix"] and walker.notices == []
