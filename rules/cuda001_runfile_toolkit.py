"""The monolithic runfile `cudatoolkit` instead of the split CUDA redistributables.

Flags every place that selects the toolkit: `cudatoolkit`, `cudaPackages.cudatoolkit`,
`cudaPackages_X_Y.cudatoolkit`, `cudatoolkit_11`, `cudatoolkit-legacy-runfile`, its parts
(`cudatoolkit.lib`, `.out`, `.cc`), `${cudatoolkit}` interpolations, `symlinkJoin`/`buildEnv`
paths, `inherit (cudaPackages) cudatoolkit;` and overlays that redefine it. A variable bound to
the toolkit is reported once, where it is bound. Not flagged: function formals (the fix rewrites
them), `cudatoolkit != null` checks, metadata (`cudatoolkit.version`, `.name`), `passthru`,
strings and comments, and branches that exist only for CUDA older than 11.4, which has no
redistributables (`cudaOlder "11.4"`, `versionOlder cudaVersion "11"` (a bare major is `.0`),
the `else` of `cudaAtLeast "11.4"`).

## Why
The runfile toolkit bundles every CUDA component, so anything that references it carries
closures of 3-6 GB. The nixpkgs manual calls it deprecated; since 2024-04
`cudaPackages.cudatoolkit` is a `symlinkJoin` of redistributables that warns on use. The split
packages let a derivation depend on exactly the compiler, runtime and libraries it uses.

The fix replaces the toolkit in `nativeBuildInputs` with `cuda_nvcc`, in `buildInputs` with
`cuda_cudart` and `cuda_cccl`, and `cudatoolkit.cc` with `cudaPackages.backendStdenv.cc`. In
`buildInputs` a second fix (an editor action; `--fix` applies the first) also adds the libraries
the file evidently uses: library names in flags, strings or comments (`-lcublas`,
`CUDA::cufft`, `nvToolsExt`, `USE_CUDNN`) mapped to their packages by the reference set. Both
write only packages the target CUDA release has. It is unsafe: the build may need a library the
toolkit provided implicitly.

## Example
```nix
{ stdenv, cudatoolkit }:
stdenv.mkDerivation {
  pname = "saxpy";
  version = "1.0";
  nativeBuildInputs = [ cudatoolkit ];
  buildInputs = [ cudatoolkit ];
}
```

## Use instead
```nix
{ stdenv, cudaPackages }:
stdenv.mkDerivation {
  pname = "saxpy";
  version = "1.0";
  nativeBuildInputs = [ cudaPackages.cuda_nvcc ];
  buildInputs = [
    cudaPackages.cuda_cudart
    cudaPackages.cuda_cccl
  ];
}
```

## References
- https://nixos.org/manual/nixpkgs/unstable/#cuda
- https://github.com/NixOS/nixpkgs/pull/141504
- https://github.com/NixOS/nixpkgs/pull/218044
- https://github.com/NixOS/nixpkgs/issues/232501
"""

from __future__ import annotations

import functools
import re
import weakref

from tree_sitter import Node

from cudalint import catalog, edits, sizes
from cudalint.context import Context
from cudalint.model import Applicability, Edit, Fix, FixAvailability, Rule, Severity
from cudalint.semantic import CudaRef, InputSite
from cudalint.source import SourceFile
from cudalint.syntax import ancestors, attrpath_names, identifier_name, text, unparen

RULE = Rule(
    code="CUDA001",
    name="runfile-toolkit",
    severity=Severity.WARNING,
    fix=Applicability.UNSAFE,
    availability=FixAvailability.SOMETIMES,
    summary="Monolithic runfile `cudatoolkit` instead of the split CUDA redistributables",
    node_types=("variable_expression", "inherited_attrs", "binding"),
    patterns=(b"cudatoolkit",),
)

