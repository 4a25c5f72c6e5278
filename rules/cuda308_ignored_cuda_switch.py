"""A CUDA switch set where nothing reads it.

Flags switches that look like they turn CUDA on but do nothing:

- `cudaSupport` (or any CUDA-named setting) among nixpkgs' arguments but outside `config`:
  `import nixpkgs { cudaSupport = true; }`, and `nixpkgs.cudaSupport` in a NixOS module;
- a CUDA-named setting in nixpkgs' `config` that is not an option: `config.cuda = true`,
  `config.enableCuda = true`, `nixpkgs.config.withCuda = true`, and the wrong case
  (`nixpkgs.config.cudasupport`);
- a package's CUDA switch (`cudaSupport`, `enableCuda`, `withCuda`, `useCuda`, ...) set in
  `overrideAttrs`: the switch is a function argument, changed with `.override`; in
  `overrideAttrs` it only becomes an unused environment variable of the build; likewise
  nixpkgs' options written there (`cudaCapabilities`, `cudaArches`, `cudaForwardCompat`). Every
  such setting of one `overrideAttrs` is reported, each on its own;
- a `cudaSupport` argument given to a function of the same file whose formals cannot take it
  (`callPackage f { cudaSupport = true; }`): with `...` it is silently dropped, without it the
  call fails;
- `config.cudaSupport` (or `pkgs.config.cudaSupport`) read in the body of a function that has
  its own `cudaSupport` argument: that part of the package follows the global setting whatever
  `.override { cudaSupport = ...; }` asks (PR #292629 made dlib read its argument instead).

The advice names the option the setting most likely meant, from the name written: a name about
capabilities or architectures (`cudaArches`, `cudaArchList`, `cudaCaps`) means
`cudaCapabilities`, one about compatibility (`cudaCompat`) `cudaForwardCompat`, a boolean
otherwise `cudaSupport`. Where that option is set already (`config = { cudaSupport = true;
enableCuda = true; }`, `cudaSupport = true;` beside `config.cudaSupport`, `overrideAttrs`
after `.override` gave the same argument) the advice is to delete the setting.

Not flagged: `config.cudaSupport = true` in all its forms (`nixpkgs.config.cudaSupport`,
`import nixpkgs { config = { cudaSupport = true; }; }`, `config.cudaSupport` at a module's top
level), `config.cudaCapabilities` and `config.cudaForwardCompat`, CUDA-named config settings
that are not switches (a path, a string), derivation attributes and variables in
`overrideAttrs` (`cudaPropagateToOutput`, `CUDA_HOME`, `env.CUDA_MODULE_LOADING`),
`config.cudaSupport` as the
default of a formal (`cudaSupport ? config.cudaSupport`, `enableCudnn ? config.cudaSupport`) and
in a function without a `cudaSupport` argument (a NixOS module reading the global setting), `.override { cudaSupport =
true; }`, `overrideAttrs` setting real derivation attributes, imports of files other than
nixpkgs (`import ./shell.nix { cudaSupport = true; }`), and calls of functions defined in other
files (their formals cannot be seen here).

Contexts: the same warning everywhere (a flake's `import nixpkgs`, a dev shell, a NixOS module,
an overlay): in each the switch is simply lost.

## Why
nixpkgs reads exactly one global CUDA switch, `config.cudaSupport` (declared in
pkgs/top-level/config.nix since PR #224068), plus `config.cudaCapabilities` and
`config.cudaForwardCompat`. nixpkgs' own arguments are `system`, `config`, `overlays`,
`crossSystem`, ...: an unknown top-level `cudaSupport` is ignored, and so is an unknown name in
`config` (`config` accepts free-form attributes, so a misspelt option is not an error). A package's
`cudaSupport` is an argument of its function: `overrideAttrs` changes the attributes passed to
`mkDerivation` after the function ran, so the build is the same, with one more environment
variable (`.override` re-calls the function with the new argument). In every case the user gets a
build without CUDA and no error says why.

The fixes say what the author meant: move the switch into `config`, correct the name's case,
`.override` instead of `overrideAttrs`. They are unsafe: each turns CUDA on, which rebuilds what
depends on it (`config.cudaSupport` is a mass rebuild) and brings unfree CUDA packages in. Reading
the argument instead of `config.cudaSupport` keeps the default build (the argument defaults to
it) but changes every build that passes `cudaSupport`, so that fix is unsafe too. Deleting a
setting that the right option already covers is safe: nothing read it. A fix
is offered only where it is certain: a switch among nixpkgs' arguments whose `config` is absent
or an attrset literal, a wrong case with no correctly spelt twin, and an `overrideAttrs { ... }`
whose attrset holds nothing but CUDA switches, and a `config.cudaSupport` where the name
`cudaSupport` means the argument.

## Example
```nix
{ nixpkgs, system }:
let
  pkgs = import nixpkgs {
    inherit system;
    cudaSupport = true;
    config.allowUnfree = true;
  };
in
pkgs.python3Packages.torch.overrideAttrs { cudaSupport = true; }
```

## Use instead
```nix
{ nixpkgs, system }:
let
  pkgs = import nixpkgs {
    inherit system;
    config.allowUnfree = true;
    config.cudaSupport = true;
  };
in
pkgs.python3Packages.torch.override { cudaSupport = true; }
```

## References
- https://github.com/NixOS/nixpkgs/pull/224068
- https://github.com/NixOS/nixpkgs/pull/292629
- https://github.com/NixOS/nixpkgs/blob/master/pkgs/top-level/config.nix
- https://nixos.org/manual/nixpkgs/unstable/#cuda
- https://nixos.org/manual/nixpkgs/unstable/#sec-pkg-overrideAttrs
"""

