"""A hostile repository (issue 23), built in tmp_path: FIFOs where pins are read, a baseline that
is a symlink to /dev/zero, symlinks out of the checked tree, read-only and hard-linked files, a
run killed in the middle of a write, and workers whose parent is killed. cudalint runs in a
subprocess with a timeout: a hang fails the test instead of stopping the suite.
"""

from __future__ import annotations

import os
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from cudalint.frontend import files
from cudalint.regular_files import FileTooLarge, NotRegularFile, read_regular

FINDING = "{ stdenv, cudatoolkit }:\nstdenv.mkDerivation {\n  nativeBuildInputs = [ cudatoolkit ];\n}\n"
FIXABLE = "{ stdenv, autoAddOpenGLRunpathHook }:\nstdenv.mkDerivation {\n  nativeBuildInputs = [ autoAddOpenGLRunpathHook ];\n}\n"
PATIENCE = 120  # seconds: a run that takes longer is hanging


def cudalint(argv: list[str], cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "cudalint", *argv], cwd=cwd, capture_output=True, text=True, timeout=PATIENCE, stdin=subprocess.DEVNULL)


def test_reads_refuse_fifos_devices_and_oversized_files(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe")
    with pytest.raises(NotRegularFile, match="FIFO"):
        read_regular(str(tmp_path / "pipe"), 100)
    with pytest.raises(NotRegularFile, match="device"):
        read_regular("/dev/zero", 100)
    (tmp_path / "big").write_bytes(b"x" * 101)
    with pytest.raises(FileTooLarge):
        read_regular(str(tmp_path / "big"), 100)
    assert read_regular(str(tmp_path / "big"), 101) == b"x" * 101


@pytest.mark.parametrize(
    ("pin", "default_nix"),
    [
        ("pin.nix", "let pkgs = import ./pin.nix { }; in pkgs.callPackage ./a.nix { }\n"),
        ("pin.json", "let pkgs = import ./pin.nix { }; in pkgs.callPackage ./a.nix { }\n"),
        ("nix/sources.json", None),
    ],
)
def test_a_fifo_where_a_pin_is_read_does_not_block_the_check(tmp_path: Path, pin: str, default_nix: str | None) -> None:
    (tmp_path / "a.nix").write_text(FINDING + "# import ./pin.nix\n")
    (tmp_path / "nix").mkdir()
    if pin == "pin.json":  # the pin file reads a prefetch JSON that is a FIFO
        (tmp_path / "pin.nix").write_text("let src = builtins.fromJSON (builtins.readFile ./pin.json); in import (fetchTarball src.url)\n")
    if default_nix is not None:
        (tmp_path / "default.nix").write_text(default_nix)
        (tmp_path / "a.nix").write_text("let pkgs = import ./pin.nix { }; in\n" + FINDING.replace("{ stdenv", "pkgs.callPackage ({ stdenv", 1).rstrip() + ") { }\n")
    os.mkfifo(tmp_path / pin)
    done = cudalint(["check", "a.nix"], tmp_path)
    assert done.returncode == 1 and "CUDA001" in done.stdout, done.stdout + done.stderr


@pytest.mark.parametrize("kind", ["devzero", "fifo"])
def test_a_baseline_that_is_a_device_or_a_fifo_is_an_error(tmp_path: Path, kind: str) -> None:
    (tmp_path / "a.nix").write_text(FINDING)
    if kind == "devzero":
        (tmp_path / "baseline.json").symlink_to("/dev/zero")
    else:
        os.mkfifo(tmp_path / "baseline.json")
    done = cudalint(["check", "--baseline", "baseline.json", "a.nix"], tmp_path)
    assert done.returncode == 2 and "not a regular file" in done.stderr, done.stderr


def fixable_tree(tmp_path: Path) -> Path:
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "ok.nix").write_text(FIXABLE)
    return tree


def test_fix_does_not_follow_a_symlink_out_of_the_tree(tmp_path: Path) -> None:
    tree = fixable_tree(tmp_path)
    outside = tmp_path / "outside.nix"
    outside.write_text(FIXABLE)
    (tree / "link.nix").symlink_to(outside)
    inside = tree / "sub"
    inside.mkdir()
    (inside / "target.nix").write_text(FIXABLE)
    (tree / "inner_link.nix").symlink_to(inside / "target.nix")
    done = cudalint(["check", "--fix", "--select", "CUDA104", "tree"], tmp_path)
    assert outside.read_text() == FIXABLE, "the file outside the checked tree was rewritten"
    assert "outside the checked" in done.stdout + done.stderr, done.stdout + done.stderr
    assert (tree / "ok.nix").read_text() != FIXABLE and (inside / "target.nix").read_text() != FIXABLE
    assert (tree / "link.nix").is_symlink() and (tree / "inner_link.nix").is_symlink()


