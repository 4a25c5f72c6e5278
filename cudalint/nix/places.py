"""Where a node stands: in a package, a dev shell, a NixOS/home-manager module, or an override.

The same code is right in one place and wrong in another: `LD_LIBRARY_PATH` with the driver
directory is a defect in a package (nixpkgs patches RUNPATHs instead) and the usual answer in a
dev shell that runs pip wheels; `cudatoolkit` in `environment.systemPackages` is a question of
what belongs in a system profile, not of build inputs. Rules ask `ctx.place(node)` and choose
their severity, message and fix from the answer.

The innermost construct that decides wins, so a `mkDerivation` inside a NixOS module's
`environment.systemPackages` is a package, and a `mkShell` inside a flake is a dev shell:

- a builder call whose argument holds the node: `mkShell`/`mkShellNoCC`/`buildFHSEnv`... (shell);
  `mkDerivation`, `buildPythonPackage`, ... (package, also with another stdenv:
  `buildPythonPackage.override { stdenv = ...; } (finalAttrs: { ... })`; a `mkDerivation` with no
  source and no phases is a nix-shell environment); `runCommand`, `symlinkJoin`, wrappers
  (package); `.override`, `overrideAttrs`, `overrideScope`, ... (override);
- an attribute: `devShells`/`devShell`/`devshells`/`shellHook`/`enterShell` and devenv's
  flake-parts `devenv.shells` (shell), `packages.<name>` of a flake or flake-parts' `perSystem` (package),
  `nixosModules`/`homeManagerModules`/`nixosConfigurations`... (module), `overlays` /
  `packageOverrides` (override), `environment.*`, `home.*`, `programs.*`, `hardware.*`,
  `systemd.*`, `services.*`, `boot.*`, `nixpkgs.*` (module);
- an overlay function `final: prev: ...` / `self: super: ...` (override);
- the file (`file_place`), by name and by shape: `shell.nix` and `devenv.nix` are shells, and so
  is a devenv module by its top-level attributes (`languages`, `enterShell`, `scripts`,
  `processes`, a `packages` list, `env.X`, ...; not with NixOS-only ones such as `environment` or
  `boot`: `services` and `imports` belong to both); a module is a function (or attrset)
  returning module options (`options`, `config`, `imports`, `environment.*`, `home.*`, also
  under `lib.mkIf`/`lib.mkMerge`), or any attrset-valued file under a `modules/` directory
  (`nixos/modules/services/foo.nix`); a flake-parts module (`perSystem`, `flake`, or the
  argument of `mkFlake`) sets the flake's own options (module) except where its attributes
  decide (`packages.<name>`, `devShells`, `nixosModules`); anything else is judged as a package.
"""

from __future__ import annotations

import enum
import os
import re
from collections.abc import Callable
from dataclasses import dataclass

from tree_sitter import Node

from cudalint.nix.syntax import (
    ATTRSET_TYPES,
    attrpath_names,
    binding_value,
    bindings_of,
    dotted_name,
    flatten_apply,
    identifier_name,
    last_name,
    outermost_apply,
    unparen,
)


class Kind(enum.Enum):
    PACKAGE = "package"
    SHELL = "dev shell"
    MODULE = "module"
    OVERRIDE = "override"


@dataclass(frozen=True)
class Place:
    """`kind`, what decided it (`detail`: "mkShell", "devShells", "environment.sessionVariables",
    "overrideAttrs", "overlay", "shell.nix", "mkDerivation", ...) and the deciding call or binding
    (None when the file decided). `builder` names the derivation builder whose attrset holds the
    node, in a package."""

    kind: Kind
    detail: str
    node: Node | None = None
    builder: str | None = None

    @property
    def is_package(self) -> bool:
        return self.kind is Kind.PACKAGE

    @property
    def is_shell(self) -> bool:
        return self.kind is Kind.SHELL

    @property
    def is_module(self) -> bool:
        return self.kind is Kind.MODULE

    @property
    def is_override(self) -> bool:
        return self.kind is Kind.OVERRIDE