from __future__ import annotations

import itertools
import re

from tree_sitter import Node

from cudalint.lint import edits
from cudalint.lint.context import Context
from cudalint.lint.model import Applicability, Edit, Fix, FixAvailability, Severity
from cudalint.lint.rule import Rule
from cudalint.nix.syntax import (
    ATTRSET_TYPES,
    ancestors,
    attrpath_names,
    binding_value,
    bindings_of,
    flatten_apply,
    last_name,
    outermost_apply,
    text,
    unparen,
)

# "cuda" in any letter case: the binding check lowercases the attribute path.
CUDA_ANY_CASE = tuple(bytes(letters) for letters in itertools.product(*((c, c - 32) for c in b"cuda")))

RULE = Rule(
    code="CUDA308",
    name="ignored-cuda-switch",
    severity=Severity.WARNING,
    fix=Applicability.UNSAFE,
    availability=FixAvailability.SOMETIMES,
    summary="CUDA switch set where nothing reads it (outside `config`, misspelt, in `overrideAttrs`) or ignored by the package (`config.cudaSupport` beside its argument)",
    node_types=("binding", "apply_expression", "select_expression"),
    patterns=(b"cuda", b"Cuda", b"CUDA"),
    attrpath_patterns=CUDA_ANY_CASE,
)

# nixpkgs' CUDA options (pkgs/top-level/config.nix).
CONFIG_OPTIONS = frozenset({"cudaSupport", "cudaCapabilities", "cudaForwardCompat"})
# What packages call their CUDA switch.
_PACKAGE_SWITCH = re.compile(r"^(?:cuda[Ss]upport|(?:enable|with|use)(?:Cuda|CUDA)|cuda[Ee]nabled?|cuda)'?$")
_CUDA_NAME = re.compile(r"cuda", re.IGNORECASE)
_BOOLEANS = frozenset({"true", "false"})


@RULE
def check(node: Node, ctx: Context) -> None:
    if node.type == "binding":
        _check_binding(node, ctx)
    elif node.type == "select_expression":
        _check_global_read(node, ctx)
    else:
        _check_call(node, ctx)


