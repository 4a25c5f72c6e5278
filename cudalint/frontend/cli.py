"""The `cudalint` command line.

    cudalint [check] [PATH...]   lint (the default command)
    cudalint rules               list the rules
    cudalint rule CODE           a rule's documentation
    cudalint server              the language server (LSP over stdio; --tcp PORT for debugging)

Exit codes: 0 clean, 1 findings (or a diff with --diff), 2 an error the user must act on
(usage, configuration, a file that could not be read or written). Nothing here imports the
engine at module level, so `--version` and `--help` start fast; the language server's
dependencies are never imported.
"""

from __future__ import annotations

import argparse
import gc
import os
import stat
import sys
import time
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, TextIO

from cudalint import __version__

if TYPE_CHECKING:
    from cudalint.frontend.runner import Processed, Task
    from cudalint.lint.results import FileResult

PROG = "cudalint"
COMMANDS = ("check", "rules", "rule", "server", "completion")
COMPLETION_SHELLS = ("bash", "zsh", "fish", "tcsh", "powershell")
OUTPUT_FORMATS = ("text", "concise", "json", "sarif", "github", "rdjson", "markdown")
FORMAT_ENV = "CUDALINT_OUTPUT_FORMAT"
# `--fail-on` / `fail-on`: the least severe finding that fails a run ("never" is --exit-zero). Info
# is advice ("no defect", rules.md): like ESLint and shellcheck's -S, a run fails from warnings up.
DEFAULT_FAIL_ON = "warning"


class UsageError(Exception):
    """A problem with how cudalint was invoked (exit 2)."""


def _write_error(message: str) -> None:
    if sys.stderr is None:  # (started with standard error closed)
        return
    sys.stderr.write(f"{PROG}: {message}\n")
    sys.stderr.flush()


def default_jobs() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


# More workers than this many per CPU only add memory (each holds the rules and the grammar).
JOBS_PER_CPU = 4


def _capped_jobs(jobs: int) -> int:
    cap = JOBS_PER_CPU * default_jobs()
    if jobs > cap:
        _write_error(f"notice: --jobs {jobs} is more than {JOBS_PER_CPU} per CPU; using {cap}")
        return cap
    return jobs


def use_color(choice: str, stream: TextIO) -> bool:
    if choice == "always":
        return True
    if choice == "never":
        return False
    if os.environ.get("NO_COLOR") or os.environ.get("TERM") == "dumb":
        return False
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


# ---------------------------------------------------------------------------------------------
# Argument parsing


def _selector_list(value: str) -> list[str]:
    return [part.strip() for part in value.split(",") if part.strip()]


def _jobs(value: str) -> int:
    try:
        jobs = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of processes, got {value!r}") from None
    if jobs < 0:
        raise argparse.ArgumentTypeError("must be 0 (one per CPU) or more")
    return jobs or default_jobs()


class _VersionAction(argparse.Action):
    """`--version`: computed only when asked (it reads the reference set and may ask git)."""

    def __call__(self, parser, namespace, values, option_string=None) -> None:
        sys.stdout.write(version_text() + "\n")
        parser.exit()


def version_text() -> str:
    """The version, the commit when run from a git checkout, and the reference set it judges by."""
    from cudalint.knowledge.reference import describe_reference_set

    commit = _source_commit()
    release = "unreleased development version" if ".dev" in __version__ else "release"
    where = f"{release}, commit {commit}" if commit else release
    return f"{PROG} {__version__} ({where})\n{describe_reference_set()}"


