"""An `assert` or `throw` on the CUDA switch that stops evaluation for CUDA users instead of marking the package broken.

Flags, in packages and overlays/overrides, `assert cudaSupport -> cond;`, `assert !cudaSupport ||
cond;`, `assert cudaSupport && cond;` and the same conditions inside `lib.assertMsg cond
"message"`, with any CUDA switch (`enableCuda`, `config.cudaSupport`, a variable derived from
`cudaSupport`) on the left; and a `throw` (or `lib.throwIf`/`throwIfNot`) that a CUDA build can
reach and a build without CUDA cannot: `if cudaSupport && cudaOlder "12.0" then throw "..."`,
`lib.throwIf (cudaSupport && !singlePrecision)`. Not flagged: what cannot fail for a CUDA
user: an assert that holds whenever the switch is on (`assert cudaSupport;`, `assert
lib.assertMsg cudaSupport "..."`: a CUDA-only package, which CUDA304 and CUDA315 read as such), a
`throw` on the non-CUDA side (`if cudaSupport then "cuda" else throw "..."`, the last `else` of
a chain that handles CUDA before it, `lib.throwIfNot cudaSupport`), asserts that keep options
apart or in step (`assert enableCuda -> !enableRocm;`: two backends that must not both be on;
`assert ncclSupport -> cudaSupport;`: an incoherent configuration the user chose, which the
CUDA team keeps as an assert), and conditions that hold by construction (`assert cudaSupport ->
cudaPackages != { };`: `callPackage` always passes the package set; `cudaPackages ? cudatoolkit
&& cudaPackages.cudatoolkit != null` for a member every judged release has); asserts that do not
depend on the switch (`assert blas.isILP64 == isILP64;`, `assert cudaVersion == null || ...;`),
asserts in front of something that is not a package (a project's entry point checking its
arguments, a function returning an attrset: nothing walks those unasked; packages are builder,
`callPackage` and override calls), `meta.broken`, `meta.badPlatforms`, and dev shells and NixOS
modules (a shell is evaluated on purpose by whoever enters it; a module reports through
`assertions`). The message says who fails: the CUDA users the condition rules out, and also
everyone without CUDA when the assert requires the switch too (`cudaSupport && cond`).

## Why
An `assert` or `throw` in a package is an evaluation error, not a property of the package. With
`config.cudaSupport = true` every tool that walks the package set (Hydra, `nixpkgs-review`,
`nix search`, nixpkgs' CI attribute generation, `nix flake check`, an overlay listing packages)
stops at this file, for a package the user never asked for; a user cannot override an assert
away either. `meta.broken` says the same thing as data: evaluation goes on, the package is
skipped or refused with a clear message, `allowBroken` or an override lifts it, and CI can list
it. The nixpkgs CUDA team asked for this in reviews (PR #234097, 2023-05: no new asserts on the
CUDA configuration, users cannot disable them; issue #273794, 2023-12: no `throw`s, only
`meta.broken`, so every attribute evaluates) and changes (PR #426909, 2025-07: tensorflow's
CUDA assert moved to `meta.broken`, which CI's evaluation catches while an assert needs
workarounds). What fails only without CUDA is another matter: a CUDA user never reaches it, and
the CUDA team writes both `assert cudaSupport;` and `broken = !cudaSupport` for CUDA-only
packages (PR #395593, 2025-04, preferred the latter as a matter of style), so this rule leaves it
alone. The nixpkgs manual documents `meta.broken` as the way to express such constraints
(it may depend on the package's arguments). Holds in every era; from 2026 nixpkgs is moving its
own CUDA package set to `meta.problems` (PR #533181, open), for packages `meta.broken` stays.

The fix removes the assert and adds `meta.broken = cudaSupport && !(cond);` (the assert's
condition, negated: `cudaAtLeast` becomes `cudaOlder`, `x != null` becomes `x == null`), merged
into an existing `meta` or `broken` with `||`. It is offered when the assert's body is the
derivation's builder call (`stdenv.mkDerivation { ... }`, `buildPythonPackage rec { ... }`,
`mkDerivation (finalAttrs: { ... })`, through `let`/`with`) and nothing between them rebinds a
name of the condition. It is unsafe: evaluation now succeeds where it failed, and a build that
still reads what the assert ruled out (a null `cudnn`) fails later, at build time, for whoever
allows broken packages. A `throw` gets no fix: what to build instead is the author's choice.

## Example
```nix
{ lib, config, stdenv, cudaPackages, cudaSupport ? config.cudaSupport }:
assert cudaSupport -> cudaPackages.cudaAtLeast "12.0";
stdenv.mkDerivation {
  pname = "demo";
  version = "1.0";
  buildInputs = lib.optionals cudaSupport [ cudaPackages.cuda_cudart ];
}
```

## Use instead
```nix
{ lib, config, stdenv, cudaPackages, cudaSupport ? config.cudaSupport }:
stdenv.mkDerivation {
  pname = "demo";
  version = "1.0";
  buildInputs = lib.optionals cudaSupport [ cudaPackages.cuda_cudart ];
  meta.broken = cudaSupport && cudaPackages.cudaOlder "12.0";
}
```

## References
- https://github.com/NixOS/nixpkgs/pull/234097 (review, 2023-05-26)
- https://github.com/NixOS/nixpkgs/issues/273794 (2023-12-12)
- https://github.com/NixOS/nixpkgs/pull/395593 (2025-04)
- https://github.com/NixOS/nixpkgs/pull/426909 (2025-07-20)
- https://github.com/NixOS/nixpkgs/pull/533181 (2026-06, `meta.problems` for `cudaPackages`)
- https://nixos.org/manual/nixpkgs/unstable/#var-meta-broken
"""