# ----- nixpkgs' arguments and config -------------------------------------------------------------


def _check_binding(binding: Node, ctx: Context) -> None:
    attrpath = binding.child_by_field_name("attrpath")
    if attrpath is None or b"cuda" not in ctx.source.data[attrpath.start_byte : attrpath.end_byte].lower():
        return  # (the engine hands over every binding of a file that mentions CUDA: the bytes first)
    names = attrpath_names(attrpath)
    if not names or not any(n is not None and _CUDA_NAME.search(n) for n in names):
        return
    if _in_override_attrs(binding):
        _report_override_attrs(binding, names, ctx)
        return
    located = _nixpkgs_path(binding)
    if located is None:
        return
    path, arguments = located
    value = binding_value(binding)
    if path[:1] == ["config"]:
        if len(path) >= 2 and path[1] is not None:
            _judge_config_name(binding, path[1], value, ctx)
        return
    first = path[0] if path else None
    if first is None or not _CUDA_NAME.search(first):
        return
    option = first if first in CONFIG_OPTIONS else (meant_option(first, value) or "cudaSupport")
    attrpath = binding.child_by_field_name("attrpath")
    if len(path) == 1 and option in _config_set(arguments, ctx):
        where = "nixpkgs.config" if arguments is None else "config"
        written = f"nixpkgs.{first}" if arguments is None else first
        message = f"`{written}` is ignored and `{where}.{option}` is set already: delete it"
        ctx.report(attrpath, message, fixes=[_delete_fix(binding, ctx)])
        return
    if arguments is None:  # a NixOS module's `nixpkgs.cudaSupport`
        ctx.report(attrpath, f"`nixpkgs.{first}` is not an option: set `nixpkgs.config.{option}`")
        return
    fix = _into_config_fix(binding, path, arguments) if first in CONFIG_OPTIONS else None
    ctx.report(attrpath, f"`{first}` among nixpkgs' arguments is ignored: set `config.{option}` instead", fixes=[fix])


def meant_option(name: str, value: Node | None) -> str | None:
    """The nixpkgs option a CUDA-named setting most likely meant, from the name written
    (`cudaArches` -> `cudaCapabilities`, `cudaCompat` -> `cudaForwardCompat`) or, for a boolean,
    the switch; None for a setting of another kind (a path, a string)."""
    lowered = name.lower()
    if re.search(r"compat|forward", lowered):
        return "cudaForwardCompat"
    if re.search(r"capabilit|arch|gencode|comput|caps?$|sms?$", lowered):
        return "cudaCapabilities"
    value = unparen(value)
    if value is None or text(value) in _BOOLEANS:
        return "cudaSupport"
    return None


def _config_set(arguments: Node | None, ctx: Context) -> frozenset[str]:
    """The CUDA options this nixpkgs' `config` sets: in the argument attrset of `import nixpkgs
    { ... }`, or anywhere in a module's `nixpkgs.config` (arguments None)."""
    memo = ctx.semantic.memo(__name__)
    key = ("config", arguments)
    if key not in memo:
        found: set[str] = set()
        for binding in ctx.semantic.nodes_of_type("binding"):
            names = attrpath_names(binding.child_by_field_name("attrpath"))
            if not any(n in CONFIG_OPTIONS for n in names):
                continue
            located = _nixpkgs_path(binding)
            if located is not None and located[1] == arguments and len(located[0]) == 2 and located[0][0] == "config":
                found.add(located[0][1] or "")
        memo[key] = frozenset(found)
    return memo[key]


def _delete_fix(binding: Node, ctx: Context) -> Fix:
    """Deleting a setting nothing reads builds the same thing."""
    return Fix("Delete it", Applicability.SAFE, (edits.delete_element(ctx.source, binding),))


