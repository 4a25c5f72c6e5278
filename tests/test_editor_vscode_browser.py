"""The packaged extension in a real VS Code: code-server (VS Code 1.139 for the browser, from npm)
driven through headless Chromium by Selenium, on a copy of the README's example. Everything is
checked through the UI a user sees: the language mode, the squiggles, the Problems panel, the
quick-fix menu (no unsafe fixes with `"cudalint.unsafeFixes": false`), applying a fix (the file
on disk becomes what `cudalint check --fix` writes), hover, `Ctrl+/` and completion.

Screenshots of every step land in the test's temporary directory (their paths are printed);
CUDALINT_UPDATE_SCREENSHOTS=1 also copies the quick-fix one to editors/vscode/screenshot.png,
the image of the READMEs. code-server and Node 24 are cached under
${XDG_CACHE_HOME:-~/.cache}/cudalint-tests (the first run builds code-server: minutes)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from cudalint.lint.registry import rule_by_code
from editor_support import REPO, cudalint_env
from requirements import IN_CI, require_executable
from test_editor_vscode import EXTENSION, npm, packaged  # noqa: F401 (fixtures: the freshly built .vsix)
from vscode_browser import CodeServer, code_server, node24

EXAMPLE = REPO / "examples" / "legacy-cuda-package.nix"
README_SCREENSHOT = EXTENSION / "screenshot.png"
# Guards against a hung UI (the test fails instead of waiting forever); not a speed check.
PATIENCE = 90.0
SETTINGS = {
    "chat.disableAIFeatures": True,
    "workbench.startupEditor": "none",
    "workbench.secondarySideBar.defaultVisibility": "hidden",
    "workbench.tips.enabled": False,
    "extensions.autoCheckUpdates": False,
    "extensions.autoUpdate": False,
    "extensions.ignoreRecommendations": True,
    "telemetry.telemetryLevel": "off",
    "editor.minimap.enabled": False,
    "cudalint.unsafeFixes": False,
}


def _selenium():
    try:
        import selenium.webdriver  # noqa: F401
    except ImportError:
        message = "selenium is not installed (a test dependency: pip install -e '.[test]')"
        if IN_CI:
            pytest.fail(message)
        pytest.skip(message)
    from selenium import webdriver

    return webdriver


def cli_findings(path: Path) -> list[dict[str, Any]]:
    """What `cudalint check` reports for `path` (the server lints with the same defaults)."""
    run = subprocess.run([sys.executable, "-m", "cudalint", "check", "--isolated", "--output-format", "json", str(path)], capture_output=True, text=True)
    return json.loads(run.stdout)


def cli_fixed(path: Path, code: str, scratch: Path) -> str:
    """`path` as `cudalint check --fix --select CODE` leaves it."""
    scratch.mkdir(exist_ok=True)
    copy = scratch / path.name
    shutil.copyfile(path, copy)
    subprocess.run([sys.executable, "-m", "cudalint", "check", "--isolated", "--fix", "--quiet", "--select", code, str(copy)])
    return copy.read_text(encoding="utf-8")


class Workbench:
    """The VS Code page: keys, waits, and screenshots named after the step."""

    def __init__(self, driver, screenshots: Path) -> None:
        from selenium.webdriver.common.action_chains import ActionChains
        from selenium.webdriver.common.by import By
        from selenium.webdriver.common.keys import Keys

        self.driver, self.screenshots, self.By, self.Keys, self.ActionChains = driver, screenshots, By, Keys, ActionChains
        self.taken: list[Path] = []

    def screenshot(self, step: str) -> Path:
        path = self.screenshots / f"{len(self.taken) + 1:02d}-{step}.png"
        self.driver.save_screenshot(str(path))
        self.taken.append(path)
        print(f"screenshot: {path}")
        return path

    def wait(self, what: str, found: Callable[[], Any]) -> Any:
        """`found()` once it is truthy; on a hang, a screenshot and a failure naming `what`."""
        return self.until(what, lambda: None, found, every=PATIENCE)

    def elements(self, css: str) -> list:
        return self.driver.find_elements(self.By.CSS_SELECTOR, css)

    def press(self, *keys: str, modifiers: tuple[str, ...] = ()) -> None:
        chain = self.ActionChains(self.driver)
        for modifier in modifiers:
            chain.key_down(modifier)
        chain.send_keys(*keys)
        for modifier in reversed(modifiers):
            chain.key_up(modifier)
        chain.perform()

    def ctrl(self, key: str, shift: bool = False) -> None:
        self.press(key, modifiers=(self.Keys.CONTROL, self.Keys.SHIFT) if shift else (self.Keys.CONTROL,))

    def go_to(self, line: int, column: int) -> None:
        self.ctrl("g")
        self.wait("the go-to-line box", lambda: self.elements(".quick-input-widget input"))
        self.press(f"{line}:{column}", self.Keys.ENTER)
        self.wait(f"the cursor at {line}:{column}", lambda: self.status(f"Ln {line}, Col {column}"))
        # The go-to box moves the cursor while it is still open (a preview): keys sent before it
        # has closed and handed focus back would land in the box, not in the editor.
        self.wait("the editor focused again", self.editor_focused)

    def editor_focused(self) -> bool:
        return bool(self.driver.execute_script("const e = document.activeElement;return !!e && !!e.closest('.editor-instance .monaco-editor') && !e.closest('.quick-input-widget');"))

    def until(self, what: str, action: Callable[[], None], found: Callable[[], Any], every: float = 15.0) -> Any:
        """`action()`, then `found()` once truthy; `action()` again every `every` seconds meanwhile,
        as a user presses a key again when the first press met a busy workbench (the language
        server's answer is asynchronous, and VS Code drops a request it has given up on)."""
        deadline = time.monotonic() + PATIENCE
        while time.monotonic() < deadline:
            action()
            retry = min(deadline, time.monotonic() + every)
            while time.monotonic() < retry:
                try:
                    result = found()
                except Exception:  # the DOM changed under us (a stale element): look again
                    result = None
                if result:
                    return result
                time.sleep(0.2)
        self.screenshot("hung")
        pytest.fail(f"VS Code never showed {what}")

    def quick_fix_menu(self) -> list[str]:
        """Ctrl+. at the cursor: the titles of the quick-fix menu."""
        return self.until("the quick-fix menu", lambda: self.ctrl("."), self.menu_titles)

    def status(self, text: str) -> bool:
        return any(text in item.text for item in self.elements(".statusbar-item"))

    def line_text(self, needle: str) -> str:
        """The text of the rendered editor line holding `needle`."""
        lines = [line.text.replace("\xa0", " ") for line in self.elements(".editor-instance .view-lines .view-line")]
        return next((line for line in lines if needle in line), "")

    def menu_titles(self) -> list[str]:
        rows = self.elements(".action-widget .monaco-list-row.action")
        return [row.text.strip() for row in rows]

    def problems(self) -> list[tuple[str, int, int]]:
        """(code, line, column) of the rows the Problems panel shows."""
        rows = []
        for row in self.elements(".markers-panel .monaco-list-row"):
            match = re.search(r"cudalint\W*(CUDA\d+)\W*Ln\s*(\d+),\s*Col\s*(\d+)", row.text)
            if match:
                rows.append((match.group(1), int(match.group(2)), int(match.group(3))))
        return rows


@pytest.fixture(scope="module")
def browser_tools() -> tuple[str, str]:
    chromium = require_executable("chromium", "the browser the VS Code test drives")
    chromedriver = require_executable("chromedriver", "Selenium drives Chromium through it (Debian: chromium-driver)")
    return chromium, chromedriver


@pytest.fixture(scope="module")
def vscode(npm: str, packaged: Path, browser_tools: tuple[str, str], tmp_path_factory) -> Iterator[tuple[Workbench, Path]]:  # noqa: F811
    """code-server with the packaged extension, serving a workspace with the example as
    `package.nix`, open in headless Chromium. Both are stopped, process groups and all."""
    webdriver = _selenium()
    from selenium.webdriver.chrome.service import Service

    chromium, chromedriver = browser_tools
    node_root = node24(npm)
    entry = code_server(npm, node_root)
    root = tmp_path_factory.mktemp("vscode")
    workspace = root / "workspace"
    workspace.mkdir()
    shutil.copyfile(EXAMPLE, workspace / "package.nix")
    env = cudalint_env(TMPDIR=str(root))
    server = CodeServer(node_root, entry, root / "code-server", env)
    server.write_settings(json.dumps({**SETTINGS, "cudalint.server.path": shutil.which("cudalint", path=env["PATH"])}, indent=2))
    server.install_extension(packaged)
    screenshots = root / "screenshots"
    screenshots.mkdir()
    driver = None
    try:
        server.start(workspace)
        options = webdriver.ChromeOptions()
        options.binary_location = chromium
        for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=1280,800"):
            options.add_argument(flag)
        driver = webdriver.Chrome(options=options, service=Service(chromedriver))
        driver.get(f"{server.url}/?folder={workspace}")
        page = Workbench(driver, screenshots)
        page.wait("the workbench", lambda: page.elements(".monaco-workbench .part.editor"))
        yield page, workspace
    finally:
        if driver is not None:
            driver.quit()
        server.stop()
        print(f"screenshots in {screenshots}")


def test_diagnostics_quick_fixes_hover_and_completion_in_vscode(vscode, tmp_path) -> None:
    page, workspace = vscode
    document = workspace / "package.nix"
    findings = cli_findings(document)
    codes = {finding["code"] for finding in findings}
    expected = {(f["code"], f["location"]["row"], f["location"]["column"]) for f in findings}

    # Open the file: the extension's language, and cudalint's squiggles.
    page.ctrl("p")
    page.wait("quick open", lambda: page.elements(".quick-input-widget input"))
    page.press("package.nix")
    page.wait("package.nix in quick open", lambda: page.elements(".quick-input-list .monaco-list-row"))
    page.press(page.Keys.ENTER)
    page.wait("the language mode Nix", lambda: [e for e in page.elements("#status\\.editor\\.mode") if e.text == "Nix"])
    squiggles = ".squiggly-error, .squiggly-warning, .squiggly-info"
    page.wait("cudalint's squiggles", lambda: page.elements(squiggles))
    page.screenshot("diagnostics")

    # The Problems panel: every finding of the command line, with its code and position.
    page.ctrl("m", shift=True)
    shown = page.wait("the Problems panel's rows", page.problems)
    badge = page.wait("the Problems count", lambda: [b.text for b in page.elements(".markers-panel-container .monaco-count-badge, .panel .monaco-count-badge") if b.text])
    assert str(len(findings)) in badge
    assert set(shown) <= expected and len(shown) >= min(5, len(expected)), (shown, expected)
    page.screenshot("problems")

    # Quick fixes on a finding whose only fixes are unsafe: none offered (the setting is false).
    unsafe = next(f for f in findings if f.get("fix") and f["fix"]["applicability"] == "unsafe")
    page.go_to(unsafe["location"]["row"], unsafe["location"]["column"])
    titles = page.quick_fix_menu()
    assert f"Ignore {unsafe['code']} on this line" in titles
    assert unsafe["fix"]["message"] not in titles and not [t for t in titles if "unsafe" in t], titles
    page.screenshot("no-unsafe-fixes")
    page.press(page.Keys.ESCAPE)

    # A safe fix of a rule with one finding: the menu, applying it, saving.
    safe = next(f for f in findings if f.get("fix") and f["fix"]["applicability"] == "safe" and [g["code"] for g in findings].count(f["code"]) == 1)
    page.go_to(safe["location"]["row"], safe["location"]["column"])
    titles = page.quick_fix_menu()
    assert titles[0] == safe["fix"]["message"] and f"Ignore {safe['code']} on this line" in titles, titles
    shot = page.screenshot("quick-fix-menu")
    if os.environ.get("CUDALINT_UPDATE_SCREENSHOTS"):
        shutil.copyfile(shot, README_SCREENSHOT)
    page.press(page.Keys.ENTER)  # the first entry is selected
    page.ctrl("s")
    fixed = cli_fixed(EXAMPLE, safe["code"], tmp_path / "cli")
    page.wait("the fixed file on disk", lambda: document.read_text(encoding="utf-8") == fixed)
    page.wait(f"{safe['code']} leaving the Problems panel", lambda: (rows := page.problems()) and safe["code"] not in {r[0] for r in rows})
    page.screenshot("fix-applied")

    # Hover on a finding: its rule's documentation.
    target = next(f for f in findings if f["code"] != safe["code"] and f["code"] in codes)
    rule = rule_by_code(target["code"])
    page.go_to(target["location"]["row"], target["location"]["column"])
    summary = rule.summary.replace("`", "")
    page.until(
        f"{rule.code}'s docs in the hover",
        lambda: (page.ctrl("k"), page.ctrl("i")),
        lambda: [h for h in page.elements(".monaco-hover") if summary in h.text.replace("\n", " ")],
    )
    page.screenshot("hover")
    page.press(page.Keys.ESCAPE)

    # Ctrl+/ comments a line with `#` (the extension's language configuration).
    page.go_to(16, 1)
    page.ctrl("/")
    page.wait("a `#` comment from Ctrl+/", lambda: page.line_text("pname").lstrip().startswith("# pname"))
    page.screenshot("line-comment")
    page.ctrl("z")

    # Completion after `cudaPackages.` offers cuda_nvcc.
    page.go_to(17, 1)
    page.press("x = cudaPackages.")
    page.wait("the completion list", lambda: page.elements(".suggest-widget.visible .monaco-list-row"))
    page.press("cuda_nv")
    page.wait("cuda_nvcc among the completions", lambda: [r for r in page.elements(".suggest-widget.visible .monaco-list-row") if (r.get_attribute("aria-label") or "").startswith("cuda_nvcc")])
    page.screenshot("completion")
