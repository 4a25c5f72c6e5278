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
    # a builder given another stdenv builds a package (it overrides none)
    (
        "pkg.nix",
        "{ buildPythonPackage, torch, MARK }: buildPythonPackage.override { inherit (torch) stdenv; } (finalAttrs: { src = ./.; dependencies = [ MARK ]; })",
        Kind.PACKAGE,
        "buildPythonPackage",
    ),
    ("pkg.nix", "{ python3Packages, MARK }: (python3Packages.buildPythonPackage.override { stdenv = MARK; }) { src = ./.; }", Kind.PACKAGE, "buildPythonPackage"),
    ("pkg.nix", "{ buildPythonPackage, torch, MARK }: buildPythonPackage.override { stdenv = MARK; } (finalAttrs: { src = ./.; })", Kind.PACKAGE, "buildPythonPackage"),
    ("pkg.nix", "{ buildPythonPackage, MARK }: buildPythonPackage.override { stdenv = MARK; }", Kind.PACKAGE, "buildPythonPackage"),
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
    ("x.nix", "{ python3Packages, MARK }: python3Packages.torch.override { cudaSupport = true; } // { x = MARK; }", Kind.PACKAGE, "file"),
    ("x.nix", "{ pkgs, MARK }: (pkgs.opencv.override { enableCuda = true; }).overrideAttrs (old: { buildInputs = [ MARK ]; })", Kind.OVERRIDE, "overrideAttrs"),
    ("x.nix", "{ MARK }: import <nixpkgs> { config.packageOverrides = pkgs: { y = MARK; }; }", Kind.OVERRIDE, "packageOverrides"),
    ("flake.nix", "{ outputs = _: { pkgs = import nixpkgs { overlays = [ (f: p: { y = MARK; }) ]; }; }; }", Kind.OVERRIDE, "overlays"),
    # a package defined in an overlay is a package
    ("overlay.nix", "final: prev: { y = final.stdenv.mkDerivation { src = ./.; buildInputs = [ MARK ]; }; }", Kind.PACKAGE, "mkDerivation"),
    # ----- the file's shape decides what no call or attribute around the node does
    # devenv modules, whatever the file is called
    ("nix/dev.nix", "{ pkgs, ... }: { packages = [ MARK ]; languages.python.enable = true; }", Kind.SHELL, "devenv module"),
    ("dev.nix", "{ pkgs, ... }: { languages.cplusplus.enable = true; env.CUDA_PATH = MARK; }", Kind.SHELL, "devenv module"),
    ("dev.nix", "{ pkgs, ... }: { scripts.train.exec = MARK; }", Kind.SHELL, "devenv module"),
    # an attrset (no function) as well; a flake-style `packages.<name>` attrset is packages
    ("dev.nix", "{ packages = [ MARK ]; }", Kind.SHELL, "devenv module"),
    ("outputs.nix", "{ packages = { tool = MARK; }; }", Kind.PACKAGE, "packages"),
    ("dev.nix", "{ pkgs, ... }: { processes.jupyter.exec = MARK; }", Kind.SHELL, "devenv module"),
    ("dev.nix", "{ pkgs, lib, ... }: let libs = [ MARK ]; in { packages = libs ++ [ pkgs.git ]; }", Kind.SHELL, "devenv module"),
    # `services` and `imports` are devenv's too when the rest of the file is devenv's
    ("dev.nix", "{ pkgs, ... }: { imports = [ ./base.nix ]; packages = [ pkgs.git ]; services.postgres.package = MARK; }", Kind.SHELL, "devenv module"),
    ("dev.nix", '{ pkgs, ... }: { env.X = "1"; services.ollama.acceleration = MARK; }', Kind.SHELL, "devenv module"),
    # a devenv module with options of its own, its settings under `config`
    (
        "modules/cuda.nix",
        '{ config, lib, pkgs, ... }: { options.cuda.enable = lib.mkEnableOption "CUDA"; config = lib.mkIf config.cuda.enable { packages = [ MARK ]; }; }',
        Kind.SHELL,
        "devenv module",
    ),
    ("dev.nix", '{ pkgs, lib, ... }: lib.mkMerge [ { enterTest = "pytest"; } { packages = [ MARK ]; } ]', Kind.SHELL, "devenv module"),
    # not devenv: NixOS options beside `services`/`env`, home-manager's `home.packages`, a flake's `packages.<name>`
    ("gpu.nix", "{ config, pkgs, ... }: { services.ollama.package = MARK; environment.systemPackages = [ pkgs.git ]; }", Kind.MODULE, "services.ollama.package"),
    ("ollama.nix", "{ pkgs, ... }: { services.ollama.acceleration = MARK; }", Kind.MODULE, "services.ollama.acceleration"),
    ("gpu.nix", "{ pkgs, ... }: let l = MARK; in { env.X = l; boot.kernelModules = [ ]; }", Kind.MODULE, "module"),
    ("home.nix", "{ pkgs, ... }: { home.packages = [ MARK ]; }", Kind.MODULE, "home.packages"),
    ("home.nix", "{ pkgs, ... }: let tools = [ MARK ]; in { home.packages = tools; programs.git.enable = true; }", Kind.MODULE, "module"),
    ("set.nix", "{ callPackage, MARK }: { tool = callPackage ./tool.nix { cuda = MARK; }; }", Kind.PACKAGE, "file"),
    # a package set's `env` is a package, not devenv's variables
    ("set.nix", '{ buildEnv, MARK }: { env = buildEnv { name = "e"; }; tool = MARK; }', Kind.PACKAGE, "file"),
    # flake-parts: shells and packages of `perSystem`, modules of `flake.nixosModules`, never a module file
    ("parts.nix", "{ inputs, ... }: { imports = [ inputs.x.flakeModule ]; perSystem = { pkgs, ... }: { devShells.default = MARK; }; }", Kind.SHELL, "devShells"),
    ("parts.nix", "{ inputs, ... }: { imports = [ inputs.x.flakeModule ]; perSystem = { pkgs, ... }: { packages.tool = MARK; }; }", Kind.PACKAGE, "packages"),
    # elsewhere a flake-parts module sets the flake's own options (not a NixOS module's)
    ("parts.nix", "{ inputs, ... }: { imports = [ ]; perSystem = { pkgs, ... }: let l = [ MARK ]; in { }; }", Kind.MODULE, "flake-parts module"),
    ("flake.nix", "{ outputs = i: parts.lib.mkFlake { } { perSystem = { pkgs, ... }: { _module.args.x = MARK; }; }; }", Kind.MODULE, "mkFlake"),
    ("flake.nix", "{ outputs = inputs: parts.lib.mkFlake { inherit inputs; } { perSystem = { pkgs, ... }: { packages = { tool = MARK; }; }; }; }", Kind.PACKAGE, "packages"),
    ("flake.nix", "{ outputs = i: parts.lib.mkFlake { } { flake.nixosModules.gpu = { pkgs, ... }: { hardware.nvidia.package = MARK; }; }; }", Kind.MODULE, "hardware.nvidia.package"),
    ("flake.nix", "{ outputs = _: { nixosModules.default = { pkgs, ... }: let l = [ MARK ]; in { }; }; }", Kind.MODULE, "nixosModules"),
    ("flake.nix", "{ outputs = _: { homeManagerModules.gpu = { pkgs, ... }: { xs = MARK; }; }; }", Kind.MODULE, "homeManagerModules"),
    # flake-parts' `flake.modules.<class>.<name>` (one module per file, the "dendritic" layout)
    ("modules/gpu.nix", "{ flake.modules.nixos.gpu = { pkgs, ... }: let l = [ MARK ]; in { }; }", Kind.MODULE, "modules"),
    ("modules/gpu.nix", "{ flake.modules.nixos.gpu = { pkgs, ... }: { hardware.nvidia.package = MARK; }; }", Kind.MODULE, "hardware.nvidia.package"),
    ("parts.nix", "{ flake.modules.generic.x = { y = MARK; }; }", Kind.MODULE, "flake-parts module"),
    ("flake.nix", "{ outputs = _: { packages.x86_64-linux.default = MARK; }; }", Kind.PACKAGE, "packages"),
    # an option of a module that happens to be called `packages` is the module's
    ("gpu.nix", "{ pkgs, ... }: { services.foo = { packages = { cuda = MARK; }; }; }", Kind.MODULE, "services.foo.packages.cuda"),
    ("flake.nix", "{ outputs = _: { perSystem = { pkgs, ... }: { devenv.shells.default = { services.postgres.package = MARK; }; }; }; }", Kind.SHELL, "devenv.shells"),
    ("flake.nix", "{ outputs = i: { devShells.x = devenv.lib.mkShell { inherit i; modules = [ { packages = [ MARK ]; } ]; }; }; }", Kind.SHELL, "mkShell"),
    ("flake.nix", "{ outputs = _: { nixosConfigurations.gpu = nixpkgs.lib.nixosSystem { specialArgs = { x = MARK; }; }; }; }", Kind.MODULE, "nixosSystem"),
    # module files: by the options they return, also under `lib.mkIf`/`lib.mkMerge`
    ("gpu.nix", "{ config, lib, ... }: lib.mkIf config.gpu.enable { boot.kernelModules = [ ]; x = MARK; }", Kind.MODULE, "module"),
    ("gpu.nix", '{ lib, ... }: lib.mkMerge [ { networking.hostName = "x"; } { y = MARK; } ]', Kind.MODULE, "module"),
    ("gpu.nix", "{ config, lib, ... }: let cfg = config.x; in { options.x.package = lib.mkOption { default = MARK; }; }", Kind.MODULE, "module"),
    ("gpu.nix", "{ lib, ... }: let x = MARK; in { hardware = lib.mkIf true { nvidia.open = true; }; }", Kind.MODULE, "module"),
    # a file of pins whose `hardware` is a fetch (nixos-hardware), not options
    ("pins.nix", "let fetch = MARK; in { hardware = fetch { }; cuda = fetch { }; }", Kind.PACKAGE, "file"),
    # ... and by their directory, when they return an attrset
    ("nixos/modules/services/misc/foo.nix", "{ config, lib, pkgs, ... }: let p = MARK; in { meta.maintainers = [ ]; }", Kind.MODULE, "module"),
    ("/home/u/src/modules/gpu.nix", "{ pkgs, ... }: { fonts.packages = [ MARK ]; }", Kind.MODULE, "module"),
    ("modules/tool/default.nix", "{ stdenv, cuda ? MARK }: stdenv.mkDerivation { src = ./.; }", Kind.PACKAGE, "file"),
    ("modules/tool/default.nix", "{ stdenv, MARK }: stdenv.mkDerivation { src = ./.; buildInputs = [ MARK ]; }", Kind.PACKAGE, "mkDerivation"),
    ("pkgs/development/python-modules/x/default.nix", "{ callPackage, MARK }: { a = MARK; }", Kind.PACKAGE, "file"),
    ("pkgs/development/cuda-modules/x/default.nix", "{ callPackage, MARK }: { a = MARK; }", Kind.PACKAGE, "file"),
    # nix-shell environments: a `mkDerivation` with nothing to build, in `shell.nix` or `default.nix`
    ("shell.nix", 'with import <nixpkgs> { }; stdenv.mkDerivation { name = "env"; buildInputs = [ MARK ]; }', Kind.SHELL, "nix-shell environment"),
    ("default.nix", '{ pkgs ? import <nixpkgs> { } }: pkgs.stdenv.mkDerivation { name = "env"; LD_LIBRARY_PATH = MARK; }', Kind.SHELL, "nix-shell environment"),
    # `src = null` is no source; the `let` of a file whose value is a shell feeds the shell
    (
        "default.nix",
        'with import <nixpkgs> { }; let libs = [ MARK ]; in stdenv.mkDerivation { name = "env"; src = null; buildInputs = libs; }',
        Kind.SHELL,
        "nix-shell environment",
    ),
    ("pkg.nix", "{ stdenv, MARK }: let l = [ MARK ]; in stdenv.mkDerivation { src = ./.; buildInputs = l; }", Kind.PACKAGE, "file"),
    # builders that compute their source are packages without `src`
    ("pkg.nix", '{ python3Packages, MARK }: python3Packages.buildPythonPackage { pname = "x"; dependencies = [ MARK ]; }', Kind.PACKAGE, "buildPythonPackage"),
    ("cuda_x.nix", '{ buildRedist, MARK }: buildRedist { redistName = "cuda"; pname = "cuda_x"; buildInputs = [ MARK ]; }', Kind.PACKAGE, "buildRedist"),
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