def _source_commit() -> str | None:
    """The commit of the checkout cudalint runs from (an editable install or a clone), if any."""
    import subprocess

    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    if not os.path.exists(os.path.join(os.path.dirname(package), ".git")):
        return None
    try:
        done = subprocess.run(["git", "-C", os.path.dirname(package), "describe", "--always", "--dirty", "--abbrev=12"], capture_output=True, text=True, timeout=5)
    except (OSError, subprocess.SubprocessError):
        return None
    if done.returncode != 0:
        return None
    return done.stdout.strip() or None


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="Lint Nix expressions that use NVIDIA CUDA packages.",
        epilog="Without a command, `check` is assumed: `cudalint --fix .` is `cudalint check --fix .`.",
    )
    parser.add_argument("-V", "--version", action=_VersionAction, nargs=0, help="show the version, the commit and the reference set, and exit")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")

    check = commands.add_parser("check", help="check files (the default command)", description="Check Nix files for misuse of CUDA packages.")
    check.add_argument("paths", nargs="*", metavar="PATH", help="files or directories to check (default: .); `-` reads standard input")
    fixing = check.add_argument_group("fixes")
    fixing.add_argument("--fix", action="store_true", help="apply safe fixes to the files")
    fixing.add_argument("--unsafe-fixes", dest="unsafe_fixes", action="store_true", default=None, help="also apply (and count) unsafe fixes")
    fixing.add_argument("--no-unsafe-fixes", dest="unsafe_fixes", action="store_false", help="never apply unsafe fixes (overrides the configuration)")
    fixing.add_argument("--diff", action="store_true", help="print a unified diff of what --fix would change; write nothing")
    suppressing = check.add_argument_group("adopting cudalint on an existing tree")
    suppressing.add_argument(
        "--add-suppressions",
        action="store_true",
        help="write a `# cudalint: ignore[CODE]` comment for every finding (ruff's --add-noqa), so the tree checks clean and new code is held to the rules",
    )
    suppressing.add_argument("--reason", metavar="TEXT", help="with --add-suppressions: the reason written after `--` in each comment")
    rules = check.add_argument_group("rule selection")
    rules.add_argument(
        "--select",
        action="append",
        type=_selector_list,
        metavar="CODES",
        help="only these rules (codes or prefixes, comma-separated; ALL for every rule); replaces the configuration's selection",
    )
    rules.add_argument("--extend-select", action="append", type=_selector_list, metavar="CODES", help="rules to enable on top of the selection")
    rules.add_argument("--ignore", action="append", type=_selector_list, metavar="CODES", help="rules to disable")
    rules.add_argument(
        "--preview",
        dest="preview",
        action="store_true",
        default=None,
        help="also enable the rules in preview (not yet proven on real code; `cudalint rules` marks them)",
    )
    rules.add_argument("--no-preview", dest="preview", action="store_false", help="keep rules in preview off (overrides the configuration)")
    rules.add_argument(
        "--nixpkgs",
        metavar="TARGET",
        help=(
            'target nixpkgs: a NixOS release ("24.05", "nixos-24.05", "nixpkgs-24.05-darwin"), "unstable" ("nixos-unstable", "master") or a date ("2024-06-30"); '
            "default: the nixpkgs the files pin (flake.lock, flake.nix, fetchTarball, niv/npins), else the newest"
        ),
    )
    rules.add_argument(
        "--cuda",
        action="append",
        type=_selector_list,
        metavar="RELEASES",
        help='target CUDA releases, comma-separated ("12.8,13.0"); default: the one the target nixpkgs\' cudaPackages points at',
    )
    config = check.add_argument_group("configuration")
    config.add_argument("--config", metavar="FILE", help="use this configuration file for every file (no discovery)")
    config.add_argument("--isolated", action="store_true", help="ignore all configuration files")
    config.add_argument("--no-respect-gitignore", action="store_true", help="also check files that .gitignore files exclude")
    config.add_argument("--stdin-filename", metavar="PATH", help="the name of the file read from standard input (for configuration and messages)")
    output = check.add_argument_group("output")
    output.add_argument("--output-format", choices=OUTPUT_FORMATS, default=None, help=f"how findings are printed (default: text, or ${FORMAT_ENV})")
    output.add_argument("--statistics", action="store_true", help="print counts per rule instead of the findings")
    output.add_argument("--show-files", action="store_true", help="print the files that would be checked (after exclusions and .gitignore), and exit")
    output.add_argument("--show-settings", action="store_true", help="print the settings that apply to each named file (or the first file found), and exit")
    output.add_argument("--color", choices=("auto", "always", "never"), default="auto", help="colour the output (auto: when standard output is a terminal and NO_COLOR is unset)")
    output.add_argument("-q", "--quiet", action="store_true", help="print the findings and errors only: no summary, warnings or progress")
    output.add_argument(
        "--new-from-rev",
        metavar="REV",
        help="report and fix only findings on lines added or changed since the git revision REV (working tree included; "
        "untracked files count as new); `REV...` compares with the merge base of REV and HEAD",
    )
    output.add_argument("--baseline", metavar="FILE", help="do not report findings recorded in this baseline file")
    output.add_argument("--write-baseline", metavar="FILE", help="record the current findings in a baseline file and exit")
    behaviour = check.add_argument_group("exit status and performance")
    behaviour.add_argument(
        "--fail-on",
        choices=("error", "warning", "info", "never"),
        default=None,
        help="the least severe finding that makes the run exit 1 (default: warning, or the configuration's `fail-on`; info findings are advice)",
    )
    behaviour.add_argument("--exit-zero", action="store_true", help="exit 0 even when there are findings (errors still exit 2; same as --fail-on never)")
    behaviour.add_argument("--exit-non-zero-on-fix", action="store_true", help="exit 1 when fixes were applied, even if nothing remains")
    behaviour.add_argument("-w", "--watch", action="store_true", help="check again whenever a Nix file or a configuration under the paths changes (until Ctrl+C)")
    behaviour.add_argument("-j", "--jobs", type=_jobs, default=None, metavar="N", help="files checked in parallel (default: one per CPU)")
    check.set_defaults(func=cmd_check)

    rules_cmd = commands.add_parser("rules", help="list the rules")
    rules_cmd.add_argument("--color", choices=("auto", "always", "never"), default="auto")
    rules_cmd.add_argument("--output-format", choices=("text", "json"), default="text", help="a table, or JSON with each rule's metadata and docs")
    rules_cmd.set_defaults(func=cmd_rules)

    rule_cmd = commands.add_parser("rule", help="show a rule's documentation")
    rule_cmd.add_argument("code", metavar="CODE", help="a rule code (CUDA001) or name (runfile-toolkit)")
    rule_cmd.add_argument("--color", choices=("auto", "always", "never"), default="auto")
    rule_cmd.set_defaults(func=cmd_rule)

    server = commands.add_parser("server", help="run the language server", description="Run the cudalint language server (LSP) over standard input and output.")
    server.add_argument("--stdio", action="store_true", help="talk LSP over standard input/output (the default)")
    server.add_argument("--tcp", type=int, metavar="PORT", help="listen on 127.0.0.1:PORT instead, for debugging")
    server.set_defaults(func=cmd_server)

    completion = commands.add_parser(
        "completion",
        help="print a shell completion script",
        description="Print a completion script for SHELL. Bash: `cudalint completion bash > ~/.local/share/bash-completion/completions/cudalint`; "
        "zsh: `cudalint completion zsh > ~/.zfunc/_cudalint` (with ~/.zfunc on $fpath); fish: `cudalint completion fish > ~/.config/fish/completions/cudalint.fish`.",
    )
    completion.add_argument("shell", choices=COMPLETION_SHELLS, metavar="SHELL", help=f"one of {', '.join(COMPLETION_SHELLS)}")
    completion.set_defaults(func=cmd_completion)
    return parser