METADATA = frozenset({"version", "name", "pname", "majorVersion", "majorMinorVersion", "meta", "passthru", "src"})
# Inputs where the toolkit serves as the compiler (`depsBuildBuild` too): `cuda_nvcc` replaces it there.
COMPILER_INPUTS = catalog.NATIVE_INPUTS | {"depsBuildBuild"}
_OLD_CUDA = re.compile(r'\b(?:cudaOlder|versionOlder\s+[\w.]*(?:cudaVersion|cudaMajorMinorVersion|version))\s+"(\d+)(?:\.(\d+))?')
_NEW_CUDA = re.compile(r'\b(?:cudaAtLeast|versionAtLeast\s+[\w.]*(?:cudaVersion|cudaMajorMinorVersion|version))\s+"(\d+)(?:\.(\d+))?')


@RULE
def check(node: Node, ctx: Context) -> None:
    if node.type == "variable_expression":
        _check_reference(node, ctx)
    elif node.type == "inherited_attrs":
        _check_inherit(node, ctx)
    else:
        _check_redefinition(node, ctx)


def _check_reference(variable: Node, ctx: Context) -> None:
    semantic = ctx.semantic
    root = semantic.reference_root(variable)
    ref = semantic.cuda_ref(root)
    if ref is None or not catalog.is_runfile_toolkit(ref.package) or ref.via in {"let", "inherit"}:
        return
    if ref.set_name is None and _removed_on_target(ref.package, ctx):
        return  # a versioned top-level toolkit the target deprecated or removed: CUDA006 reports it
    if ref.output in METADATA or _is_exempt(root, ctx):
        return
    described = text(root) if len(text(root)) <= 60 else ref.package
    if ref.output == "cc":
        ctx.report(
            root,
            f"`{described}` is the runfile toolkit's host compiler; use `cudaPackages.backendStdenv.cc`, the compiler nvcc supports",
            fixes=[_cc_fix(ref, ctx)],
        )
        return
    site = semantic.input_site(root)
    attr = site.attr if site is not None else None
    if attr in COMPILER_INPUTS:
        advice = "use `cuda_nvcc` here"
    elif attr in catalog.HOST_INPUTS:
        advice = "use `cuda_cudart`, `cuda_cccl` and the CUDA libraries the package links (`libcublas`, `libcufft`, ...)"
    else:
        advice = "depend on the split redistributables instead (`cuda_nvcc` to compile, `cuda_cudart`, `cuda_cccl` and the libraries it links)"
    ctx.report(
        root,
        f"`{described}` is the monolithic runfile CUDA toolkit (closures of 3-6 GB): {advice}",
        fixes=_replacement_fixes(ref, attr, site, ctx),
    )


def _removed_on_target(name: str, ctx: Context) -> bool:
    change = ctx.reference.toplevel_change(name)
    return change is not None and change.in_effect_on(ctx.target.nixpkgs)


def _is_exempt(root: Node, ctx: Context) -> bool:
    path = ctx.semantic.binding_path(root)
    if path and path[0] == "passthru":
        return True
    parent = root.parent
    while parent is not None and parent.type == "parenthesized_expression":
        parent = parent.parent
    if parent is not None and parent.type == "binary_expression":
        operator = parent.child_by_field_name("operator")
        if operator is not None and operator.type in {"==", "!="}:
            return True
    if any(a.type == "assert_expression" and a.child_by_field_name("condition") is not None and a.child_by_field_name("condition").start_byte <= root.start_byte < a.child_by_field_name("condition").end_byte for a in ancestors(root)):
        return True
    return any(_only_old_cuda(g.text, g.positive) for g in ctx.semantic.guards(root))


def _only_old_cuda(condition: str, positive: bool) -> bool:
    """Branches taken only for CUDA < 11.4, where no redistributables exist."""
    old = _OLD_CUDA.search(condition)
    if positive and old and _version(old) <= (11, 4):
        return True
    new = _NEW_CUDA.search(condition)
    return not positive and new is not None and _version(new) <= (11, 4)


def _version(match: re.Match[str]) -> tuple[int, int]:
    """`"11.4"` -> (11, 4); a bare major (`versionOlder v "11"`) means `.0`."""
    return int(match.group(1)), int(match.group(2) or 0)