# ----- end to end: `cudalint check` gives the advice of the context the file's shape or path decides


def check_json(tmp_path, monkeypatch, capsys, path: str, code: str, *extra: str, stdin: bool = False) -> list[dict]:
    import io
    import json
    import sys

    from cudalint.frontend.cli import main

    monkeypatch.chdir(tmp_path)
    if stdin:
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(code.encode())))
        argv = ["check", "--isolated", "--preview", "--output-format", "json", *extra, "--stdin-filename", path, "-"]
    else:
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(code)
        argv = ["check", "--isolated", "--preview", "--output-format", "json", *extra, path]
    main(argv)
    return json.loads(capsys.readouterr().out)


def found(findings: list[dict], code: str) -> list[tuple[str, str]]:
    return [(f["severity"], f["context"]) for f in findings if f["code"] == code]


DEVENV = """{ pkgs, ... }:
{
  languages.python.enable = true;
  packages = [ pkgs.git ];
  env.LD_LIBRARY_PATH = "${pkgs.cudaPackages.cuda_cudart}/lib";
}
"""


def test_a_devenv_module_found_by_its_shape_gets_the_dev_shell_advice(tmp_path, monkeypatch, capsys) -> None:
    assert found(check_json(tmp_path, monkeypatch, capsys, "nix/dev.nix", DEVENV), "CUDA101") == [("info", "dev shell")]
    # the same `env` in a NixOS module (`boot` is no devenv option) is no dev shell
    nixos = DEVENV.replace("languages.python.enable = true;", "boot.kernelModules = [ ];")
    assert found(check_json(tmp_path, monkeypatch, capsys, "nix/gpu.nix", nixos), "CUDA101") == [("info", "module")]
    # and in a package file it is a package's `LD_LIBRARY_PATH`
    package = DEVENV.replace("{ pkgs, ... }:\n", "{ pkgs, ... }:\npkgs.stdenv.mkDerivation ").replace("languages.python.enable = true;", "src = ./.;")
    assert found(check_json(tmp_path, monkeypatch, capsys, "nix/pkg.nix", package), "CUDA101") == [("warning", "package")]