def cmd_completion(args: argparse.Namespace) -> int:
    import shtab  # only here: completion scripts are generated from the parser itself

    sys.stdout.write(shtab.complete(build_parser(), shell=args.shell))
    return 0


def with_default_command(argv: list[str]) -> list[str]:
    if not argv:
        return ["check"]
    first = argv[0]
    if first in COMMANDS or first in ("-h", "--help", "-V", "--version"):
        return argv
    return ["check", *argv]


def main(argv: Sequence[str] | None = None) -> int:
    args_list = with_default_command(list(sys.argv[1:] if argv is None else argv))
    parser = build_parser()
    try:
        args = parser.parse_args(args_list)
    except SystemExit as exit:
        return exit.code if isinstance(exit.code, int) else (0 if exit.code is None else 2)
    if sys.stdout is None:  # (started with standard output closed: Python sets it to None)
        _write_error("error: standard output is closed; nothing can be reported")
        return 2
    try:
        return args.func(args)
    except UsageError as error:
        _write_error(f"error: {error}")
        return 2
    except KeyboardInterrupt:
        _write_error("interrupted")
        return 130
    except BrokenPipeError:
        # the reader went away (`cudalint | head`): stop quietly
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
        except (OSError, ValueError, AttributeError):
            pass
        return 1


# ---------------------------------------------------------------------------------------------
# rules / rule / server


def cmd_rules(args: argparse.Namespace) -> int:
    from cudalint.frontend.ruledocs import render_rule_list, rules_json

    if args.output_format == "json":
        sys.stdout.write(rules_json())
        return 0
    text = render_rule_list(color=use_color(args.color, sys.stdout))
    sys.stdout.write(text if text.endswith("\n") else text + "\n")
    return 0