# Environments to work in rather than packages to ship.
SHELL_BUILDERS = frozenset(
    {
        "mkShell",
        "mkShellNoCC",
        "mkDevShell",
        "buildFHSEnv",
        "buildFHSUserEnv",
        "buildFHSEnvBubblewrap",
        "buildFHSEnvChroot",
        "buildFHSUserEnvBubblewrap",
    }
)
# Builders whose attrset is a derivation with the usual phases.
DERIVATION_BUILDERS = frozenset(
    {
        "mkDerivation",
        "mkDerivationNoCC",
        "buildPythonPackage",
        "buildPythonApplication",
        "buildGoModule",
        "buildRustPackage",
        "buildNpmPackage",
        "buildDotnetModule",
        "buildPerlPackage",
        "buildGoPackage",
        "buildCudaPackage",
        "buildRedist",
    }
)
# Builders of packages that only link, wrap or write other store paths.
WRAPPER_BUILDERS = frozenset(
    {
        "runCommand",
        "runCommandLocal",
        "runCommandCC",
        "runCommandNoCC",
        "symlinkJoin",
        "buildEnv",
        "writeShellScript",
        "writeShellScriptBin",
        "writeScript",
        "writeScriptBin",
        "writeShellApplication",
        "writeTextFile",
        "writeText",
        "writeTextDir",
    }
)
OVERRIDE_CALLS = frozenset({"override", "overrideAttrs", "overrideDerivation", "overridePythonAttrs", "overrideScope", "overrideScope'", "extend"})
# `devshells`: numtide devshell's flake module (`perSystem.devshells.<name>`)
SHELL_ATTRS = frozenset({"devShells", "devShell", "devshells", "shellHook", "enterShell"})
OVERRIDE_ATTRS = frozenset({"overlays", "packageOverrides"})
# Flake outputs (and flake-parts' `flake.*`) whose values are modules or whole systems.
MODULE_ATTRS = frozenset(
    {
        "nixosModules",
        "nixosModule",
        "homeManagerModules",
        "homeManagerModule",
        "homeModules",
        "darwinModules",
        "nixosConfigurations",
        "homeConfigurations",
        "darwinConfigurations",
    }
)
# Flake outputs whose attributes are packages: `packages.<system>.<name>`, `perSystem`'s `packages.<name>`.
PACKAGE_ATTRS = frozenset({"packages", "legacyPackages"})
# flake-parts' `flake.modules.<class>.<name>`: the classes whose modules are system modules.
_MODULE_CLASSES = (["nixos"], ["homeManager"], ["darwin"])
# Calls that build a system (or a flake: flake-parts' `mkFlake`) from modules: their argument's
# options are module options.
MODULE_CALLS = frozenset({"nixosSystem", "homeManagerConfiguration", "darwinSystem", "mkFlake"})
# First attribute names of NixOS / home-manager options that hold CUDA settings.
MODULE_ROOTS = frozenset({"environment", "home", "programs", "hardware", "systemd", "services", "boot", "nixpkgs", "virtualisation", "users", "security"})
# Top-level attributes only a devenv module (or numtide devshell's) sets.
_DEVENV_KEYS = frozenset(
    {
        *("languages", "enterShell", "enterTest", "scripts", "processes", "process", "pre-commit", "git-hooks", "dotenv", "devenv", "devshell"),
        *("cachix", "devcontainer", "tasks", "starship", "difftastic", "delta"),
        # the shapes of `packages` and `env` devenv writes (`_top_keys`), not a package set's `env = buildEnv { ... }`
        *("packages = [...]", "env = {...}"),
    }
)
# Top-level options of NixOS and home-manager that devenv does not have (`services`, `imports`
# and `env` are shared or ambiguous, so they decide nothing alone).
_SYSTEM_ONLY_KEYS = MODULE_ROOTS - {"services"} | {"networking", "fileSystems", "system", "i18n", "time", "fonts", "xdg", "powerManagement", "console", "swapDevices", "nix"}
_OPTION_ROOTS = MODULE_ROOTS | {"networking", "fileSystems"}
_MODULE_KEYS = _OPTION_ROOTS | {"imports", "options", "config"}
# flake-parts modules: their attributes hold packages, shells and modules, each decided inside.
_FLAKE_PARTS_KEYS = frozenset({"perSystem", "flake", "systems", "transposition"})
# Module-valued wrappers a module body may sit in: `lib.mkIf cfg.enable { ... }`, `lib.mkMerge [ ... ]`.
_MODULE_WRAPPERS = frozenset({"mkIf", "mkMerge", "mkDefault", "mkForce", "mkOverride"})
# A derivation with none of these has nothing to build: it is a nix-shell environment.
_SOURCE_ATTRS = frozenset({"src", "srcs", "unpackPhase", "buildPhase", "installPhase", "buildCommand", "builder", "configurePhase", "dontUnpack", "phases"})
# The builders nix-shell environments are written with (a `buildRedist` or `buildPythonPackage`
# without `src` computes its source).
_NIX_SHELL_BUILDERS = frozenset({"mkDerivation", "mkDerivationNoCC"})
_PHASE_ATTR = re.compile(r"^(?:(?:pre|post)[A-Z]\w*|\w+Phase)$")
_OVERLAY_FIRST = frozenset({"final", "self", "pfinal"})
_OVERLAY_SECOND = frozenset({"prev", "super", "pprev", "previous"})
_SHELL_FILES = frozenset({"shell.nix", "devenv.nix"})
DEVENV = "devenv module"
FLAKE_PARTS = "flake-parts module"


