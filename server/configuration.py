"""Settings: the project's configuration file, with the editor's settings merged over it.

The editor sends the configuration file's keys (section `cudalint` of `workspace/configuration`,
or `initializationOptions`); camelCase spellings (`extendSelect`) are accepted too. They are
validated one key at a time with the config file's own parser, so one bad value is reported
and every other key still applies. Rule selection from the editor is a layer over the file's
(ruff's semantics, like command-line options); the other keys replace the file's values.

`unsafe-fixes` decides whether quick fixes include unsafe fixes. Unlike `--fix`, a quick fix is
picked one at a time under its "(unsafe fix)" title, so when neither the editor nor the project
sets it, editors offer them (`EDITOR_UNSAFE_FIXES`); `false` in either hides them.
"""

from __future__ import annotations

import dataclasses
import os
import re
from typing import TYPE_CHECKING, Any

from lsprotocol import types

from cudalint.frontend.config import KEYS, Config, ConfigError, FileSettings, Overrides, Resolver, parse_config

if TYPE_CHECKING:
    from .state import ServerState

SECTION = "cudalint"
WHERE = "cudalint settings"
# Keys that become command-line-like overrides; the others replace the config file's values.
_OVERRIDE_FIELDS = {"select": "select", "extend_select": "extend_select", "ignore": "ignore", "nixpkgs": "nixpkgs", "unsafe_fixes": "unsafe_fixes"}
# What editors do when neither their settings nor the project's file set `unsafe-fixes`.
EDITOR_UNSAFE_FIXES = True
_REPLACED_FIELDS = tuple(f.name for f in dataclasses.fields(Config) if f.name not in _OVERRIDE_FIELDS and f.name not in {"path", "root"})


def _kebab(key: str) -> str:
    return re.sub(r"(?<=[a-z0-9])([A-Z])", lambda m: "-" + m.group(1).lower(), key)


@dataclasses.dataclass(frozen=True)
class EditorSettings:
    """The editor's settings, validated: the fields of `Config` it sets, and the problems."""

    values: dict[str, Any]
    problems: tuple[str, ...] = ()


def parse_editor_settings(raw: Any, root: str) -> EditorSettings:
    if raw is None:
        return EditorSettings({})
    if not isinstance(raw, dict):
        return EditorSettings({}, (f"{WHERE}: expected an object of cudalint settings, got {type(raw).__name__}",))
    if isinstance(raw.get(SECTION), dict):  # initializationOptions may nest the section
        raw = raw[SECTION]
    values: dict[str, Any] = {}
    problems: list[str] = []
    for key, value in raw.items():
        name = _kebab(key) if key not in KEYS else key
        if value is None:
            continue  # unset in the editor: the file's value applies
        try:
            parsed = parse_config({name: value}, None, root, WHERE)
        except ConfigError as error:
            problems.append(str(error))
            continue
        for field in dataclasses.fields(Config):
            if field.name in ("path", "root"):
                continue
            if getattr(parsed, field.name) != field.default and field.name not in values:
                values[field.name] = getattr(parsed, field.name)
    return EditorSettings(values, tuple(problems))


class _EditorResolver(Resolver):
    """The CLI's resolver, with the editor's non-selection keys replacing the file's and the
    editors' default for `unsafe-fixes`."""

    def __init__(self, overrides: Overrides, cwd: str, replaced: dict[str, Any], fixed: Config | None = None) -> None:
        super().__init__(overrides, cwd, _fixed=fixed)
        self.replaced = replaced
        # The resolver caches rule sets by the config object's identity: merge each file once.
        self._merged: dict[int, tuple[Config, Config]] = {}

    def config_for_dir(self, directory: str) -> Config:
        config = super().config_for_dir(directory)
        replaced = self.replaced
        if config.unsafe_fixes is None:
            replaced = {**replaced, "unsafe_fixes": EDITOR_UNSAFE_FIXES}
        cached = self._merged.get(id(config))
        if cached is None or cached[0] is not config:
            cached = self._merged[id(config)] = (config, dataclasses.replace(config, **replaced))
        return cached[1]


class Settings:
    """Per-document settings for one workspace; rebuilt when the editor's settings change."""

    def __init__(self, root: str, editor: EditorSettings | None = None) -> None:
        self.root = os.path.abspath(root)
        self.editor = editor or EditorSettings({})
        self.config_errors: list[str] = []
        self._resolver = self._make_resolver()

    def _make_resolver(self) -> _EditorResolver:
        values = self.editor.values
        overrides = Overrides(
            **{target: values[name] for name, target in _OVERRIDE_FIELDS.items() if name in values},
            nixpkgs_source="the editor's cudalint.nixpkgs setting",
        )
        replaced = {name: values[name] for name in _REPLACED_FIELDS if name in values}
        return _EditorResolver(overrides, self.root, replaced)

    def for_path(self, path: str) -> FileSettings:
        """The settings for a file. A broken configuration file is reported (see
        `config_errors`) and the editor's settings apply over the defaults instead."""
        try:
            return self._resolver.settings_for(path)
        except ConfigError as error:
            self.config_errors.append(str(error))
            resolver = self._resolver
            fallback = _EditorResolver(resolver.overrides, self.root, resolver.replaced, fixed=Config(None, self.root))
            return fallback.settings_for(path)

    def excluded(self, path: str) -> bool:
        try:
            return self._resolver.excluded(path, False)
        except ConfigError:
            return False


async def fetch(server: ServerState, notified: Any = None) -> None:
    """Read the editor's settings (`workspace/configuration` when the client answers it, else
    what `didChangeConfiguration` carried) over `initializationOptions`, and apply them."""
    merged: dict[str, Any] = {}
    initial = server.initialization_options
    if isinstance(initial, dict):
        merged.update(initial.get(SECTION, initial) if isinstance(initial.get(SECTION), dict) else initial)
    workspace = server.client_capabilities.workspace
    if workspace is not None and workspace.configuration:
        try:
            answer = await server.workspace_configuration_async(types.ConfigurationParams(items=[types.ConfigurationItem(section=SECTION)]))
        except Exception as error:  # a client that advertises but fails: keep what we have
            server.log_error("workspace/configuration failed", error)
            answer = None
        if answer and isinstance(answer[0], dict):
            merged.update(answer[0])
    elif isinstance(notified, dict):
        section = notified.get(SECTION, notified)
        if isinstance(section, dict):
            merged.update(section)
    server.apply_settings(merged)
