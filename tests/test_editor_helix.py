"""Helix cannot be installed here: its snippet is checked as data (TOML that names the server
command and settings cudalint accepts)."""

from __future__ import annotations

import shlex
import tomllib

from cudalint.frontend.config import parse_config
from editor_support import REPO

SNIPPET = tomllib.loads((REPO / "editors" / "helix" / "languages.toml").read_text(encoding="utf-8"))


def test_server_command_is_cudalint_server() -> None:
    server = SNIPPET["language-server"]["cudalint"]
    assert shlex.join([server["command"], *server["args"]]) == "cudalint server"


def test_settings_are_valid_cudalint_configuration() -> None:
    settings = SNIPPET["language-server"]["cudalint"]["config"]["cudalint"]
    assert settings
    parse_config(settings, None, str(REPO), "editors/helix/languages.toml")  # raises on a bad key


def test_nix_runs_cudalint_next_to_another_server() -> None:
    (nix,) = [language for language in SNIPPET["language"] if language["name"] == "nix"]
    servers = nix["language-servers"]
    # the snippet's list replaces Helix's default for Nix (nil, then nixd): it keeps both, first
    assert servers == ["nil", "nixd", "cudalint"]
