{
  description = "cudalint: linter and language server for Nix expressions that use NVIDIA CUDA packages";

  inputs.nixpkgs.url = "github:NixOS/nixpkgs/nixos-unstable";

  outputs =
    { self, nixpkgs }:
    let
      inherit (nixpkgs) lib;
      # cudalint is pure Python: it lints CUDA expressions on any machine, GPU or not.
      systems = [
        "x86_64-linux"
        "aarch64-linux"
        "x86_64-darwin"
        "aarch64-darwin"
      ];
      forAllSystems = f: lib.genAttrs systems (system: f nixpkgs.legacyPackages.${system});
    in
    {
      overlays.default = final: prev: { cudalint = final.callPackage ./nix/package.nix { }; };

      packages = forAllSystems (pkgs: rec {
        cudalint = pkgs.callPackage ./nix/package.nix { };
        default = cudalint;
      });

      apps = forAllSystems (pkgs: {
        default = {
          type = "app";
          program = lib.getExe self.packages.${pkgs.stdenv.hostPlatform.system}.cudalint;
          meta.description = "Run cudalint (`nix run . -- check .`, `nix run . -- server`)";
        };
      });

      # `nix develop`: the package's Python environment plus what the test suite runs: the
      # reference parser (nix-instantiate), the editors of the round-trip tests and node for the
      # VS Code extension.
      devShells = forAllSystems (pkgs: {
        default = pkgs.mkShell {
          inputsFrom = [ self.packages.${pkgs.stdenv.hostPlatform.system}.cudalint ];
          packages = [
            pkgs.nix
            pkgs.neovim
            pkgs.emacs-nox
            pkgs.nodejs_20
            pkgs.pre-commit
            pkgs.ruff
            pkgs.mypy
          ];
        };
      });

      checks = forAllSystems (pkgs: {
        cudalint = self.packages.${pkgs.stdenv.hostPlatform.system}.cudalint;
      });
    };
}