def cmd_rule(args: argparse.Namespace) -> int:
    from cudalint.frontend.config import did_you_mean
    from cudalint.lint.registry import all_rules

    wanted = args.code.strip()
    rules = all_rules()
    match = next((r for r in rules if r.code == wanted.upper() or r.name == wanted.lower()), None)
    if match is None:
        hint = did_you_mean(wanted.upper(), [r.code for r in rules]) or did_you_mean(wanted.lower(), [r.name for r in rules])
        _write_error(f"error: unknown rule `{wanted}`{hint}; `cudalint rules` lists them")
        return 2
    from cudalint.frontend.ruledocs import render_rule

    text = render_rule(match, color=use_color(args.color, sys.stdout))
    sys.stdout.write(text if text.endswith("\n") else text + "\n")
    return 0


def cmd_server(args: argparse.Namespace) -> int:
    if args.stdio and args.tcp is not None:
        raise UsageError("--stdio and --tcp cannot be used together")
    from cudalint.server.app import run  # pygls is imported only here

    return run(tcp_port=args.tcp)


# ---------------------------------------------------------------------------------------------
# check


class Progress:
    """`checked 120/4000 files` on stderr, for runs that take a while, only on a terminal."""

    DELAY = 0.5
    INTERVAL = 0.1

    def __init__(self, total: int | None, stream: TextIO, enabled: bool) -> None:
        self.total = total  # None while the walk is still finding files
        self.stream = stream
        self.enabled = enabled and (total is None or total > 1)
        self.start = time.monotonic()
        self.last = 0.0
        self.shown = False

    def __call__(self, done: int) -> None:
        if not self.enabled:
            return
        now = time.monotonic()
        if now - self.start < self.DELAY or (now - self.last < self.INTERVAL and done != self.total):
            return
        self.last = now
        self.shown = True
        of = "" if self.total is None else f"/{self.total}"
        self.stream.write(f"\r{PROG}: checked {done}{of} files")
        self.stream.flush()

    def clear(self) -> None:
        if self.shown:
            self.stream.write("\r\x1b[K")
            self.stream.flush()
            self.shown = False


def _flatten(groups: list[list[str]] | None) -> tuple[str, ...]:
    return tuple(s for group in groups or () for s in group)


def _overrides(args: argparse.Namespace):
    from cudalint.frontend.config import Overrides, resolve_selectors, validate_cuda, validate_nixpkgs

    select = resolve_selectors(_flatten(args.select), "--select", "--select") if args.select is not None else None
    extend = resolve_selectors(_flatten(args.extend_select), "--extend-select", "--extend-select")
    ignore = resolve_selectors(_flatten(args.ignore), "--ignore", "--ignore")
    nixpkgs = validate_nixpkgs(args.nixpkgs, "--nixpkgs", "--nixpkgs") if args.nixpkgs is not None else None
    cuda = validate_cuda(list(_flatten(args.cuda)), "--cuda", "--cuda") if args.cuda is not None else None
    return Overrides(select, extend, ignore, nixpkgs, args.unsafe_fixes, args.config, args.isolated, cuda, args.preview)


def _path_key(display: str) -> tuple:
    return tuple(display.replace(os.sep, "/").split("/"))


def _plural(n: int, word: str, plural: str | None = None) -> str:
    return f"{n} {word if n == 1 else (plural or word + 's')}"


def cmd_check(args: argparse.Namespace) -> int:
    from cudalint.frontend.config import ConfigError

    if args.watch:
        return _watch(args)
    try:
        return _check(args)
    except ConfigError as error:
        _write_error(str(error))
        return 2


# What makes --watch check again: Nix files, and the files that decide settings and targets.
WATCHED_NAMES = ("cudalint.toml", ".cudalint.toml", "pyproject.toml", ".gitignore", "flake.lock", "flake.nix", "sources.json")


