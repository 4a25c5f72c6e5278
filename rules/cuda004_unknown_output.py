"""An output that a CUDA package does not have on the target: `cudaPackages.cuda_nvcc.dev` and
`cuda_cccl.dev` in the split-redist era (both have only `out`), `cuda_nvcc.static` there,
`libcublas.stubs` or `.include` before the split-redist era, and any `libcublas.dev` in the
single-output era, where every redistributable has only `out`. Also `lib.getOutput "static"
cuda_nvtx` when no release of any era gives the package that output and the package has several
outputs on the target: `getOutput` falls back to the nearly empty `out`, so it evaluates, but it
never selects what it names (a warning, not an error).

A finding must hold for every judged release: the configured `cuda` releases, else every release
the target era's nixpkgs offers, so an output that one of them has is not reported. Not flagged:
packages whose outputs the reference set does not know, packages absent from the judged releases
(CUDA002/CUDA003 report those), attributes that are not outputs (`.version`, `.name`, `.override`,
`.passthru`, `.meta`, `.src`, `.outPath`, `.all`, ...: only the reference set's output names and a
few other output-like names count), guarded selections (`cuda_nvcc.dev or cuda_nvcc`), the
getters that fall back to `out` by design (`lib.getDev cuda_nvcc`), `lib.getOutput "static"
cuda_cudart` on targets where the output is missing but exists in another era (the portable
idiom nixpkgs itself uses), and `lib.getOutput` on a package whose `out` holds everything on the
target (`lib.getOutput "include" cuda_cccl`: out-only packages, and every package in the
single-output and symlink-farm eras).

Every context gets the finding (packages, dev shells, modules, overrides): a missing output
fails evaluation wherever it is written. A version-keyed lookup table (`{ cuda12 =
cuda_nvcc.dev; cuda13 = ...; }`) is one finding, on its first failing entry, which says how many
entries fail: entries are evaluated only when selected.

## Why
Selecting a missing attribute throws: `cuda_nvcc.dev` fails evaluation on 25.11 with "attribute
'dev' missing" because the CUDA 13 rework (`buildRedist`) gave `cuda_nvcc` and `cuda_cccl` a
single output holding everything, and before PR #240498 every redistributable had only `out`.
Code written for one era breaks in another.

The fix writes the `lib` getter (`(lib.getDev cudaPackages.cuda_nvcc)`), which selects the output
where it exists and falls back to `out` elsewhere, so the expression works in every era; where
the package has only `out` on the target it also offers the bare package, which is the same
thing there. Both are safe when `out` holds everything; on a package with several outputs the
getter yields the nearly empty `out`, so that fix is unsafe. `lib` is added to the file's
arguments when nothing binds it.

## Example
```nix
{ stdenv, cudaPackages }:
stdenv.mkDerivation {
  pname = "kernels";
  version = "1.0";
  nativeBuildInputs = [ cudaPackages.cuda_nvcc ];
  buildInputs = [ cudaPackages.cuda_nvcc.dev cudaPackages.cuda_cccl.dev ];
}
```

## Use instead
```nix
{ lib, stdenv, cudaPackages }:
stdenv.mkDerivation {
  pname = "kernels";
  version = "1.0";
  nativeBuildInputs = [ cudaPackages.cuda_nvcc ];
  buildInputs = [ (lib.getDev cudaPackages.cuda_nvcc) cudaPackages.cuda_cccl ];
}
```

## References
- https://github.com/NixOS/nixpkgs/pull/240498
- https://github.com/NixOS/nixpkgs/pull/323056
- https://nixos.org/manual/nixpkgs/unstable/#cuda
- https://nixos.org/manual/nixpkgs/unstable/#function-library-lib.attrsets.getOutput
"""

from __future__ import annotations

from tree_sitter import Node

from cudalint.knowledge import catalog
from cudalint.lint.context import Context
from cudalint.lint.model import Applicability, Edit, Fix, FixAvailability, Severity
from cudalint.lint.rule import Rule
from cudalint.nix.semantic import CudaRef
from cudalint.nix.syntax import descendants, identifier_name, unparen
from cudalint.rules import _outputs

