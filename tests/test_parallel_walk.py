"""The walk shared with the workers (`runner.walk_and_run`) gives what the walk in one process
gives: the same files in the same order, the same notices, the same settings for each file, the
same report, exit code and written files, for `--jobs 1` and `--jobs N`.

The trees here are small, so the parent would list them whole: `SUBTREES_PER_JOB = 1` makes it
hand subtrees to the workers after listing a few directories, and each test checks it did."""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from cudalint.frontend import files, runner
from cudalint.frontend.cli import main
from cudalint.frontend.config import Overrides, Resolver
from requirements import require_executable

pytestmark = pytest.mark.skipif(not runner.can_defer_pins(), reason="the parallel walk needs the fork start method")

# CUDA001 fires (with an unsafe fix); an unused suppression (CUDA901) has a safe fix
FINDING = '{ stdenv, cudatoolkit }:\nstdenv.mkDerivation {\n  pname = "x"; src = ./.;\n  nativeBuildInputs = [ cudatoolkit ];\n}\n'
SAFE = "{ x }:\nx # cudalint: ignore[CUDA001]\n"
CLEAN = "{ x }: x\n"
LOCK = {"nodes": {"root": {"inputs": {"nixpkgs": "nixpkgs"}}, "nixpkgs": {"locked": {"lastModified": 1719792000}, "original": {"repo": "nixpkgs"}}}, "root": "root", "version": 7}


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def build_tree(top: Path, fifo: bool = True) -> Path:
    """A tree with everything the walk decides on, spread over several subtrees."""
    root = top / "tree"
    outside = top / "outside"  # reached only through symlinks, from two subtrees
    write(outside / "shared.nix", FINDING)
    write(outside / "deeper" / "more.nix", SAFE)
    write(root / ".gitignore", "ignored/\n*.gen.nix\n!keep.gen.nix\n")
    write(root / "top.nix", FINDING)
    for letter in "abcdefgh":
        for index in range(3):
            write(root / letter / f"sub{index}" / f"{letter}{index}.nix", FINDING if index % 2 else SAFE)
        write(root / letter / "x.gen.nix", FINDING)  # ignored by the root's .gitignore
        write(root / letter / "keep.gen.nix", FINDING)  # re-included
    write(root / "ignored" / "never.nix", FINDING)
    # nested .gitignore: a deeper file ignores, a deeper one still re-includes
    write(root / "a" / ".gitignore", "sub1/\nlocal.nix\n")
    write(root / "a" / "local.nix", FINDING)
    write(root / "a" / "sub0" / ".gitignore", "!local.nix\n")
    write(root / "a" / "sub0" / "local.nix", FINDING)
    # nested configurations: exclude and per-file-ignores, a pyproject one level further down
    write(root / "b" / "cudalint.toml", 'exclude = ["sub2/"]\n[per-file-ignores]\n"sub1/*" = ["CUDA001"]\n')
    write(root / "b" / "sub0" / "pyproject.toml", '[tool.cudalint]\nselect = ["CUDA9"]\n')
    write(root / "b" / "sub0" / "deep" / "d.nix", FINDING)
    # pins: a flake.lock in one subtree, a default.nix that fetches nixpkgs in another
    write(root / "c" / "flake.lock", json.dumps(LOCK))
    write(root / "c" / "sub0" / "pinned.nix", FINDING)
    write(root / "d" / "default.nix", 'import (fetchTarball "https://github.com/NixOS/nixpkgs/archive/nixos-23.11.tar.gz") { }\n')
    # symlinks: a loop, a link back to a walked directory, two links to the same outside directory,
    # a broken link, a FIFO; a file hard-linked into two subtrees
    os.symlink("..", root / "e" / "loop")
    os.symlink("../a", root / "f" / "to-a")
    os.symlink(outside, root / "g" / "to-outside")
    os.symlink(outside, root / "h" / "also-outside")
    os.symlink("nowhere.nix", root / "c" / "broken.nix")
    if fifo:
        os.mkfifo(root / "d" / "fifo.nix")
    os.link(root / "top.nix", root / "h" / "sub0" / "hard.nix")
    os.link(root / "e" / "sub1" / "e1.nix", root / "g" / "sub2" / "same-as-e1.nix")
    write(root / "locked" / "hidden.nix", FINDING)  # unreadable (see `lock`)
    return root


