"""The long fuzz run: the checks of test_fuzz.py with fresh randomness until time is up.

    python -m tests.fuzz --minutes 30          # from the repository root
    python -m tests.fuzz --minutes 5 --seed 7  # repeatable

Generated Nix and mutated fixtures alternate in chunks, each chunk with its own seed; a 50 MB
single line goes through the engine once at the start (`--no-huge` skips it). Every failing
input (shrunk by hypothesis first) that fails again in a fresh interpreter is saved under
tests/fixtures/regressions/ with a `.why` file, and test_fuzz.py replays it from then on
(`--replay FILE` checks one input). Exit status 1 when something failed.
"""

from __future__ import annotations

import argparse
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from hypothesis import HealthCheck, given, seed, settings

from fuzz_harness import Watchdog, as_text, broken_promises, save_regression
from nix_generator import mutated_fixtures, nix_files, one_line
from nix_oracle import nix_parser

CHUNK = 100
PER_INPUT_LIMIT = 120.0
HUGE_LIMIT = 1800.0


class Found(AssertionError):
    pass


def run_chunk(strategy, chunk_seed: int, watchdog: Watchdog, nix: str, counter: list[int]) -> tuple[bytes, list[str]] | None:
    """One hypothesis run of CHUNK examples; the shrunk failing input and its problems, if any."""
    last: dict[str, object] = {}

    @seed(chunk_seed)
    @settings(max_examples=CHUNK, deadline=None, database=None, suppress_health_check=list(HealthCheck))
    @given(strategy)
    def probe(value: str | bytes) -> None:
        data = value if isinstance(value, bytes) else value.encode("utf-8", "surrogatepass")
        counter[0] += 1
        problems = broken_promises(as_text(data), watchdog, nix)
        if problems:
            last["data"], last["problems"] = data, problems
            raise Found("\n".join(problems))

    try:
        probe()
    except Found:
        return last["data"], last["problems"]
    return None


def reproduces(data: bytes) -> bool:
    """Whether a failure shows in a fresh interpreter too: the checking process keeps the modules
    it started with, so an edit to the working tree meanwhile can fail inputs that are fine."""
    with tempfile.NamedTemporaryFile(suffix=".input") as handle:
        handle.write(data)
        handle.flush()
        replay = subprocess.run([sys.executable, "-m", "tests.fuzz", "--replay", handle.name], cwd=Path(__file__).parents[1])
    return replay.returncode != 0


def replay(path: str) -> int:
    problems = broken_promises(as_text(Path(path).read_bytes()), Watchdog(PER_INPUT_LIMIT), nix_parser())
    print("\n".join(problems) or "ok")
    return 1 if problems else 0


def keep(data: bytes, problems: list[str], failures: list[Path]) -> None:
    if not reproduces(data):
        print("a failure did not reproduce in a fresh process (the working tree changed?); not saved:\n  " + problems[0][:300], flush=True)
        return
    path = save_regression(data, problems)
    failures.append(path)
    print(f"FAILED (saved {path}):\n  " + "\n  ".join(problems), flush=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.fuzz", description=__doc__.split("\n\n")[0])
    parser.add_argument("--minutes", type=float, default=30.0)
    parser.add_argument("--seed", type=int, default=None, help="base seed (default: random)")
    parser.add_argument("--no-huge", action="store_true", help="skip the 50 MB single line")
    parser.add_argument("--replay", metavar="FILE", help="check one saved input and exit")
    options = parser.parse_args(argv)
    if options.replay:
        return replay(options.replay)
    base = options.seed if options.seed is not None else random.randrange(1 << 30)
    nix = nix_parser()
    end = time.monotonic() + options.minutes * 60
    failures: list[Path] = []
    counter = [0]
    print(f"fuzzing for {options.minutes:g} minutes, base seed {base}", flush=True)

    if not options.no_huge:
        huge = Watchdog(HUGE_LIMIT)
        data = one_line(50 * 1024 * 1024)
        started = time.monotonic()
        problems = broken_promises(as_text(data), huge, nix, thorough=False)
        huge.close()
        counter[0] += 1
        print(f"50 MB single line: {time.monotonic() - started:.0f} s, {'ok' if not problems else problems}", flush=True)
        if problems:
            keep(data, problems, failures)

    watchdog = Watchdog(PER_INPUT_LIMIT)
    chunk = 0
    while time.monotonic() < end:
        strategy = (nix_files(), mutated_fixtures())[chunk % 2]
        found = run_chunk(strategy, base + chunk, watchdog, nix, counter)
        chunk += 1
        if found is not None:
            keep(*found, failures)
        print(f"{counter[0]} cases, {len(failures)} failing", flush=True)
    watchdog.close()
    print(f"done: {counter[0]} cases in {chunk} chunks (seeds {base}..{base + chunk - 1}), {len(failures)} failing inputs saved")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