def test_add_suppressions_does_not_follow_a_symlink_out_of_the_tree(tmp_path: Path) -> None:
    tree = fixable_tree(tmp_path)
    outside = tmp_path / "outside.nix"
    outside.write_text(FIXABLE)
    (tree / "link.nix").symlink_to(outside)
    done = cudalint(["check", "--add-suppressions", "--select", "CUDA104", "tree"], tmp_path)
    assert outside.read_text() == FIXABLE
    assert "outside the checked" in done.stdout + done.stderr, done.stdout + done.stderr
    assert "cudalint: ignore" in (tree / "ok.nix").read_text()


def test_fix_respects_a_read_only_file(tmp_path: Path) -> None:
    tree = fixable_tree(tmp_path)
    locked = tree / "locked.nix"
    locked.write_text(FIXABLE)
    locked.chmod(0o444)
    done = cudalint(["check", "--fix", "--select", "CUDA104", "tree"], tmp_path)
    assert locked.read_text() == FIXABLE and stat.S_IMODE(locked.stat().st_mode) == 0o444
    assert "read-only" in done.stdout + done.stderr, done.stdout + done.stderr


def test_fix_keeps_hard_links(tmp_path: Path) -> None:
    tree = fixable_tree(tmp_path)
    other = tmp_path / "other-name.nix"
    os.link(tree / "ok.nix", other)
    cudalint(["check", "--fix", "--select", "CUDA104", "tree"], tmp_path)
    assert (tree / "ok.nix").read_text() != FIXABLE
    assert os.path.samefile(tree / "ok.nix", other) and other.read_text() == (tree / "ok.nix").read_text()


def test_in_place_writes_keep_the_inode(tmp_path: Path) -> None:
    path = tmp_path / "a.nix"
    path.write_bytes(b"old text\n")
    os.link(path, tmp_path / "b.nix")
    inode = path.stat().st_ino
    files.write_atomic(str(path), b"new\n", b"old text\n")
    assert path.stat().st_ino == inode and (tmp_path / "b.nix").read_bytes() == b"new\n"
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(files.TEMP_SUFFIX)]


_KILLED_WRITER = """
import os, sys, time
from cudalint.frontend import files
def stuck(fd):
    print("ready", flush=True)
    time.sleep(600)
os.fsync = stuck
files.write_atomic(sys.argv[1], b"new\\n", b"old\\n")
"""


def test_a_write_killed_midway_leaves_the_file_whole_and_the_next_run_removes_its_temp_file(tmp_path: Path) -> None:
    path = tmp_path / "a.nix"
    path.write_bytes(b"old\n")
    writer = subprocess.Popen([sys.executable, "-c", _KILLED_WRITER, str(path)], stdout=subprocess.PIPE, text=True)
    try:
        assert writer.stdout is not None and writer.stdout.readline().strip() == "ready"
        os.kill(writer.pid, signal.SIGKILL)
        writer.wait(timeout=PATIENCE)
    finally:
        if writer.poll() is None:
            writer.kill()
    left = [p for p in tmp_path.iterdir() if p.name.endswith(files.TEMP_SUFFIX)]
    assert left and path.read_bytes() == b"old\n"  # the temp file of the killed run; the file untouched
    files.write_atomic(str(path), b"new\n", b"old\n")
    assert path.read_bytes() == b"new\n"
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(files.TEMP_SUFFIX)]


def test_a_temp_file_a_live_run_holds_is_not_removed(tmp_path: Path) -> None:
    import fcntl

    path = tmp_path / "a.nix"
    path.write_bytes(b"old\n")
    held = tmp_path / f".a.nix.live{files.TEMP_SUFFIX}"
    held.write_bytes(b"half")
    with open(held, "rb") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        files.write_atomic(str(path), b"new\n", b"old\n")
        assert held.exists()