from __future__ import annotations

import re

from tree_sitter import Node

from cudalint.knowledge import catalog
from cudalint.lint import edits
from cudalint.lint.context import Context
from cudalint.lint.model import Applicability, Edit, Fix, FixAvailability, Severity
from cudalint.lint.rule import Rule
from cudalint.nix.places import DERIVATION_BUILDERS, OVERRIDE_CALLS, WRAPPER_BUILDERS
from cudalint.nix.syntax import (
    ATTRSET_TYPES,
    attrpath_names,
    binding_value,
    bindings_of,
    descendants,
    flatten_apply,
    last_name,
    text,
    unparen,
)
from cudalint.rules._cuda_switch import SWITCH, asserted_condition, conjuncts, mentions_switch, operator, switch_value, throw_call, throws_when

RULE = Rule(
    code="CUDA311",
    name="eval-breaking-assert",
    severity=Severity.WARNING,
    fix=Applicability.UNSAFE,
    availability=FixAvailability.SOMETIMES,
    summary="`assert`/`throw` on the CUDA switch breaks evaluation: use `meta.broken`",
    node_types=("assert_expression", "variable_expression"),
    patterns=(b"assert", b"throw"),
)

# Calls that make a package: what an assert in front of them keeps from evaluating.
_PACKAGE_CALLS = DERIVATION_BUILDERS | WRAPPER_BUILDERS | OVERRIDE_CALLS | {"callPackage", "callPackages", "toPythonModule"}
# the variable a throw is reached through: `throw`, `lib.throwIf`, `builtins.throw`
_THROW_HOLDERS = frozenset({"throw", "throwIf", "throwIfNot", "lib", "builtins"})
# Names of a package's options: `rocmSupport`, `enableRocm`, `withMpi`, `useNccl`.
_OPTION = re.compile(r"^\w+Support$|^(?:enable|with|use|build)[A-Z_]")
# Negations that read better than `!(...)`.
_OPPOSITES = {"==": "!=", "!=": "==", "<": ">=", ">=": "<", ">": "<=", "<=": ">"}
_OPPOSITE_CALLS = {"cudaAtLeast": "cudaOlder", "cudaOlder": "cudaAtLeast", "versionAtLeast": "versionOlder", "versionOlder": "versionAtLeast"}
_MAX_DEPTH = 8
_ATOMS = frozenset({"variable_expression", "select_expression", "apply_expression", "parenthesized_expression", "string_expression", "integer_expression"})


@RULE
def check(node: Node, ctx: Context) -> None:
    if node.type == "assert_expression":
        _check_assert(node, ctx)
    elif text(node) in _THROW_HOLDERS:
        _check_throw(node, ctx)


def _judged_here(node: Node, ctx: Context) -> bool:
    """Dev shells are evaluated on purpose by whoever enters them; modules report through
    `assertions`."""
    place = ctx.place(node)
    return not (place.is_shell or place.is_module)