@pytest.fixture
def subtrees(monkeypatch) -> list[str]:
    """Hand out subtrees after listing a few directories, check the files with a finding on
    their own as large files are; list the subtrees handed out to the workers."""
    monkeypatch.setattr(runner, "SUBTREES_PER_JOB", 1)
    monkeypatch.setattr(runner, "LARGE_FILE", len(FINDING))
    handed: list[str] = []
    hand_out = runner._RootWalk.walk_subtree

    def counting(self, start):
        handed.append(start.directory)
        hand_out(self, start)

    monkeypatch.setattr(runner._RootWalk, "walk_subtree", counting)
    return handed


def lock(monkeypatch, name: str = "locked") -> None:
    """Make a directory unreadable (tests run as root, where chmod 000 stops nothing); the
    workers are forked after this, so they see it too."""
    real_scandir = os.scandir

    def scandir(path):
        if os.path.basename(os.fspath(path)) == name:
            raise PermissionError(13, "Permission denied")
        return real_scandir(path)

    monkeypatch.setattr(files.os, "scandir", scandir)


def run(argv: list[str], cwd: Path, monkeypatch, capsys) -> tuple[int, str, str]:
    monkeypatch.chdir(cwd)
    code = main(argv)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_the_shared_walk_finds_what_the_walk_in_one_process_finds(tmp_path, monkeypatch, subtrees) -> None:
    root = build_tree(tmp_path)
    lock(monkeypatch)
    walks = {}
    for jobs in (1, 2, 3):
        resolver = Resolver(Overrides(), cwd=str(tmp_path))
        walker = files.Walker(exclude=resolver.excluded, listings=resolver.listings)
        walker.add_file(str(root / "a" / "sub0" / "a0.nix"), explicit=True)
        named = walker.fresh()
        if jobs == 1:
            walker.walk(str(root))
            checked: list = []
            leftovers: list = []
        else:

            def task_for(found, resolver=resolver):
                return runner.Task(found.path, found.path, 0, found.explicit)

            leftovers = []
            table = [resolver.settings_for(str(root / "top.nix"))]
            checked = list(runner.walk_and_run(walker, [str(root)], runner.CHECK, jobs, task_for, table, str, leftovers, pin_lookup=resolver.pin))
        found = [(f.path, f.explicit, f.key) for f in walker.found]
        # every file found was checked once: by a worker, or it is left to the caller
        if jobs > 1:
            assert sorted([task.path for task, _ in checked] + [f.path for f in named + leftovers]) == sorted(path for path, *_ in found)
            assert checked and all(processed.result is not None for _, processed in checked)
        settings = [(path, resolver.settings_for(path, defer_pin=True), resolver.pin(os.path.dirname(path))) for path, *_ in found]
        walks[jobs] = found, walker.notices, settings
    assert subtrees
    assert walks[2] == walks[1] and walks[3] == walks[1]
    paths = [os.path.relpath(path, tmp_path) for path, *_ in walks[1][0]]
    assert paths[0] == "tree/a/sub0/a0.nix"  # named: found once, as named
    assert "tree/outside" not in paths and any(p.endswith("to-outside/shared.nix") for p in paths)
    assert not any(p.endswith("also-outside/shared.nix") for p in paths)  # the first link wins
    assert not any("/loop/" in p or "/to-a/" in p or "ignored" in p or "x.gen.nix" in p for p in paths)
    assert "tree/a/sub0/local.nix" in paths and "tree/a/local.nix" not in paths and "tree/b/sub2/b2.nix" not in paths
    assert "tree/h/sub0/hard.nix" not in paths and "tree/g/sub2/same-as-e1.nix" not in paths
    messages = [(os.path.basename(n.path), n.error) for n in walks[1][1]]
    assert ("locked", True) in messages and ("broken.nix", False) in messages and ("fifo.nix", False) in messages


def test_a_subtree_holding_a_directory_walked_before_is_walked_again_here(tmp_path) -> None:
    """A directory mounted twice (here: a subtree's walk that claims a directory the walk has
    seen) makes the walk list that subtree itself rather than take the other process's word."""
    root = build_tree(tmp_path)
    alone = files.Walker()
    alone.walk(str(root))
    walker = files.Walker()
    top = str(root / "c")
    info = os.stat(root)
    claimed = files.Walked(top, [("not-found-here.nix", (0, 0))], [(info.st_dev, info.st_ino)], [], [])
    walker.recorded = lambda directory: claimed if directory == top else None
    walker.walk(str(root))
    assert walker.found == alone.found and walker.notices == alone.notices