RULE = Rule(
    code="CUDA004",
    preview=True,  # below 0.95 on the corpora: off by default until it passes
    precision="0.00 (0 true of 1 judged findings on the real-world corpora, 2026-11-25; tests/realworld/)",
    name="unknown-output",
    severity=Severity.ERROR,
    fix=Applicability.UNSAFE,
    availability=FixAvailability.SOMETIMES,
    summary="Output that the CUDA package does not have on the target nixpkgs and CUDA releases",
    node_types=("variable_expression",),
    cuda_references_only=True,
    patterns=catalog.CUDA_REFERENCE_PATTERNS,  # it judges `cuda_ref`s
)


# Eras whose `out` holds every file of a redistributable (the only output, or a symlink farm of all).
_OUT_HOLDS_EVERYTHING = frozenset({"single-output", "symlink-farm"})


@RULE
def check(node: Node, ctx: Context) -> None:
    semantic = ctx.semantic
    root = semantic.reference_root(node)
    ref = semantic.cuda_ref(root)
    if ref is None or ref.output in {None, "out"} or not _outputs.is_output_name(ref.output, ctx):
        return
    written = unparen(ref.node)
    if written is None:
        return
    # the selection or `getOutput` call itself, not a variable bound to one (reported at the binding)
    if written.type == "select_expression" and ref.getter is None:
        _check_selection(ctx, ref, written)
    elif written.type == "apply_expression" and ref.getter == "getOutput":
        _check_get_output(ctx, ref)


def _missing(ctx: Context, ref: CudaRef | None) -> bool:
    """A selection (`x.dev`) of an output the package has in no judged release."""
    if ref is None or ref.output in {None, "out"} or ref.getter is not None or not _outputs.is_output_name(ref.output, ctx):
        return False
    judged = _outputs.judged_outputs(ctx, ref.package)
    return judged is not None and not any(ref.output in outputs for outputs in judged)


def _check_selection(ctx: Context, ref: CudaRef, select: Node) -> None:
    output = ref.output
    assert output is not None
    if not _missing(ctx, ref):
        return
    judged = _outputs.judged_outputs(ctx, ref.package)
    component = _output_component(select, ref)
    if judged is None or component is None:
        return
    fixes = _selection_fixes(ctx, ref, select, component, judged)
    table = ctx.semantic.lookup_table(select)
    table_note = ""
    if table is not None:
        flagged = [n for entry in table.entries for n in descendants(entry) if n.type == "select_expression" and _missing(ctx, ctx.semantic.cuda_ref(n))]
        if flagged and flagged[0] != select:
            return  # a later entry of a version table: the table's first entry carries the finding
        entries = table.count(lambda entry: any(entry.start_byte <= n.start_byte and n.end_byte <= entry.end_byte for n in flagged))
        table_note = f" (one finding for the table's {entries} entries)" if entries > 1 else ""
        fixes = _table_fixes(ctx, fixes, flagged[1:])
    span = (select.start_byte, component.end_byte)
    out_only = all(outputs == ("out",) for outputs in judged)
    package_text = ctx.source.slice(select.start_byte, _package_end(select, component))
    have = ", ".join(f"`{o}`" for o in dict.fromkeys(o for outputs in judged for o in outputs))
    portable = output in _outputs_anywhere(ctx, ref.package)
    getter = f"`(lib.{_outputs.getter(ctx, output)} {package_text})`"
    if out_only:
        instead = f"write `{package_text}`"  # the getter is the alternative fix
    else:
        instead = "select one of them" + (f" or {getter}" if portable else "")
    ctx.report(span, f"`{ctx.source.slice(*span)}` does not exist: `{ref.package}` has only {have} here; {instead}{table_note}", fixes=fixes)


