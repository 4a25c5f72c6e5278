"""Replay the real-world corpora: lint a restored copy and compare with the recorded verdicts.

    python tests/realworld/replay.py --root /work/corpus [CORPUS ...] [--strict] [--fixes] [--json]

Each corpus is a manifest `tests/realworld/<corpus>.json` (the format is in README.md next to this
script); the text of its files lives outside the repository, at
`<root>/<corpus>/<owner>+<name>/<path>`. The script checks that every file is there with the
recorded sha256, lints the files with `cudalint check --output-format json` (grouped by their
`nixpkgs` target, preview rules on when the CLI has `--preview`), matches each finding to a
recorded verdict by (code, stripped line text, nearest line) and prints, per corpus and overall:
the findings, the known false positives still reported, the known true positives kept and lost,
the debatable ones, the unjudged findings, the files judged clean that still get a warning or an
error, and the precision of every rule. `--fixes` applies `--fix --unsafe-fixes` to a copy of
every file and prints the diff beside the recorded fix verdict.

CI does not run this script (the corpora are not in the repository); its matching and summary
logic is tested on a synthetic corpus by tests/test_realworld_replay.py.
"""

from __future__ import annotations

import argparse
import difflib
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
TEXT_WIDTH = 120  # the recorded `text` is the finding's line, stripped, cut to this many characters
BATCH = 40  # files per cudalint run (one process per batch and target)
REPORTED_SEVERITIES = ("warning", "error")  # what makes a clean file count as flagged

Manifest = dict[str, Any]
Entry = dict[str, Any]


@dataclass(frozen=True)
class Finding:
    """One finding of the linter on one file (the part of its JSON output replay needs)."""

    code: str
    line: int
    message: str
    severity: str


@dataclass
class Match:
    finding: Finding
    text: str  # the finding's line, stripped and cut as in the manifest
    verdict: str | None  # true | false | debatable, or None when unjudged
    reason: str = ""


@dataclass
class FileOutcome:
    corpus: str
    entry: Entry
    status: str  # ok | missing | changed
    matches: list[Match] = field(default_factory=list)
    lost: list[Entry] = field(default_factory=list)  # recorded true positives not reported any more
    gone: list[Entry] = field(default_factory=list)  # recorded false positives not reported any more

    @property
    def label(self) -> str:
        return f"{self.corpus}:{self.entry['path']}"


def line_text(lines: Sequence[str], line: int) -> str:
    """The stripped text of 1-based `line`, cut as the manifest records it."""
    if 1 <= line <= len(lines):
        return lines[line - 1].strip()[:TEXT_WIDTH]
    return ""


def match_findings(recorded: Sequence[Entry], findings: Sequence[Finding], lines: Sequence[str]) -> tuple[list[Match], list[Entry]]:
    """Pair each finding with a recorded verdict of the same code on a line of the same text.

    Among several candidates the one recorded nearest to the finding's line wins; each recorded
    verdict pairs with one finding at most. Returns the matches (verdict None: unjudged) and the
    recorded verdicts left unpaired.
    """
    free = list(recorded)
    matches: list[Match] = []
    # findings sorted by line so that repeated identical lines pair in order
    for finding in sorted(findings, key=lambda f: (f.line, f.code, f.message)):
        text = line_text(lines, finding.line)
        candidates = [r for r in free if r.get("code") == finding.code and str(r.get("text", "")).strip()[:TEXT_WIDTH] == text]
        if not candidates:
            matches.append(Match(finding, text, None))
            continue
        best = min(candidates, key=lambda r: (abs(int(r.get("line", 0)) - finding.line), int(r.get("line", 0))))
        free.remove(best)
        matches.append(Match(finding, text, str(best.get("verdict")), str(best.get("reason", ""))))
    return matches, free


