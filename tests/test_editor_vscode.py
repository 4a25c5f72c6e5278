"""The VS Code extension: built and packaged to a .vsix with its pinned tools, then its node
tests (client configuration, activate() with `vscode` stubbed, the bundle, a protocol round
trip) run against this checkout's `cudalint server`."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import zipfile
from pathlib import Path

import pytest

from editor_support import REPO, cudalint_env
from requirements import IN_CI, require_executable

EXTENSION = REPO / "editors" / "vscode"
MANIFEST = json.loads((EXTENSION / "package.json").read_text(encoding="utf-8"))
VSIX = EXTENSION / "dist" / "cudalint.vsix"


@pytest.fixture(scope="module")
def npm() -> str:
    require_executable("node", "the extension's tests run under node")
    npm = require_executable("npm", "the extension is built with its pinned npm tools")
    if not (EXTENSION / "node_modules").is_dir():
        message = "editors/vscode/node_modules is missing: run `npm ci` there (.ci/run does)"
        if IN_CI:
            pytest.fail(message)
        pytest.skip(message)
    return npm


@pytest.fixture(scope="module")
def packaged(npm: str) -> Path:
    """Type-check, compile, bundle and package the current sources."""
    shutil.rmtree(EXTENSION / "dist", ignore_errors=True)
    built = subprocess.run([npm, "run", "package"], cwd=EXTENSION, capture_output=True, text=True, timeout=300)
    assert built.returncode == 0, built.stdout + built.stderr
    return VSIX


def test_dependencies_are_pinned() -> None:
    for group in ("dependencies", "devDependencies"):
        for name, version in MANIFEST[group].items():
            assert re.fullmatch(r"\d+\.\d+\.\d+", version), f"{name}@{version} is not an exact version"
    lock = json.loads((EXTENSION / "package-lock.json").read_text(encoding="utf-8"))
    root = lock["packages"][""]
    assert root["dependencies"] == MANIFEST["dependencies"]
    assert root["devDependencies"] == MANIFEST["devDependencies"]


def test_types_do_not_outrun_the_engine() -> None:
    # @types/vscode newer than engines.vscode lets the code call APIs older VS Codes lack.
    engine = MANIFEST["engines"]["vscode"].lstrip("^")
    types_version = MANIFEST["devDependencies"]["@types/vscode"]
    assert tuple(map(int, types_version.split("."))) <= tuple(map(int, engine.split(".")))


def test_vsix_holds_the_bundle_and_nothing_else(packaged: Path) -> None:
    with zipfile.ZipFile(packaged) as vsix:
        names = set(vsix.namelist())
        main = "extension/" + MANIFEST["main"].removeprefix("./")
        assert main in names
        assert vsix.read(main) == (EXTENSION / MANIFEST["main"]).read_bytes()
        packaged_manifest = json.loads(vsix.read("extension/package.json"))
    assert packaged_manifest["contributes"] == MANIFEST["contributes"]
    assert not [n for n in names if re.search(r"/(node_modules|src|test|out)/|\.map$|\.ts$", n)], names


def test_vsix_ships_the_licence_and_the_language_configuration(packaged: Path) -> None:
    (language,) = MANIFEST["contributes"]["languages"]
    configuration = "extension/" + language["configuration"].removeprefix("./")
    with zipfile.ZipFile(packaged) as vsix:
        assert vsix.read("extension/LICENSE.txt").decode() == (REPO / "LICENSE").read_text(encoding="utf-8")
        shipped = json.loads(vsix.read(configuration))
    assert "--skip-license" not in MANIFEST["scripts"]["package"]
    # Bare VS Code knows no Nix: without these, Ctrl+/ and bracket matching do nothing.
    assert shipped["comments"] == {"lineComment": "#", "blockComment": ["/*", "*/"]}
    assert shipped["brackets"] == [["{", "}"], ["[", "]"], ["(", ")"]]
    closing = {pair["open"]: pair["close"] for pair in shipped["autoClosingPairs"]}
    assert closing | {"''": "''", '"': '"', "{": "}", "[": "]", "(": ")"} == closing


def test_node_tests_pass_against_the_real_server(packaged: Path) -> None:
    node = require_executable("node", "the extension's tests run under node")
    env = cudalint_env()
    env["CUDALINT_SERVER_PATH"] = shutil.which("cudalint", path=env["PATH"])
    tests = sorted(str(path.relative_to(EXTENSION)) for path in (EXTENSION / "test").glob("*.test.js"))
    run = subprocess.run([node, "--test", *tests], cwd=EXTENSION, env=env, capture_output=True, text=True, timeout=600)
    report = run.stdout + run.stderr
    assert run.returncode == 0, report
    counts = dict(re.findall(r"^# (tests|pass|fail|skipped|cancelled) (\d+)$", report, re.M))
    assert counts["fail"] == counts["skipped"] == counts["cancelled"] == "0", report
    assert int(counts["pass"]) == int(counts["tests"]) > 0


def test_the_readmes_show_the_browser_tests_screenshot() -> None:
    # Written by tests/test_editor_vscode_browser.py with CUDALINT_UPDATE_SCREENSHOTS=1.
    screenshot = EXTENSION / "screenshot.png"
    assert screenshot.read_bytes().startswith(b"\x89PNG") and screenshot.stat().st_size < 200_000
    for readme, link in [(REPO / "README.md", "editors/vscode/screenshot.png"), (REPO / "editors" / "README.md", "vscode/screenshot.png"), (EXTENSION / "README.md", "screenshot.png")]:
        assert f"]({link})" in readme.read_text(encoding="utf-8"), readme


def test_the_packaged_readme_links_to_files_that_exist(packaged: Path) -> None:
    """vsce rewrites the README's relative links to absolute ones (the Marketplace and the
    Extensions view need them): each must point at a file of this repository, at its path."""
    with zipfile.ZipFile(packaged) as vsix:
        readme = vsix.read("extension/readme.md").decode()
    links = re.findall(r"\]\((https://github\.com/cudalint/cudalint/(?:raw|blob)/HEAD/[^)\s]+)\)", readme)
    assert links, readme
    for link in links:
        path = link.split("/HEAD/", 1)[1].split("#", 1)[0]
        assert (REPO / path).is_file(), link