def _check_inherit(attrs: Node, ctx: Context) -> None:
    statement = attrs.parent
    if statement is None or statement.type != "inherit_from":
        return
    if ctx.semantic.package_set_name(statement.child_by_field_name("expression")) is None:
        return
    if ctx.semantic.binding_path(statement)[:1] == ("passthru",) or _in_passthru(statement):
        return
    for attr in attrs.children_by_field_name("attr"):
        name = identifier_name(attr)
        if catalog.is_runfile_toolkit(name):
            ctx.report(attr, f"`inherit (...) {name};` brings in the monolithic runfile CUDA toolkit: inherit the split redistributables you use (`cuda_nvcc`, `cuda_cudart`, `libcublas`, ...)")


def _in_passthru(node: Node) -> bool:
    for ancestor in ancestors(node):
        if ancestor.type == "binding" and attrpath_names(ancestor.child_by_field_name("attrpath"))[:1] == ["passthru"]:
            return True
    return False


def _check_redefinition(binding: Node, ctx: Context) -> None:
    names = attrpath_names(binding.child_by_field_name("attrpath"))
    if not names or not catalog.is_runfile_toolkit(names[-1]):
        return
    owner = binding.parent.parent if binding.parent is not None else None
    if owner is None or owner.type == "let_expression" or _in_passthru(binding):
        return
    value = binding.child_by_field_name("expression")
    if value is not None and any(
        (r := ctx.semantic.cuda_ref(ctx.semantic.reference_root(v))) is not None and catalog.is_runfile_toolkit(r.package)
        for v in _variables(value)
    ):
        return  # the toolkit reference in the value is reported itself
    ctx.report(
        binding.child_by_field_name("attrpath"),
        f"`{names[-1]}` redefines the monolithic runfile CUDA toolkit: override the split redistributables (`cuda_nvcc`, `cuda_cudart`, ...) instead",
    )


def _variables(node: Node):
    from cudalint.syntax import descendants

    return (n for n in descendants(node) if n.type == "variable_expression")


def _cc_fix(ref: CudaRef, ctx: Context) -> Fix | None:
    spelled, extra = edits.package_reference(ctx.source, ctx.semantic, ref, "backendStdenv")
    return _with_formal_cleanup(ref, ctx, "Use `cudaPackages.backendStdenv.cc`", edits.replace(ref.node, spelled + ".cc"), extra)


def _replacement_fixes(ref: CudaRef, attr: str | None, site: InputSite | None, ctx: Context) -> list[Fix | None]:
    """The minimal replacement, and for host inputs a second one with the libraries the file
    evidently uses; both write only packages the target release has."""
    if attr is None or site is None or ref.output not in {None, "out", "lib", "dev", "bin"}:
        return []
    exists = [p for p in (["cuda_nvcc"] if attr in COMPILER_INPUTS else ["cuda_cudart", "cuda_cccl"]) if ctx.reference.exists(p, ctx.target)]
    if attr not in COMPILER_INPUTS and attr not in catalog.HOST_INPUTS or not exists:
        return []
    fixes = [_replacement_fix(ref, site, ctx, exists, "Replace the runfile toolkit with " + _names(exists))]
    if attr in catalog.HOST_INPUTS:
        listed = _packages_listed(site, ctx)
        libraries = [p for p in _libraries_mentioned(ctx) if p not in exists and p not in listed and ctx.reference.exists(p, ctx.target)]
        if libraries:
            title = f"Replace the runfile toolkit with {_names(exists)} and the libraries this file uses ({_names(libraries)})"
            fixes.append(_replacement_fix(ref, site, ctx, exists + libraries, title))
    return fixes


def _packages_listed(site: InputSite, ctx: Context) -> set[str]:
    """CUDA packages the toolkit's input list already holds: a `cudnn` element names the library
    too, so the second fix must not add `cudaPackages.cudnn` next to it."""
    if site.list_node is None:
        return set()
    refs = (ctx.semantic.cuda_ref(element) for element in edits.list_elements(site.list_node))
    return {ref.package for ref in refs if ref is not None}


def _names(packages: list[str]) -> str:
    return ", ".join(f"`{p}`" for p in packages)


# per file: each toolkit in host inputs asks, and the answer is a scan of the whole text
_MENTIONED: weakref.WeakKeyDictionary[SourceFile, tuple[object, list[str]]] = weakref.WeakKeyDictionary()