def _check_assert(assertion: Node, ctx: Context) -> None:
    condition = asserted_condition(assertion)
    if condition is None or _builder_call(assertion) is None:
        return
    broken = _broken_when(condition, ctx)
    if broken is None or not _judged_here(assertion, ctx):
        return
    advice = f"set `meta.broken = {broken};`" if len(broken) <= 70 else "set `meta.broken` for the case it rules out"
    who = "everyone without CUDA and CUDA users it rules out" if switch_value(condition, ctx, on=False) is False else "CUDA users it rules out"
    ctx.report(
        assertion.child_by_field_name("condition"),
        f"this `assert` fails evaluation for {who}: remove it and {advice}",
        fixes=[_broken_fix(assertion, condition, broken, ctx)],
    )


def _check_throw(variable: Node, ctx: Context) -> None:
    found = throw_call(variable)
    if found is None:
        return
    name, call = found
    # only a throw that a CUDA user can reach and a CPU user cannot: one on the non-CUDA side
    # (`if cudaSupport then ... else throw "CUDA only"`) never fails a CUDA build
    if throws_when(name, call, ctx, on=True) is False or throws_when(name, call, ctx, on=False) is not False:
        return
    if not _judged_here(call, ctx):
        return
    ctx.report(call, f"this `{name}` fails evaluation for the CUDA builds that take this branch: set `meta.broken` for that case instead")


# ----- the condition ------------------------------------------------------------------------------


def _broken_when(condition: Node, ctx: Context) -> str | None:
    """`meta.broken`'s value for an assert that a CUDA user can fail, or None if the assert is
    not one: an assert that holds whenever the switch is on (`assert cudaSupport;`, a CUDA-only
    package) fails only builds without CUDA, and one that only keeps options apart
    (`enableCuda -> !enableRocm`) fails only a configuration the user chose."""
    if switch_value(condition, ctx, on=True) is True:
        return None
    if condition.type == "binary_expression" and operator(condition) in {"->", "||"}:
        left = condition.child_by_field_name("left")
        right = condition.child_by_field_name("right")
        if operator(condition) == "||":
            left = unparen(left)
            if left is None or left.type != "unary_expression" or not text(left).startswith("!"):
                return None
            left = left.child_by_field_name("argument")
        if left is None or right is None or not mentions_switch(left, ctx):
            return None
        terms = conjuncts(right)
        if any(SWITCH.search(text(term)) for term in terms) or all(_holds_for_cuda_users(term, ctx) for term in terms):
            return None  # `withNccl -> cudaSupport && ...`: options that must agree, an assert's job
        return f"{_operand(left, '&&')} && {_negated(right, ctx)}"
    if any(term.type in {"variable_expression", "select_expression"} and mentions_switch(term, ctx) for term in conjuncts(condition)):
        return _negated(condition, ctx)
    return None


def _holds_for_cuda_users(term: Node, ctx: Context) -> bool:
    """A term on the right of `cudaSupport -> ...` that no CUDA user fails unless they ask for
    it: the switch itself (`withNccl -> cudaSupport`), another option of the file, negated or not
    (`!rocmSupport`: backends that must not both be on), or an argument `callPackage` always
    supplies compared with nothing (`cudaPackages != { }`, `cuda_cudart != null`)."""
    node = unparen(term)
    while node is not None and node.type == "unary_expression" and text(node).lstrip().startswith("!"):
        node = unparen(node.child_by_field_name("argument"))
    if node is None:
        return False
    if SWITCH.search(text(node)) or text(node) in {"true", "false"}:
        return True
    if node.type == "binary_expression" and operator(node) in {"&&", "||"}:
        return all(_holds_for_cuda_users(side, ctx) for side in (node.child_by_field_name("left"), node.child_by_field_name("right")) if side is not None)
    if node.type == "binary_expression" and operator(node) == "!=":
        sides = [unparen(node.child_by_field_name("left")), unparen(node.child_by_field_name("right"))]
        empty = [side for side in sides if side is not None and " ".join(text(side).split()) in {"null", "{ }", "{}"}]
        supplied = [side for side in sides if side is not None and (_supplied(side, ctx) or _member_of_supplied_set(side, ctx))]
        return bool(empty) and bool(supplied)
    if node.type == "has_attr_expression":
        return _member_of_supplied_set(node, ctx)
    if node.type == "select_expression":
        names = attrpath_names(node.child_by_field_name("attrpath"))
        return text(node).startswith("config.") and bool(names) and _OPTION.match(names[-1] or "") is not None
    if node.type == "variable_expression":
        binding = ctx.semantic.resolve(node)
        return binding.kind == "formal" and _OPTION.match(text(node)) is not None
    return False


