"""Output facts shared by the era-aware output rules (CUDA004, CUDA202): which outputs a CUDA
package has in the releases a finding must hold for, and how to write the `lib` getter that
selects one of them."""

from __future__ import annotations

import dataclasses

from tree_sitter import Node

from cudalint.knowledge import catalog
from cudalint.lint import edits
from cudalint.lint.context import Context
from cudalint.lint.model import Edit
from cudalint.nix.semantic import Call, InputSite

# Attribute names that look like derivation outputs although the reference set never lists them
# for a CUDA package: selecting one of these on a CUDA package is an output access. Everything
# else (`version`, `name`, `override`, `passthru`, `all`, ...) is an ordinary attribute.
OUTPUT_LIKE = frozenset({"man", "info", "devdoc", "debug", "cxxdev", "examples"})

# Output -> the getter every nixpkgs era's `lib` has for it (semantic.GETTERS maps getter -> output);
# other outputs go through `lib.getOutput "name"`.
GETTER_OF_OUTPUT = {"dev": "getDev", "lib": "getLib", "bin": "getBin"}
# Getters written only in the split-redist era, where nixpkgs' own CUDA files use them (and only
# where the target's `lib` has them: the reference set's vocabulary dates `lib.getInclude`).
SPLIT_REDIST_GETTER_OF_OUTPUT = {"include": "getInclude", "static": "getStatic"}


def is_output_name(name: str | None, ctx: Context) -> bool:
    return name is not None and (name in ctx.reference.output_names or name in OUTPUT_LIKE)


def judged_outputs(ctx: Context, package: str) -> list[tuple[str, ...]] | None:
    """The package's outputs in every judged release that has it (configured releases, else all
    the era's nixpkgs offers). None when the set does not know them for one of these releases, or
    no judged release has the package (that is CUDA002/CUDA003's business)."""
    target = ctx.target
    judged = dataclasses.replace(target, releases=ctx.reference.judged_releases(target))
    info = ctx.reference.lookup(package, judged)
    if info is None or not info.releases:
        return None
    found = [facts.outputs for facts in info.releases]
    if any(outputs is None for outputs in found):
        return None
    return found


def in_every(outputs: list[tuple[str, ...]], output: str) -> bool:
    return all(output in release for release in outputs)


def getter(ctx: Context, output: str) -> str:
    """The `lib` function selecting `output` on the target: `getDev`, or `getOutput "stubs"`."""
    name = GETTER_OF_OUTPUT.get(output)
    if name is None and ctx.target.era.id == "split-redist":
        name = SPLIT_REDIST_GETTER_OF_OUTPUT.get(output)
        if name is not None and not ctx.reference.has(f"lib.{name}", ctx.target):
            name = None
    return name if name is not None else f'getOutput "{output}"'


def getter_calls(ctx: Context, at: Node, outputs: list[str], package_text: str) -> tuple[list[str], list[Edit]] | None:
    """`lib.getDev x`-style texts selecting each of `outputs` of the package written
    `package_text` at `at`, and the edits that bring `lib` into scope; None where `lib` cannot be
    written."""
    spelled = edits.toplevel_reference(ctx.source, ctx.semantic, at, "lib")
    if spelled is None:
        return None
    lib, changes = spelled
    return [f"{lib}.{getter(ctx, output)} {package_text}" for output in outputs], changes


def getter_call(ctx: Context, at: Node, output: str, package_text: str) -> tuple[str, list[Edit]] | None:
    """`(lib.getDev x)`-style text selecting `output` (see `getter_calls`)."""
    calls = getter_calls(ctx, at, [output], package_text)
    return (calls[0][0], calls[1]) if calls is not None else None


def join_of(ctx: Context, site: InputSite) -> Call | None:
    """The `symlinkJoin`/`buildEnv` call whose own `paths` list holds the input site."""
    if site.attr != "paths":
        return None
    call = ctx.semantic.enclosing_call(site.binding)
    if call is None or call.name not in catalog.JOIN_BUILDERS or call.attrset != site.binding.parent.parent:
        return None
    return call