def _children(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                found.append(int(entry.name))
    return found


def _alive(pid: int) -> bool:
    try:
        state = (Path("/proc") / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the parent-death signal is Linux's")
def test_workers_die_with_their_parent(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    tree.mkdir()
    for index in range(400):
        (tree / f"f{index}.nix").write_text(FIXABLE * 20)
    run = subprocess.Popen([sys.executable, "-m", "cudalint", "check", "--fix", "--jobs", "2", "tree"], cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    workers: list[int] = []
    try:
        for _ in range(PATIENCE * 10):
            workers = _children(run.pid)
            if len(workers) >= 2 or run.poll() is not None:
                break
            time.sleep(0.1)
        assert len(workers) >= 2, "the run finished before its workers could be seen"
        os.kill(run.pid, signal.SIGKILL)
        run.wait(timeout=PATIENCE)
        for _ in range(PATIENCE * 10):
            if not any(_alive(w) for w in workers):
                break
            time.sleep(0.1)
        assert not any(_alive(w) for w in workers), "workers outlived their parent"
    finally:
        for pid in workers:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass


def test_jobs_are_capped_with_a_notice(tmp_path: Path) -> None:
    (tmp_path / "a.nix").write_text(FINDING)
    done = cudalint(["check", "--jobs", "10000", "a.nix"], tmp_path)
    assert done.returncode == 1 and "notice: --jobs 10000 is more than 4 per CPU" in done.stderr, done.stderr


# -- edges: names that are not UTF-8 or hold a newline, closed streams, bad globs ---------------


def edge_tree(tmp_path: Path) -> Path:
    odd = os.fsencode(str(tmp_path)) + b"/caf\xe9.nix"
    with open(odd, "w") as handle:
        handle.write(FINDING)
    (tmp_path / "new\nline.nix").write_text(FIXABLE)
    return tmp_path


@pytest.mark.parametrize("output_format", ["text", "json", "sarif", "rdjson", "github", "markdown"])
def test_a_name_that_is_not_utf8_is_reported_in_every_format(tmp_path: Path, output_format: str) -> None:
    edge_tree(tmp_path)
    done = subprocess.run([sys.executable, "-m", "cudalint", "check", "--output-format", output_format, "."], cwd=tmp_path, capture_output=True, timeout=PATIENCE)
    assert done.returncode == 1 and b"Traceback" not in done.stderr, done.stderr
    if output_format == "sarif":
        assert b'"uri": "caf%E9.nix"' in done.stdout and b'"uri": "new%0Aline.nix"' in done.stdout


def test_a_diff_of_a_name_with_a_newline_applies_with_git(tmp_path: Path) -> None:
    edge_tree(tmp_path)
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    done = subprocess.run([sys.executable, "-m", "cudalint", "check", "--diff", "--select", "CUDA104", "."], cwd=tmp_path, capture_output=True, timeout=PATIENCE)
    assert b'--- "a/new\\nline.nix"' in done.stdout, done.stdout
    (tmp_path / "fix.patch").write_bytes(done.stdout)
    subprocess.run(["git", "apply", "fix.patch"], cwd=tmp_path, check=True)
    assert (tmp_path / "new\nline.nix").read_text() != FIXABLE


@pytest.mark.parametrize(("closed", "argv"), [(1, ["check", "a.nix"]), (0, ["check", "-"])])
def test_a_closed_stream_is_one_line_and_exit_2(tmp_path: Path, closed: int, argv: list[str]) -> None:
    (tmp_path / "a.nix").write_text(FINDING)
    script = f"import os, sys; os.close({closed}); os.execv(sys.executable, [sys.executable, '-m', 'cudalint', *sys.argv[1:]])"
    done = subprocess.run([sys.executable, "-c", script, *argv], cwd=tmp_path, capture_output=closed == 0, stderr=subprocess.PIPE if closed else None, text=True, timeout=PATIENCE)
    assert done.returncode == 2, done.stderr
    assert done.stderr.count("\n") == 1 and "closed" in done.stderr, done.stderr


def test_an_exclude_that_is_not_a_glob_is_an_error(tmp_path: Path) -> None:
    from cudalint.frontend.config import ConfigError, load_config_file

    (tmp_path / "cudalint.toml").write_text('exclude = ["["]\n')
    with pytest.raises(ConfigError, match="`exclude`: '\\[' is not a glob"):
        load_config_file(str(tmp_path / "cudalint.toml"))