FLAKE_PARTS = """{ inputs, ... }:
{
  imports = [ inputs.treefmt-nix.flakeModule ];
  perSystem = { pkgs, ... }: {
    packages.cuda-root = pkgs.symlinkJoin {
      name = "cuda-root";
      paths = [ (pkgs.lib.getBin pkgs.cudaPackages.cuda_nvcc) ];
    };
    devShells.default = pkgs.mkShell {
      CUDA_HOME = pkgs.symlinkJoin { name = "cuda-home"; paths = [ (pkgs.lib.getBin pkgs.cudaPackages.cuda_nvcc) ]; };
    };
  };
}
"""


def test_flake_parts_packages_are_packages_and_its_dev_shells_shells(tmp_path, monkeypatch, capsys) -> None:
    findings = check_json(tmp_path, monkeypatch, capsys, "nix/parts.nix", FLAKE_PARTS)
    # the join is reported in the package (line 5), not in the dev shell (line 10); `imports` makes no NixOS module of it
    assert [(f["location"]["row"], f["context"]) for f in findings if f["code"] == "CUDA203"] == [(5, "package")]


MODULE = """{ config, lib, pkgs, cudaSupport ? false, ... }:
{
  meta.maintainers = [ ];
}
"""


@pytest.mark.parametrize(("path", "fires"), [("nixos/modules/services/misc/foo.nix", False), ("modules/foo.nix", False), ("pkgs/by-name/fo/foo/package.nix", True)])
def test_the_stdin_filename_of_a_module_gives_module_context(tmp_path, monkeypatch, capsys, path: str, fires: bool) -> None:
    # `cudaSupport ? false` is a package's defect (CUDA303), a module's own argument is not
    assert bool(found(check_json(tmp_path, monkeypatch, capsys, path, MODULE, stdin=True), "CUDA303")) == fires
    assert bool(found(check_json(tmp_path, monkeypatch, capsys, path, MODULE), "CUDA303")) == fires


