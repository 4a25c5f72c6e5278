"""The command line: exit codes, stdin, fixes on disk (atomic, style-preserving, refusing when
unsafe to write), --diff, --jobs, output formats, baselines, the rule docs commands and bad input.

Most tests call `cudalint.frontend.cli.main(argv)` in-process; a few run `python -m cudalint`.
Tests run as root, so `chmod 000` does not make a file unreadable: unreadable files are provoked
by mocking `os.open` (in-process) and by FIFOs named `*.nix`."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from cudalint.frontend import files, runner
from cudalint.frontend.cli import main, use_color, with_default_command
from cudalint.lint import fixing

# CUDA001 fires with an unsafe fix; an unused suppression (CUDA901) has a safe fix.
FINDING = """{ stdenv, cudatoolkit }:
stdenv.mkDerivation {
  pname = "x"; src = ./.;
  nativeBuildInputs = [ cudatoolkit ];
}
"""
FIXED = FINDING.replace("{ stdenv, cudatoolkit }:", "{ stdenv, cudaPackages }:").replace("[ cudatoolkit ]", "[ cudaPackages.cuda_nvcc ]")
SAFE = "{ x }:\nx # cudalint: ignore[CUDA001]\n"
SAFE_FIXED = "{ x }:\nx\n"
CLEAN = "{ x }: x\n"
BROKEN = "{ x }:\n[ x # cudalint: ignore[CUDA001]\n"  # a syntax error and a fixable finding
SELECT = ["--select", "CUDA001,CUDA900,CUDA901"]


def run(argv: list[str], cwd: Path, monkeypatch, capsys, stdin: bytes | None = None) -> tuple[int, str, str]:
    monkeypatch.chdir(cwd)
    if stdin is not None:
        import io

        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(stdin)))
    code = main(argv)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def run_process(argv: list[str], cwd: Path, stdin: bytes | None = None, env: dict | None = None) -> subprocess.CompletedProcess:
    environment = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "CUDALINT_OUTPUT_FORMAT")}
    environment.update(env or {})
    return subprocess.run([sys.executable, "-m", "cudalint", *argv], cwd=cwd, input=stdin, capture_output=True, env=environment, timeout=120)


def write(path: Path, text: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text)
    return path


# --------------------------------------------------------------------------------------------
# Exit codes and basics


def test_exit_codes(tmp_path, monkeypatch, capsys) -> None:
    write(tmp_path / "clean.nix", CLEAN)
    code, out, err = run(["check", *SELECT, "clean.nix"], tmp_path, monkeypatch, capsys)
    assert (code, err) == (0, "") and "All checks passed!" in out
    write(tmp_path / "bad.nix", FINDING)
    code, out, _ = run(["check", *SELECT], tmp_path, monkeypatch, capsys)
    assert code == 1 and "bad.nix:4:" in out and "CUDA001" in out
    code, _, _ = run(["check", *SELECT, "--exit-zero"], tmp_path, monkeypatch, capsys)
    assert code == 0
    code, _, err = run(["check", *SELECT, "missing.nix"], tmp_path, monkeypatch, capsys)
    assert code == 2 and "cudalint: missing.nix: error: no such file or directory" in err
    # --exit-zero never hides errors the user must act on
    code, _, _ = run(["check", *SELECT, "--exit-zero", "missing.nix"], tmp_path, monkeypatch, capsys)
    assert code == 2


def test_check_is_the_default_command(tmp_path, monkeypatch, capsys) -> None:
    assert with_default_command([]) == ["check"]
    assert with_default_command(["--fix", "."]) == ["check", "--fix", "."]
    assert with_default_command(["rules"]) == ["rules"]
    write(tmp_path / "bad.nix", FINDING)
    code, out, _ = run([*SELECT], tmp_path, monkeypatch, capsys)
    assert code == 1 and "CUDA001" in out


def test_usage_errors_exit_2(tmp_path, monkeypatch, capsys) -> None:
    code, _, err = run(["check", "--output-format", "xml"], tmp_path, monkeypatch, capsys)
    assert code == 2 and "invalid choice" in err
    code, _, err = run(["check", "--jobs", "many"], tmp_path, monkeypatch, capsys)
    assert code == 2 and "expected a number" in err
    code, _, err = run(["check", "-", "-"], tmp_path, monkeypatch, capsys, stdin=b"")
    assert code == 2 and "only once" in err
    monkeypatch.setenv("CUDALINT_OUTPUT_FORMAT", "yaml")
    code, _, err = run(["check"], tmp_path, monkeypatch, capsys)
    assert code == 2 and "CUDALINT_OUTPUT_FORMAT" in err


def test_version_and_module_entry_point(tmp_path) -> None:
    from cudalint import __version__

    process = run_process(["--version"], tmp_path)
    first, second = process.stdout.decode().strip().splitlines()
    assert process.returncode == 0 and first.startswith(f"cudalint {__version__} (")
    # which commit: this test runs from a git checkout (the source tree), so it is named
    assert re.search(r"commit [0-9a-f]{7,}", first) or not (Path(__file__).resolve().parent.parent / ".git").exists()
    assert "unreleased development version" in first if ".dev" in __version__ else "release" in first
    # which reference set: the releases it models and the nixpkgs its facts were read from
    assert re.fullmatch(
        r"reference set: NixOS \d\d\.\d\d to \d\d\.\d\d and unstable, CUDA [\d.]+ to [\d.]+; nixpkgs facts as of \d{4}-\d\d-\d\d \([0-9a-f]{12}\), dated names checked \d{4}-\d\d-\d\d", second
    )


def test_cli_does_not_import_the_language_server_stack(tmp_path) -> None:
    write(tmp_path / "a.nix", FINDING)
    script = (
        "import sys\n"
        "from cudalint.frontend.cli import main\n"
        "main(['check', '--fix', '--unsafe-fixes', '--quiet', '.'])\n"
        "main(['rules'])\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('pygls', 'lsprotocol', 'cudalint.server') or m.startswith('cudalint.server'))\n"
        "sys.stderr.write(repr(bad))\n"
    )
    process = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True, timeout=120)
    assert process.stderr.decode().strip().endswith("[]"), process.stderr.decode()


def test_subprocess_run_with_exit_codes(tmp_path) -> None:
    write(tmp_path / "a.nix", FINDING)
    process = run_process(["check", *SELECT, "--output-format", "json"], tmp_path)
    assert process.returncode == 1
    [finding] = json.loads(process.stdout)
    assert finding["code"] == "CUDA001" and finding["filename"] == "a.nix"


def test_server_transport_options_exclude_each_other(tmp_path, monkeypatch, capsys) -> None:
    code, _, err = run(["server", "--stdio", "--tcp", "2087"], tmp_path, monkeypatch, capsys)
    assert code == 2 and "--stdio and --tcp" in err


# --------------------------------------------------------------------------------------------
# rules / rule


def test_rules_and_rule(tmp_path, monkeypatch, capsys) -> None:
    code, out, _ = run(["rules"], tmp_path, monkeypatch, capsys)
    assert code == 0 and "CUDA001" in out and "runfile-toolkit" in out
    code, out, _ = run(["rule", "CUDA001"], tmp_path, monkeypatch, capsys)
    assert code == 0 and "runfile" in out and "\x1b[" not in out
    code, out2, _ = run(["rule", "runfile-toolkit"], tmp_path, monkeypatch, capsys)
    assert code == 0 and out2 == out
    code, out, _ = run(["rule", "cuda001", "--color", "always"], tmp_path, monkeypatch, capsys)
    assert code == 0 and "\x1b[" in out


def test_unknown_rule_suggests_one(tmp_path, monkeypatch, capsys) -> None:
    code, out, err = run(["rule", "CUDA0001"], tmp_path, monkeypatch, capsys)
    assert code == 2 and out == ""
    assert "unknown rule `CUDA0001` (did you mean `CUDA001`?)" in err
    code, _, err = run(["rule", "runfile-tolkit"], tmp_path, monkeypatch, capsys)
    assert code == 2 and "did you mean `runfile-toolkit`?" in err


# --------------------------------------------------------------------------------------------
# Output options


def test_output_formats(tmp_path, monkeypatch, capsys) -> None:
    write(tmp_path / "a.nix", FINDING)
    code, out, _ = run(["check", *SELECT, "--output-format", "json"], tmp_path, monkeypatch, capsys)
    assert code == 1 and json.loads(out)[0]["location"] == {"row": 4, "column": 25}
    code, out, _ = run(["check", *SELECT, "--output-format", "sarif"], tmp_path, monkeypatch, capsys)
    assert code == 1 and json.loads(out)["version"] == "2.1.0"
    code, out, _ = run(["check", *SELECT, "--output-format", "github"], tmp_path, monkeypatch, capsys)
    assert code == 1 and out.startswith("::warning ")
    monkeypatch.setenv("CUDALINT_OUTPUT_FORMAT", "json")
    code, out, _ = run(["check", *SELECT], tmp_path, monkeypatch, capsys)
    assert json.loads(out)[0]["code"] == "CUDA001"


def test_statistics(tmp_path, monkeypatch, capsys) -> None:
    write(tmp_path / "a.nix", FINDING)
    write(tmp_path / "b.nix", FINDING)
    code, out, _ = run(["check", *SELECT, "--statistics"], tmp_path, monkeypatch, capsys)
    rows, total = out.splitlines()[:-3], out.splitlines()[-1]
    assert code == 1 and [row.split() for row in rows] == [["2", "CUDA001", "[-]", "runfile-toolkit"]]
    assert out.splitlines()[-3:-1] == ["2  total", "[*] every finding fixable with --fix, [-] some need --unsafe-fixes or have no fix, [ ] no fix"]
    assert total.startswith("Fixes cut NVIDIA archive downloads from ")
    code, out, _ = run(["check", *SELECT, "--statistics", "--output-format", "json"], tmp_path, monkeypatch, capsys)
    assert code == 1 and json.loads(out) == [{"code": "CUDA001", "name": "runfile-toolkit", "count": 2, "fixable": "some"}]
    code, _, err = run(["check", *SELECT, "--statistics", "--output-format", "sarif"], tmp_path, monkeypatch, capsys)
    assert code == 2 and "--statistics prints text or json, not sarif" in err


def test_color(tmp_path, monkeypatch, capsys) -> None:
    write(tmp_path / "a.nix", FINDING)
    _, out, _ = run(["check", *SELECT], tmp_path, monkeypatch, capsys)
    assert "\x1b[" not in out  # auto: not a terminal
    _, out, _ = run(["check", *SELECT, "--color", "always"], tmp_path, monkeypatch, capsys)
    assert "\x1b[" in out

    class Tty:
        def isatty(self) -> bool:
            return True

    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.delenv("TERM", raising=False)
    assert use_color("auto", Tty())
    monkeypatch.setenv("NO_COLOR", "1")
    assert not use_color("auto", Tty())
    assert use_color("always", Tty())


def test_quiet_prints_findings_only(tmp_path, monkeypatch, capsys) -> None:
    write(tmp_path / "a.nix", FINDING)
    os.mkfifo(tmp_path / "pipe.nix")
    code, out, err = run(["check", *SELECT, "--quiet"], tmp_path, monkeypatch, capsys)
    assert code == 1 and "CUDA001" in out and "Found" not in out and err == ""
    write(tmp_path / "a.nix", CLEAN)
    code, out, err = run(["check", *SELECT, "-q"], tmp_path, monkeypatch, capsys)
    assert (code, out, err) == (0, "", "")


def test_progress_only_on_a_terminal_after_a_delay() -> None:
    import io

    from cudalint.frontend.cli import Progress

    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    stream = Tty()
    progress = Progress(100, stream, enabled=True)
    progress(1)
    assert stream.getvalue() == ""  # a short run shows nothing
    progress.start -= 10
    progress(50)
    assert "checked 50/100 files" in stream.getvalue()
    progress.clear()
    assert stream.getvalue().endswith("\r\x1b[K")
    quiet = io.StringIO()
    disabled = Progress(100, quiet, enabled=False)
    disabled.start -= 10
    disabled(50)
    assert quiet.getvalue() == ""


# --------------------------------------------------------------------------------------------
# stdin


def test_stdin_with_filename_uses_its_config_and_name(tmp_path, monkeypatch, capsys) -> None:
    write(tmp_path / "pkgs" / "cudalint.toml", 'select = ["CUDA001"]\n')
    code, out, _ = run(["check", "--output-format", "json", "--stdin-filename", "pkgs/x.nix", "-"], tmp_path, monkeypatch, capsys, stdin=FINDING.encode())
    assert code == 1
    [finding] = json.loads(out)
    assert finding["filename"] == os.path.join("pkgs", "x.nix")
    # --stdin-filename alone implies `-`
    code, out, _ = run(["check", "--output-format", "json", "--stdin-filename", "pkgs/x.nix"], tmp_path, monkeypatch, capsys, stdin=FINDING.encode())
    assert code == 1 and len(json.loads(out)) == 1
    code, out, _ = run(["check", *SELECT, "-"], tmp_path, monkeypatch, capsys, stdin=CLEAN.encode())
    assert code == 0


def test_stdin_fix_writes_the_fixed_text_to_stdout(tmp_path) -> None:
    process = run_process(["check", *SELECT, "--fix", "--unsafe-fixes", "-"], tmp_path, stdin=FINDING.encode())
    assert process.stdout.decode() == FIXED
    assert process.returncode == 0
    assert b"1 fixed" in process.stderr  # the report goes to stderr
    process = run_process(["check", *SELECT, "--diff", "-"], tmp_path, stdin=SAFE.encode())
    assert process.returncode == 1 and b"-x # cudalint: ignore[CUDA001]" in process.stdout


def test_stdin_bad_input(tmp_path) -> None:
    process = run_process(["check", "-"], tmp_path, stdin=b"\xff\xfe")
    assert process.returncode == 2 and b"cudalint: -: error: not valid UTF-8" in process.stderr


# --------------------------------------------------------------------------------------------
# Fixes on disk


def test_fix_applies_safe_fixes_and_reports_what_is_left(tmp_path, monkeypatch, capsys) -> None:
    a = write(tmp_path / "a.nix", FINDING + SAFE.replace("{ x }:\n", "# trailing\n"))
    code, out, _ = run(["check", *SELECT, "--fix"], tmp_path, monkeypatch, capsys)
    # the safe fix is applied, the unsafe one only reported
    assert "cudalint: ignore" not in a.read_text() and "cudatoolkit ]" in a.read_text()
    assert code == 1 and "1 fixed" in out and "CUDA001" in out and "CUDA901" not in out
    code, out, _ = run(["check", *SELECT, "--fix", "--unsafe-fixes"], tmp_path, monkeypatch, capsys)
    assert code == 0 and "cuda_nvcc" in a.read_text() and "1 fixed" in out


def test_fix_twice_changes_nothing_the_second_time(tmp_path, monkeypatch, capsys) -> None:
    fixture = Path(__file__).parent / "fixtures" / "rules" / "CUDA001" / "fire_formal_in_inputs.nix"
    a = write(tmp_path / "a.nix", fixture.read_text())
    run(["check", "--fix", "--unsafe-fixes"], tmp_path, monkeypatch, capsys)
    once = a.read_bytes()
    mtime = os.stat(a).st_mtime_ns
    code, out, _ = run(["check", "--fix", "--unsafe-fixes"], tmp_path, monkeypatch, capsys)
    assert a.read_bytes() == once and os.stat(a).st_mtime_ns == mtime
    assert "fixed" not in out
    code, out, _ = run(["check", "--diff", "--unsafe-fixes"], tmp_path, monkeypatch, capsys)
    assert code == 0 and out == ""


@pytest.mark.parametrize("mode", [0o644, 0o600, 0o755])
def test_fix_keeps_the_file_mode(tmp_path, monkeypatch, capsys, mode: int) -> None:
    a = write(tmp_path / "a.nix", SAFE)
    os.chmod(a, mode)
    run(["check", *SELECT, "--fix"], tmp_path, monkeypatch, capsys)
    assert a.read_text() == SAFE_FIXED and stat.S_IMODE(os.stat(a).st_mode) == mode
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.nix"]  # no temp file left


def test_fix_keeps_crlf_bom_and_missing_final_newline(tmp_path, monkeypatch, capsys) -> None:
    original = b"\xef\xbb\xbf" + FINDING.replace("\n", "\r\n").rstrip("\r\n").encode()
    a = write(tmp_path / "a.nix", original)
    code, _, _ = run(["check", *SELECT, "--fix", "--unsafe-fixes"], tmp_path, monkeypatch, capsys)
    data = a.read_bytes()
    assert code == 0
    assert data.startswith(b"\xef\xbb\xbf")
    assert data.count(b"\n") == data.count(b"\r\n") == original.count(b"\r\n")
    assert not data.endswith(b"\n")
    assert data.decode("utf-8-sig").replace("\r\n", "\n") + "\n" == FIXED


def test_fix_keeps_a_final_newline_and_lf(tmp_path, monkeypatch, capsys) -> None:
    a = write(tmp_path / "a.nix", FINDING)
    run(["check", *SELECT, "--fix", "--unsafe-fixes"], tmp_path, monkeypatch, capsys)
    assert a.read_text() == FIXED and b"\r" not in a.read_bytes()


def test_keep_style_normalises_inserted_newlines() -> None:
    assert runner.keep_style("a\r\nb\r\n", "a\r\nx\ny\r\nb\r\n") == "a\r\nx\r\ny\r\nb\r\n"
    assert runner.keep_style("a\r\nb", "a\r\nb\n") == "a\r\nb"  # no final newline stays so
    assert runner.keep_style("a\nb\n", "a\nb") == "a\nb\n"  # a final newline stays so
    assert runner.keep_style("a\r\nb\r\n", "a\r\nb") == "a\r\nb\r\n"
    assert runner.keep_style("a\nb\r\n", "a\nx\nb\r\n") == "a\nx\nb\r\n"  # mixed endings: left alone


def test_fix_refuses_when_the_file_changed_meanwhile(tmp_path, monkeypatch, capsys) -> None:
    a = write(tmp_path / "a.nix", SAFE)
    real_fix_file = fixing.fix_file

    def fix_file_while_someone_edits(source, *args, **kwargs):
        outcome = real_fix_file(source, *args, **kwargs)
        a.write_text(SAFE + "# edited meanwhile\n")
        return outcome

    monkeypatch.setattr(fixing, "fix_file", fix_file_while_someone_edits)
    code, out, err = run(["check", *SELECT, "--fix", "--jobs", "1"], tmp_path, monkeypatch, capsys)
    assert code == 2
    assert "cudalint: a.nix: error: not fixed: the file changed on disk since it was read" in err
    assert a.read_text() == SAFE + "# edited meanwhile\n"
    assert "CUDA901" in out  # the findings of what was read are still reported


def test_fix_does_not_write_files_with_syntax_errors(tmp_path, monkeypatch, capsys) -> None:
    a = write(tmp_path / "a.nix", BROKEN)
    mtime = os.stat(a).st_mtime_ns
    code, out, err = run(["check", *SELECT, "--fix"], tmp_path, monkeypatch, capsys)
    assert a.read_text() == BROKEN and os.stat(a).st_mtime_ns == mtime
    assert code == 1 and "CUDA900" in out
    assert "a.nix: warning: not fixed: the file has syntax errors" in err
    code, out, _ = run(["check", *SELECT, "--diff"], tmp_path, monkeypatch, capsys)
    assert out == "" and code == 0


def test_fix_never_writes_text_that_gained_syntax_errors(tmp_path, monkeypatch, capsys) -> None:
    """fix_file guarantees fixes never add syntax errors; the runner checks it again."""
    a = write(tmp_path / "a.nix", SAFE)
    real_fix_file = fixing.fix_file

    def breaking_fix_file(source, settings, unsafe=False, first=None, scope=None):
        outcome = real_fix_file(source, settings, unsafe, first, scope)
        outcome.text = outcome.text + "[ unclosed\n"
        return outcome

    monkeypatch.setattr(fixing, "fix_file", breaking_fix_file)
    code, _, err = run(["check", *SELECT, "--fix", "--jobs", "1"], tmp_path, monkeypatch, capsys)
    assert code == 2 and "would not parse" in err and a.read_text() == SAFE


def test_fix_write_failure_is_an_error(tmp_path, monkeypatch, capsys) -> None:
    a = write(tmp_path / "a.nix", SAFE)

    def no_space(src, dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(files.os, "replace", no_space)
    code, _, err = run(["check", *SELECT, "--fix", "--jobs", "1"], tmp_path, monkeypatch, capsys)
    assert code == 2 and "a.nix: error: not fixed: cannot write: No space left on device" in err
    assert a.read_text() == SAFE and sorted(p.name for p in tmp_path.iterdir()) == ["a.nix"]


def test_fix_through_a_symlink_writes_the_target(tmp_path, monkeypatch, capsys) -> None:
    real = write(tmp_path / "real" / "a.nix", SAFE)
    os.symlink(real, tmp_path / "link.nix")
    run(["check", *SELECT, "--fix", "link.nix"], tmp_path, monkeypatch, capsys)
    assert (tmp_path / "link.nix").is_symlink() and real.read_text() == SAFE_FIXED


def test_exit_non_zero_on_fix(tmp_path, monkeypatch, capsys) -> None:
    write(tmp_path / "a.nix", SAFE)
    code, _, _ = run(["check", *SELECT, "--fix", "--exit-non-zero-on-fix"], tmp_path, monkeypatch, capsys)
    assert code == 1
    code, _, _ = run(["check", *SELECT, "--fix", "--exit-non-zero-on-fix"], tmp_path, monkeypatch, capsys)
    assert code == 0


# --------------------------------------------------------------------------------------------
# --diff


def test_diff_writes_nothing_and_exits_1(tmp_path, monkeypatch, capsys) -> None:
    a = write(tmp_path / "a.nix", FINDING)
    b = write(tmp_path / "sub" / "b.nix", SAFE.rstrip("\n"))
    before = {p: (p.read_bytes(), os.stat(p).st_mtime_ns) for p in (a, b)}
    code, out, err = run(["check", *SELECT, "--diff", "--unsafe-fixes"], tmp_path, monkeypatch, capsys)
    assert code == 1
    assert {p: (p.read_bytes(), os.stat(p).st_mtime_ns) for p in (a, b)} == before
    assert out.startswith("--- a/a.nix\n+++ b/a.nix\n")
    assert "+  nativeBuildInputs = [ cudaPackages.cuda_nvcc ];\n" in out
    assert f"--- a/sub{os.sep}b.nix" in out and "\\ No newline at end of file\n" in out
    assert "Would fix 2 findings." in err
    # --fix --diff is --diff
    code, out2, _ = run(["check", *SELECT, "--fix", "--diff", "--unsafe-fixes"], tmp_path, monkeypatch, capsys)
    assert code == 1 and out2 == out and {p: (p.read_bytes(), os.stat(p).st_mtime_ns) for p in (a, b)} == before
    # no fix available: no diff, exit 0 (findings left do not count with --diff)
    code, out, _ = run(["check", *SELECT, "--diff", "a.nix"], tmp_path, monkeypatch, capsys)
    assert (code, out) == (0, "")


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_diff_applies_with_git_apply(tmp_path, monkeypatch, capsys) -> None:
    original = FINDING.replace("\n", "\r\n").rstrip("\r\n")
    write(tmp_path / "a.nix", original.encode())
    write(tmp_path / "b.nix", SAFE)
    _, out, _ = run(["check", *SELECT, "--diff", "--unsafe-fixes"], tmp_path, monkeypatch, capsys)
    (tmp_path / "fix.patch").write_bytes(out.encode())
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    subprocess.run(["git", "apply", "fix.patch"], cwd=tmp_path, check=True)
    assert (tmp_path / "b.nix").read_text() == SAFE_FIXED
    data = (tmp_path / "a.nix").read_bytes()
    assert data.replace(b"\r\n", b"\n") + b"\n" == FIXED.encode() and data.count(b"\n") == data.count(b"\r\n")


# --------------------------------------------------------------------------------------------
# --jobs


def _many_files(root: Path, count: int) -> None:
    fixture = Path(__file__).parent / "fixtures" / "rules" / "CUDA001" / "fire_formal_in_inputs.nix"
    texts = [FINDING, SAFE, CLEAN, BROKEN, fixture.read_text()]
    for i in range(count):
        write(root / f"d{i % 7}" / f"f{i}.nix", texts[i % len(texts)])
    write(root / "d0" / "binary.nix", b"\0\0")


def test_jobs_give_the_same_output(tmp_path) -> None:
    count = runner.PARALLEL_THRESHOLD * 3
    _many_files(tmp_path, count)
    outputs = {}
    for jobs in ("1", "2", "3"):
        for output_format in ("text", "json"):
            process = run_process(["check", "--jobs", jobs, "--output-format", output_format], tmp_path)
            outputs[jobs, output_format] = (process.returncode, process.stdout, process.stderr)
    for output_format in ("text", "json"):
        assert outputs["1", output_format] == outputs["2", output_format] == outputs["3", output_format]
        assert outputs["1", output_format][0] == 2  # the binary file
    names = [entry["filename"] for entry in json.loads(outputs["1", "json"][1])]
    assert names == sorted(names, key=lambda n: n.split(os.sep))


def test_jobs_fix_the_same(tmp_path) -> None:
    count = runner.PARALLEL_THRESHOLD * 2
    one, two = tmp_path / "one", tmp_path / "two"
    _many_files(one, count)
    _many_files(two, count)
    first = run_process(["check", "--fix", "--unsafe-fixes", "--jobs", "1"], one)
    second = run_process(["check", "--fix", "--unsafe-fixes", "--jobs", "2"], two)
    assert (first.returncode, first.stdout) == (second.returncode, second.stdout)
    for path in one.rglob("*.nix"):
        assert path.read_bytes() == (two / path.relative_to(one)).read_bytes()


# --------------------------------------------------------------------------------------------
# Baselines


def test_baseline_round_trip(tmp_path, monkeypatch, capsys) -> None:
    write(tmp_path / "a.nix", FINDING)
    code, _, err = run(["check", *SELECT, "--write-baseline", "baseline.json"], tmp_path, monkeypatch, capsys)
    assert code == 0 and (tmp_path / "baseline.json").exists() and "1 finding" in err
    code, out, err = run(["check", *SELECT, "--baseline", "baseline.json"], tmp_path, monkeypatch, capsys)
    assert code == 0 and "All checks passed!" in out and "1 finding hidden by the baseline" in err
    write(tmp_path / "b.nix", FINDING)  # a new finding
    code, out, _ = run(["check", *SELECT, "--baseline", "baseline.json", "--output-format", "json"], tmp_path, monkeypatch, capsys)
    assert code == 1 and [e["filename"] for e in json.loads(out)] == ["b.nix"]


def test_bad_baseline_is_an_error(tmp_path, monkeypatch, capsys) -> None:
    write(tmp_path / "a.nix", CLEAN)
    code, _, err = run(["check", "--baseline", "nope.json"], tmp_path, monkeypatch, capsys)
    assert code == 2 and "nope.json" in err
    write(tmp_path / "broken.json", "{")
    code, _, err = run(["check", "--baseline", "broken.json"], tmp_path, monkeypatch, capsys)
    assert code == 2 and "broken.json" in err


# --------------------------------------------------------------------------------------------
# Bad input


def _bad_input_directory(root: Path) -> dict[str, bytes]:
    """A directory of everything that can go wrong with a file, plus files that are fine."""
    contents = {
        "good.nix": SAFE.encode(),
        "finding.nix": FINDING.encode(),
        "empty.nix": b"",
        "binary.nix": b"\x7fELF\x02\x01\x01\x00\x00\x00",
        "latin1.nix": "{ x }:\n# caf\u00e9\nx\n".encode("latin-1"),
        "unreadable.nix": SAFE.encode(),
        "big.nix": b"# padding\n" * (2 * 1024 * 1024),  # 20 MB, over the 10 MB default limit
        "broken.nix": BROKEN.encode(),
        "bom.nix": b"\xef\xbb\xbf" + SAFE.encode(),
    }
    for name, data in contents.items():
        write(root / name, data)
    os.symlink("loop-b.nix", root / "loop-a.nix")
    os.symlink("loop-a.nix", root / "loop-b.nix")
    os.symlink(".", root / "self")  # a directory symlink loop
    os.mkfifo(root / "fifo.nix")
    return contents


def _deny_open(monkeypatch, name: str) -> None:
    """Make one file unreadable: tests run as root, so chmod 000 would not stop the read."""
    real_open = os.open

    def open_(path, *args, **kwargs):
        if os.path.basename(os.fspath(path)) == name:
            raise PermissionError(13, "Permission denied", os.fspath(path))
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr(files.os, "open", open_)


def test_bad_input_directory(tmp_path, monkeypatch, capsys) -> None:
    contents = _bad_input_directory(tmp_path)
    _deny_open(monkeypatch, "unreadable.nix")
    code, out, err = run(["check", *SELECT, "--fix", "--jobs", "1"], tmp_path, monkeypatch, capsys)
    lines = err.splitlines()

    def message(name: str) -> str:
        found = [line for line in lines if line.startswith(f"cudalint: {name}: ")]
        assert len(found) == 1, (name, err)
        return found[0]

    # the user must act on these: errors, exit 2
    assert "error: binary file (NUL byte at byte offset 7)" in message("binary.nix")
    assert "error: not valid UTF-8: invalid byte 0xe9 at byte offset 12 (line 2, column 6)" in message("latin1.nix")
    assert "error: cannot read: permission denied" in message("unreadable.nix")
    # found while walking and not Nix code to check: warnings
    assert "warning: skipped: 20 MB is larger than the limit of 10 MB" in message("big.nix")
    assert "warning: cannot read: symlink loop" in message("loop-a.nix")
    assert "warning: not a regular file" in message("fifo.nix")
    assert "warning: not fixed: the file has syntax errors" in message("broken.nix")
    assert code == 2
    # the rest was still checked and fixed
    assert (tmp_path / "good.nix").read_text() == SAFE_FIXED
    assert (tmp_path / "bom.nix").read_bytes() == b"\xef\xbb\xbf" + SAFE_FIXED.encode()
    assert "finding.nix:4:" in out and "CUDA001" in out
    # nothing written to files that could not be read, decoded or parsed
    for name in ("binary.nix", "latin1.nix", "unreadable.nix", "big.nix", "broken.nix", "empty.nix"):
        assert (tmp_path / name).read_bytes() == contents[name], name
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.endswith(".cudalint-tmp")) == []


def test_bad_input_only_warnings_exit_by_findings(tmp_path, monkeypatch, capsys) -> None:
    """Problems found while walking that need nothing from the user keep the exit code."""
    _bad_input_directory(tmp_path)
    for name in ("binary.nix", "latin1.nix", "finding.nix", "good.nix", "broken.nix", "bom.nix", "unreadable.nix"):
        (tmp_path / name).unlink()
    code, _, err = run(["check", *SELECT], tmp_path, monkeypatch, capsys)
    assert code == 0 and "big.nix: warning" in err and "loop-a.nix: warning" in err


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("big.nix", "error: skipped: 20 MB is larger than the limit of 10 MB"),
        ("loop-a.nix", "error: cannot read: symlink loop"),
        ("fifo.nix", "error: cannot read: a FIFO, not a regular file"),
        ("empty.nix", None),
    ],
)
def test_bad_input_named_explicitly(tmp_path, monkeypatch, capsys, name: str, expected: str | None) -> None:
    _bad_input_directory(tmp_path)
    code, _, err = run(["check", *SELECT, name], tmp_path, monkeypatch, capsys)
    if expected is None:
        assert (code, err) == (0, "")
    else:
        assert code == 2 and f"cudalint: {name}: {expected}" in err


def test_bad_input_directory_in_parallel(tmp_path) -> None:
    """The same messages from worker processes (no mocking across processes: no unreadable.nix)."""
    _bad_input_directory(tmp_path)
    (tmp_path / "unreadable.nix").unlink()
    for i in range(runner.PARALLEL_THRESHOLD):
        write(tmp_path / "more" / f"m{i}.nix", FINDING)
    serial = run_process(["check", *SELECT, "--jobs", "1"], tmp_path)
    parallel = run_process(["check", *SELECT, "--jobs", "2"], tmp_path)
    assert serial.returncode == parallel.returncode == 2
    assert serial.stdout == parallel.stdout and serial.stderr == parallel.stderr
    assert b"binary.nix: error" in parallel.stderr and b"big.nix: warning" in parallel.stderr


def test_file_named_nix_that_is_a_directory_is_walked(tmp_path, monkeypatch, capsys) -> None:
    write(tmp_path / "x.nix" / "inner.nix", FINDING)
    code, out, _ = run(["check", *SELECT, "x.nix"], tmp_path, monkeypatch, capsys)
    assert code == 1 and f"x.nix{os.sep}inner.nix:4:" in out


def test_explicit_files_are_checked_even_if_not_nix_or_ignored(tmp_path, monkeypatch, capsys) -> None:
    write(tmp_path / ".gitignore", "ignored.nix\n")
    write(tmp_path / "ignored.nix", FINDING)
    write(tmp_path / "default.txt", FINDING)
    code, out, _ = run(["check", *SELECT, "--output-format", "json"], tmp_path, monkeypatch, capsys)
    assert code == 0 and json.loads(out) == []
    code, out, _ = run(["check", *SELECT, "--output-format", "json", "ignored.nix", "default.txt"], tmp_path, monkeypatch, capsys)
    assert code == 1 and sorted(e["filename"] for e in json.loads(out)) == ["default.txt", "ignored.nix"]
    code, out, _ = run(["check", *SELECT, "--output-format", "json", "--no-respect-gitignore"], tmp_path, monkeypatch, capsys)
    assert [e["filename"] for e in json.loads(out)] == ["ignored.nix"]


def test_same_file_named_twice_is_checked_once(tmp_path, monkeypatch, capsys) -> None:
    write(tmp_path / "a.nix", FINDING)
    code, out, _ = run(["check", *SELECT, "--output-format", "json", "a.nix", ".", "./a.nix"], tmp_path, monkeypatch, capsys)
    assert len(json.loads(out)) == 1


def test_a_file_named_and_found_in_a_directory_counts_as_named(tmp_path, monkeypatch, capsys) -> None:
    write(tmp_path / "cudalint.toml", "max-file-size = 10\n")
    write(tmp_path / "big.nix", FINDING)
    code, _, err = run(["check", *SELECT, ".", "big.nix"], tmp_path, monkeypatch, capsys)
    assert code == 2 and "cudalint: big.nix: error: skipped:" in err


def test_results_cross_process_boundaries(tmp_path) -> None:
    """What a worker returns pickles without tree-sitter objects and comes back equal."""
    import pickle

    from cudalint.frontend.config import Overrides, Resolver

    path = write(tmp_path / "a.nix", FINDING)
    settings = Resolver(Overrides(), cwd=str(tmp_path)).settings_for(str(path))
    processed = runner.process_task(runner.Task(str(path), "a.nix", 0, True), settings, runner.DIFF)
    copy = pickle.loads(pickle.dumps(processed))
    assert copy.result.diagnostics == processed.result.diagnostics and copy.result.diagnostics
    assert copy.result.source.text == processed.result.source.text
    assert copy.result.source.data == processed.result.source.data
    assert copy.result.source.location(len(FINDING) - 1) == processed.result.source.location(len(FINDING) - 1)
    assert copy.result.diff == processed.result.diff


# --fail-on / `fail-on`: info findings are advice and do not fail a run by default.
INFO_ONLY = (
    '{ stdenv, cudaPackages }:\nstdenv.mkDerivation {\n  pname = "k";\n  version = "1";\n  src = ./.;\n'
    '  nativeBuildInputs = [ cudaPackages.cuda_nvcc ];\n  cmakeFlags = [ "-DCMAKE_CUDA_ARCHITECTURES=86" ];\n}\n'
)


@pytest.mark.parametrize(
    ("argv", "config", "status"),
    [
        ([], "", 0),  # the default level is warning
        (["--fail-on", "info"], "", 1),
        (["--fail-on", "warning"], "", 0),
        ([], 'fail-on = "info"\n', 1),
        (["--fail-on", "error"], 'fail-on = "info"\n', 0),  # the command line wins
        (["--exit-zero"], 'fail-on = "info"\n', 0),
    ],
)
def test_fail_on_level(argv, config, status, tmp_path, monkeypatch, capsys) -> None:
    write(tmp_path / "cudalint.toml", config + 'select = ["CUDA305"]\n')
    write(tmp_path / "pkg.nix", INFO_ONLY)
    code, out, _ = run(["check", "--jobs", "1", *argv, "pkg.nix"], tmp_path, monkeypatch, capsys)
    assert "CUDA305" in out  # the finding is reported whatever the level
    assert code == status


def test_fail_on_counts_warnings_and_errors(tmp_path, monkeypatch, capsys) -> None:
    write(tmp_path / "pkg.nix", '{ cudatoolkit, stdenv }:\nstdenv.mkDerivation { pname = "k"; version = "1"; buildInputs = [ cudatoolkit ]; }\n')
    assert run(["check", "--isolated", "--jobs", "1", "pkg.nix"], tmp_path, monkeypatch, capsys)[0] == 1
    assert run(["check", "--isolated", "--jobs", "1", "--fail-on", "error", "pkg.nix"], tmp_path, monkeypatch, capsys)[0] == 0


def test_fail_on_config_is_validated(tmp_path, monkeypatch, capsys) -> None:
    write(tmp_path / "cudalint.toml", 'fail-on = "warnings"\n')
    write(tmp_path / "pkg.nix", INFO_ONLY)
    code, _, err = run(["check", "pkg.nix"], tmp_path, monkeypatch, capsys)
    assert code == 2 and "`fail-on` must be one of 'error', 'warning', 'info', 'never', not 'warnings'" in err


def test_a_file_error_is_printed_once_and_escaped(tmp_path, monkeypatch, capsys) -> None:
    code, out, err = run(["check", "--isolated", "missing\x1b[31m.nix"], tmp_path, monkeypatch, capsys)
    assert code == 2
    assert "missing" not in out and out.strip().endswith("No findings; 1 file could not be checked.")
    assert err.count("missing") == 1 and "\x1b" not in err


def test_diff_says_which_fixes_were_revealed_by_others(tmp_path, monkeypatch, capsys) -> None:
    example = Path(__file__).resolve().parent.parent / "examples" / "legacy-cuda-package.nix"
    write(tmp_path / "pkg.nix", example.read_text(encoding="utf-8"))
    _, out, _ = run(["check", "--isolated", "--unsafe-fixes", "--jobs", "1", "pkg.nix"], tmp_path, monkeypatch, capsys)
    fixable = int(re.search(r"(\d+) fixable with --fix", out).group(1))
    _, _, err = run(["check", "--isolated", "--unsafe-fixes", "--diff", "--jobs", "1", "pkg.nix"], tmp_path, monkeypatch, capsys)
    fixed = int(re.search(r"Would fix (\d+) findings", err).group(1))
    revealed = re.search(r"\((\d+) of them appeared once other fixes were applied\)", err)
    assert fixed == fixable + (int(revealed.group(1)) if revealed else 0)


def test_show_files_lists_what_would_be_checked(tmp_path, monkeypatch, capsys) -> None:
    write(tmp_path / "cudalint.toml", 'exclude = ["vendor/"]\n')
    write(tmp_path / "a.nix", FINDING)
    write(tmp_path / "sub" / "b.nix", "{ }: 1\n")
    write(tmp_path / "vendor" / "c.nix", FINDING)
    write(tmp_path / "ignored" / "d.nix", FINDING)
    write(tmp_path / ".gitignore", "ignored/\n")
    (tmp_path / ".git").mkdir()
    code, out, _ = run(["check", "--show-files", "."], tmp_path, monkeypatch, capsys)
    assert code == 0 and out.splitlines() == ["a.nix", "sub/b.nix"]


def test_show_settings_describes_what_applies(tmp_path, monkeypatch, capsys) -> None:
    write(tmp_path / "cudalint.toml", 'select = ["CUDA1"]\nignore = ["CUDA101"]\nnixpkgs = "24.05"\nfail-on = "error"\n')
    write(tmp_path / "a.nix", FINDING)
    code, out, _ = run(["check", "--show-settings", "--unsafe-fixes", "a.nix"], tmp_path, monkeypatch, capsys)
    settings = dict(line.split(":", 1) for line in out.splitlines())
    assert code == 0 and settings["file"].strip() == "a.nix" and settings["configuration"].strip() == "cudalint.toml"
    assert settings["target nixpkgs"].strip() == "24.05 (cudalint.toml nixpkgs)"
    assert "CUDA102" in settings["rules"] and "CUDA101" not in settings["rules"] and "CUDA001" not in settings["rules"]
    assert settings["unsafe fixes"].strip() == "on" and settings["fail on"].strip() == "error"


def _bash_complete(script: Path, words: list[str]) -> list[str]:
    """What bash offers after `words` (the last one being completed), with the generated script loaded."""
    bash = shutil.which("bash")
    assert bash is not None
    array = " ".join(shlex.quote(w) for w in words)
    program = (
        f"source {shlex.quote(str(script))}; COMP_WORDS=({array}); COMP_CWORD={len(words) - 1}; "
        'COMP_LINE="${COMP_WORDS[*]}"; COMP_POINT=${#COMP_LINE}; _shtab_cudalint; printf "%s\\n" "${COMPREPLY[@]}"'
    )
    return subprocess.run([bash, "-c", program], capture_output=True, text=True, check=True).stdout.split()


def test_bash_completion_offers_commands_options_and_choices(tmp_path, monkeypatch, capsys) -> None:
    code, script, _ = run(["completion", "bash"], tmp_path, monkeypatch, capsys)
    assert code == 0
    path = write(tmp_path / "cudalint.bash", script)
    assert {"check", "rules", "rule", "server", "completion"} <= set(_bash_complete(path, ["cudalint", ""]))
    assert "--output-format" in _bash_complete(path, ["cudalint", "check", "--out"])
    assert set(_bash_complete(path, ["cudalint", "check", "--output-format", ""])) == {"text", "concise", "json", "sarif", "github", "rdjson", "markdown"}


@pytest.mark.parametrize("shell", ["zsh", "fish", "tcsh", "powershell"])
def test_completion_scripts_for_other_shells(shell, tmp_path, monkeypatch, capsys) -> None:
    code, script, _ = run(["completion", shell], tmp_path, monkeypatch, capsys)
    assert code == 0 and "--output-format" in script and "completion" in script
    checker = {"zsh": ["zsh", "-n"], "fish": ["fish", "--no-execute"]}.get(shell)
    if checker and shutil.which(checker[0]):  # a syntax check where the shell is installed
        assert subprocess.run([*checker, str(write(tmp_path / f"cudalint.{shell}", script))], capture_output=True).returncode == 0


def test_watch_checks_again_when_a_nix_file_changes(tmp_path) -> None:
    """--watch in a real process: the first check, an edit that removes the finding, the second
    check; Ctrl+C (SIGINT) ends it with exit 0."""
    import signal
    import time

    write(tmp_path / "a.nix", FINDING)
    environment = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "CUDALINT_OUTPUT_FORMAT")}
    process = subprocess.Popen(
        [sys.executable, "-m", "cudalint", "check", "--isolated", "--watch", *SELECT, "."], cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=environment
    )
    seen: list[str] = []

    def wait_for(text: str) -> None:
        deadline = time.monotonic() + 60
        while not any(text in line for line in seen):
            assert time.monotonic() < deadline and process.poll() is None, "".join(seen)
            line = process.stdout.readline() if process.stdout else ""
            seen.append(line)

    try:
        wait_for("Found 1 finding")
        time.sleep(0.5)  # the watcher is set up once the first check has printed
        write(tmp_path / "a.nix", '{ stdenv }:\nstdenv.mkDerivation { pname = "x"; }\n')
        wait_for("changed; checking again")
        wait_for("All checks passed!")
    finally:
        process.send_signal(signal.SIGINT)
        code = process.wait(timeout=30)
    assert code == 0


def test_watch_refuses_what_it_cannot_repeat(tmp_path, monkeypatch, capsys) -> None:
    code, _, err = run(["check", "--watch", "--diff", "."], tmp_path, monkeypatch, capsys)
    assert code == 2 and "--watch cannot be used with --diff" in err
    code, _, err = run(["check", "--watch", "-"], tmp_path, monkeypatch, capsys, stdin=b"")
    assert code == 2 and "cannot read standard input" in err