def _member_of_supplied_set(node: Node, ctx: Context) -> bool:
    """`cudaPackages ? cudatoolkit` or `cudaPackages.cudatoolkit` (compared with null), of a
    package set `callPackage` passes, for a member every judged release of the set has: the
    toolkit, or a redistributable NVIDIA ships in each of them (not a member nixpkgs builds from
    source or another product, such as `cudnn` or `nccl`, which a release may leave null)."""
    base = unparen(node.child_by_field_name("expression"))
    names = attrpath_names(node.child_by_field_name("attrpath"))
    if base is None or len(names) != 1 or names[0] is None or not _supplied(base, ctx) or not catalog.is_package_set_name(text(base)):
        return False
    name, reference = names[0], ctx.reference
    if not reference.is_known(name) or (name in reference.members and not catalog.is_runfile_toolkit(name)):
        return False
    return set(reference.judged_releases(ctx.target)) <= set(reference.available_in(name))


def _supplied(variable: Node, ctx: Context) -> bool:
    """A formal `callPackage` always passes: a CUDA package set (whatever its default), or a
    CUDA package without a default (`cuda_compat ? null` may be left null on purpose)."""
    if variable.type != "variable_expression":
        return False
    name = text(variable)
    binding = ctx.semantic.resolve(variable)
    if binding.kind != "formal" or binding.node is None or binding.node.type != "formal":
        return False
    return catalog.is_package_set_name(name) or (catalog.is_cuda_package(name) and binding.node.child_by_field_name("default") is None)


def _operand(node: Node, of: str) -> str:
    """`node` as an operand of `&&` (or `||`): parenthesized when it binds more loosely."""
    inner = unparen(node)
    assert inner is not None
    loose = {"->", "||"} if of == "&&" else {"->"}
    if inner.type == "binary_expression" and operator(inner) in loose:
        return f"({text(inner)})"
    return text(inner)


def _negated(node: Node, ctx: Context, depth: int = 0) -> str:
    """The negation of `node`, as an operand of `&&` (De Morgan for a few levels, then `!(...)`)."""
    inner = unparen(node)
    assert inner is not None
    if depth > _MAX_DEPTH:
        return f"!({text(inner)})"
    if inner.type == "unary_expression" and text(inner).startswith("!"):
        argument = inner.child_by_field_name("argument")
        assert argument is not None
        return _operand(argument, "&&")
    if inner.type == "binary_expression":
        op = operator(inner)
        left, right = inner.child_by_field_name("left"), inner.child_by_field_name("right")
        if op in _OPPOSITES:
            return f"{text(left)} {_OPPOSITES[op]} {text(right)}"
        if op == "&&":
            return f"({_negated(left, ctx, depth + 1)} || {_negated(right, ctx, depth + 1)})"
        if op == "||":
            return f"{_negated(left, ctx, depth + 1)} && {_negated(right, ctx, depth + 1)}"
    if inner.type == "apply_expression":
        function, arguments = flatten_apply(inner)
        opposite = _OPPOSITE_CALLS.get(last_name(function) or "")
        # a bare `cudaAtLeast` may be all the file inherits: `cudaOlder` must be in scope too
        if opposite is not None and (function.type == "select_expression" or ctx.semantic.resolve_name(opposite, inner).lexical):
            spelled = text(function)
            return f"{spelled[: len(spelled) - len(last_name(function) or '')]}{opposite} {' '.join(text(a) for a in arguments)}"
    if inner.type in _ATOMS:
        return f"!{text(inner)}"
    return f"!({text(inner)})"


# ----- the fix ------------------------------------------------------------------------------------


def _broken_fix(assertion: Node, condition: Node, broken: str, ctx: Context) -> Fix | None:
    found = _derivation_attrset(assertion)
    if found is None:
        return None
    attrset, rebound = found
    if {text(n) for n in descendants(condition) if n.type == "variable_expression"} & rebound:
        return None
    meta = _meta_edit(attrset, broken, ctx)
    if meta is None:
        return None
    return Fix(
        f"Replace the assert with `meta.broken = {broken}`" if len(broken) <= 70 else "Replace the assert with `meta.broken`",
        Applicability.UNSAFE,
        tuple(edits.merge_edits([_assert_removal(assertion, ctx), meta])),
        isolation=f"CUDA311:meta:{attrset.start_byte}",
    )


