"""The configuration's JSON Schema (cudalint/frontend/data/cudalint.schema.json), for editors'
completion and checking of cudalint.toml and [tool.cudalint]: it names every key the loader
knows, and accepts and rejects what the loader does on the same samples."""

from __future__ import annotations

import json
from importlib import resources

import jsonschema
import pytest

from cudalint.frontend.config import KEYS, ConfigError, parse_config

SCHEMA = json.loads(resources.files("cudalint.frontend").joinpath("data/cudalint.schema.json").read_text(encoding="utf-8"))
VALIDATOR = jsonschema.Draft7Validator(SCHEMA)

VALID = [
    {},
    {"select": ["ALL"], "ignore": ["CUDA305", "cuda1"], "extend-select": ["CUDA2"]},
    {"per-file-ignores": {"shells/*.nix": ["CUDA101"]}, "exclude": ["pkgs/legacy/**", "vendor/"]},
    {"unsafe-fixes": False, "preview": True, "fail-on": "info"},
    {"nixpkgs": "25.11"},
    {"nixpkgs": "nixos-24.05"},
    {"nixpkgs": "nixpkgs-23.05-darwin"},
    {"nixpkgs": "unstable"},
    {"nixpkgs": "nixos-unstable"},
    {"nixpkgs": "2024-06-30"},
    {"cuda": ["12.8", "13.0"]},
    {"max-file-size": "10MB"},
    {"max-file-size": 4096},
    {"max-file-size": "512 KiB"},
    {"time-budget": 2.5},
]
INVALID = [
    {"colour": True},
    {"select": "CUDA1"},
    {"select": ["E501"]},
    {"ignore": [1]},
    {"per-file-ignores": {"a/*.nix": "CUDA101"}},
    {"unsafe-fixes": "yes"},
    {"preview": 1},
    {"fail-on": "warnings"},
    {"nixpkgs": 25.11},
    {"nixpkgs": "twenty-five"},
    {"cuda": "12.8"},
    {"cuda": ["twelve"]},
    {"max-file-size": "ten megabytes"},
    {"max-file-size": 0},
    {"max-file-size": True},
    {"time-budget": 0},
    {"time-budget": "10s"},
]


def loader_accepts(data: dict) -> bool:
    try:
        parse_config(data, None, "/", "cudalint.toml")
    except ConfigError:
        return False
    return True


def test_the_schema_is_valid_and_names_every_key() -> None:
    jsonschema.Draft7Validator.check_schema(SCHEMA)
    assert set(SCHEMA["properties"]) == set(KEYS)
    assert SCHEMA["additionalProperties"] is False


@pytest.mark.parametrize("data", VALID, ids=json.dumps)
def test_both_accept(data: dict) -> None:
    assert loader_accepts(data)
    assert list(VALIDATOR.iter_errors(data)) == []


@pytest.mark.parametrize("data", INVALID, ids=json.dumps)
def test_both_reject(data: dict) -> None:
    assert not loader_accepts(data)
    assert list(VALIDATOR.iter_errors(data)) != []
