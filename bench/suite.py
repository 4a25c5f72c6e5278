"""The benchmark suite: every figure of the performance issue, with its baseline, ratio and target.

    python -m bench [--runs N] [--jobs 1,2,4,8,16] [--skip-server] [--write-readme README.md]

Inputs come from bench/generate.py (cached outside the repository). Timed commands run as
fresh processes, the way users run them; each is run `--runs` times and the median is shown
with the spread. The machine may be shared: the load average is printed before and after, and
figures taken under load are noisy (run the suite twice).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from bench.generate import Inputs, ensure_inputs

REPO = Path(__file__).resolve().parent.parent
JOBS_TARGET_WALL = 3.0
BASELINE_SPEEDUP = 5.0
ENGINE_OVERHEAD = 3.0
ENGINE_STRETCH = 1.5
JOBS_SCALING = 1.7
COLD_START = 0.150
EDITOR_MEDIAN, EDITOR_P95 = 0.015, 0.030
CLI_MEMORY, SERVER_MEMORY = 300e6, 400e6


@dataclass
class Row:
    name: str
    figure: str
    baseline: str = ""
    ratio: str = ""
    target: str = ""
    met: bool | None = None  # None: no target, or not measured


def cudalint_command() -> list[str]:
    installed = shutil.which("cudalint", path=os.path.dirname(sys.executable)) or shutil.which("cudalint")
    return [installed] if installed else [sys.executable, "-m", "cudalint"]


def timed(command: list[str], cwd: Path | None = None) -> float:
    """Wall seconds of a command that must exit 0 or 1 (findings): a crash is no figure."""
    began = time.perf_counter()
    process = subprocess.run(command, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=False)
    wall = time.perf_counter() - began
    if process.returncode not in (0, 1):
        tail = process.stderr.decode("utf-8", "replace")[-2000:]
        raise RuntimeError(f"{' '.join(command)} exited {process.returncode}:\n{tail}")
    return wall


def repeat(command: list[str], runs: int, cwd: Path | None = None) -> list[float]:
    return [timed(command, cwd) for _ in range(runs)]


def seconds(values: list[float]) -> str:
    median = statistics.median(values)
    if len(values) == 1:
        return f"{median:.2f} s"
    return f"{median:.2f} s ({min(values):.2f}-{max(values):.2f})"


def millis(value: float) -> str:
    return f"{value * 1000:.0f} ms"


def worker(kind: str, argument: str) -> dict:
    output = subprocess.run([sys.executable, "-m", "bench.workers", kind, argument], cwd=REPO, capture_output=True, text=True, check=True)
    return json.loads(output.stdout)


def _process_tree(root: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            parent = int(stat.rsplit(")", 1)[1].split()[1])
            children.setdefault(parent, []).append(int(entry))
    found, pending = [], [root]
    while pending:
        pid = pending.pop()
        found.append(pid)
        pending.extend(children.get(pid, ()))
    return found


def _rss(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def peak_tree_rss(command: list[str], cwd: Path | None = None, interval: float = 0.02) -> int:
    """The largest sum of RSS over a command and its worker processes, sampled while it runs
    (pages the forked workers share with the parent count in each: an upper bound)."""
    process = subprocess.Popen(command, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    # (its exit status is checked by the timed runs of the same command)
    peak = 0
    done = threading.Event()

    def sample() -> None:
        nonlocal peak
        while not done.is_set():
            peak = max(peak, sum(_rss(pid) for pid in _process_tree(process.pid)))
            done.wait(interval)

    sampler = threading.Thread(target=sample)
    sampler.start()
    process.wait()
    done.set()
    sampler.join()
    return peak


def load() -> str:
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "?"


# ---------------------------------------------------------------------------------------------
# The figures


def tree_rows(inputs: Inputs, runs: int, jobs: list[int]) -> list[Row]:
    """The tree checked with each `--jobs` count and parsed file by file in one process, the
    commands interleaved in each of the `runs` rounds (a change of the machine's load hits all
    alike); then the engine against the bare parse on the files it parses."""
    cli = cudalint_command()
    tree = str(inputs.tree)
    check = [*cli, "check", "--quiet", "--output-format", "json"]
    walls: dict[int, list[float]] = {count: [] for count in jobs}
    baseline = []
    for _ in range(runs):
        for count in jobs:
            walls[count].append(timed([*check, "--jobs", str(count), tree]))
        baseline.append(worker("parse", tree))
    parse_all = [b["seconds"] for b in baseline]
    engine = worker("engine", tree)
    peak = peak_tree_rss([*check, "--jobs", "2", tree])
    two, one = walls[2], walls[1]
    two_median, one_median, parse_median = statistics.median(two), statistics.median(one), statistics.median(parse_all)
    size = f"{baseline[0]['files']:,} files, {baseline[0]['bytes'] / 1e6:.0f} MB"
    rows = [
        Row(f"tree ({size}): check --jobs 2", seconds(two), "", "", f"< {JOBS_TARGET_WALL:.0f} s", two_median < JOBS_TARGET_WALL),
        Row(
            "  vs parsing every file, one process",
            seconds(two),
            seconds(parse_all),
            f"{parse_median / two_median:.1f}x faster",
            f">= {BASELINE_SPEEDUP:.0f}x",
            parse_median / two_median >= BASELINE_SPEEDUP,
        ),
    ]
    cpus = os.cpu_count() or 1
    for count in jobs:
        if count == 1:
            continue
        median = statistics.median(walls[count])
        speedup = one_median / median
        if count == 2:
            rows.append(Row("  --jobs 2 vs --jobs 1", seconds(walls[count]), seconds(one), f"{speedup:.2f}x faster", f">= {JOBS_SCALING}x", speedup >= JOBS_SCALING))
        else:
            note = f"(more jobs than the {cpus} CPUs)" if count > cpus else ""
            rows.append(Row(f"  --jobs {count} vs --jobs 1 {note}".rstrip(), seconds(walls[count]), seconds(one), f"{speedup:.2f}x faster"))
    overhead = engine["lint_seconds"] / engine["parse_seconds"]
    bare = f"{engine['parse_seconds']:.2f} s bare parse"
    rows += [
        Row(
            f"engine on the {engine['files']:,} prefiltered files ({engine['bytes'] / 1e6:.1f} MB)",
            f"{engine['lint_seconds']:.2f} s",
            bare,
            f"{overhead:.1f}x",
            f"<= {ENGINE_OVERHEAD:g}x (stretch {ENGINE_STRETCH:g}x)",
            overhead <= ENGINE_OVERHEAD,
        ),
        Row(
            "  the previous engine (a generator walk per purpose)",
            f"{engine['legacy_seconds']:.2f} s",
            bare,
            f"{engine['legacy_seconds'] / engine['parse_seconds']:.1f}x",
            f"same findings: {engine['findings'] == engine['legacy_findings']}",
        ),
    ]
    for step, name in (("walk", "one walk (dispatch list, definitions, scopes)"), ("syntax", "syntax check from the walk"), ("rules", "rules (dispatch)")):
        value = engine[f"{step}_seconds"]
        rows.append(Row(f"  step: {name}", f"{value:.2f} s", bare, f"{value / engine['parse_seconds']:.2f}x"))
    rows.append(Row("peak RSS, check --jobs 2 on the tree", f"{peak / 1e6:.0f} MB", "", "", f"< {CLI_MEMORY / 1e6:.0f} MB", peak < CLI_MEMORY))
    return rows


def cold_rows(inputs: Inputs, runs: int) -> list[Row]:
    runs = max(runs, 10)
    python = repeat([sys.executable, "-c", "pass"], runs)
    cold = repeat([*cudalint_command(), "check", str(inputs.small_file)], runs)
    median, base = statistics.median(cold), statistics.median(python)
    return [Row("one small file, cold: cudalint check file.nix", millis(median), f"{millis(base)} python -c pass", f"{median / base:.1f}x", f"< {millis(COLD_START)}", median < COLD_START)]


def large_file_rows(inputs: Inputs) -> list[Row]:
    """No target: a multi-megabyte generated file that mentions CUDA once, towards its bare parse."""
    path = inputs.large_cuda_file
    wall = timed([*cudalint_command(), "check", "--quiet", str(path)])
    measured = worker("large", str(path))
    lint, parse = measured["lint_seconds"], measured["parse_seconds"]
    name = f"{path.stat().st_size / 1e6:.0f} MB generated file with one CUDA entry"
    rows = [
        Row(f"{name}: engine", f"{lint:.2f} s", f"{parse:.2f} s bare parse", f"{lint / parse:.1f}x"),
        Row("  cudalint check on it (a fresh process)", f"{wall:.2f} s", f"{parse:.2f} s bare parse", f"{wall / parse:.1f}x"),
    ]
    if measured["notes"]:
        rows.append(Row("  note", measured["notes"][0][:100]))
    return rows


def hostile_rows() -> list[Row]:
    """No target: the inputs of issue 23 (bench/hostile.py), each within the time budget."""
    output = subprocess.run([sys.executable, "-m", "bench.hostile"], cwd=REPO, capture_output=True, text=True, check=True).stdout
    figures = json.loads(output)
    rows = []
    for name in ("192 KB list of 16,000 cudatoolkit", "9.8 MB list ending in cudatoolkit"):
        measured = figures[name]
        rows.append(Row(f"cudalint check on a {name}", f"{measured['seconds']:.1f} s", f"{measured['peak_rss_mb']} MB peak, reports {', '.join(measured['codes']) or 'nothing'}"))
    server = figures["server, 5 MB document open"]
    diagnostics = f"{server['large_document_diagnostics_seconds']:.1f} s to the 5 MB document's diagnostics"
    rows.append(Row("server: hover on another document while a 5 MB one is linted", millis(server["other_hover_waited_seconds"]), diagnostics))
    return rows


def server_available() -> str | None:
    """Why the editor rows cannot run, or None."""
    check = subprocess.run([sys.executable, "-c", "import cudalint.server.documents"], cwd=REPO, capture_output=True)
    if check.returncode != 0:
        return "cudalint.server is not importable"
    if not (REPO / "bench" / "server_latency.py").exists():
        return "bench/server_latency.py has not landed"
    return None


_LATENCY_LINE = re.compile(r"^(?P<name>\S.*?)\s+median\s+(?P<median>[\d.]+) ms\s+p95\s+(?P<p95>[\d.]+) ms", re.M)


def editor_rows(inputs: Inputs, runs: int) -> list[Row]:
    """The server engineer's bench/server_latency.py (its own 3000-line file), and the memory
    of `cudalint server` with 100 copies of the generated 3000-line file open."""
    output = subprocess.run(
        [sys.executable, str(REPO / "bench" / "server_latency.py"), "--lines", "3000", "--runs", str(max(60, runs * 30))],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    figures = {m["name"].strip(): (float(m["median"]) / 1000, float(m["p95"]) / 1000) for m in _LATENCY_LINE.finditer(output)}
    incremental = figures.get("incremental re-parse + re-lint")
    full = figures.get("full parse + lint")
    rows = []
    if incremental and full:
        rows.append(
            Row(
                "editor: one-character edit to diagnostics (3000 lines), median / p95",
                f"{millis(incremental[0])} / {millis(incremental[1])}",
                f"{millis(full[0])} / {millis(full[1])} full re-parse + re-lint",
                f"{full[0] / incremental[0]:.1f}x faster",
                f"< {millis(EDITOR_MEDIAN)} / {millis(EDITOR_P95)}",
                incremental[0] < EDITOR_MEDIAN and incremental[1] < EDITOR_P95,
            )
        )
    else:
        rows.append(Row("editor: one-character edit to diagnostics", "not measured", "", "", "", None))
    memory = json.loads(subprocess.run([sys.executable, "-m", "bench.server_memory", str(inputs.editor_file), "--documents", "100"], cwd=REPO, capture_output=True, text=True, check=True).stdout)
    peak = memory["peak_rss_bytes"]
    rows.append(
        Row(
            f"server: peak RSS with {memory['documents']} open {memory['lines']}-line documents",
            f"{peak / 1e6:.0f} MB",
            f"all diagnostics after {memory['seconds_to_all_diagnostics']:.1f} s",
            "",
            f"< {SERVER_MEMORY / 1e6:.0f} MB",
            peak < SERVER_MEMORY,
        )
    )
    return rows


# ---------------------------------------------------------------------------------------------


def render(rows: list[Row]) -> str:
    header = Row("figure", "measured", "baseline", "ratio", "target")
    table = [header, *rows]
    widths = [max(len(getattr(r, field)) for r in table) for field in ("name", "figure", "baseline", "ratio", "target")]
    lines = []
    for index, row in enumerate(table):
        status = "" if index == 0 else {True: "ok", False: "MISSED", None: ""}[row.met]
        cells = [row.name, row.figure, row.baseline, row.ratio, row.target]
        lines.append("  ".join(cell.ljust(width) for cell, width in zip(cells, widths)) + "  " + status)
        if index == 0:
            lines.append("-" * (sum(widths) + 2 * len(widths) + 6))
    return "\n".join(line.rstrip() for line in lines)


README_START, README_END = "<!-- bench:start -->", "<!-- bench:end -->"


def markdown(rows: list[Row], footer: str) -> str:
    """The table as the README shows it (between its bench markers)."""
    lines = ["| figure | measured | baseline | ratio | target | |", "|---|---|---|---|---|---|"]
    for row in rows:
        status = {True: "ok", False: "missed", None: ""}[row.met]
        cells = [row.name.strip(), row.figure, row.baseline, row.ratio, row.target, status]
        lines.append("| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |")
    return "\n".join(lines) + f"\n\n{footer}\n"


def write_readme(path: Path, rows: list[Row], footer: str) -> None:
    text = path.read_text(encoding="utf-8")
    start, end = text.find(README_START), text.find(README_END)
    if start < 0 or end < start:
        raise SystemExit(f"{path} has no {README_START} ... {README_END} block")
    path.write_text(text[: start + len(README_START)] + "\n" + markdown(rows, footer) + text[end:], encoding="utf-8")


def jobs_list(value: str) -> list[int]:
    counts = sorted({int(part) for part in value.split(",") if part.strip()} | {1, 2})
    if counts[0] < 1:
        raise argparse.ArgumentTypeError("job counts are positive")
    return counts


def compile_bytecode() -> None:
    """Write cudalint's bytecode first, as pip does when it installs a package: timed commands
    would otherwise compile every module changed since the last import from source (each run
    again where PYTHONDONTWRITEBYTECODE is set), which no installed copy does."""
    import compileall

    for directory in ("cudalint", "rules", "server"):
        compileall.compile_dir(REPO / directory, quiet=1)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench", description="cudalint's benchmark suite")
    parser.add_argument("--runs", type=int, default=3, help="runs of each timed command (median shown; default 3)")
    parser.add_argument("--jobs", type=jobs_list, default=[1, 2], metavar="N,N,...", help="--jobs counts to check the tree with, e.g. 1,2,4,8,16 (1 and 2 always)")
    parser.add_argument("--skip-server", action="store_true", help="leave out the editor and server rows")
    parser.add_argument("--write-readme", type=Path, metavar="README", help="also write the table into README's bench block")
    args = parser.parse_args(argv)

    def log(message: str) -> None:
        print(message, file=sys.stderr, flush=True)

    inputs = ensure_inputs(log)
    compile_bytecode()
    started = load()
    log(f"inputs: {inputs.root}; load average {started}; {os.cpu_count()} CPUs")
    rows: list[Row] = []

    def section(name: str, measure) -> None:
        """One group of rows; a failure (a timeout on a loaded machine) costs only its rows."""
        log(f"{name} ...")
        try:
            rows.extend(measure())
        except (RuntimeError, subprocess.CalledProcessError, json.JSONDecodeError) as error:
            detail = (getattr(error, "stderr", None) or str(error)).strip().splitlines()
            rows.append(Row(name, f"not measured: {detail[-1][:120] if detail else type(error).__name__}", met=False))

    section("the tree", lambda: tree_rows(inputs, args.runs, args.jobs))
    section("cold start", lambda: cold_rows(inputs, args.runs))
    section("large generated file", lambda: large_file_rows(inputs))
    section("hostile inputs", hostile_rows)
    missing = "--skip-server" if args.skip_server else server_available()
    if missing is None:
        section("editor and server", lambda: editor_rows(inputs, args.runs))
    else:
        rows.append(Row("editor latency and server memory", f"not run: {missing}"))
    footer = f"load average before {started}, after {load()}; {os.cpu_count()} CPUs; {args.runs} runs per timed command (median, min-max)"
    print(render(rows))
    print(f"\n{footer}")
    if args.write_readme:
        write_readme(args.write_readme, rows, footer)
    return 0 if all(r.met is not False for r in rows) else 1
