"""Where a node stands: in a package, a dev shell, a NixOS/home-manager module, or an override.

The same code is right in one place and wrong in another: `LD_LIBRARY_PATH` with the driver
directory is a defect in a package (nixpkgs patches RUNPATHs instead) and the usual answer in a
dev shell that runs pip wheels; `cudatoolkit` in `environment.systemPackages` is a question of
what belongs in a system profile, not of build inputs. Rules ask `ctx.place(node)` and choose
their severity, message and fix from the answer.

The innermost construct that decides wins, so a `mkDerivation` inside a NixOS module's
`environment.systemPackages` is a package, and a `mkShell` inside a flake is a dev shell:

- a builder call whose argument holds the node: `mkShell`/`mkShellNoCC`/`buildFHSEnv`... (shell);
  `mkDerivation`, `buildPythonPackage`, ... (package; a `mkDerivation` with no source that only
  and no phases is a nix-shell environment); `runCommand`, `symlinkJoin`, wrappers
  (package); `.override`, `overrideAttrs`, `overrideScope`, ... (override);
- an attribute: `devShells`/`devShell`/`devshells`/`shellHook`/`enterShell` (shell), `overlays` /
  `packageOverrides` (override), `environment.*`, `home.*`, `programs.*`, `hardware.*`,
  `systemd.*`, `services.*`, `boot.*`, `nixpkgs.*` (module);
- an overlay function `final: prev: ...` / `self: super: ...` (override);
- the file: `shell.nix` and `devenv.nix` are shells; a function returning an attrset of module
  options is a module; anything else is judged as a package.
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
# First attribute names of NixOS / home-manager options that hold CUDA settings.
MODULE_ROOTS = frozenset({"environment", "home", "programs", "hardware", "systemd", "services", "boot", "nixpkgs", "virtualisation", "users", "security"})
# A derivation with none of these has nothing to build: it is a nix-shell environment.
_SOURCE_ATTRS = frozenset({"src", "srcs", "unpackPhase", "buildPhase", "installPhase", "buildCommand", "builder", "configurePhase", "dontUnpack", "phases"})
_PHASE_ATTR = re.compile(r"^(?:(?:pre|post)[A-Z]\w*|\w+Phase)$")
_OVERLAY_FIRST = frozenset({"final", "self", "pfinal"})
_OVERLAY_SECOND = frozenset({"prev", "super", "pprev", "previous"})
_SHELL_FILES = {"shell.nix": "shell.nix", "devenv.nix": "devenv.nix"}


def place_of(node: Node, path: str, module_file: bool, call_place: Callable[[Node], Place | None] | None = None) -> Place:
    """The place of `node` in a file at `path`; `module_file` when the whole file is a module.
    `call_place` answers what a call decides for its argument (`call_place_of`, or a memo of it)."""
    call_place = call_place or call_place_of
    child = node
    names: list[str] = []  # the attribute path walked so far, outermost first
    module: Place | None = None  # a module option holds the node, unless a builder call around it does
    parent = node.parent
    while parent is not None:
        if parent.type == "apply_expression" and parent.child_by_field_name("argument") == child:
            decided = call_place(parent)
            if decided is not None:
                return decided
        elif parent.type == "binding" and binding_value(parent) == child and _in_attrset(parent):
            own = [n or "${...}" for n in attrpath_names(parent.child_by_field_name("attrpath"))]
            names[:0] = own
            if shell := next((n for n in own if n in SHELL_ATTRS), None):
                return Place(Kind.SHELL, shell, parent)
            if override := next((n for n in own if n in OVERRIDE_ATTRS), None):
                return Place(Kind.OVERRIDE, override, parent)
            rooted = names[1:] if names[:1] == ["config"] else names
            if module is None and rooted and rooted[0] in MODULE_ROOTS:
                module = Place(Kind.MODULE, ".".join(rooted), parent)
        elif parent.type == "function_expression" and _is_overlay(parent):
            return Place(Kind.OVERRIDE, "overlay", parent)
        child, parent = parent, parent.parent
    if module is not None:
        return module
    base = os.path.basename(path)
    if base in _SHELL_FILES:
        return Place(Kind.SHELL, _SHELL_FILES[base])
    if module_file:
        return Place(Kind.MODULE, "module")
    return Place(Kind.PACKAGE, "file")


def call_place_of(apply: Node) -> Place | None:
    """The place a builder or override call decides for its argument."""
    call = outermost_apply(apply)
    function, arguments = flatten_apply(call)
    name = last_name(function)
    dotted = dotted_name(function) or ""
    if name in SHELL_BUILDERS or ".mkShell." in f".{dotted}.":
        return Place(Kind.SHELL, name or "mkShell", call)
    if name in OVERRIDE_CALLS:
        return Place(Kind.OVERRIDE, name, call)
    if name in DERIVATION_BUILDERS:
        attrset = _argument_attrset(arguments[-1] if arguments else None)
        if attrset is not None and _builds_nothing(attrset):
            # no source and no phases: it cannot be built, only entered with nix-shell
            return Place(Kind.SHELL, "nix-shell environment", call)
        return Place(Kind.PACKAGE, name, call, name)
    if name in WRAPPER_BUILDERS:
        return Place(Kind.PACKAGE, name, call)
    return None


def _builds_nothing(attrset: Node) -> bool:
    present = {n for b in bindings_of(attrset) for n in attrpath_names(b.child_by_field_name("attrpath"))[:1] if n} | _inherited(attrset)
    # a phase or a phase hook (`postInstall`, `preFixup`) is something to build
    return not present & _SOURCE_ATTRS and not any(_PHASE_ATTR.match(n) for n in present)


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


def is_module_file(root_expression: Node | None) -> bool:
    """A file whose value is a module: a function (or attrset) returning an attrset that sets
    `imports`, `options`, `config` or NixOS/home-manager options."""
    expression = unparen(root_expression)
    if expression is not None and expression.type == "function_expression":
        expression = unparen(expression.child_by_field_name("body"))
    while expression is not None and expression.type in ("let_expression", "with_expression"):
        expression = unparen(expression.child_by_field_name("body"))
    if expression is None or expression.type not in ATTRSET_TYPES:
        return False
    for binding in bindings_of(expression):
        first = (attrpath_names(binding.child_by_field_name("attrpath")) or [None])[0]
        if first in MODULE_ROOTS or first in ("imports", "options", "config"):
            return True
    return False