def _libraries_mentioned(ctx: Context) -> list[str]:
    """Packages of the CUDA libraries the file names in flags, strings or comments (`-lcublas`,
    `CUDA::cufft`, `nvToolsExt`, `cudnn.h`), in the reference set's library table."""
    table = ctx.reference.libraries
    cached = _MENTIONED.get(ctx.source)
    if cached is None or cached[0] is not table:
        cached = _MENTIONED[ctx.source] = (table, _scan_libraries(ctx.source.text, table))
    return cached[1]


def _scan_libraries(text: str, table: dict[str, str]) -> list[str]:
    # CMake options spell them in capitals (`-DUSE_CUDNN=ON`, `CUBLAS_LIBRARIES`).
    spellings = {word: package for name, package in table.items() for word in (name, name.upper())}
    pattern = _library_pattern(tuple(sorted(spellings, key=len, reverse=True)))
    return sorted(dict.fromkeys(spellings[m.group(1)] for m in pattern.finditer(text)))


@functools.cache
def _library_pattern(words: tuple[str, ...]) -> re.Pattern[str]:
    # A library name stands alone or after `lib`, `-l` or `CUDA::`; `_` may follow (`cublas_v2.h`).
    # An option that switches it off (`-DUSE_CUDNN=OFF`, `cmakeBool "USE_CUDNN" false`) is no use.
    switched_off = r'(?!\w*"?\s*[=\s]\s*(?:OFF|NO|FALSE|false|0)\b)'
    return re.compile(r"(?<![A-Za-z0-9])(?:lib|-l|CUDA::)?(" + "|".join(map(re.escape, words)) + r")(?![A-Za-z0-9])" + switched_off)


def _replacement_fix(ref: CudaRef, site: InputSite, ctx: Context, packages: list[str], title: str) -> Fix | None:
    spelled: list[str] = []
    extra = []
    for package in packages:
        written, more = edits.package_reference(ctx.source, ctx.semantic, ref, package)
        spelled.append(written)
        extra = extra or more
    if site.list_node is None:
        if site.element != ref.node and unparen(site.element) != unparen(ref.node):
            return None
        replacement = edits.replace(ref.node, "[ " + " ".join(spelled) + " ]")
    else:
        present = {text(e) for e in edits.list_elements(site.list_node)}
        missing = [s for s in spelled if s not in present]
        if site.element != ref.node and unparen(site.element) != unparen(ref.node):
            return None
        if not missing:
            replacement = edits.delete_element(ctx.source, site.element)
        elif edits.is_multiline(ctx.source, site.list_node, edits.list_elements(site.list_node)) and len(missing) > 1:
            indent = ctx.source.indentation_of_line(ctx.source.line_of(ref.node.start_byte))
            replacement = edits.replace(ref.node, (ctx.source.newline + indent).join(missing))
        else:
            replacement = edits.replace(ref.node, " ".join(missing))
    fix = _with_formal_cleanup(ref, ctx, title, replacement, extra)
    return sizes.with_download(fix, sizes.toolkit_download(ctx.reference, ctx.target, packages))


def _with_formal_cleanup(ref: CudaRef, ctx: Context, title: str, replacement: Edit, formal_additions: list[Edit]) -> Fix:
    """Rewrites of a `cudatoolkit` formal's uses also drop the formal with its last use (renaming
    it to `cudaPackages` when that formal is being added)."""
    changes = [replacement, *formal_additions]
    isolation = None
    if ref.via == "formal" and ref.name_node.parent is not None:
        binding = ctx.semantic.resolve(ref.name_node.parent)
        if binding.node is not None and binding.node.type == "formal":
            isolation = f"CUDA001:formal:{binding.node.start_byte}"  # one pass per formal, not per name
            if len(ctx.semantic.uses(ref.package, binding.node)) == 1:
                if formal_additions:
                    changes = [replacement, edits.rename_formal(binding.node, "cudaPackages")]
                else:
                    changes.append(edits.remove_formal(ctx.source, binding.node))
    return Fix(title, Applicability.UNSAFE, tuple(changes), isolation)