def _judge_config_name(binding: Node, name: str, value: Node | None, ctx: Context) -> None:
    if name in CONFIG_OPTIONS or not _CUDA_NAME.search(name):
        return
    attrpath = binding.child_by_field_name("attrpath")
    proper = next((o for o in CONFIG_OPTIONS if o.lower() == name.lower()), None)
    if proper is not None:
        fix = None
        if not _sibling_defines(binding, proper):
            component = next(c for c in attrpath.named_children if text(c) == name)
            fix = Fix(f"Spell it `{proper}`", Applicability.UNSAFE, (edits.replace(component, proper),))
        ctx.report(attrpath, f"`config.{name}` is not a nixpkgs option (the case matters): write `config.{proper}`", fixes=[fix])
        return
    meant = meant_option(name, value)
    if meant is None:
        return  # a CUDA-named setting of another kind (a path, a string): not a switch
    located = _nixpkgs_path(binding)
    if located is not None and meant in _config_set(located[1], ctx):
        message = f"`config.{name}` is not a nixpkgs option and `config.{meant}` is set already: delete it"
        ctx.report(attrpath, message, fixes=[_delete_fix(binding, ctx)])
        return
    value = unparen(value)
    wanted = f"config.cudaSupport = {text(value)}" if meant == "cudaSupport" and value is not None else f"config.{meant}"
    ctx.report(attrpath, f"`config.{name}` is not a nixpkgs option, so nothing reads it: write `{wanted}`")


def _nixpkgs_path(binding: Node) -> tuple[list[str | None], Node | None] | None:
    """The binding's attribute path relative to nixpkgs' arguments (`import nixpkgs { ... }`:
    the second value is that argument attrset) or to a module's `nixpkgs` option (second value
    None); None elsewhere."""
    path: list[str | None] = []
    current: Node | None = binding
    while current is not None:
        path[:0] = attrpath_names(current.child_by_field_name("attrpath"))
        attrset = current.parent.parent if current.parent is not None else None
        if attrset is None or attrset.type not in ATTRSET_TYPES:
            return None
        holder = attrset.parent
        while holder is not None and holder.type == "parenthesized_expression":
            holder = holder.parent
        if holder is not None and holder.type == "apply_expression" and _imports_nixpkgs(holder, attrset):
            return path, attrset
        if "nixpkgs" in path:
            index = path.index("nixpkgs")
            return (path[index + 1 :], None) if len(path) > index + 1 else None
        current = holder if holder is not None and holder.type == "binding" else None
    return None


def _imports_nixpkgs(apply: Node, attrset: Node) -> bool:
    """`import nixpkgs { ... }`, `import <nixpkgs> { ... }`, `import inputs.nixpkgs { ... }`."""
    function, arguments = flatten_apply(outermost_apply(apply))
    if last_name(function) != "import" or len(arguments) != 2 or unparen(arguments[1]) != attrset:
        return False
    imported = " ".join(text(arguments[0]).split())
    return "nixpkgs" in imported.lower() and not imported.endswith(".nix")


def _sibling_defines(binding: Node, name: str) -> bool:
    attrset = binding.parent.parent if binding.parent is not None else None
    if attrset is None:
        return False
    own = attrpath_names(binding.child_by_field_name("attrpath"))
    return any(attrpath_names(b.child_by_field_name("attrpath")) == [*own[:-1], name] for b in bindings_of(attrset))


def _into_config_fix(binding: Node, path: list[str | None], arguments: Node) -> Fix | None:
    """`cudaSupport = true;` -> `config.cudaSupport = true;` among nixpkgs' arguments, when
    `config` is absent or an attrset literal (Nix merges `config = { ... }; config.x = ...;`)."""
    if len(path) != 1:
        return None
    for other in bindings_of(arguments):
        other_path = attrpath_names(other.child_by_field_name("attrpath")) if other.type == "binding" else []
        if other_path == ["config", path[0]]:
            return None  # `config.cudaSupport` is set already: moving would define it twice
        if other_path == ["config"]:
            value = unparen(binding_value(other))
            if value is None or value.type != "attrset_expression" or edits.find_binding(value, path[0] or "") is not None:
                return None
        if other.type != "binding" and "config" in text(other).split():
            return None  # `inherit config;`: a value of its own
    attrpath = binding.child_by_field_name("attrpath")
    return Fix(f"Move `{path[0]}` into `config`", Applicability.UNSAFE, (Edit(attrpath.start_byte, attrpath.start_byte, "config."),))