def place_of(node: Node, file: Place | None, call_place: Callable[[Node], Place | None] | None = None) -> Place:
    """The place of `node` in a file whose whole value stands in `file` (`file_place`; None: a
    package file). `call_place` answers what a call decides for its argument (`call_place_of`, or
    a memo of it)."""
    call_place = call_place or call_place_of
    # a devenv module's `services.postgres` is devenv's, not a NixOS service
    system_options = file is None or file.detail not in (DEVENV, "devenv.nix")
    child = node
    names: list[str] = []  # the attribute path walked so far, outermost first
    module: Place | None = None  # a module option holds the node, unless a builder call around it does
    package: Place | None = None  # `packages.<name>` holds it, unless a module option holds that
    parent = node.parent
    while parent is not None:
        if parent.type == "apply_expression" and parent.child_by_field_name("argument") == child:
            decided = call_place(parent)
            if decided is not None:
                return (module or package or decided) if decided.is_module else decided
        elif parent.type == "binding" and binding_value(parent) == child and _in_attrset(parent):
            own = [n or "${...}" for n in attrpath_names(parent.child_by_field_name("attrpath"))]
            deeper = len(names)
            names[:0] = own
            if shell := next((n for n in own if n in SHELL_ATTRS), None):
                return Place(Kind.SHELL, shell, parent)
            if "devenv" in own and names[names.index("devenv") + 1 :][:1] == ["shells"]:  # devenv's flake-parts module
                return Place(Kind.SHELL, "devenv.shells", parent)
            if override := next((n for n in own if n in OVERRIDE_ATTRS), None):
                return Place(Kind.OVERRIDE, override, parent)
            if outputs := next((n for n in own if n in MODULE_ATTRS), None):
                return module or package or Place(Kind.MODULE, outputs, parent)
            if "modules" in own and names[names.index("modules") + 1 :][:1] in _MODULE_CLASSES:  # flake-parts' `flake.modules.nixos.<name>`
                return module or package or Place(Kind.MODULE, "modules", parent)
            # `packages.default = ...` (not a devenv module's `packages = [ ... ]` list, nor `home.packages`)
            if package is None and own[0] in PACKAGE_ATTRS and len(own) + deeper > 1:
                package = Place(Kind.PACKAGE, own[0], parent)
            rooted = names[1:] if names[:1] == ["config"] else names
            if module is None and system_options and rooted and rooted[0] in MODULE_ROOTS:
                module = Place(Kind.MODULE, ".".join(rooted), parent)
        elif parent.type == "function_expression" and _is_overlay(parent):
            return Place(Kind.OVERRIDE, "overlay", parent)
        child, parent = parent, parent.parent
    return module or package or file or Place(Kind.PACKAGE, "file")


def call_place_of(apply: Node) -> Place | None:
    """The place a builder or override call decides for its argument."""
    call = outermost_apply(apply)
    function, arguments = flatten_apply(call)
    name = last_name(function)
    dotted = dotted_name(function) or ""
    overridden = _overridden_builder(function)
    if overridden is not None:  # `buildPythonPackage.override { stdenv = ...; } (finalAttrs: { ... })`
        name = overridden
        if function.type == "select_expression":  # not `(buildPythonPackage.override { ... })`
            arguments = arguments[1:]  # the first is the override's `{ stdenv = ...; }`
    if name in SHELL_BUILDERS or ".mkShell." in f".{dotted}.":
        return Place(Kind.SHELL, name or "mkShell", call)
    if name in OVERRIDE_CALLS:
        return Place(Kind.OVERRIDE, name, call)
    if name in MODULE_CALLS:
        return Place(Kind.MODULE, name, call)
    if name in DERIVATION_BUILDERS:
        attrset = _argument_attrset(arguments[-1] if arguments else None)
        if name in _NIX_SHELL_BUILDERS and attrset is not None and _builds_nothing(attrset):
            # no source and no phases: it cannot be built, only entered with nix-shell
            return Place(Kind.SHELL, "nix-shell environment", call)
        return Place(Kind.PACKAGE, name, call, name)
    if name in WRAPPER_BUILDERS:
        return Place(Kind.PACKAGE, name, call)
    return None


