"""Hostile inputs (issue 23), timed: `cudalint check` on the 192 KB list of 16,000 `cudatoolkit`
entries (81 s before CUDA001 stopped rescanning it) and on the 9.8 MB list ending in
`cudatoolkit` (reported nothing before), and `cudalint server` with a 5 MB document open: how
long a hover on another document waits, and the 5 MB document's own diagnostics.

    python -m bench.hostile            # prints JSON
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tests.lsp_framing import RawServer

SMALL = "{ stdenv, cudatoolkit }:\nstdenv.mkDerivation {\n  nativeBuildInputs = [ cudatoolkit ];\n}\n"


def long_list() -> str:
    return "[ " + "cudatoolkit " * 16_000 + "]\n"


def huge_list() -> str:
    return "[ " + "a " * 4_900_000 + "cudatoolkit ]\n"


def five_megabytes() -> str:
    bindings = "".join(f"a{index} = {index};\n" for index in range(360_000))
    return "{ stdenv, cudatoolkit }:\n{\n" + bindings + "b = stdenv.mkDerivation { nativeBuildInputs = [ cudatoolkit ]; };\n}\n"


def check(path: Path) -> dict:
    """Wall time, peak RSS and findings of `cudalint check` on one file (GNU time's report)."""
    began = time.perf_counter()
    done = subprocess.run(["/usr/bin/time", "-f", "%M", sys.executable, "-m", "cudalint", "check", "--output-format", "json", str(path)], capture_output=True, text=True)
    wall = time.perf_counter() - began
    peak_kib = int(done.stderr.strip().splitlines()[-1]) if done.stderr.strip().splitlines()[-1].isdigit() else None
    findings = json.loads(done.stdout) if done.stdout.strip() else []
    notes = [line for line in done.stderr.splitlines() if "checked" in line]
    return {"seconds": round(wall, 2), "peak_rss_mb": peak_kib // 1024 if peak_kib else None, "codes": sorted({f["code"] for f in findings}), "exit": done.returncode, "notes": notes}


def server_with_a_large_document(root: Path) -> dict:
    server = RawServer(root, patience=600.0)
    try:
        small, large = (root / "small.nix").as_uri(), (root / "large.nix").as_uri()
        server.notify("textDocument/didOpen", {"textDocument": {"uri": small, "languageId": "nix", "version": 1, "text": SMALL}})
        server.wait(lambda m: m.get("method") == "textDocument/publishDiagnostics" and m["params"]["uri"] == small)
        opened = time.perf_counter()
        server.notify("textDocument/didOpen", {"textDocument": {"uri": large, "languageId": "nix", "version": 1, "text": five_megabytes()}})
        server.send_request("textDocument/hover", {"textDocument": {"uri": large}, "position": {"line": 2, "character": 1}})
        asked = time.perf_counter()
        server.answer(server.send_request("textDocument/hover", {"textDocument": {"uri": small}, "position": {"line": 2, "character": 25}}))
        answered = server.arrived
        server.wait(lambda m: m.get("method") == "textDocument/publishDiagnostics" and m["params"]["uri"] == large)
        published = server.arrived
        return {"other_hover_waited_seconds": round(answered - asked, 3), "large_document_diagnostics_seconds": round(published - opened, 2)}
    finally:
        server.close()


def main() -> None:
    with tempfile.TemporaryDirectory() as directory:
        root = Path(directory)
        (root / "long.nix").write_text(long_list())
        (root / "huge.nix").write_text(huge_list())
        figures = {
            "192 KB list of 16,000 cudatoolkit": check(root / "long.nix"),
            "9.8 MB list ending in cudatoolkit": check(root / "huge.nix"),
            "server, 5 MB document open": server_with_a_large_document(root),
        }
    print(json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()