def _watch(args: argparse.Namespace) -> int:
    """--watch: check, then check again whenever a watched file under the paths changes, until
    interrupted (ruff's --watch). Each run prints as a plain check would."""
    clashing = [
        flag
        for flag, given in (
            ("--diff", args.diff),
            ("--write-baseline", args.write_baseline),
            ("--add-suppressions", args.add_suppressions),
            ("--show-files", args.show_files),
            ("--show-settings", args.show_settings),
        )
        if given
    ]
    if clashing:
        raise UsageError(f"--watch cannot be used with {', '.join(clashing)}")
    if "-" in args.paths:
        raise UsageError("--watch watches files: it cannot read standard input")
    try:
        from watchfiles import watch
    except ImportError:
        raise UsageError("--watch needs the watchfiles package: pip install 'cudalint[watch]'") from None
    import datetime

    def watched(_change, path: str) -> bool:
        return path.endswith(".nix") or os.path.basename(path) in WATCHED_NAMES

    cmd_check_once = argparse.Namespace(**{**vars(args), "watch": False})
    try:
        cmd_check(cmd_check_once)
        sys.stdout.flush()
        for changes in watch(*(args.paths or ["."]), watch_filter=watched, raise_interrupt=True):
            stamp = datetime.datetime.now().strftime("%H:%M:%S")
            sys.stdout.write(f"\n[{stamp}] {_plural(len({path for _, path in changes}), 'file')} changed; checking again\n\n")
            sys.stdout.flush()
            cmd_check(cmd_check_once)
            sys.stdout.flush()
    except KeyboardInterrupt:
        pass
    return 0