def _overridden_builder(function: Node) -> str | None:
    """`buildPythonPackage` of `buildPythonPackage.override { stdenv = ...; }` (also in parentheses):
    the builder with another stdenv builds a package, it overrides none."""
    target = unparen(function)
    if target is not None and target.type == "apply_expression":
        target = unparen(flatten_apply(target)[0])
    parts = (dotted_name(target) or "").split(".")
    if len(parts) >= 2 and parts[-1] == "override" and parts[-2] in DERIVATION_BUILDERS | WRAPPER_BUILDERS:
        return parts[-2]
    return None


def _builds_nothing(attrset: Node) -> bool:
    # `src = null;` is no source either
    present = {n for b in bindings_of(attrset) for n in attrpath_names(b.child_by_field_name("attrpath"))[:1] if n and not _is_null(binding_value(b))} | _inherited(attrset)
    # a phase or a phase hook (`postInstall`, `preFixup`) is something to build
    return not present & _SOURCE_ATTRS and not any(_PHASE_ATTR.match(n) for n in present)


def _is_null(value: Node | None) -> bool:
    value = unparen(value)
    return value is not None and value.type == "variable_expression" and identifier_name(value.child_by_field_name("name")) == "null"


def _in_attrset(binding: Node) -> bool:
    owner = binding.parent.parent if binding.parent is not None else None
    return owner is not None and owner.type in ATTRSET_TYPES


def _argument_attrset(argument: Node | None) -> Node | None:
    """The attrset of `f { ... }`, `f rec { ... }` and `f (finalAttrs: { ... })`."""
    argument = unparen(argument)
    if argument is not None and argument.type == "function_expression":
        argument = unparen(argument.child_by_field_name("body"))
    return argument if argument is not None and argument.type in ATTRSET_TYPES else None


def _inherited(attrset: Node) -> set[str]:
    names: set[str] = set()
    for inherit in attrset.named_children:
        if inherit.type == "binding_set":
            for item in inherit.named_children:
                if item.type in ("inherit", "inherit_from"):
                    attrs = item.child_by_field_name("attrs")
                    if attrs is not None:
                        names.update(n for a in attrs.named_children if (n := identifier_name(a)))
    return names


def _is_overlay(function: Node) -> bool:
    """`final: prev: ...` (the outer of the two functions)."""
    first = identifier_name(function.child_by_field_name("universal"))
    body = unparen(function.child_by_field_name("body"))
    if first not in _OVERLAY_FIRST or body is None or body.type != "function_expression":
        return False
    return identifier_name(body.child_by_field_name("universal")) in _OVERLAY_SECOND


def file_place(root_expression: Node | None, path: str) -> Place | None:
    """What the whole file is, for the nodes no call or attribute decides: a dev shell (by its
    name, or a devenv module by its top-level attributes), a module (by the options it returns,
    or an attrset-valued file under a `modules/` directory), or None (a package file)."""
    if os.path.basename(path) in _SHELL_FILES:
        return Place(Kind.SHELL, os.path.basename(path))
    value = _file_value(root_expression)
    decided = call_place_of(value) if value is not None and value.type == "apply_expression" else None
    # a file whose value is a shell: its `let` feeds the shell (a derivation without source, only in
    # a file entered by hand: a callPackage function's is a package a snippet shortened)
    if decided is not None and decided.is_shell and (decided.detail != "nix-shell environment" or _entered_by_hand(root_expression)):
        return Place(Kind.SHELL, decided.detail)
    bodies = _module_bodies(root_expression)
    keys: set[str] = set()
    for body in bodies:
        for inner in (body, *_config_bodies(body)):  # `config = { ... }` in a module with options
            keys.update(_top_keys(inner))
    if keys & _FLAKE_PARTS_KEYS:
        return Place(Kind.MODULE, FLAKE_PARTS)
    if keys & _DEVENV_KEYS and not keys & _SYSTEM_ONLY_KEYS:
        return Place(Kind.SHELL, DEVENV)
    if keys & _MODULE_KEYS:
        return Place(Kind.MODULE, "module")
    if bodies and _under_modules(path):
        return Place(Kind.MODULE, "module")
    return None