def _builder_call(assertion: Node) -> tuple[Node, set[str]] | None:
    """The call making a package that the assert's body is (through `let`, `with` and more
    asserts), with the names bound on the way; None for the argument checks of a project's entry
    point or a function, which nothing evaluates unasked."""
    rebound: set[str] = set()
    body = unparen(assertion.child_by_field_name("body"))
    while body is not None and body.type in {"let_expression", "with_expression", "assert_expression"}:
        if body.type == "let_expression":
            rebound |= {n for b in bindings_of(body) for n in _bound_names(b)}
        body = unparen(body.child_by_field_name("body"))
    if body is None or body.type != "apply_expression":
        return None
    function, _ = flatten_apply(body)
    return (body, rebound) if last_name(function) in _PACKAGE_CALLS else None


def _derivation_attrset(assertion: Node) -> tuple[Node, set[str]] | None:
    """The attrset of the derivation builder call the assert's body is, with the names bound on the way."""
    found = _builder_call(assertion)
    if found is None:
        return None
    call, rebound = found
    function, arguments = flatten_apply(call)
    if last_name(function) not in DERIVATION_BUILDERS or not arguments:
        return None
    argument = unparen(arguments[-1])
    if argument is not None and argument.type == "function_expression":
        universal, formals = argument.child_by_field_name("universal"), argument.child_by_field_name("formals")
        rebound |= ({text(universal)} if universal is not None else set()) | set(edits.formal_names(formals) if formals is not None else [])
        argument = unparen(argument.child_by_field_name("body"))
    if argument is None or argument.type not in ATTRSET_TYPES:
        return None
    if argument.type == "rec_attrset_expression":
        rebound |= {n for b in bindings_of(argument) for n in _bound_names(b)}
    return argument, rebound


def _bound_names(binding: Node) -> list[str]:
    if binding.type == "binding":
        first = attrpath_names(binding.child_by_field_name("attrpath"))[:1]
        return [first[0]] if first and first[0] is not None else []
    return [text(n) for n in descendants(binding) if n.type == "identifier" and n.parent is not None and n.parent.type == "inherited_attrs"]


def _meta_edit(attrset: Node, broken: str, ctx: Context) -> Edit | None:
    """Add `broken` to the derivation's `meta`, or `|| broken` to an existing `broken`."""
    source = ctx.source
    meta_paths = [b for b in bindings_of(attrset) if b.type == "binding" and attrpath_names(b.child_by_field_name("attrpath"))[:1] == ["meta"]]
    if any(b.type != "binding" and "meta" in _bound_names(b) for b in bindings_of(attrset)):
        return None  # `inherit meta;`: not ours to edit
    for binding in meta_paths:
        path = attrpath_names(binding.child_by_field_name("attrpath"))
        value = binding_value(binding)
        if path == ["meta", "broken"] and value is not None:
            return _or_broken(value, broken)
        if path == ["meta"] and value is not None:
            body = unparen(value)
            while body is not None and body.type == "with_expression":
                body = unparen(body.child_by_field_name("body"))
            if body is None or body.type not in ATTRSET_TYPES:
                return None
            existing = edits.find_binding(body, "broken")
            if existing is not None:
                old = binding_value(existing)
                return _or_broken(old, broken) if old is not None else None
            return edits.append_binding(source, body, f"broken = {broken};")
    return edits.append_binding(source, attrset, f"meta.broken = {broken};")


def _or_broken(value: Node, broken: str) -> Edit:
    """`broken = old || (new)`; a literal `false` is simply replaced."""
    inner = unparen(value)
    if text(value) == "false":
        return edits.replace(value, broken)
    old = f"({text(inner)})" if inner is not None and inner.type == "binary_expression" and operator(inner) in {"->", "&&"} else text(value)
    return edits.replace(value, f"{old} || {broken if broken.startswith(('!', '(')) or ' ' not in broken else f'({broken})'}")


def _assert_removal(assertion: Node, ctx: Context) -> Edit:
    """Delete `assert cond;` with its line (or the blanks after it)."""
    semicolon = next(c for c in assertion.children if c.type == ";")
    return edits.delete_span(ctx.source, assertion.start_byte, semicolon.end_byte)