def _check(args: argparse.Namespace) -> int:
    from cudalint.frontend import files, runner
    from cudalint.frontend.config import Resolver, display_path
    from cudalint.frontend.files import Walker, stat_problem
    from cudalint.frontend.reporters.text import printable

    output_format = args.output_format or os.environ.get(FORMAT_ENV) or "text"
    if output_format not in OUTPUT_FORMATS:
        raise UsageError(f"${FORMAT_ENV}={output_format!r} is not one of {', '.join(OUTPUT_FORMATS)}")
    if args.config and args.isolated:
        raise UsageError("--config and --isolated cannot be used together")
    if args.statistics and output_format not in ("text", "concise", "json"):
        raise UsageError(f"--statistics prints text or json, not {output_format}")
    if args.diff and args.write_baseline:
        raise UsageError("--diff and --write-baseline cannot be used together")
    if args.reason is not None and not args.add_suppressions:
        raise UsageError("--reason goes with --add-suppressions")
    if args.add_suppressions:
        clashing = [
            flag
            for flag, given in (("--fix", args.fix), ("--diff", args.diff), ("--write-baseline", args.write_baseline), ("--baseline", args.baseline), ("--new-from-rev", args.new_from_rev))
            if given
        ]
        if clashing:
            raise UsageError(f"--add-suppressions cannot be used with {', '.join(clashing)}")
        if "-" in args.paths or args.stdin_filename:
            raise UsageError("--add-suppressions writes files: it cannot read standard input")
        if args.reason is not None and (not args.reason.strip() or any(s in args.reason for s in ("\n", "\r", "''", "${", "*/"))):
            raise UsageError("--reason must be one line of text without `''`, `${` or `*/` (a comment may stand inside a Nix string)")
    mode = runner.AddSuppressions(args.reason.strip() if args.reason else None) if args.add_suppressions else runner.DIFF if args.diff else runner.FIX if args.fix else runner.CHECK
    paths = list(args.paths) or (["-"] if args.stdin_filename else ["."])
    if paths.count("-") > 1:
        raise UsageError("standard input (`-`) can be read only once")
    if args.stdin_filename and "-" not in paths:
        raise UsageError("--stdin-filename names standard input; pass `-` to read it")
    if "-" in paths and sys.stdin is None:
        raise UsageError("standard input (`-`) is closed")

    resolver = Resolver(_overrides(args))
    cwd = resolver.cwd
    for code in resolver.preview_requested():
        sys.stderr.write(f"{PROG}: warning: {code} is in preview and stays off: pass --preview (or set `preview = true`) to enable it\n")
    changes = _changes(args, paths, cwd)
    walker = Walker(exclude=resolver.excluded, respect_gitignore=not args.no_respect_gitignore, listings=resolver.listings)
    early: list[tuple[str, Processed]] = []  # problems with paths the user named
    directories: list[str] = []
    for path in paths:  # named files first: a file both named and found in a directory counts as named
        if path == "-":
            continue
        absolute = os.path.abspath(path)
        try:
            info = os.stat(absolute)
        except OSError as error:
            display = display_path(absolute, cwd)
            early.append((display, runner.read_problem(display, stat_problem(absolute, error), True)))
            continue
        if stat.S_ISDIR(info.st_mode):
            directories.append(absolute)
        else:
            walker.add_file(absolute, explicit=True, key=(info.st_dev, info.st_ino))

    table: list = []
    index: dict = {}
    by_identity: dict[int, int] = {}  # the resolver hands the files of a directory one object

    # Pins are looked up by the workers, for the few files they parse (see `DEFERRED_PIN`).
    defer_pins = runner.can_defer_pins()

    def settings_index(path: str, stdin: bool = False) -> int:
        settings = resolver.settings_for(path, defer_pin=defer_pins and not stdin)
        known = by_identity.get(id(settings))
        if known is not None and table[known] is settings:
            return known
        if settings not in index:
            index[settings] = len(table)
            table.append(settings)
        by_identity[id(settings)] = index[settings]
        return index[settings]

    inside_cwd = cwd.rstrip(os.sep) + os.sep

    if args.show_files or args.show_settings:
        return _show(args, walker, directories, resolver, early)

    def found_display(path: str) -> str:
        # found paths are absolute and normalized: display_path's relpath is a slice of them
        # below the working directory, and they are shown as they are elsewhere
        return path[len(inside_cwd) :] if path.startswith(inside_cwd) else path

    stdin_task = None
    stderr = sys.stderr
    progress = Progress(None, stderr, enabled=not args.quiet and _isatty(stderr))

    def task_for(found) -> Task:
        new = changes.for_path(found.path) if changes is not None else None
        return runner.Task(found.path, found_display(found.path), settings_index(found.path), found.explicit, new=new)

    def stdin_tasks() -> Iterator[Task]:
        nonlocal stdin_task
        if "-" in paths:
            stdin_name = args.stdin_filename
            stdin_path = os.path.abspath(stdin_name) if stdin_name else os.path.join(cwd, "-")
            data = sys.stdin.buffer.read()
            display = display_path(stdin_path, cwd) if stdin_name else "-"
            new = changes.for_path(stdin_path) if changes is not None else None
            stdin_task = runner.Task(None, display, settings_index(stdin_path, stdin=True), True, data, new=new)
            yield stdin_task

    def tasks() -> Iterator[Task]:
        """The named files, then the files of the named directories as the walk finds them
        (checking starts while the walk goes on), then standard input."""
        count = 0
        for directory in [None, *directories]:
            for found in walker.fresh() if directory is None else walker.walking(directory):
                count += 1
                yield task_for(found)
        for task in stdin_tasks():
            count += 1
            yield task
        progress.total = count

    # A check keeps what it builds to the end (results, the walk's state): the collector's passes
    # over those objects only cost time (0.5 s of CPU on a 40,000-file tree). Freeze what exists
    # (forked workers then share it untouched) and collect young garbage less often.
    gc.freeze()
    gc.set_threshold(50_000, 20, 20)
    jobs = _capped_jobs(args.jobs or default_jobs())
    # Writing waits for the whole walk: a broken configuration found on the way then stops the
    # run before any file is written.
    writes = mode == runner.FIX or isinstance(mode, runner.AddSuppressions)
    if writes:  # (a symlink found in a named directory is not followed out of the named paths)
        files.set_write_roots(os.path.abspath(p) for p in paths if p != "-")
    checked: list[tuple[Task, Processed]] = []
    try:
        if directories and runner.can_walk_in_parallel(jobs):
            # the workers walk subtrees and check their files; the parent merges
            named = [task_for(found) for found in walker.fresh()]
            leftovers: list = []
            checked += runner.walk_and_run(walker, directories, mode, jobs, task_for, table, found_display, leftovers, progress, resolver.pin)
            queue = named + [task_for(found) for found in leftovers] + list(stdin_tasks())
            progress.total = len(checked) + len(queue)
            done = len(checked)
            checked += runner.run(queue, table, mode, jobs, lambda count: progress(done + count), resolver.pin)
        else:
            checked += runner.run(list(tasks()) if writes else tasks(), table, mode, jobs, progress, resolver.pin)
    finally:
        progress.clear()
        files.set_write_roots(())  # (the next run in this process names its own)
    # the order of the report does not depend on the order the walk and the workers took
    checked.sort(key=lambda pair: (pair[0] is stdin_task, _path_key(pair[0].display)))
    processed: list[tuple[str, Processed]] = list(early) + [(task.display, outcome) for task, outcome in checked]

    failed = False
    for notice in walker.notices:
        kind = "error" if notice.error else "warning"
        if notice.error or not args.quiet:
            stderr.write(f"{PROG}: {display_path(notice.path, cwd)}: {kind}: {notice.message}\n")
        failed = failed or notice.error

    results: list[FileResult] = []
    stdin_output: bytes | None = None
    for display, outcome in processed:
        for notice in outcome.notices:
            if not args.quiet:
                stderr.write(f"{PROG}: {display}: warning: {notice}\n")
        result = outcome.result
        if result is not None:
            if result.error:
                stderr.write(f"{PROG}: {printable(display)}: error: {printable(result.error)}\n")
            for internal in result.internal_errors:
                stderr.write(f"{PROG}: {printable(display)}: {internal}\n")
            results.append(result)
        if outcome.output is not None:
            stdin_output = outcome.output
        failed = failed or outcome.failed
    stderr.flush()

    if not args.quiet:
        _note_old_targets(results, stderr)
    if args.write_baseline:
        return _write_baseline(args, results, failed)

    hidden = 0
    if args.baseline:
        from cudalint.frontend.baseline import BaselineError, load_baseline

        try:
            baseline = load_baseline(args.baseline)
        except BaselineError as error:
            _write_error(f"error: {error}")
            return 2
        results, hidden = baseline.filter(results)

    fixed = sum(r.fixed for r in results)
    failing = _failing_findings(results, "never" if args.exit_zero else args.fail_on or resolver.config_for_dir(cwd).fail_on or DEFAULT_FAIL_ON)
    if isinstance(mode, runner.AddSuppressions) and not args.quiet:
        added = [r.suppressions_added for r in results if r.suppressions_added]
        stderr.write(f"Added {_plural(sum(added), 'suppression comment')} to {_plural(len(added), 'file')}.\n")
    if mode == runner.DIFF:
        diffs = [r.diff for r in results if r.diff]
        for diff in diffs:
            sys.stdout.write(diff)
        sys.stdout.flush()
        if not args.quiet:
            message = f"Would fix {_plural(fixed, 'finding')}{_revealed(results)}." if fixed else "No fixes available."
            stderr.write(f"{message}\n")
        if failed:
            return 2
        return 1 if diffs and not args.exit_zero else 0

    out = sys.stdout
    if stdin_task is not None and mode == runner.FIX:
        # the fixed text goes to standard output; the report to standard error
        if stdin_output is not None:
            sys.stdout.flush()
            sys.stdout.buffer.write(stdin_output)
            sys.stdout.buffer.flush()
        out = stderr
    unsafe = _unsafe_for_report(args, resolver)
    color = use_color(args.color, out)
    if args.statistics:
        from cudalint.frontend.reporters.statistics import write_statistics, write_statistics_json

        (write_statistics_json if output_format == "json" else write_statistics)(results, out)
    else:
        from cudalint.frontend.reporters import ReportOptions, get_reporter

        reporter = get_reporter(output_format)
        options = ReportOptions(color=color, unsafe_fixes=unsafe)
        if output_format in ("text", "concise") and args.quiet:
            # --quiet prints the findings only: no targets, file counts or summary
            import io
            from dataclasses import replace

            buffer = io.StringIO()
            reporter(results, buffer, replace(options, summary=False))
            body = buffer.getvalue()
            out.write(body.rstrip("\n") + "\n" if body.strip() else "")
        else:
            reporter(results, out, options)
    if hidden and not args.quiet:
        stderr.write(f"{PROG}: {_plural(hidden, 'finding')} hidden by the baseline {args.baseline}\n")
    out.flush()

    if failed:
        return 2
    if failing:
        return 1
    if args.exit_non_zero_on_fix and fixed:
        return 1
    return 0