# ----- overrideAttrs ------------------------------------------------------------------------------


def _override_attrs_call(attrset: Node) -> Node | None:
    """The `overrideAttrs` call whose argument is this attrset (also `old: { ... }` and
    `final: prev: { ... }`)."""
    holder = attrset.parent
    while holder is not None and holder.type in ("parenthesized_expression", "function_expression"):
        holder = holder.parent
    if holder is None or holder.type != "apply_expression":
        return None
    function, arguments = flatten_apply(outermost_apply(holder))
    return holder if last_name(function) == "overrideAttrs" and arguments else None


def _in_override_attrs(binding: Node) -> bool:
    attrset = binding.parent.parent if binding.parent is not None else None
    return attrset is not None and attrset.type in ATTRSET_TYPES and _override_attrs_call(attrset) is not None


def _report_override_attrs(binding: Node, names: list[str | None], ctx: Context) -> None:
    if len(names) != 1 or names[0] is None:
        return
    name = names[0]
    attrset = binding.parent.parent
    call = _override_attrs_call(attrset)
    attrpath = binding.child_by_field_name("attrpath")
    if _PACKAGE_SWITCH.match(name):
        if call is not None and name in _overridden_arguments(call):
            ctx.report(attrpath, f"`{name}` in `overrideAttrs` does nothing and `.override` sets it already: delete it", fixes=[_delete_fix(binding, ctx)])
            return
        ctx.report(
            attrpath,
            f"`{name}` in `overrideAttrs` is not the package's switch (a function argument): use `.override {{ {name} = ...; }}`",
            fixes=[_override_fix(call, attrset)],
        )
        return
    meant = meant_option(name, binding_value(binding)) if name[:4] == "cuda" else None
    if meant in {"cudaCapabilities", "cudaForwardCompat"}:  # `cudaArches = [ ... ];`: an option of nixpkgs, not of the package
        ctx.report(attrpath, f"`{name}` in `overrideAttrs` is not read by the package: set nixpkgs' `config.{meant}`")


def _overridden_arguments(call: Node) -> set[str]:
    """The arguments `.override { ... }` gives the package whose `overrideAttrs` this is:
    `(pkg.override { cudaSupport = true; }).overrideAttrs { ... }`."""
    function, _ = flatten_apply(outermost_apply(call))
    receiver = unparen(function.child_by_field_name("expression")) if function.type == "select_expression" else None
    if receiver is None or receiver.type != "apply_expression":
        return set()
    inner, arguments = flatten_apply(receiver)
    given = unparen(arguments[-1]) if arguments else None
    if last_name(inner) != "override" or given is None or given.type not in ATTRSET_TYPES:
        return set()
    return {n for b in bindings_of(given) if b.type == "binding" for n in attrpath_names(b.child_by_field_name("attrpath"))[:1] if n is not None}


def _override_fix(call: Node | None, attrset: Node) -> Fix | None:
    """`x.overrideAttrs { cudaSupport = true; }` -> `x.override { cudaSupport = true; }` when the
    attrset is the argument itself and holds only switches."""
    if call is None:
        return None
    function, arguments = flatten_apply(outermost_apply(call))
    if len(arguments) != 1 or unparen(arguments[0]) != attrset or function.type != "select_expression":
        return None
    for binding in bindings_of(attrset):
        names = attrpath_names(binding.child_by_field_name("attrpath")) if binding.type == "binding" else [None]
        if len(names) != 1 or names[0] is None or not _PACKAGE_SWITCH.match(names[0]):
            return None
    last = function.child_by_field_name("attrpath").named_children[-1]
    if text(last) != "overrideAttrs":
        return None
    return Fix("Use `.override`", Applicability.UNSAFE, (edits.replace(last, "override"),))