def _top_keys(attrset: Node) -> set[str]:
    """The first attribute names an attrset sets; a `packages` list (devenv's, not a flake's
    `packages.<name>`) is also "packages = [...]", and variables (`env.X = ...`, `env = { ... }`,
    numtide devshell's `env = [ ... ]`) "env = {...}". An option root set to something that holds
    no options (`hardware = fetchFromGitHub { ... };` in a file of pins) is not counted."""
    keys: set[str] = set()
    for binding in bindings_of(attrset):
        names = attrpath_names(binding.child_by_field_name("attrpath"))
        if not names or names[0] is None:
            continue
        value = unparen(binding_value(binding))
        if names[0] in _OPTION_ROOTS and len(names) == 1 and not _holds_options(value):
            continue
        keys.add(names[0])
        if names == ["packages"] and value is not None and value.type not in ATTRSET_TYPES:
            keys.add("packages = [...]")
        if names[0] == "env" and (len(names) > 1 or value is not None and (value.type in ATTRSET_TYPES or value.type == "list_expression")):
            keys.add("env = {...}")
    return keys


def _holds_options(value: Node | None) -> bool:
    """`{ ... }`, `[ ... ]` or `lib.mkIf c { ... }`-like: what a module sets an option root to."""
    if value is None or value.type in ATTRSET_TYPES or value.type == "list_expression":
        return True
    return value.type == "apply_expression" and last_name(flatten_apply(value)[0]) in _MODULE_WRAPPERS


def _under_modules(path: str) -> bool:
    """A file in a `modules` directory (`nixos/modules/services/x.nix`, `modules/gpu.nix`)."""
    return "modules" in os.path.normpath(path).replace(os.sep, "/").split("/")[:-1]


def _entered_by_hand(root_expression: Node | None) -> bool:
    """No function, or one whose every argument has a default (`{ pkgs ? import <nixpkgs> { } }:`)."""
    expression = unparen(root_expression)
    if expression is None or expression.type != "function_expression":
        return True
    formals = expression.child_by_field_name("formals")
    return formals is not None and all(f.child_by_field_name("default") is not None for f in formals.children_by_field_name("formal"))


def _file_value(root_expression: Node | None) -> Node | None:
    """The expression a file evaluates to, past its arguments, `let`s and `with`s."""
    expression = unparen(root_expression)
    if expression is not None and expression.type == "function_expression":
        expression = unparen(expression.child_by_field_name("body"))
    while expression is not None and expression.type in ("let_expression", "with_expression", "assert_expression"):
        expression = unparen(expression.child_by_field_name("body"))
    return expression


def _module_bodies(root_expression: Node | None) -> list[Node]:
    """The attrsets a file's value consists of, as a module writes them: `{ ... }`, `args: { ... }`,
    through `let`, `with`, `lib.mkIf c { ... }` and `lib.mkMerge [ { ... } ... ]`."""
    expression = unparen(root_expression)
    if expression is not None and expression.type == "function_expression":
        expression = unparen(expression.child_by_field_name("body"))
    return _attrsets_within(expression, 0)


def _attrsets_within(expression: Node | None, depth: int) -> list[Node]:
    while expression is not None and expression.type in ("let_expression", "with_expression"):
        expression = unparen(expression.child_by_field_name("body"))
    if expression is None or depth > 4:
        return []
    if expression.type in ATTRSET_TYPES:
        return [expression]
    if expression.type == "list_expression":
        return [a for element in expression.named_children for a in _attrsets_within(unparen(element), depth + 1)]
    if expression.type == "apply_expression":
        function, arguments = flatten_apply(expression)
        if last_name(function) in _MODULE_WRAPPERS and arguments:
            return _attrsets_within(unparen(arguments[-1]), depth + 1)
    return []


def _config_bodies(attrset: Node) -> list[Node]:
    """The attrsets of `config = { ... }` / `config = lib.mkIf c { ... }` in a module with options."""
    found: list[Node] = []
    for binding in bindings_of(attrset):
        if attrpath_names(binding.child_by_field_name("attrpath")) == ["config"]:
            found.extend(_attrsets_within(unparen(binding_value(binding)), 0))
    return found