def _show(args: argparse.Namespace, walker, directories: list[str], resolver, early: list) -> int:
    """--show-files: every file the run would check (named files, then the walk); --show-settings:
    what applies to each named file, or to the first file found (ruff's two options)."""
    from cudalint.frontend.config import display_path

    found = [f.path for f in walker.fresh()]
    for directory in directories:
        found += [f.path for f in walker.walking(directory)]
    for display, processed in early:
        sys.stderr.write(f"{PROG}: {display}: error: {processed.result.error if processed.result else 'cannot be read'}\n")
    if args.show_files:
        for path in sorted(found, key=lambda p: _path_key(display_path(p, resolver.cwd))):
            sys.stdout.write(display_path(path, resolver.cwd) + "\n")
    else:
        named = [os.path.abspath(p) for p in args.paths if p != "-" and os.path.isfile(p)] or found[:1]
        for path in named:
            sys.stdout.write(describe_settings(path, resolver) + "\n")
    return 2 if early else 0


def describe_settings(path: str, resolver) -> str:
    """The settings for one file, as --show-settings prints them."""
    from cudalint.frontend.config import display_path
    from cudalint.lint.registry import preview_codes

    settings = resolver.settings_for(path)
    config = resolver.config_for_dir(os.path.dirname(path))
    enabled = sorted(settings.lint.enabled)
    preview = sorted(set(enabled) & preview_codes())
    rows = [
        ("file", display_path(path, resolver.cwd)),
        ("configuration", display_path(settings.config, resolver.cwd) if settings.config else "(none: the defaults)"),
        ("target nixpkgs", f"{settings.pin.nixpkgs or 'unstable (the newest)'} ({settings.pin.source or 'nothing pins it'})"),
        ("target CUDA", ", ".join(settings.lint.cuda) or "the target nixpkgs' default"),
        ("rules", f"{len(enabled)} enabled: {', '.join(enabled)}"),
        ("preview", f"{'on' if resolver.preview_for(config) else 'off'}" + (f" ({', '.join(preview)} enabled)" if preview else "")),
        ("unsafe fixes", "on" if settings.unsafe_fixes else "off"),
        ("fail on", config.fail_on or "warning (the default)"),
        ("exclude", ", ".join(p.text for p in config.exclude) or "(nothing)"),
        ("max file size", f"{settings.max_file_size} bytes"),
        ("time budget", f"{settings.lint.time_budget:g} s per file"),
    ]
    width = max(len(name) for name, _ in rows)
    return "\n".join(f"{name + ':':<{width + 1}} {value}" for name, value in rows)


