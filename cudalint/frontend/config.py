"""Configuration: `cudalint.toml`, `.cudalint.toml` or `[tool.cudalint]` in `pyproject.toml`,
searched upward from each file (the closest wins), overridden by command-line options with
ruff's semantics. Everything is validated: an unknown key, an unknown rule code or a value of
the wrong type is an error naming the file and the key, never silently ignored.

The result for one file is a `FileSettings`: the engine's `LintSettings` plus what the runner
needs (unsafe fixes, the size limit).
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import json
import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from cudalint.frontend.files import DEFAULT_MAX_FILE_SIZE, GlobPattern, IgnoreFile, Listings, is_ignored
from cudalint.knowledge import pins
from cudalint.knowledge.pins import NEWEST, Pin
from cudalint.knowledge.reference import normalize
from cudalint.knowledge.targets import ACCEPTED, TargetError
from cudalint.lint.registry import known_codes, preview_codes, resolve_selector, stable_codes
from cudalint.lint.settings import DEFAULT_TIME_BUDGET, LintSettings
from cudalint.regular_files import read_regular

# The largest configuration file read (cudalint.toml, pyproject.toml).
MAX_CONFIG_SIZE = 4 * 1024 * 1024

CONFIG_NAMES = ("cudalint.toml", ".cudalint.toml")
# `fail-on`: the least severe finding that fails a run (the CLI's --fail-on)
FAIL_LEVELS = ("error", "warning", "info", "never")
PYPROJECT = "pyproject.toml"

KEYS = (
    "select",
    "ignore",
    "extend-select",
    "per-file-ignores",
    "exclude",
    "unsafe-fixes",
    "nixpkgs",
    "cuda",
    "max-file-size",
    "time-budget",
    "preview",
    "fail-on",
)
_CUDA_RELEASE = re.compile(r"^\d{1,2}\.\d{1,2}$")
_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kKmMgG]i?[bB]|[bB])?\s*$")
_SIZE_FACTORS = {"b": 1, "kb": 1000, "kib": 1024, "mb": 1000**2, "mib": 1024**2, "gb": 1000**3, "gib": 1024**3}


class ConfigError(Exception):
    """A configuration problem the user must fix (exit 2). `where` is the file (or the
    command-line option) it comes from."""

    def __init__(self, where: str, message: str) -> None:
        super().__init__(f"{where}: error: {message}")
        self.where = where
        self.message = message

    def __reduce__(self):  # found by a worker of the parallel walk, raised by the parent
        return ConfigError, (self.where, self.message)


def display_path(path: str, cwd: str | None = None) -> str:
    """A path as shown to the user: relative to the working directory when inside it."""
    cwd = cwd or os.getcwd()
    absolute = os.path.abspath(path)
    try:
        relative = os.path.relpath(absolute, cwd)
    except ValueError:
        return absolute
    if relative == os.pardir or relative.startswith(os.pardir + os.sep):
        return absolute
    return relative


def did_you_mean(word: str, candidates: Iterable[str]) -> str:
    candidates = list(candidates)
    import difflib

    matches = difflib.get_close_matches(word, candidates, n=1, cutoff=0.6)
    if not matches:
        lowered = {c.lower(): c for c in candidates}
        matches = [lowered[m] for m in difflib.get_close_matches(word.lower(), list(lowered), n=1, cutoff=0.6)]
    return f" (did you mean `{matches[0]}`?)" if matches else ""


# TOML's names for the Python types tomllib returns (bool before int: a bool is an int).
_TOML_TYPE_NAMES: tuple[tuple[type | tuple[type, ...], str], ...] = (
    (bool, "a boolean"),
    (int, "an integer"),
    (float, "a float"),
    (str, "a string"),
    (list, "an array"),
    (dict, "a table"),
    ((_dt.date, _dt.time), "a date/time"),
)


def _type_name(value: Any) -> str:
    return next((name for types, name in _TOML_TYPE_NAMES if isinstance(value, types)), type(value).__name__)


def _selector_candidates() -> list[str]:
    return sorted(known_codes()) + ["ALL"]


def resolve_selectors(selectors: Sequence[str], where: str, key: str) -> tuple[str, ...]:
    """Validate selectors (codes, prefixes, `ALL`); returns them normalised (upper case)."""
    result = []
    for selector in selectors:
        cleaned = selector.strip().upper()
        try:
            resolve_selector(cleaned)
        except KeyError:
            hint = did_you_mean(cleaned, _selector_candidates())
            if not hint and cleaned.startswith("CUDA"):
                hint = " (run `cudalint rules` for the list)"
            raise ConfigError(where, f"`{key}`: unknown rule code or prefix `{selector}`{hint}") from None
        result.append(cleaned)
    return tuple(result)


def parse_size(value: Any, where: str, key: str = "max-file-size") -> int:
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise ConfigError(where, f'`{key}` must be a number of bytes or a string like "10MB", not {_type_name(value)}')
    if isinstance(value, int):
        size = value
    else:
        match = _SIZE.match(value)
        if not match:
            raise ConfigError(where, f'`{key}`: cannot read {value!r} as a size; write e.g. "10MB", "512KiB" or a number of bytes')
        unit = (match.group(2) or "b").lower()
        size = int(float(match.group(1)) * _SIZE_FACTORS[unit])
    if size <= 0:
        raise ConfigError(where, f"`{key}` must be positive")
    return size


@dataclass(frozen=True)
class Config:
    """One configuration file's validated contents. `root` is the directory its globs are
    relative to (the file's directory; the working directory when there is no file)."""

    path: str | None
    root: str
    select: tuple[str, ...] | None = None
    ignore: tuple[str, ...] = ()
    extend_select: tuple[str, ...] = ()
    per_file_ignores: tuple[tuple[GlobPattern, frozenset[str]], ...] = ()
    exclude: tuple[GlobPattern, ...] = ()
    unsafe_fixes: bool | None = None
    nixpkgs: str | None = None
    cuda: tuple[str, ...] = ()
    max_file_size: int | None = None
    time_budget: float | None = None
    preview: bool | None = None
    fail_on: str | None = None

    @property
    def exclude_file(self) -> IgnoreFile:
        return IgnoreFile(self.root, list(self.exclude))


def _string_list(value: Any, where: str, key: str, example: str) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        got = _type_name(value) if not isinstance(value, list) else "an array holding " + ", ".join(sorted({_type_name(v) for v in value if not isinstance(v, str)}))
        raise ConfigError(where, f"`{key}` must be an array of strings (e.g. {key} = {example}), not {got}")
    return value


def parse_config(data: dict[str, Any], path: str | None, root: str, where: str) -> Config:
    """Validate a config table (the whole `cudalint.toml`, or `[tool.cudalint]`)."""
    for key in data:
        if key not in KEYS:
            raise ConfigError(where, f"unknown key `{key}`{did_you_mean(key, KEYS)}")
    values: dict[str, Any] = {}
    if "select" in data:
        values["select"] = resolve_selectors(_string_list(data["select"], where, "select", '["CUDA1", "CUDA001"]'), where, "select")
    if "ignore" in data:
        values["ignore"] = resolve_selectors(_string_list(data["ignore"], where, "ignore", '["CUDA001"]'), where, "ignore")
    if "extend-select" in data:
        values["extend_select"] = resolve_selectors(_string_list(data["extend-select"], where, "extend-select", '["CUDA2"]'), where, "extend-select")
    if "per-file-ignores" in data:
        table = data["per-file-ignores"]
        if not isinstance(table, dict):
            raise ConfigError(where, f'`per-file-ignores` must be a table of glob = [codes] (e.g. "tests/*" = ["CUDA001"]), not {_type_name(table)}')
        entries = []
        for glob, codes in table.items():
            key = f'per-file-ignores."{glob}"'
            selectors = resolve_selectors(_string_list(codes, where, key, '["CUDA001"]'), where, key)
            pattern = GlobPattern.parse(glob)
            if pattern is None:
                raise ConfigError(where, f"`per-file-ignores`: {glob!r} is not a glob")
            enabled: set[str] = set()
            for selector in selectors:
                enabled |= resolve_selector(selector)
            entries.append((pattern, frozenset(enabled)))
        values["per_file_ignores"] = tuple(entries)
    if "exclude" in data:
        globs = _string_list(data["exclude"], where, "exclude", '["vendor/", "**/generated/*.nix"]')
        patterns = []
        for glob in globs:
            pattern = GlobPattern.parse(glob)
            if pattern is None:
                raise ConfigError(where, f"`exclude`: {glob!r} is not a glob")
            patterns.append(pattern)
        values["exclude"] = tuple(patterns)
    if "unsafe-fixes" in data:
        if not isinstance(data["unsafe-fixes"], bool):
            raise ConfigError(where, f"`unsafe-fixes` must be true or false, not {_type_name(data['unsafe-fixes'])}")
        values["unsafe_fixes"] = data["unsafe-fixes"]
    if "nixpkgs" in data:
        values["nixpkgs"] = validate_nixpkgs(data["nixpkgs"], where, "nixpkgs")
    if "cuda" in data:
        values["cuda"] = validate_cuda(data["cuda"], where, "cuda")
    if "max-file-size" in data:
        values["max_file_size"] = parse_size(data["max-file-size"], where)
    if "time-budget" in data:
        values["time_budget"] = parse_seconds(data["time-budget"], where, "time-budget")
    if "fail-on" in data:
        if data["fail-on"] not in FAIL_LEVELS:
            raise ConfigError(where, f"`fail-on` must be one of {', '.join(map(repr, FAIL_LEVELS))}, not {data['fail-on']!r}")
        values["fail_on"] = data["fail-on"]
    if "preview" in data:
        if not isinstance(data["preview"], bool):
            raise ConfigError(where, f"`preview` must be true or false, not {_type_name(data['preview'])}")
        values["preview"] = data["preview"]
    return Config(path, root, **values)


def parse_seconds(value: Any, where: str, key: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ConfigError(where, f"`{key}` must be a number of seconds (e.g. {key} = 30), not {_type_name(value)}")
    if not 0 < value < float("inf"):
        raise ConfigError(where, f"`{key}` must be a positive number of seconds, not {value}")
    return float(value)


def validate_nixpkgs(value: Any, where: str, key: str) -> str:
    if isinstance(value, _dt.date) and not isinstance(value, _dt.datetime):
        value = value.isoformat()  # an unquoted TOML date
    if isinstance(value, float):
        raise ConfigError(where, f'`{key}` must be a string: write {key} = "{value:.2f}"')
    if not isinstance(value, str):
        raise ConfigError(where, f"`{key}` must be a string: {ACCEPTED}; not {_type_name(value)}")
    try:
        return normalize(value)
    except TargetError as error:
        raise ConfigError(where, f"`{key}`: {error}") from None


def validate_cuda(value: Any, where: str, key: str) -> tuple[str, ...]:
    if isinstance(value, (str, float)):
        raise ConfigError(where, f'`{key}` must be an array of CUDA releases: write {key} = ["{value}"]')
    releases = _string_list(value, where, key, '["12.4", "12.8"]')
    for release in releases:
        if not _CUDA_RELEASE.match(release.strip()):
            raise ConfigError(where, f'`{key}`: {release!r} is not a CUDA release; write "MAJOR.MINOR" like "12.8"')
    from cudalint.knowledge.reference import load as load_reference  # the set's releases; loaded only when `cuda` is set

    known = load_reference().releases
    for release in releases:
        if release.strip() not in known:
            known_releases = f"it knows {known[0]} .. {known[-1]}, without {_gaps(known)}"
            raise ConfigError(where, f"`{key}`: cudalint's reference set has no CUDA {release.strip()} ({known_releases}){did_you_mean(release.strip(), known)}")
    return tuple(r.strip() for r in releases)


def _gaps(releases: tuple[str, ...]) -> str:
    """Minor releases NVIDIA skipped (there is no CUDA 12.7)."""
    missing = []
    for before, after in zip(releases, releases[1:]):
        (major, minor), (next_major, next_minor) = map(int, before.split(".")), map(int, after.split("."))
        if major == next_major:
            missing += [f"{major}.{m}" for m in range(minor + 1, next_minor)]
    return ", ".join(missing) or "gaps"


def load_config_file(path: str, explicit: bool = False, cwd: str | None = None) -> Config | None:
    """Load and validate a config file. A `pyproject.toml` without `[tool.cudalint]` gives None
    (an error when the user named it with --config)."""
    where = display_path(path, cwd)
    try:
        raw = read_regular(path, MAX_CONFIG_SIZE)
    except OSError as error:
        raise ConfigError(where, f"cannot read the configuration: {error.strerror or error}") from None
    import tomllib  # (a run without a configuration file does not pay its import)

    try:
        document = tomllib.loads(raw.decode("utf-8-sig"))
    except UnicodeDecodeError as error:
        raise ConfigError(where, f"not valid UTF-8 (byte offset {error.start})") from None
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(where, f"invalid TOML: {error}") from None
    root = os.path.dirname(os.path.abspath(path))
    if os.path.basename(path) == PYPROJECT:
        tool = document.get("tool")
        table = tool.get("cudalint") if isinstance(tool, dict) else None
        if table is None:
            if explicit:
                raise ConfigError(where, "has no [tool.cudalint] table")
            return None
        if not isinstance(table, dict):
            raise ConfigError(where, f"[tool.cudalint] must be a table, not {_type_name(table)}")
        return parse_config(table, os.path.abspath(path), root, f"{where}: [tool.cudalint]")
    return parse_config(document, os.path.abspath(path), root, where)


def _has_tool_table(path: str) -> bool:
    """Cheap check before parsing a pyproject.toml fully."""
    try:
        return b"cudalint" in read_regular(path, MAX_CONFIG_SIZE)
    except OSError:
        return False


# ---------------------------------------------------------------------------------------------
# Rule selection (ruff's semantics)


def _specificity(selector: str) -> int:
    return 0 if selector == "ALL" else len(selector)


@dataclass(frozen=True)
class Selection:
    """One layer of rule selection (a config file, or the command line)."""

    select: tuple[str, ...] | None = None
    extend_select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()


def select_rules(layers: Sequence[Selection], default: frozenset[str] | None = None, preview: bool = False) -> frozenset[str]:
    """Apply layers in order. In a layer, more specific selectors win over less specific ones
    (`select = ["CUDA1"]`, `ignore = ["CUDA101"]` keeps CUDA1xx but CUDA101); a layer with
    `select` replaces what earlier layers enabled, one without adjusts it. Without `preview`,
    rules in preview stay off whatever selects them (ruff's semantics)."""
    enabled = _select(layers, default if default is not None else known_codes() if preview else stable_codes())
    return frozenset(enabled) if preview else frozenset(enabled) - preview_codes()


def selected_preview_rules(layers: Sequence[Selection]) -> list[str]:
    """Preview rules that a layer names by their full code: they stay off without preview mode,
    which the front end says rather than dropping the request silently."""
    named = {s for layer in layers for s in (*(layer.select or ()), *layer.extend_select)}
    return sorted(named & preview_codes())


def _select(layers: Sequence[Selection], default: frozenset[str]) -> set[str]:
    enabled = set(default)
    for layer in layers:
        updates: dict[str, bool] = {}
        chosen = list(layer.select or ()) + list(layer.extend_select)
        for level in sorted({_specificity(s) for s in chosen + list(layer.ignore)}):
            for selector in chosen:
                if _specificity(selector) == level:
                    for code in resolve_selector(selector):
                        updates[code] = True
            for selector in layer.ignore:
                if _specificity(selector) == level:
                    for code in resolve_selector(selector):
                        updates[code] = False
        if layer.select is not None:
            enabled = {code for code, on in updates.items() if on}
        else:
            for code, on in updates.items():
                if on:
                    enabled.add(code)
                else:
                    enabled.discard(code)
    return enabled


# ---------------------------------------------------------------------------------------------
# flake.lock: the nixpkgs a flake pins, when `nixpkgs` is not configured


def _flake_nixpkgs_date(lock_path: str) -> str | None:
    try:
        data = json.loads(read_regular(lock_path, 8 * 1024 * 1024))
        nodes = data["nodes"]
        root = nodes[data.get("root", "root")]
        inputs = root.get("inputs", {})

        def node_of(reference: Any) -> dict | None:
            if isinstance(reference, str):
                return nodes.get(reference)
            if isinstance(reference, list):  # `follows`: a path of input names from the root
                current = root
                for name in reference:
                    target = current.get("inputs", {}).get(name)
                    current = node_of(target) if not isinstance(target, list) else node_of(target)
                    if current is None:
                        return None
                return current
            return None

        node = node_of(inputs["nixpkgs"]) if "nixpkgs" in inputs else None
        if node is None:
            for name in sorted(inputs):
                candidate = node_of(inputs[name])
                original = (candidate or {}).get("original", {})
                if original.get("repo") == "nixpkgs" or original.get("id") == "nixpkgs":
                    node = candidate
                    break
        if node is None:
            return None
        modified = node["locked"]["lastModified"]
        return _dt.datetime.fromtimestamp(int(modified), tz=_dt.UTC).date().isoformat()
    except (OSError, ValueError, KeyError, TypeError, AttributeError, RecursionError):
        return None


# ---------------------------------------------------------------------------------------------
# Per-file settings


@dataclass(frozen=True)
class Overrides:
    """Command-line options that override the configuration."""

    select: tuple[str, ...] | None = None
    extend_select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    nixpkgs: str | None = None
    unsafe_fixes: bool | None = None
    config: str | None = None  # --config FILE: use it for every file, no discovery
    isolated: bool = False  # --isolated: no configuration files at all
    cuda: tuple[str, ...] | None = None
    preview: bool | None = None  # --preview / --no-preview
    nixpkgs_source: str = "--nixpkgs"  # where `nixpkgs` was set, as reports name it

    @property
    def selection(self) -> Selection:
        return Selection(self.select, self.extend_select, self.ignore)


@dataclass(frozen=True)
class FileSettings:
    lint: LintSettings
    unsafe_fixes: bool
    max_file_size: int
    config: str | None  # the config file that applies (for messages)
    pin: Pin = NEWEST  # the target nixpkgs and where it came from


# `settings_for(path, defer_pin=True)`: the pin around the file is not looked up yet. Only the few
# files the prefilter lets through need it, so the process that parses them looks it up
# (`with_pin`): the walking process no longer reads a `default.nix` in every directory.
DEFERRED_PIN = Pin(None, "(not looked up yet)")


def with_pin(settings: FileSettings, pin: Pin) -> FileSettings:
    """`settings` for the pin looked up around the file (settings whose pin was deferred)."""
    return dataclasses.replace(settings, lint=dataclasses.replace(settings.lint, nixpkgs=pin.nixpkgs), pin=pin)


@dataclass
class Resolver:
    """Finds the configuration for each file (cached per directory) and computes its settings."""

    overrides: Overrides = field(default_factory=Overrides)
    cwd: str = field(default_factory=os.getcwd)
    _dir_configs: dict[str, Config] = field(default_factory=dict)
    _loaded: dict[str, Config | None] = field(default_factory=dict)
    _enabled: dict[int, frozenset[str]] = field(default_factory=dict)
    _settings: dict[tuple, LintSettings] = field(default_factory=dict)
    _flake: dict[str, Pin] = field(default_factory=dict)
    _fixed: Config | None = None
    _dir_settings: dict[tuple[str, bool], FileSettings] = field(default_factory=dict)
    # what the walk saw in the directories it listed (give the walker the same object)
    listings: Listings = field(default_factory=Listings)

    def __post_init__(self) -> None:
        self.cwd = os.path.abspath(self.cwd)
        if self.overrides.config is not None:
            path = os.path.abspath(os.path.join(self.cwd, self.overrides.config))
            if not os.path.isfile(path):
                raise ConfigError(f"--config {self.overrides.config}", "no such configuration file")
            self._fixed = load_config_file(path, explicit=True, cwd=self.cwd)
        elif self.overrides.isolated:
            self._fixed = Config(None, self.cwd)

    def _load(self, path: str) -> Config | None:
        if path not in self._loaded:
            self._loaded[path] = load_config_file(path, cwd=self.cwd)
        return self._loaded[path]

    def config_for_dir(self, directory: str) -> Config:
        """The closest configuration at or above `directory` (absolute)."""
        if self._fixed is not None:
            return self._fixed
        cached = self._dir_configs.get(directory)
        if cached is not None:
            return cached
        visited = []
        current = directory
        found: Config | None = None
        while True:
            hit = self._dir_configs.get(current)
            if hit is not None:
                found = hit
                break
            visited.append(current)
            for name in CONFIG_NAMES:
                if self.listings.is_file(current, name):
                    found = self._load(os.path.join(current, name))
                    break
            if found is None and self.listings.is_file(current, PYPROJECT):
                candidate = os.path.join(current, PYPROJECT)
                if _has_tool_table(candidate):
                    found = self._load(candidate)
            if found is not None:
                break
            parent = os.path.dirname(current)
            if parent == current:
                found = Config(None, self.cwd)
                break
            current = parent
        for path in visited:
            self._dir_configs[path] = found
        return found

    def enabled_for(self, config: Config) -> frozenset[str]:
        key = id(config)
        if key not in self._enabled:
            layers = [Selection(config.select, config.extend_select, config.ignore), self.overrides.selection]
            self._enabled[key] = select_rules(layers, preview=self.preview_for(config))
        return self._enabled[key]

    def preview_requested(self) -> list[str]:
        """Preview rules that the command line or the working directory's configuration names
        by code while preview mode is off there: they stay off, and the front end says so."""
        config = self.config_for_dir(self.cwd)
        if self.preview_for(config):
            return []
        return selected_preview_rules([Selection(config.select, config.extend_select, config.ignore), self.overrides.selection])

    def preview_for(self, config: Config) -> bool:
        """Preview mode: the command line (or editor setting) over the configuration, off by default."""
        return self.overrides.preview if self.overrides.preview is not None else bool(config.preview)

    def excluded(self, path: str, is_dir: bool) -> bool:
        """Whether the config governing `path` (absolute) excludes it."""
        config = self.config_for_dir(os.path.dirname(path))
        return bool(config.exclude) and is_ignored((config.exclude_file,), path, is_dir)

    def flake_date(self, directory: str) -> str | None:
        """The nixpkgs input's lastModified date from the nearest flake.lock at or above
        `directory`, not looking above the git repository's root."""
        pin = self.pin(directory)
        return pin.nixpkgs if pin.source is not None and pin.source.endswith("flake.lock") else None

    def pin(self, directory: str) -> Pin:
        """The nixpkgs the nearest pin at or above `directory` names (cudalint/knowledge/pins.py), not
        looking above the git repository's root: a flake.lock (or devenv.lock), else a flake.nix's inputs, else
        niv's or npins' sources.json, else a default.nix/shell.nix that fetches nixpkgs."""
        if directory in self._flake:
            return self._flake[directory]
        found = self._pin_here(directory)
        parent = os.path.dirname(directory)
        if found is None:
            if parent != directory and not self.listings.exists(directory, ".git"):
                found = self.pin(parent)
            else:
                found = NEWEST
        self._flake[directory] = found
        return found

    def _pin_here(self, directory: str) -> Pin | None:
        def shown(name: str) -> str:
            return display_path(os.path.join(directory, name), self.cwd)

        for lock in ("flake.lock", "devenv.lock"):  # devenv's lock has the flake lock's format
            if self.listings.is_file(directory, lock):
                date = _flake_nixpkgs_date(os.path.join(directory, lock))
                if date is not None:
                    return Pin(date, shown(lock))
        if self.listings.is_file(directory, "flake.nix") and not self.listings.is_file(directory, "flake.lock"):
            flake = pins.read_small(os.path.join(directory, "flake.nix"))
            target = pins.flake_input(flake)
            if target is not None:
                return Pin(target, f"{shown('flake.nix')} inputs.nixpkgs.url")
            commit = pins.commit_fetch(flake)  # `github:NixOS/nixpkgs/<commit>` and no lock to date it
            if commit is not None:
                return Pin(commit.target, f"{shown('flake.nix')} inputs.nixpkgs.url") if commit.target else Pin(None, None, undated=f"{shown('flake.nix')}:{commit.line}")
        for folder, name in (("nix", "sources.json"), ("npins", "sources.json")):
            if self.listings.exists(directory, folder):
                path = os.path.join(directory, folder, name)
                target = pins.sources_json(pins.read_small(path))
                if target is not None:
                    return Pin(target, display_path(path, self.cwd))
        if os.path.basename(directory) in ("nix", "npins") and os.path.isfile(os.path.join(directory, "sources.json")):
            target = pins.sources_json(pins.read_small(os.path.join(directory, "sources.json")))
            if target is not None:
                return Pin(target, shown("sources.json"))
        for name in ("default.nix", "shell.nix"):
            if self.listings.is_file(directory, name):
                pin = pins.fetch_pin(pins.read_small(os.path.join(directory, name)), shown(name))
                if pin is not None:
                    return pin
        return None

    def settings_for(self, path: str, defer_pin: bool = False) -> FileSettings:
        """Settings for a file (absolute path; for stdin, the --stdin-filename or a path in the
        working directory). With `defer_pin`, a pin found in the file system is left to
        `with_pin(settings, resolver.pin(directory))` (a configured target is not)."""
        directory = os.path.dirname(path)
        cached = self._dir_settings.get((directory, defer_pin))
        if cached is not None:
            return cached
        config = self.config_for_dir(directory)
        enabled = self.enabled_for(config)
        if config.per_file_ignores:
            relative = os.path.relpath(path, config.root).replace(os.sep, "/")
            for pattern, codes in config.per_file_ignores:
                hit = pattern.matches_path_or_parent(relative)
                if hit != pattern.negated:
                    enabled = enabled - codes
        if self.overrides.nixpkgs is not None:
            pin = Pin(self.overrides.nixpkgs, self.overrides.nixpkgs_source, explicit=True)
        elif config.nixpkgs is not None:
            pin = Pin(config.nixpkgs, f"{display_path(config.path, self.cwd) if config.path else 'configuration'} nixpkgs", explicit=True)
        elif defer_pin:
            pin = DEFERRED_PIN
        else:
            pin = self.pin(directory)
        nixpkgs = pin.nixpkgs
        cuda = self.overrides.cuda if self.overrides.cuda is not None else config.cuda
        budget = config.time_budget or DEFAULT_TIME_BUDGET
        key = (enabled, nixpkgs, cuda, budget)
        lint = self._settings.get(key)
        if lint is None:
            lint = self._settings[key] = LintSettings(enabled, nixpkgs, cuda, budget)
        unsafe = self.overrides.unsafe_fixes if self.overrides.unsafe_fixes is not None else bool(config.unsafe_fixes)
        settings = FileSettings(lint, unsafe, config.max_file_size or DEFAULT_MAX_FILE_SIZE, config.path, pin)
        if not config.per_file_ignores:  # then the directory decides: the files in it share one object
            self._dir_settings[directory, defer_pin] = settings
        return settings