def check_both(argv: list[str], top: Path, monkeypatch, capsys, locked: bool = False, paths: tuple[str, ...] = ("tree",), stdin: bytes = b"") -> tuple[int, str, str]:
    """Run `cudalint check ARGV PATHS` with --jobs 1, 2 and 3 on copies of the same tree; all
    must agree (the output, the exit code and the files afterwards)."""
    copies = {}
    for jobs in (1, 2, 3):
        copy = copies[jobs] = top.parent / f"jobs{jobs}"
        shutil.rmtree(copy, ignore_errors=True)
        shutil.copytree(top, copy, symlinks=True)
        os.mkfifo(copy / "tree" / "d" / "fifo.nix")
    if locked:
        lock(monkeypatch)
    outcomes = {}
    for jobs, copy in copies.items():
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(stdin)))
        outcome = run(["check", "--jobs", str(jobs), *argv, *paths], copy, monkeypatch, capsys)
        assert "usage:" not in outcome[2]
        contents = {str(p.relative_to(copy)): p.read_bytes() for p in sorted(copy.rglob("*.nix")) if p.is_file() and not p.is_symlink()}
        outcomes[jobs] = outcome, contents
    monkeypatch.setattr(files.os, "scandir", os.scandir)
    assert outcomes[2] == outcomes[1] and outcomes[3] == outcomes[1]
    return outcomes[1][0]


def tree_without_outside_links(tmp_path: Path) -> Path:
    top = tmp_path / "original"
    build_tree(top, fifo=False)
    for link in ("g/to-outside", "h/also-outside"):  # absolute: they would not follow a copy
        os.unlink(top / "tree" / link)
        os.symlink("../../outside", top / "tree" / link)
    return top


@pytest.mark.parametrize("output", ["json", "text"])
def test_check_reports_the_same_for_any_jobs(tmp_path, monkeypatch, capsys, subtrees, output) -> None:
    top = tree_without_outside_links(tmp_path)
    code, out, err = check_both(["--output-format", output], top, monkeypatch, capsys, locked=True, paths=("tree/a/sub0/a0.nix", "tree"))
    assert subtrees
    assert code == 2  # the unreadable directory
    assert "locked: error: cannot read directory: permission denied" in err and "broken.nix: warning" in err
    if output == "json":
        reported = json.loads(out)
        targets = {d["filename"]: d["target"]["nixpkgs"] for d in reported if d["filename"].endswith(("pinned.nix", "d0.nix"))}
        assert targets == {"tree/c/sub0/pinned.nix": "2024-07-01", "tree/d/sub0/d0.nix": "23.11"}


def test_a_fix_run_writes_the_same_files_for_any_jobs(tmp_path, monkeypatch, capsys, subtrees) -> None:
    top = tree_without_outside_links(tmp_path)
    code, out, err = check_both(["--fix", "--unsafe-fixes"], top, monkeypatch, capsys)
    # every finding had a fix; the files reached through g/to-outside (a symlink out of the
    # checked tree) are reported and not written (issue 23)
    assert subtrees and code == 2 and err.count("outside the checked files and directories") == 2
    written = (tmp_path / "jobs2" / "tree" / "top.nix").read_text()
    assert written != FINDING and (tmp_path / "jobs2" / "tree" / "h" / "sub0" / "hard.nix").read_text() == written
    assert check_both(["--diff"], top, monkeypatch, capsys)[0] == 1


def test_add_suppressions_agrees_for_any_jobs(tmp_path, monkeypatch, capsys, subtrees) -> None:
    top = tree_without_outside_links(tmp_path)
    code, out, err = check_both(["--add-suppressions"], top, monkeypatch, capsys)
    # the file reached through g/to-outside (a symlink out of the checked tree) is reported, not written
    assert subtrees and code == 2 and "Added 20 suppression comments" in err and "symlink to outside/shared.nix, outside the checked" in err


def test_a_broken_configuration_deep_in_the_tree_stops_a_fix_run_before_writing(tmp_path, monkeypatch, capsys, subtrees) -> None:
    top = tree_without_outside_links(tmp_path)
    write(top / "tree" / "g" / "sub1" / "cudalint.toml", 'select = ["NOPE"]\n')
    write(top / "tree" / "h" / "cudalint.toml", "unknown-key = 1\n")  # later in the walk: not the one reported
    code, out, err = check_both(["--fix", "--unsafe-fixes"], top, monkeypatch, capsys)
    assert str(top.parent / "jobs2" / "tree" / "g") in subtrees  # the error was found by a worker
    assert code == 2 and "g/sub1/cudalint.toml" in err and "h/cudalint.toml" not in err
    assert (tmp_path / "jobs2" / "tree" / "top.nix").read_text() == FINDING  # nothing written
    code, out, err = check_both(["check"], top, monkeypatch, capsys)
    assert code == 2 and "g/sub1/cudalint.toml" in err and not out