NIX_SHELL = """{ pkgs ? import <nixpkgs> { } }:
pkgs.stdenv.mkDerivation {
  name = "cuda-env";
  buildInputs = [ pkgs.cudaPackages.cuda_cudart ];
  LD_LIBRARY_PATH = "${pkgs.lib.getLib pkgs.cudaPackages.cuda_cudart}/lib";
}
"""


def test_a_derivation_with_nothing_to_build_is_a_nix_shell_environment(tmp_path, monkeypatch, capsys) -> None:
    assert found(check_json(tmp_path, monkeypatch, capsys, "env/default.nix", NIX_SHELL), "CUDA101") == [("info", "dev shell")]
    package = NIX_SHELL.replace('name = "cuda-env";', 'name = "cuda-env"; src = ./.;')
    assert found(check_json(tmp_path, monkeypatch, capsys, "pkg/default.nix", package), "CUDA101") == [("warning", "package")]


BUILDER_WITH_STDENV = """{ buildPythonPackage, torch, cudaPackages }:
buildPythonPackage.override { inherit (torch) stdenv; } (finalAttrs: {
  pname = "kernels";
  version = "1.0";
  src = ./.;
  makeWrapperArgs = [ "--prefix" "LD_LIBRARY_PATH" ":" "${cudaPackages.cuda_cudart}/lib" ];
})
"""


def test_a_builder_given_another_stdenv_builds_a_package(tmp_path, monkeypatch, capsys) -> None:
    # a package's `LD_LIBRARY_PATH` gets the package fix (an override of someone else's package would not)
    [finding] = [f for f in check_json(tmp_path, monkeypatch, capsys, "kernels.nix", BUILDER_WITH_STDENV) if f["code"] == "CUDA101"]
    assert finding["context"] == "package" and finding["fix"] is not None