# ----- arguments a same-file function cannot take --------------------------------------------------


def _check_call(apply: Node, ctx: Context) -> None:
    if ctx.source.data.find(b"cudaSupport", apply.start_byte, apply.end_byte) < 0:
        return  # (only a call given `cudaSupport` can be reported: the bytes first)
    if outermost_apply(apply) != apply:
        return
    function, arguments = flatten_apply(apply)
    if not arguments:
        return
    if last_name(function) == "callPackage" and len(arguments) == 2:
        callee, given = arguments
    elif len(arguments) == 1 and unparen(function) is not None and unparen(function).type == "variable_expression":
        callee, given = function, arguments[0]
    else:
        return
    given = unparen(given)
    callee = unparen(callee)
    if given is None or given.type not in ATTRSET_TYPES or callee is None:
        return
    switch = next(
        (b for b in bindings_of(given) if b.type == "binding" and attrpath_names(b.child_by_field_name("attrpath")) == ["cudaSupport"]),
        None,
    )
    if switch is None:
        return
    formals = _formals_of(callee, ctx)
    if formals is None or "cudaSupport" in edits.formal_names(formals):
        return
    name = " ".join(text(callee).split())
    shown = name if len(name) <= 30 else "the function"
    if any(child.type == "ellipses" for child in formals.children):
        message = f"`{shown}` has no `cudaSupport` argument and drops it (`...`): add `cudaSupport ? config.cudaSupport` to its formals"
    else:
        message = f"`{shown}` has no `cudaSupport` argument, so this call fails: add `cudaSupport ? config.cudaSupport` to its formals"
    ctx.report(switch.child_by_field_name("attrpath"), message)


def _formals_of(callee: Node, ctx: Context) -> Node | None:
    """The formals of a function literal the callee is or names (a `let` binding in this file)."""
    node = callee
    if node.type == "variable_expression":
        bound = ctx.semantic.resolve(node)
        if bound.kind not in {"let", "rec"}:
            return None
        node = unparen(bound.value)
    if node is None or node.type != "function_expression":
        return None
    return node.child_by_field_name("formals")


# ----- the global switch read where the function has its own ----------------------------------------


def _check_global_read(select: Node, ctx: Context) -> None:
    """`config.cudaSupport` (or `pkgs.config.cudaSupport`) in the body of a function whose own
    `cudaSupport` formal is what `.override` changes."""
    names = attrpath_names(select.child_by_field_name("attrpath"))
    base = unparen(select.child_by_field_name("expression"))
    if base is None or base.type != "variable_expression":
        return
    if names == ["config", "cudaSupport"]:
        config_owner = text(base.child_by_field_name("name"))  # `pkgs.config.cudaSupport`
    elif names == ["cudaSupport"] and text(base.child_by_field_name("name")) == "config":
        config_owner = "config"
    else:
        return
    owner = ctx.semantic.resolve(base)
    if owner.kind != "formal" or owner.node is None or owner.node.parent is None or owner.node.parent.type != "formals":
        return
    formals = owner.node.parent
    if formals in ancestors(select):
        return  # a formal's default: `cudaSupport ? config.cudaSupport`, `enableCudnn ? config.cudaSupport`
    argument = ctx.semantic.resolve_name("cudaSupport", select)
    if argument.kind != "formal" or argument.node is None or argument.node.parent != formals:
        return  # no `cudaSupport` formal beside `config`, or a closer binding hides it
    written = "config.cudaSupport" if config_owner == "config" else f"{config_owner}.config.cudaSupport"
    fix = Fix("Read the `cudaSupport` argument", Applicability.UNSAFE, (edits.replace(select, "cudaSupport"),))
    ctx.report(select, f"`{written}` ignores this function's own `cudaSupport` argument (what `.override` sets): write `cudaSupport`", fixes=[fix])
