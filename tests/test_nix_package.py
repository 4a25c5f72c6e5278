"""nix/package.nix and flake.nix cannot be built here (there is no nixpkgs), so they are parsed
by Nix, linted by cudalint, and evaluated against a stub of the nixpkgs interface they use:
that checks the names they reach for and what they hand to `buildPythonApplication`."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tomllib

import pytest

from editor_support import REPO
from requirements import require_executable

PACKAGE = REPO / "nix" / "package.nix"
FLAKE = REPO / "flake.nix"
PYPROJECT = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))

# Where nixpkgs keeps each of pyproject's runtime dependencies.
NIXPKGS_ATTRIBUTE = {"tree-sitter-nix": "tree-sitter-grammars.tree-sitter-nix", "tree-sitter-bash": "tree-sitter-grammars.tree-sitter-bash"}
TEST_PACKAGES = ("setuptools", "pytestCheckHook", "pytest-asyncio", "pytest-lsp", "hypothesis", "jsonschema", "pyyaml")

# The slice of nixpkgs' interface the two files use; every Python package evaluates to its
# nixpkgs attribute path, so the test can read back what was asked for.
STUB = r"""
let
  lib = {
    genAttrs = names: f: builtins.listToAttrs (map (name: { inherit name; value = f name; }) names);
    getExe = drv: "${drv.outPath}/bin/${drv.meta.mainProgram}";
    fileset = {
      unions = paths: paths;
      toSource = { root, fileset }: map (path: builtins.substring (builtins.stringLength (toString root) + 1) (-1) (toString path)) fileset;
    };
    licenses.mit = "mit";
    platforms.unix = [ "unix" ];
  };
  pythonPackageNames = builtins.fromJSON (builtins.getEnv "STUB_PYTHON_PACKAGES");
  python3Packages = builtins.listToAttrs (map (name: { inherit name; value = name; }) pythonPackageNames) // {
    tree-sitter-grammars.tree-sitter-nix = "tree-sitter-grammars.tree-sitter-nix";
    tree-sitter-grammars.tree-sitter-bash = "tree-sitter-grammars.tree-sitter-bash";
    buildPythonApplication = attrs: attrs // { outPath = "/nix/store/00000000000000000000000000000000-cudalint"; };
  };
  pkgsFor = system: {
    inherit lib python3Packages;
    versionCheckHook = "versionCheckHook";
    stdenv.hostPlatform.system = system;
    callPackage = path: overrides: import path ({ inherit lib python3Packages; versionCheckHook = "versionCheckHook"; } // overrides);
    mkShell = attrs: attrs // { shell = true; };
    nix = "nix"; neovim = "neovim"; emacs-nox = "emacs-nox"; nodejs_20 = "nodejs_20"; pre-commit = "pre-commit"; ruff = "ruff"; mypy = "mypy";
  };
  nixpkgs = {
    inherit lib;
    legacyPackages = lib.genAttrs [ "x86_64-linux" "aarch64-linux" "x86_64-darwin" "aarch64-darwin" ] pkgsFor;
  };
  flake = import FLAKE;
  outputs = flake.outputs { self = outputs; inherit nixpkgs; };
  package = outputs.packages.x86_64-linux.default;
in
{
  inherit (flake) inputs;
  # A set with outPath is printed as that path: take it off to see the attributes.
  package = builtins.removeAttrs package [ "outPath" ];
  packageNames = builtins.attrNames outputs.packages.x86_64-linux;
  systems = builtins.attrNames outputs.packages;
  app = outputs.apps.x86_64-linux.default;
  shell = outputs.devShells.aarch64-darwin.default // {
    inputsFrom = map (drv: drv.pname) outputs.devShells.aarch64-darwin.default.inputsFrom;
  };
  check = outputs.checks.x86_64-linux.cudalint.pname;
  overlay = (outputs.overlays.default (nixpkgs.legacyPackages.x86_64-linux) { }).cudalint.pname;
}
"""


def _distribution_name(requirement: str) -> str:
    return re.match(r"[A-Za-z0-9._-]+", requirement).group(0).lower()


RUNTIME_DEPENDENCIES = [_distribution_name(r) for r in PYPROJECT["project"]["dependencies"]]


@pytest.fixture(scope="module")
def nix_instantiate() -> str:
    return require_executable("nix-instantiate", "Nix parses and evaluates the package files")


@pytest.fixture(scope="module")
def evaluated(nix_instantiate: str) -> dict:
    expression = STUB.replace("FLAKE", str(FLAKE))
    names = sorted(set(RUNTIME_DEPENDENCIES) | set(TEST_PACKAGES))
    completed = subprocess.run(
        [nix_instantiate, "--store", "dummy://", "--eval", "--strict", "--json", "-E", expression],
        capture_output=True,
        text=True,
        env={"STUB_PYTHON_PACKAGES": json.dumps(names), "PATH": "/usr/bin:/bin", "NIX_PATH": ""},
        check=False,
    )
    assert completed.returncode == 0, completed.stderr
    return json.loads(completed.stdout)


@pytest.mark.parametrize("path", [PACKAGE, FLAKE], ids=lambda p: p.name)
def test_parses_with_nix(nix_instantiate: str, path) -> None:
    completed = subprocess.run([nix_instantiate, "--parse", str(path)], capture_output=True, text=True)
    assert completed.returncode == 0, completed.stderr


def test_cudalint_finds_nothing_in_its_own_nix_files() -> None:
    completed = subprocess.run(
        [sys.executable, "-m", "cudalint", "check", "--isolated", "--select", "ALL", str(PACKAGE), str(FLAKE)],
        capture_output=True,
        text=True,
    )
    assert completed.returncode == 0, completed.stdout + completed.stderr


def test_package_follows_nixpkgs_python_conventions(evaluated: dict) -> None:
    package = evaluated["package"]
    assert package["pname"] == PYPROJECT["project"]["name"]
    assert package["pyproject"] is True
    assert package["build-system"] == ["setuptools"]
    assert "format" not in package and "propagatedBuildInputs" not in package
    assert package["meta"]["mainProgram"] in PYPROJECT["project"]["scripts"]
    assert package["meta"]["description"] and package["meta"]["license"] == "mit"


def test_package_version_is_the_python_package_version(evaluated: dict) -> None:
    from cudalint import __version__

    assert evaluated["package"]["version"] == __version__


def test_package_depends_on_every_runtime_dependency(evaluated: dict) -> None:
    expected = sorted(NIXPKGS_ATTRIBUTE.get(name, name) for name in RUNTIME_DEPENDENCIES)
    assert sorted(evaluated["package"]["dependencies"]) == expected


def test_package_imports_every_installed_package(evaluated: dict) -> None:
    installed = PYPROJECT["tool"]["setuptools"]["packages"]
    assert set(evaluated["package"]["pythonImportsCheck"]) <= set(installed)
    assert "cudalint.server" in evaluated["package"]["pythonImportsCheck"]


def test_package_source_holds_what_pyproject_builds(evaluated: dict) -> None:
    source = evaluated["package"]["src"]
    for path in source:
        assert (REPO / path).exists(), path
    package_dirs = set(PYPROJECT["tool"]["setuptools"]["package-dir"].values())
    assert package_dirs | {"pyproject.toml", PYPROJECT["project"]["readme"]} <= set(source)


def test_flake_exposes_package_app_shell_and_overlay(evaluated: dict) -> None:
    assert evaluated["inputs"]["nixpkgs"]["url"].startswith("github:NixOS/nixpkgs/")
    assert set(evaluated["packageNames"]) == {"default", "cudalint"}
    assert "x86_64-linux" in evaluated["systems"]
    app = evaluated["app"]
    assert app["type"] == "app"
    assert app["program"].endswith("-cudalint/bin/cudalint")
    assert evaluated["shell"]["shell"] is True
    assert evaluated["shell"]["inputsFrom"] == ["cudalint"]
    assert evaluated["check"] == evaluated["overlay"] == "cudalint"