def _revealed(results: list[FileResult]) -> str:
    """Why --fix may fix more findings than a check counted as fixable: fixes reveal findings."""
    revealed = sum(r.revealed for r in results)
    return f" ({revealed} of them appeared once other fixes were applied)" if revealed else ""


def _failing_findings(results: list[FileResult], fail_on: str) -> int:
    """How many findings are at `fail_on` or more severe ("never": none)."""
    from cudalint.frontend.config import FAIL_LEVELS

    if fail_on == "never":
        return 0
    levels = FAIL_LEVELS[: FAIL_LEVELS.index(fail_on) + 1]
    return sum(1 for r in results for d in r.diagnostics if d.severity.value in levels)


def _note_old_targets(results: list[FileResult], stderr: TextIO) -> None:
    """Targets older than the oldest release the reference set models are judged by it: say so once."""
    from cudalint.frontend.reporters import targets as distinct_targets
    from cudalint.knowledge.reference import before_modelled

    for note in dict.fromkeys(before_modelled(t.nixpkgs) for t in distinct_targets(results)):
        if note:
            stderr.write(f"{PROG}: note: {note}\n")


def _changes(args: argparse.Namespace, paths: list[str], cwd: str):
    """With --new-from-rev, the new lines of the repository holding the first path (or the
    working directory)."""
    if args.new_from_rev is None:
        return None
    from cudalint.frontend.newcode import NewCodeError, changes_since

    if "-" in paths and not args.stdin_filename:
        raise UsageError("--new-from-rev with standard input needs --stdin-filename (the file whose new lines count)")
    named = next((p for p in paths if p != "-"), args.stdin_filename or cwd)
    directory = os.path.abspath(named)
    while not os.path.isdir(directory):
        directory = os.path.dirname(directory)
    try:
        return changes_since(args.new_from_rev, directory)
    except NewCodeError as error:
        raise UsageError(str(error)) from None


def _isatty(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def _unsafe_for_report(args: argparse.Namespace, resolver) -> bool:
    if args.unsafe_fixes is not None:
        return args.unsafe_fixes
    return bool(resolver.config_for_dir(resolver.cwd).unsafe_fixes)


def _write_baseline(args: argparse.Namespace, results: list[FileResult], failed: bool) -> int:
    from cudalint.frontend.baseline import BaselineError, write_baseline

    try:
        write_baseline(args.write_baseline, results)
    except (BaselineError, OSError) as error:
        _write_error(f"error: cannot write the baseline {args.write_baseline}: {error}")
        return 2
    if not args.quiet:
        count = sum(len(r.diagnostics) for r in results)
        sys.stderr.write(f"{PROG}: wrote {_plural(count, 'finding')} to the baseline {args.write_baseline}\n")
    return 2 if failed else 0
