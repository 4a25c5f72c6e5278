"""The context model: where a node stands decides which advice a rule gives."""

from __future__ import annotations

import pytest

from cudalint.nix.parsing import parse
from cudalint.nix.places import Kind
from cudalint.nix.semantic import Semantic
from cudalint.nix.source import SourceFile


def place_of_marker(path: str, code: str) -> tuple[Kind, str]:
    """The place of the last variable `MARK` in `code`, read from a file named `path`."""
    source = SourceFile(path, code)
    tree = parse(source)
    start = source.data.rindex(b"MARK")
    node = tree.root_node.named_descendant_for_byte_range(start, start + 4)
    assert node is not None and node.parent is not None and node.parent.type == "variable_expression", code
    place = Semantic(tree, source).place(node.parent)
    return place.kind, place.detail


CASES = [
    # packages
    ("pkg.nix", "{ stdenv, MARK }: stdenv.mkDerivation { src = ./.; buildInputs = [ MARK ]; }", Kind.PACKAGE, "mkDerivation"),
    ("pkg.nix", "{ python3Packages, MARK }: python3Packages.buildPythonPackage rec { src = ./.; dependencies = [ MARK ]; }", Kind.PACKAGE, "buildPythonPackage"),
    ("pkg.nix", "{ stdenv, MARK }: stdenv.mkDerivation (finalAttrs: { inherit (x) src; buildInputs = [ MARK ]; })", Kind.PACKAGE, "mkDerivation"),
    ("pkg.nix", "{ runCommand, MARK }: runCommand \"x\" { } ''cp ${MARK}/bin/x $out''", Kind.PACKAGE, "runCommand"),
    ("default.nix", "{ lib, MARK }: lib.makeLibraryPath [ MARK ]", Kind.PACKAGE, "file"),
    # a module option nested inside a package is still the package's attribute
    ("pkg.nix", "{ stdenv, MARK }: stdenv.mkDerivation { src = ./.; passthru.environment = MARK; }", Kind.PACKAGE, "mkDerivation"),
    # dev shells
    ("flake.nix", "{ outputs = { nixpkgs, ... }: { devShells.x86_64-linux.default = pkgs.mkShell { packages = [ MARK ]; }; }; }", Kind.SHELL, "mkShell"),
    ("flake.nix", '{ outputs = _: { devShells.x86_64-linux.default = pkgs.stdenv.mkDerivation { name = "s"; buildInputs = [ MARK ]; }; }; }', Kind.SHELL, "nix-shell environment"),
    ("flake.nix", "{ outputs = _: { devShell.x86_64-linux = import ./shell.nix { x = MARK; }; }; }", Kind.SHELL, "devShell"),
    ("fhs.nix", '{ buildFHSEnv, MARK }: buildFHSEnv { name = "e"; targetPkgs = p: [ MARK ]; }', Kind.SHELL, "buildFHSEnv"),
    ("shell.nix", "{ pkgs ? import <nixpkgs> { } }: with pkgs; mkShellNoCC { buildInputs = [ MARK ]; }", Kind.SHELL, "mkShellNoCC"),
    ("shell.nix", "{ pkgs ? import <nixpkgs> { } }: let libs = [ MARK ]; in pkgs.callPackage ./x.nix { inherit libs; }", Kind.SHELL, "shell.nix"),
    ("default.nix", "{ pkgs }: pkgs.stdenv.mkDerivation { name = \"env\"; buildInputs = [ MARK ]; shellHook = ''echo''; }", Kind.SHELL, "nix-shell environment"),
    # a phase hook is something to build, even without `src`
    ("pkg.nix", "{ stdenv, MARK }: stdenv.mkDerivation { pname = \"w\"; postInstall = ''wrap ${MARK}''; }", Kind.PACKAGE, "mkDerivation"),
    ("pkg.nix", "{ stdenv, MARK }: stdenv.mkDerivation { src = ./.; shellHook = ''export X=${MARK}''; }", Kind.SHELL, "shellHook"),
    ("devenv.nix", "{ pkgs, ... }: { packages = [ MARK ]; env.CUDA_PATH = MARK; }", Kind.SHELL, "devenv.nix"),
    # numtide devshell's flake module
    ("flake.nix", '{ outputs = _: { perSystem = { pkgs, ... }: { devshells.default.env = [ { name = "X"; value = MARK; } ]; }; }; }', Kind.SHELL, "devshells"),
    ("devenv.nix", "{ pkgs, ... }: { enterShell = ''export X=${MARK}''; }", Kind.SHELL, "enterShell"),
    # NixOS / home-manager modules
    ("configuration.nix", "{ config, pkgs, ... }: { environment.systemPackages = with pkgs; [ MARK ]; }", Kind.MODULE, "environment.systemPackages"),
    ("configuration.nix", "{ config, pkgs, ... }: { environment = { sessionVariables = { LD_LIBRARY_PATH = MARK; }; }; }", Kind.MODULE, "environment.sessionVariables.LD_LIBRARY_PATH"),
    ("gpu.nix", "{ config, lib, ... }: { config = lib.mkIf true { programs.nix-ld.libraries = [ MARK ]; }; }", Kind.MODULE, "programs.nix-ld.libraries"),
    ("home.nix", "{ pkgs, ... }: { home.sessionVariables.CUDA_PATH = MARK; }", Kind.MODULE, "home.sessionVariables.CUDA_PATH"),
    ("hosts.nix", "{ nixpkgs, ... }: nixpkgs.lib.nixosSystem { modules = [ { systemd.services.x.script = MARK; } ]; }", Kind.MODULE, "systemd.services.x.script"),
    ("gpu.nix", "{ config, pkgs, ... }: let libs = [ MARK ]; in { hardware.nvidia.open = true; }", Kind.MODULE, "module"),
    # a package built inside a module is a package
    ("configuration.nix", "{ pkgs, ... }: { environment.systemPackages = [ (pkgs.stdenv.mkDerivation { src = ./.; buildInputs = [ MARK ]; }) ]; }", Kind.PACKAGE, "mkDerivation"),
    # overlays and overrides
    ("overlay.nix", "final: prev: { x = MARK; }", Kind.OVERRIDE, "overlay"),
    ("overlay.nix", "self: super: { cudaPackages = super.cudaPackages.overrideScope (f: p: { cudatoolkit = MARK; }); }", Kind.OVERRIDE, "overrideScope"),
    ("x.nix", "{ pkgs, MARK }: pkgs.foo.overrideAttrs (old: { buildInputs = old.buildInputs ++ [ MARK ]; })", Kind.OVERRIDE, "overrideAttrs"),
    ("x.nix", "{ pkgs, MARK }: pkgs.opencv.override { cudatoolkit = MARK; }", Kind.OVERRIDE, "override"),
    ("x.nix", "{ MARK }: import <nixpkgs> { config.packageOverrides = pkgs: { y = MARK; }; }", Kind.OVERRIDE, "packageOverrides"),
    ("flake.nix", "{ outputs = _: { pkgs = import nixpkgs { overlays = [ (f: p: { y = MARK; }) ]; }; }; }", Kind.OVERRIDE, "overlays"),
    # a package defined in an overlay is a package
    ("overlay.nix", "final: prev: { y = final.stdenv.mkDerivation { src = ./.; buildInputs = [ MARK ]; }; }", Kind.PACKAGE, "mkDerivation"),
]


@pytest.mark.parametrize(("path", "code", "kind", "detail"), CASES, ids=[f"{c[2].name.lower()}-{c[3]}-{i}" for i, c in enumerate(CASES)])
def test_place(path: str, code: str, kind: Kind, detail: str) -> None:
    assert place_of_marker(path, code) == (kind, detail)


def test_every_finding_carries_its_place() -> None:
    from cudalint.lint.engine import lint
    from cudalint.lint.settings import LintSettings

    code = "{ pkgs }: pkgs.mkShell { shellHook = ''export LD_LIBRARY_PATH=${pkgs.cudatoolkit}/lib''; }"
    result = lint(SourceFile("shell.nix", code), LintSettings())
    assert result.diagnostics and {d.context for d in result.diagnostics} == {"dev shell"}
