"""Hostile inputs (issue 23), timed: `cudalint check` on the 192 KB list of 16,000 `cudatoolkit`
entries (81 s before CUDA001 stopped rescanning it) and on the 9.8 MB list ending in
`cudatoolkit` (reported nothing before), and `cudalint server` with a 5 MB document open: how
long a hover on another document waits, and the 5 MB document's own diagnostics.

    python -m bench.hostile            # prints JSON
"""

from __future__ import annotations

import json
import queue
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from tests.lsp_framing import read_messages, write_message

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


class Server:
    def __init__(self, root: Path) -> None:
        self.process = subprocess.Popen([sys.executable, "-m", "cudalint", "server"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, cwd=root)
        self.incoming: queue.Queue = queue.Queue()
        self.ident = 0
        threading.Thread(target=self._read, daemon=True).start()
        self.request("initialize", {"processId": None, "rootUri": root.as_uri(), "capabilities": {}})
        self.notify("initialized", {})

    def _read(self) -> None:
        assert self.process.stdout is not None
        for message in read_messages(self.process.stdout):
            self.incoming.put((time.perf_counter(), message))

    def notify(self, method: str, params: object) -> None:
        assert self.process.stdin is not None
        write_message(self.process.stdin, {"method": method, "params": params})

    def send(self, method: str, params: object) -> int:
        assert self.process.stdin is not None
        self.ident += 1
        write_message(self.process.stdin, {"id": self.ident, "method": method, "params": params})
        return self.ident

    def request(self, method: str, params: object) -> dict:
        ident = self.send(method, params)
        return self.wait(lambda m: m.get("id") == ident and "method" not in m)[1]

    def wait(self, wanted, timeout: float = 600.0) -> tuple[float, dict]:
        while True:
            at, message = self.incoming.get(timeout=timeout)
            if wanted(message):
                return at, message

    def close(self) -> None:
        try:
            self.request("shutdown", None)
            self.notify("exit", None)
            self.process.wait(timeout=30)
        finally:
            if self.process.poll() is None:
                self.process.kill()


def server_with_a_large_document(root: Path) -> dict:
    server = Server(root)
    try:
        small, large = (root / "small.nix").as_uri(), (root / "large.nix").as_uri()
        server.notify("textDocument/didOpen", {"textDocument": {"uri": small, "languageId": "nix", "version": 1, "text": SMALL}})
        server.wait(lambda m: m.get("method") == "textDocument/publishDiagnostics" and m["params"]["uri"] == small)
        opened = time.perf_counter()
        server.notify("textDocument/didOpen", {"textDocument": {"uri": large, "languageId": "nix", "version": 1, "text": five_megabytes()}})
        server.send("textDocument/hover", {"textDocument": {"uri": large}, "position": {"line": 2, "character": 1}})
        asked = time.perf_counter()
        ident = server.send("textDocument/hover", {"textDocument": {"uri": small}, "position": {"line": 2, "character": 25}})
        answered, _ = server.wait(lambda m: m.get("id") == ident and "method" not in m)
        published, _ = server.wait(lambda m: m.get("method") == "textDocument/publishDiagnostics" and m["params"]["uri"] == large)
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