def test_several_named_directories_and_no_gitignore(tmp_path, monkeypatch, capsys, subtrees) -> None:
    top = tree_without_outside_links(tmp_path)
    code, out, err = check_both(["--output-format", "json", "--no-respect-gitignore"], top, monkeypatch, capsys, paths=("tree/c", "tree/b"))
    assert subtrees
    reported = {d["filename"] for d in json.loads(out)}
    assert "tree/a/x.gen.nix" not in reported and "tree/c/x.gen.nix" in reported  # only the named directories, ignores off


def test_new_from_rev_and_a_named_file_and_stdin_agree_for_any_jobs(tmp_path, monkeypatch, capsys, subtrees) -> None:
    require_executable("git", "--new-from-rev asks git what changed")
    top = tree_without_outside_links(tmp_path)
    for arguments in (["init", "-q"], ["add", "."], ["-c", "user.email=t@example.com", "-c", "user.name=t", "commit", "-q", "-m", "base"]):
        subprocess.run(["git", *arguments], cwd=top, check=True, capture_output=True)
    with open(top / "tree" / "e" / "sub1" / "e1.nix", "a") as handle:
        handle.write("# changed\n")
    write(top / "tree" / "h" / "sub2" / "new.nix", FINDING)  # untracked: new
    options = ["--output-format", "json", "--new-from-rev", "HEAD", "--stdin-filename", "tree/c/stdin.nix"]
    code, out, err = check_both(options, top, monkeypatch, capsys, paths=("tree/b/sub1/b1.nix", "tree", "-"), stdin=FINDING.encode())
    assert subtrees and code == 1
    assert {f["filename"] for f in json.loads(out)} == {"tree/h/sub2/new.nix"}  # new lines only
    code, out, err = check_both(["--output-format", "json", "--stdin-filename", "tree/c/stdin.nix"], top, monkeypatch, capsys, paths=("tree", "-"), stdin=FINDING.encode())
    assert "tree/c/stdin.nix" in {f["filename"] for f in json.loads(out)}


def shared_walk(root: Path, jobs: int = 2) -> files.Walker:
    """`walk_and_run` with a walker that has no configuration; every file found is checked by a
    worker or left over, once."""
    resolver = Resolver(Overrides(), cwd=str(root))
    walker = files.Walker()
    leftovers: list = []
    table = [resolver.settings_for(str(root / "any.nix"))]
    checked = list(runner.walk_and_run(walker, [str(root)], runner.CHECK, jobs, lambda found: runner.Task(found.path, found.path, 0, False), table, str, leftovers, pin_lookup=resolver.pin))
    assert sorted([task.path for task, _ in checked] + [f.path for f in leftovers]) == sorted(f.path for f in walker.found)
    return walker


def test_a_narrow_tree_is_handed_out_after_a_few_listings(tmp_path, monkeypatch, subtrees) -> None:
    deepest = tmp_path.joinpath(*(f"level{depth}" for depth in range(20)))
    for depth in range(1, 21):
        write(tmp_path.joinpath(*(f"level{d}" for d in range(depth))) / "file.nix", CLEAN)
    alone = files.Walker()
    alone.walk(str(tmp_path))
    walker = shared_walk(tmp_path)
    assert subtrees == [str(deepest.parents[20 - 9])]  # after 4 x 2 listings: the 9th level
    assert walker.found == alone.found and len(walker.found) == 20


def test_a_small_tree_is_listed_once(tmp_path, monkeypatch) -> None:
    build_tree(tmp_path)
    alone = files.Walker()
    alone.walk(str(tmp_path / "tree"))
    listed: list[str] = []
    list_directory = files.Walker.list_directory

    def counting(self, pending):
        listed.append(pending.directory)
        return list_directory(self, pending)

    monkeypatch.setattr(files.Walker, "list_directory", counting)
    walker = shared_walk(tmp_path / "tree", jobs=64)  # the parent lists it all before handing out
    assert walker.found == alone.found and walker.notices == alone.notices
    assert len(listed) == len(set(listed))


def test_without_fork_the_parent_walks(tmp_path, monkeypatch, capsys) -> None:
    top = tree_without_outside_links(tmp_path)
    expected = check_both(["--output-format", "json"], top, monkeypatch, capsys)
    monkeypatch.setattr(runner, "can_walk_in_parallel", lambda jobs: False)
    monkeypatch.setattr(files.Walker, "split", None)  # never called
    assert check_both(["--output-format", "json"], top, monkeypatch, capsys) == expected


if __name__ == "__main__":  # pragma: no cover
    sys.exit(pytest.main([__file__, "-q"]))