def sha256_of(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def local_path(root: Path, corpus: str, entry: Entry) -> Path:
    """root/corpus/owner+name/path, or root/corpus/<local> when the entry records where it is kept
    (two versions of one path, e.g. an era file beside the current one, need their own places)."""
    if entry.get("local"):
        return root / corpus / str(entry["local"])
    owner_name = str(entry["repo"]).replace("/", "+")
    return root / corpus / owner_name / str(entry["path"])


def load_manifest(name_or_path: str) -> Manifest:
    path = Path(name_or_path)
    if not path.suffix:
        path = HERE / f"{name_or_path}.json"
    data: Manifest = json.loads(path.read_text(encoding="utf-8"))
    data.setdefault("corpus", path.stem)
    return data


def all_manifests() -> list[str]:
    return [str(p) for p in sorted(HERE.glob("*.json"))]


# --- running cudalint --------------------------------------------------------------------------


def cudalint_command() -> list[str]:
    """`cudalint` beside the running Python (a venv), else on PATH, else `python -m cudalint`."""
    beside = Path(sys.executable).with_name("cudalint")
    if beside.exists():
        return [str(beside)]
    found = shutil.which("cudalint")
    if found:
        return [found]
    return [sys.executable, "-m", "cudalint"]


def has_preview(command: Sequence[str]) -> bool:
    try:
        out = subprocess.run([*command, "check", "--help"], capture_output=True, text=True, check=False).stdout
    except OSError:
        return False
    return "--preview" in out


LintFn = Callable[[Sequence[Path], str | None], dict[Path, list[Finding]]]


def make_linter(command: Sequence[str], preview: bool, extra: Sequence[str] = ()) -> LintFn:
    """A function that lints files against one target and returns their findings by path."""

    def lint(paths: Sequence[Path], target: str | None) -> dict[Path, list[Finding]]:
        results: dict[Path, list[Finding]] = {p.resolve(): [] for p in paths}
        for start in range(0, len(paths), BATCH):
            chunk = paths[start : start + BATCH]
            args = [*command, "check", "--output-format", "json", "--exit-zero", "--isolated", "--no-respect-gitignore", "-q"]
            if preview:
                args.append("--preview")
            if target:
                args += ["--nixpkgs", target]
            args += [*extra, *(str(p) for p in chunk)]
            proc = subprocess.run(args, capture_output=True, text=True, check=False)
            try:
                records = json.loads(proc.stdout or "[]")
            except json.JSONDecodeError:
                raise SystemExit(f"cudalint gave no JSON (exit {proc.returncode}):\n{proc.stderr}") from None
            for record in records:
                path = Path(record["filename"]).resolve()
                results.setdefault(path, []).append(Finding(record["code"], int(record["location"]["row"]), record["message"], record["severity"]))
        return results

    return lint


# --- replaying ---------------------------------------------------------------------------------


def replay(manifests: Sequence[Manifest], root: Path, lint: LintFn) -> list[FileOutcome]:
    """Check, lint and match every file of every manifest."""
    outcomes: list[FileOutcome] = []
    by_target: dict[str | None, list[tuple[FileOutcome, Path]]] = defaultdict(list)
    for manifest in manifests:
        corpus = str(manifest["corpus"])
        for entry in manifest.get("files", []):
            path = local_path(root, corpus, entry)
            if not path.is_file():
                outcomes.append(FileOutcome(corpus, entry, "missing"))
                continue
            status = "ok" if not entry.get("sha256") or sha256_of(path) == entry["sha256"] else "changed"
            outcome = FileOutcome(corpus, entry, status)
            outcomes.append(outcome)
            by_target[entry.get("nixpkgs")].append((outcome, path))
    for target, items in by_target.items():
        found = lint([path for _, path in items], target)
        for outcome, path in items:
            lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
            recorded = list(outcome.entry.get("findings", []))
            outcome.matches, free = match_findings(recorded, found.get(path.resolve(), []), lines)
            outcome.lost = [r for r in free if r.get("verdict") == "true"]
            outcome.gone = [r for r in free if r.get("verdict") == "false"]
    return outcomes


def summarize(outcomes: Iterable[FileOutcome]) -> dict[str, Any]:
    """The numbers and lists replay prints, for one group of files."""
    outcomes = list(outcomes)
    present = [o for o in outcomes if o.status != "missing"]
    verdicts: Counter[str] = Counter()
    per_rule: dict[str, Counter[str]] = defaultdict(Counter)
    known_fp: list[str] = []
    unjudged: list[str] = []
    for o in present:
        for m in o.matches:
            key = m.verdict or "unjudged"
            verdicts[key] += 1
            per_rule[m.finding.code][key] += 1
            where = f"{o.entry['path']}:{m.finding.line} {m.finding.code}"
            if m.verdict == "false":
                known_fp.append(f"{where} ({m.reason})" if m.reason else where)
            elif m.verdict is None:
                unjudged.append(f"{where} {m.finding.message}")
    clean = [o for o in present if o.entry.get("clean") is True]
    flagged = [o for o in clean if any(m.finding.severity in REPORTED_SEVERITIES for m in o.matches)]
    precision: dict[str, dict[str, Any]] = {}
    for code in sorted(per_rule):
        c = per_rule[code]
        judged = c["true"] + c["false"]
        precision[code] = {
            "true": c["true"],
            "false": c["false"],
            "debatable": c["debatable"],
            "unjudged": c["unjudged"],
            "precision": round(c["true"] / judged, 3) if judged else None,
        }
    judged = verdicts["true"] + verdicts["false"]
    return {
        "files": len(outcomes),
        "missing": [o.label for o in outcomes if o.status == "missing"],
        "changed": [o.label for o in outcomes if o.status == "changed"],
        "findings": sum(len(o.matches) for o in present),
        "true_kept": verdicts["true"],
        "true_lost": [f"{o.entry['path']}:{r.get('line')} {r.get('code')} {r.get('reason', '')}".rstrip() for o in present for r in o.lost],
        "false_left": known_fp,
        "false_gone": sum(len(o.gone) for o in present),
        "debatable": verdicts["debatable"],
        "unjudged": unjudged,
        "clean_files": len(clean),
        "clean_flagged": [o.entry["path"] for o in flagged],
        "clean_flagged_share": round(len(flagged) / len(clean), 3) if clean else None,
        "precision": round(verdicts["true"] / judged, 3) if judged else None,
        "rules": precision,
    }


def strict_failure(summary: dict[str, Any]) -> bool:
    return bool(summary["false_left"] or summary["true_lost"] or summary["unjudged"])


def print_summary(title: str, s: dict[str, Any], out: Any = sys.stdout) -> None:
    def w(text: str = "") -> None:
        print(text, file=out)

    w(f"== {title}: {s['files']} files, {s['findings']} findings, precision {s['precision']}")
    for label, key in (("missing", "missing"), ("changed since recorded (sha256)", "changed")):
        if s[key]:
            w(f"  {label}: {len(s[key])}")
            for item in s[key]:
                w(f"    {item}")
    w(f"  known true positives kept: {s['true_kept']}, lost: {len(s['true_lost'])}")
    for item in s["true_lost"]:
        w(f"    LOST {item}")
    w(f"  known false positives left: {len(s['false_left'])} (no longer reported: {s['false_gone']})")
    for item in s["false_left"]:
        w(f"    FP {item}")
    w(f"  debatable: {s['debatable']}")
    w(f"  unjudged: {len(s['unjudged'])}")
    for item in s["unjudged"]:
        w(f"    ? {item}")
    share = s["clean_flagged_share"]
    w(f"  clean files with a warning or error: {len(s['clean_flagged'])}/{s['clean_files']}" + (f" ({share:.1%})" if share is not None else ""))
    for item in s["clean_flagged"]:
        w(f"    {item}")
    if s["rules"]:
        w("  rule      true false debatable unjudged precision")
        for code, r in s["rules"].items():
            p = "-" if r["precision"] is None else f"{r['precision']:.2f}"
            w(f"  {code:8} {r['true']:5} {r['false']:5} {r['debatable']:9} {r['unjudged']:8} {p:>9}")


# --- fixes -------------------------------------------------------------------------------------


def changed_lines(before: Sequence[str], after: Sequence[str]) -> set[int]:
    """1-based lines of `after` that the fix inserted or replaced."""
    lines: set[int] = set()
    for tag, _i1, _i2, j1, j2 in difflib.SequenceMatcher(a=before, b=after, autojunk=False).get_opcodes():
        if tag in ("replace", "insert"):
            lines.update(range(j1 + 1, j2 + 1))
    return lines


def replay_fixes(manifests: Sequence[Manifest], root: Path, command: Sequence[str], preview: bool, out: Any = sys.stdout) -> None:
    """Apply `--fix --unsafe-fixes` to a copy of every file, print the diffs and re-lint them."""
    relint = make_linter(command, preview)
    with tempfile.TemporaryDirectory(prefix="cudalint-replay-") as tmp:
        by_target: dict[str | None, list[tuple[Entry, Path, Path]]] = defaultdict(list)
        for manifest in manifests:
            corpus = str(manifest["corpus"])
            for entry in manifest.get("files", []):
                source = local_path(root, corpus, entry)
                if not source.is_file():
                    continue
                copy = Path(tmp) / corpus / source.relative_to(root / corpus)
                copy.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(source, copy)
                by_target[entry.get("nixpkgs")].append((entry, source, copy))
        for target, items in by_target.items():
            copies = [copy for _, _, copy in items]
            for start in range(0, len(copies), BATCH):
                args = [*command, "check", "--fix", "--unsafe-fixes", "--exit-zero", "--isolated", "--no-respect-gitignore", "-q"]
                if preview:
                    args.append("--preview")
                if target:
                    args += ["--nixpkgs", target]
                subprocess.run([*args, *(str(c) for c in copies[start : start + BATCH])], capture_output=True, text=True, check=False)
            after_fix = relint(copies, target)
            for entry, source, copy in items:
                before = source.read_text(encoding="utf-8", errors="replace").splitlines(keepends=True)
                after = copy.read_text(encoding="utf-8", errors="replace").splitlines(keepends=True)
                recorded = entry.get("fix") or {}
                verdict = f"{recorded.get('verdict', 'unjudged')}" + (f": {recorded['reason']}" if recorded.get("reason") else "")
                if before == after:
                    print(f"--- {entry['path']}: no change (recorded: {verdict})", file=out)
                    continue
                print(f"--- {entry['path']} (recorded fix verdict: {verdict})", file=out)
                out.writelines(difflib.unified_diff(before, after, f"a/{entry['path']}", f"b/{entry['path']}"))
                touched = changed_lines(before, after)
                left = [f for f in after_fix.get(copy.resolve(), []) if f.line in touched]
                if left:
                    print("  findings on changed lines after the fix:", file=out)
                    for f in left:
                        print(f"    {f.line}: {f.code} {f.message}", file=out)
                else:
                    print("  no finding on the changed lines after the fix", file=out)


# --- command line ------------------------------------------------------------------------------


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("corpora", nargs="*", help="corpus names or manifest paths (default: every tests/realworld/*.json)")
    parser.add_argument("--root", type=Path, default=Path(os.environ.get("CUDALINT_CORPUS_ROOT", "/work/corpus")), help="where the restored corpora live")
    parser.add_argument("--strict", action="store_true", help="exit 1 when a known false positive remains, a known true positive is lost or a finding is unjudged")
    parser.add_argument("--fixes", action="store_true", help="apply --fix --unsafe-fixes to copies and print the diffs")
    parser.add_argument("--json", action="store_true", help="print the summary as JSON")
    parser.add_argument("--no-preview", action="store_true", help="leave preview rules off even when the CLI has --preview")
    args = parser.parse_args(argv)

    manifests = [load_manifest(c) for c in (args.corpora or all_manifests())]
    command = cudalint_command()
    preview = not args.no_preview and has_preview(command)
    if args.fixes:
        replay_fixes(manifests, args.root, command, preview)
        return 0
    outcomes = replay(manifests, args.root, make_linter(command, preview))
    corpora = [str(m["corpus"]) for m in manifests]
    summaries = {c: summarize(o for o in outcomes if o.corpus == c) for c in corpora}
    overall = summarize(outcomes)
    if args.json:
        print(json.dumps({"preview": preview, "corpora": summaries, "overall": overall}, indent=2))
    else:
        print(f"preview rules: {'on' if preview else 'off'}")
        for corpus, summary in summaries.items():
            print_summary(corpus, summary)
        if len(summaries) > 1:
            print_summary("overall", overall)
    return 1 if args.strict and strict_failure(overall) else 0


if __name__ == "__main__":
    sys.exit(main())