def _table_fixes(ctx: Context, fixes: list[Fix], others: list[Node]) -> list[Fix]:
    """The fixes of a table's first entry extended to its other failing entries (fix by fix, where
    every entry offers the same kind); the table is one finding, so one fix repairs it whole."""
    merged = [(fix, set(fix.edits)) for fix in fixes]
    for other in others:
        ref = ctx.semantic.cuda_ref(other)
        component = _output_component(other, ref) if ref is not None else None
        judged = _outputs.judged_outputs(ctx, ref.package) if ref is not None else None
        theirs = _selection_fixes(ctx, ref, other, component, judged) if ref is not None and component is not None and judged is not None else []
        merged = [(fix, edits | set(their.edits)) for (fix, edits), their in zip(merged, theirs) if their.applicability is fix.applicability and their.title.split("`")[0] == fix.title.split("`")[0]]
    return [Fix(f"{fix.title} in every entry", fix.applicability, tuple(sorted(edits)), fix.isolation) for fix, edits in merged]


def _check_get_output(ctx: Context, ref: CudaRef) -> None:
    output = ref.output
    assert output is not None
    judged = _outputs.judged_outputs(ctx, ref.package)
    if judged is None or any(output in outputs for outputs in judged) or output in _outputs_anywhere(ctx, ref.package):
        return
    if ctx.target.era.id in _OUT_HOLDS_EVERYTHING or all(outputs == ("out",) for outputs in judged):
        # the fallback `out` holds every file here: nixpkgs writes `lib.getOutput "include"
        # cuda_cccl` on purpose, to name the headers wherever a release puts them
        return
    ctx.report(
        ref.node,
        f"`{ref.package}` has no `{output}` output in any era, so this selects its nearly empty `out`; name an output it has",
        severity=Severity.WARNING,
    )


def _selection_fixes(ctx: Context, ref: CudaRef, select: Node, component: Node, judged: list[tuple[str, ...]]) -> list[Fix]:
    output = ref.output
    assert output is not None
    span = (select.start_byte, component.end_byte)
    package_text = ctx.source.slice(select.start_byte, _package_end(select, component))
    out_only = all(outputs == ("out",) for outputs in judged)
    fixes: list[Fix] = []
    if out_only:
        fixes.append(Fix(f"Write `{package_text}` (its only output)", Applicability.SAFE, (Edit(span[0], span[1], package_text),)))
    if output in _outputs_anywhere(ctx, ref.package):
        call = _outputs.getter_call(ctx, ref.node, output, package_text)
        if call is not None:
            text_, changes = call
            applicability = Applicability.SAFE if out_only else Applicability.UNSAFE
            fixes.append(Fix(f"Use `{text_}` (falls back to `out`)", applicability, (Edit(span[0], span[1], f"({text_})"), *changes)))
    return fixes


def _output_component(select: Node, ref: CudaRef) -> Node | None:
    """The attrpath component naming the output (`dev` in `cudaPackages.cuda_nvcc.dev.x`)."""
    attrpath = select.child_by_field_name("attrpath")
    for component in attrpath.children_by_field_name("attr") if attrpath is not None else ():
        if component.start_byte >= ref.name_node.end_byte and identifier_name(component) == ref.output:
            return component
    return None


def _package_end(select: Node, component: Node) -> int:
    """Where the text denoting the package ends: before `.output` (`cudaPackages.cuda_nvcc` in
    `cudaPackages.cuda_nvcc.dev`, `(nvcc)` in `(nvcc).dev`)."""
    previous = component.prev_named_sibling
    if previous is not None:
        return previous.end_byte
    expression = select.child_by_field_name("expression")
    return expression.end_byte if expression is not None else select.start_byte


def _outputs_anywhere(ctx: Context, package: str) -> frozenset[str]:
    """The package's outputs in any era and release of the reference set."""
    from cudalint.knowledge.reference import Target  # loaded on first use, not when the rules load

    reference = ctx.reference
    found: set[str] = set()
    for era in reference.eras:
        info = reference.lookup(package, Target(None, era, reference.releases, True))
        for facts in info.releases if info is not None else ():
            found.update(facts.outputs or ())
    return frozenset(found)
