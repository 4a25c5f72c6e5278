"""The monolithic runfile `cudatoolkit` instead of the split CUDA redistributables.

Flags every place that selects the toolkit: `cudatoolkit`, `cudaPackages.cudatoolkit`,
`cudaPackages_X_Y.cudatoolkit`, `cudatoolkit_11`, `cudatoolkit-legacy-runfile`, its parts
(`cudatoolkit.lib`, `.out`, `.cc`), `${cudatoolkit}` interpolations, `symlinkJoin`/`buildEnv`
paths, `inherit (cudaPackages) cudatoolkit;` and overlays that redefine it. A variable bound to
the toolkit is reported once, where it is bound; references of one line in one string or list
with the same advice are one finding. Not flagged: function formals (the fix rewrites them),
`cudatoolkit != null` checks, a toolkit given only to a helper whose result is used only in
`assert`s, metadata (`cudatoolkit.version`, `.name`), `cudatoolkit.cc` on a target before
`cudaPackages.backendStdenv` (added 2023-03-09, PR #218265), where it is the way to nvcc's
host compiler, `passthru`, strings and comments, branches
that exist only for CUDA older than 11.4, which has no redistributables (`cudaOlder "11.4"`,
`versionOlder cudaVersion "11"` (a bare major is `.0`), the `else` of `cudaAtLeast "11.4"`, a
file whose `assert` allows only majors before 11: `major == "9" || major == "10"`), names that
were current on the target: `cudatoolkit.cc` as nvcc's host compiler in the single-output era
(22.05 to 23.05, before the split packages), the toolkit reached only behind an explicit opt-in
switch (`lib.optionals useCudatoolkitRunfile [ cudatoolkit ]`, `if useCudatoolkitRunfile then
cudatoolkit else ...`: the user asks for the runfile), an `inherit (cudaPackages) cudatoolkit;`
whose every use is one of these, the package set's own definitions of the names from their
package files (`cudatoolkit = final.callPackage ./cudatoolkit/redist-wrapper.nix { };`), an
override that redefines the name to a split package (`cudatoolkit = final.cuda_nvcc;` in
`overrideScope`: that is the remedy), top-level versioned toolkits that the target nixpkgs
deprecated or removed (`cudatoolkit_10_1`: CUDA006 reports them), and the toolkit in wrappers,
RPATHs and installed files, which CUDA204 reports (one finding per construct).

## Why
The runfile toolkit bundles every CUDA component, so anything that references it carries
closures of 3-6 GB. The nixpkgs manual calls it deprecated; since 2024-04
`cudaPackages.cudatoolkit` is a `symlinkJoin` of redistributables that warns on use. The split
packages let a derivation depend on exactly the compiler, runtime and libraries it uses.

The advice follows where the toolkit stands (`ctx.place`):

- Package, `nativeBuildInputs`: `cuda_nvcc`. `buildInputs`: `cuda_cudart`, `cuda_cccl` and
  the libraries the file names (flags, strings or comments: `-lcublas`, `CUDA::cufft`,
  `nvToolsExt`, `USE_CUDNN`, mapped to packages by the reference set; a second editor action).
  Without `strictDeps` the toolkit in `buildInputs` also put nvcc on PATH (nixpkgs PRs that
  enable `strictDeps` move such tools to `nativeBuildInputs`, e.g. #414587), so a derivation
  that builds, or an override that shows nvcc, CMake, `.cu` files or `CUDA_HOME`, also gets
  `cuda_nvcc` in `nativeBuildInputs` (under the same `optionals` guard; build closure only). A
  file called by a CUDA package set (`{ cuda_nvcc, flags, ... }:`) gets the packages as formals:
  a `cudaPackages` formal there would be the top-level default release.
- Dev shell (`mkShell`, FHS env `targetPkgs`, flake `devShells`, numtide `devshells`, a
  `mkDerivation` without source): every list is on PATH, so the replacement is `cuda_nvcc`,
  `cuda_cudart`, `cuda_cccl` (nvcc left out when another list of the shell has it), with
  `cuda_nvcc` in `nativeBuildInputs` where the toolkit stood in `buildInputs` (CUDA301's place
  for the compiler).
- `CUDA_PATH`, `CUDA_HOME`, `CUDA_ROOT`, `CUDAToolkit_ROOT`, `CUDA_TOOLKIT_ROOT_DIR`,
  `--xla_gpu_cuda_data_dir` set to the toolkit: tools that want one root (JAX, numba, torch
  extensions) are served by a `symlinkJoin` of the redistributables they use, or by `cuda_nvcc`
  alone when only nvcc runs. In a shell or a system environment that is no defect: info. In a
  package it is a warning (`cuda_nvcc`'s setup hook finds the rest for CMake).
- NixOS/home-manager: `environment.systemPackages`/`home.packages` installs the whole toolkit
  in a profile, where nothing builds against it: put nvcc and the libraries in a dev shell (the
  driver comes from `hardware.nvidia`). `programs.nix-ld.libraries`: list the libraries that
  programs load. No fix: what the user runs is not in the file.
- An override argument (`pkg.override { cudatoolkit = ...; }`, `callPackage f { cudatoolkit =
  ...; }`) picks what a package asks for: info (override its `cudaPackages` where it takes one).
- Library search paths (`LD_LIBRARY_PATH`, `makeLibraryPath`, `-L`) and joins: list the
  libraries, join only the redistributables the users need. No fix.

A fix never changes the CUDA release. A versioned toolkit (`cudatoolkit_11_8`,
`cudaPackages_11_8.cudatoolkit`, `cudatoolkit_11`) is replaced by the same release's
redistributables (`cudaPackages_11_8.cuda_nvcc`) when the target nixpkgs has that set, else no
fix is offered and the message says why; CUDA before 11.4 has no redistributables at all (the
first redistributable manifests are 11.4; JuliaPackaging/Yggdrasil#7213). Packages built against
one toolkit release (`cudnn_cudatoolkit_11_2`, `nccl_cudatoolkit_11`: nixpkgs'
`cudnn/default.nix` builds each with `cudatoolkit = cudatoolkit_11_2`) move with it or not at
all: no fix while the file names one. Prebuilt binaries patched by `autoPatchelfHook` get no fix
either: which libraries they load is not in the file. All fixes write only packages the target
release has, and are unsafe: the build may need a library the toolkit provided implicitly.

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
- https://nixos.org/manual/nixpkgs/unstable/#var-stdenv-strictDeps
- https://github.com/NixOS/nixpkgs/pull/141504
- https://github.com/NixOS/nixpkgs/pull/218044
- https://github.com/NixOS/nixpkgs/issues/232501
- https://github.com/NixOS/nixpkgs/pull/414587
- https://github.com/NixOS/nixpkgs/blob/nixos-21.05/pkgs/development/libraries/science/math/cudnn/default.nix
- https://github.com/JuliaPackaging/Yggdrasil/pull/7213
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field

from tree_sitter import Node

from cudalint.knowledge import catalog, sizes
from cudalint.knowledge.reference import Target
from cudalint.lint import edits
from cudalint.lint.context import Context
from cudalint.lint.model import Applicability, Edit, Fix, FixAvailability, Severity
from cudalint.lint.rule import Rule
from cudalint.nix.places import DERIVATION_BUILDERS, SHELL_BUILDERS
from cudalint.nix.semantic import CudaRef, InputSite
from cudalint.nix.syntax import ancestors, attrpath_names, binding_value, bindings_of, descendants, flatten_apply, identifier_name, last_name, outermost_apply, string_literal, text, unparen
from cudalint.rules._runtime_closure import runtime_use

RULE = Rule(
    code="CUDA001",
    name="runfile-toolkit",
    severity=Severity.WARNING,
    fix=Applicability.UNSAFE,
    availability=FixAvailability.SOMETIMES,
    summary="Monolithic runfile `cudatoolkit` instead of the split CUDA redistributables",
    node_types=("variable_expression", "inherited_attrs", "binding"),
    patterns=(b"cudatoolkit",),
    attrpath_patterns=(b"cudatoolkit",),  # (its binding check: a redefined toolkit)
    cuda_references_only=True,  # (its variable check: a toolkit reference)
)

METADATA = frozenset({"version", "name", "pname", "majorVersion", "majorMinorVersion", "meta", "passthru", "src"})
# Inputs where the toolkit serves as the compiler (`depsBuildBuild` too): `cuda_nvcc` replaces it there.
COMPILER_INPUTS = catalog.NATIVE_INPUTS | {"depsBuildBuild"}
# Lists of a dev shell or an FHS environment: everything in them is on PATH and in the search paths.
SHELL_LISTS = frozenset({"packages", "targetPkgs", "multiPkgs", "paths"}) | catalog.NATIVE_INPUTS | catalog.HOST_INPUTS
_OLD_CUDA = re.compile(r'\b(?:cudaOlder|versionOlder\s+[\w.]*(?:cudaVersion|cudaMajorMinorVersion|version))\s+"(\d+)(?:\.(\d+))?')
_NEW_CUDA = re.compile(r'\b(?:cudaAtLeast|versionAtLeast\s+[\w.]*(?:cudaVersion|cudaMajorMinorVersion|version))\s+"(\d+)(?:\.(\d+))?')
# Variables that name one directory holding the whole CUDA installation.
_ROOT_VARIABLE = re.compile(r"^(?:CUDA_?(?:TOOLKIT_)?(?:PATH|HOME|ROOT|ROOT_DIR|DIR|INSTALL_DIR|INSTALL_PATH)|CUDAToolkit_ROOT|CUDA_TOOLKIT_ROOT_DIR|xla_gpu_cuda_data_dir)$", re.I)
_SEARCH_VARIABLE = re.compile(r"^(?:NIX_)?(?:LD_)?LIBRARY_PATH$|^NIX_LD_LIBRARY_PATH$")
# A name assigned just before an interpolation: `export CUDA_PATH=${...}`, `"-DCUDA_HOME=${...}"`.
_ASSIGNED = re.compile(r"(?:^|[\s\"'-])-?D?([A-Za-z_][A-Za-z0-9_]*)=[\"']?$")
# Evidence that the file compiles CUDA code with nvcc (so a replacement must keep `cuda_nvcc`).
_RUNS_NVCC = re.compile(
    r"(?<![\w-])nvcc\b|CMAKE_CUDA|enable_language\s*\(\s*CUDA|LANGUAGES[^\n]*\bCUDA\b|\.cu\b|\bCUDA_HOME\b|\bCUDA_PATH\b|"
    r"CUDAToolkit_ROOT|CUDA_TOOLKIT_ROOT_DIR|TORCH_CUDA_ARCH_LIST|cpp_extension|CUDAExtension|gencode"
)
_BUILD_SYSTEM = re.compile(r"\b(?:cmake|meson|bazel|scons|setuptools)\b")
# Packages built against one runfile toolkit release (`cudnn_cudatoolkit_11_2`): they move with it.
_TIED = re.compile(r"\b(?:cudnn|nccl|cutensor|libtorch|magma)\w*_cudatoolkit_\d+(?:_\d+)*\b")
_VERSIONED = re.compile(r"(?:cudatoolkit|cudaPackages)_(\d+)(?:_(\d+))?\b")
# The oldest CUDA release with redistributables (nixpkgs' cudaPackages_11_4).
FIRST_REDIST = (11, 4)


@dataclass
class Advice:
    message: str
    fixes: list[Fix | None] = field(default_factory=list)
    severity: Severity | None = None
    groupable: bool = True  # equal advice for neighbours on one line is one finding
    subject: str | None = None  # the variable named first in the message, when neighbours differ only by it

    @property
    def key(self) -> str:
        return self.message.replace(f"`{self.subject}`", "`*`", 1) if self.subject else self.message


@RULE
def check(node: Node, ctx: Context) -> None:
    if node.type == "variable_expression":
        _check_reference(node, ctx)
    elif node.type == "inherited_attrs":
        _check_inherit(node, ctx)
    else:
        _check_redefinition(node, ctx)


def _toolkit_root(variable: Node, ctx: Context) -> tuple[Node, CudaRef] | None:
    """The whole toolkit reference `variable` starts, when it is one to report."""
    root = ctx.semantic.reference_root(variable)
    ref = ctx.semantic.cuda_ref(root)
    if ref is None or not catalog.is_runfile_toolkit(ref.package) or ref.via in {"let", "inherit"}:
        return None
    if ref.set_name is None and _removed_on_target(ref.package, ctx):
        return None  # a versioned top-level toolkit the target deprecated or removed: CUDA006 reports it
    if ref.output == "cc" and ctx.target.era.id == "single-output":
        return None  # `cudatoolkit.cc`: nvcc's host compiler in the era of the one-output toolkit
    if ref.output in METADATA or _is_exempt(root, ctx) or runtime_use(root, ctx) is not None:
        return None  # runtime references (wrappers, RPATHs, installed files) are CUDA204's
    if ref.output == "cc" and ctx.reference.idiom("backendStdenv", ctx.target) is None:
        return None  # before `cudaPackages.backendStdenv` (2023-03) the toolkit's compiler is the way to nvcc's
    return root, ref


def _removed_on_target(name: str, ctx: Context) -> bool:
    change = ctx.reference.toplevel_change(name)
    return change is not None and change.in_effect_on(ctx.target)


def _check_reference(variable: Node, ctx: Context) -> None:
    found = _toolkit_root(variable, ctx)
    if found is None:
        return
    root, ref = found
    advice = _advice(root, ref, ctx)
    span = (root.start_byte, root.end_byte)
    if advice.groupable:
        group = _neighbours(root, advice, ctx)
        if group and group[0][0] != root:
            return  # reported with the first of its line
        if len(group) > 1:
            span = (group[0][0].start_byte, group[-1][0].end_byte)
            advice.fixes = [_cc_fix(ref, ctx, [r for r, _ in group])] if ref.output == "cc" and advice.fixes else []
            subjects = list(dict.fromkeys(a.subject for _, a in group if a.subject))
            if len(subjects) > 1:
                advice.message = _plural(advice.message, subjects)
    ctx.report(span, advice.message, fixes=advice.fixes, severity=advice.severity)


def _neighbours(root: Node, advice: Advice, ctx: Context) -> list[tuple[Node, Advice]]:
    """Toolkit references on `root`'s line in the same string or list (itself included) with
    the same `advice`: one construct, one finding. Found once per container (a generated list
    of thousands of references on one line asked it of every element: quadratic)."""
    container = root.parent
    if container is not None and container.type == "interpolation":
        container = container.parent
    elif container is None or container.type != "list_expression":
        return []
    if container is None:
        return []
    memo = ctx.semantic.memo(__name__)
    key = ("neighbours", container.start_byte, container.end_byte, container.kind_id)
    by_line = memo.get(key)
    if by_line is None:
        by_line = memo[key] = _references_by_line(container, ctx)
    return by_line.get((ctx.source.line_of(root.start_byte), advice.key), [])


def _references_by_line(container: Node, ctx: Context) -> dict[tuple[int, str], list[tuple[Node, Advice]]]:
    """The toolkit references a string's interpolations or a list's elements are, by line and
    advice."""
    data = ctx.source.data
    if container.type == "list_expression":
        candidates = _elements_naming_a_toolkit(container, data)
    else:
        candidates = [c.named_children[0] for c in container.children if c.type == "interpolation" and c.named_children]
    found: dict[tuple[int, str], list[tuple[Node, Advice]]] = {}
    for candidate in candidates:
        if data.find(b"cudatoolkit", candidate.start_byte, candidate.end_byte) < 0:
            continue  # (a direct toolkit reference spells its name)
        variable = next((n for n in descendants(candidate) if n.type == "variable_expression"), None)
        other = _toolkit_root(variable, ctx) if variable is not None else None
        if other is not None and other[0] == candidate:
            advice = _advice(candidate, other[1], ctx)
            found.setdefault((ctx.source.line_of(candidate.start_byte), advice.key), []).append((candidate, advice))
    return found


def _elements_naming_a_toolkit(container: Node, data: bytes) -> list[Node]:
    """The elements of a list whose text names a toolkit, without reading every element when
    few do (a generated list of millions of names ending in `cudatoolkit`)."""
    mentions = data.count(b"cudatoolkit", container.start_byte, container.end_byte)
    if mentions * 64 >= container.named_child_count:
        return edits.list_elements(container)
    found: dict[tuple[int, int], Node] = {}
    at = data.find(b"cudatoolkit", container.start_byte, container.end_byte)
    while at >= 0:
        cursor = container.walk()
        element = cursor.node if cursor.goto_first_child_for_byte(at) is not None else None
        if element is not None and cursor.field_name == "element" and element.start_byte <= at:
            found.setdefault((element.start_byte, element.end_byte), element)
        at = data.find(b"cudatoolkit", at + 1, container.end_byte)
    return list(found.values())


_VERBS = {"points": "point", "joins": "join", "is": "are", "puts": "put", "installs": "install", "gives": "give"}


def _plural(message: str, subjects: list[str]) -> str:
    """The message of the first subject, said of all of them (`a` and `b` point ...)."""
    first = f"`{subjects[0]}` "
    verb = message[len(first) :].split(" ", 1)[0]
    return " and ".join(f"`{s}`" for s in subjects) + " " + _VERBS.get(verb, verb) + message[len(first) + len(verb) :]


def _advice(root: Node, ref: CudaRef, ctx: Context) -> Advice:
    semantic = ctx.semantic
    described = text(root) if len(text(root)) <= 40 else ref.package
    blocked = _release_block(ref, ctx)
    if ref.output == "cc":
        if blocked:
            return Advice(f"`{described}` is the runfile toolkit's host compiler; {blocked}")
        return Advice(f"`{described}` is the runfile toolkit's host compiler: use `cudaPackages.backendStdenv.cc`", [_cc_fix(ref, ctx)])
    argument = _override_argument(root)
    if argument is not None:
        return Advice(
            f"`{argument}` takes the runfile toolkit; on nixpkgs whose package takes `cudaPackages`, override that instead",
            severity=Severity.INFO,
        )
    place = ctx.place(root)
    variable, trailing = _assigned_variable(root, ctx)
    if variable is not None and _ROOT_VARIABLE.match(variable) and not trailing:
        if place.is_package or place.is_override:
            return Advice(f"`{variable}` points at the whole runfile toolkit: use `cuda_nvcc` in `nativeBuildInputs` (its hook finds the rest) or a join of what the build uses", subject=variable)
        return Advice(
            f"`{variable}` points at the whole runfile toolkit: a `symlinkJoin` of the redistributables you use serves too (`cuda_nvcc` if only nvcc runs)",
            severity=Severity.INFO,
            subject=variable,
        )
    if (variable is not None and _SEARCH_VARIABLE.match(variable)) or semantic.search_path_call(root) is not None or _flag_before(root, ctx, "-L") or _feeds_search_path(root, ctx):
        return Advice(f"`{described}` puts every CUDA library on the search path: list the ones used (`cuda_cudart`, `libcublas`, ...)", subject=described)
    site = semantic.input_site(root)
    attr = site.attr if site is not None else None
    path = semantic.binding_path(root)
    if place.is_module and _is_profile(path):
        return Advice(f"`{described}` installs the whole runfile toolkit in a profile: put `cuda_nvcc` and the libraries you build against in a dev shell", subject=described)
    call = semantic.enclosing_call(root)
    if attr == "paths" and call is not None and call.name in catalog.JOIN_BUILDERS:
        return Advice(f"`{described}` joins the whole runfile toolkit: join only the redistributables its users need (`cuda_nvcc`, `cuda_cudart`, ...)", subject=described)
    if place.is_module and path[-2:] == ("nix-ld", "libraries"):
        return Advice(f"`{described}` gives nix-ld the whole toolkit: list the libraries programs load (`cuda_cudart`, `libcublas`, ...)", subject=described)
    if place.is_shell and site is None and root.parent is not None and root.parent.type == "list_expression" and path[-1:] and path[-1] in SHELL_LISTS:
        site = InputSite("packages", root.parent, root, root.parent)  # an FHS env's `targetPkgs = p: [ ... ]`
        attr = "packages"
    if blocked:
        return Advice(f"`{described}` is the runfile toolkit; {blocked}", groupable=False)
    if place.is_shell and attr in SHELL_LISTS:
        packages = [p for p in _shell_packages(site, ctx) if p not in _packages_listed(site, ctx)] or ["cuda_cudart"]
        fixes = _replacement_fixes(ref, site, ctx, packages)
        if attr in COMPILER_INPUTS and packages != ["cuda_nvcc"]:
            # nvcc stays in this list; the runtime headers and libraries go to the host inputs
            fixes = _replacement_fixes(ref, site, ctx, ["cuda_nvcc"], companions=[p for p in packages if p != "cuda_nvcc"])
        elif attr in catalog.HOST_INPUTS and "cuda_nvcc" in packages and packages != ["cuda_nvcc"]:
            # the compiler goes to the native inputs, where CUDA301 wants it
            fixes = _replacement_fixes(ref, site, ctx, [p for p in packages if p != "cuda_nvcc"], nvcc=True)
        return Advice(f"`{described}` is the whole runfile toolkit: list {_names(packages)} and the libraries you use", fixes, groupable=False)
    if attr in COMPILER_INPUTS:
        return Advice(f"`{described}` is the runfile toolkit: use `cuda_nvcc` here", _replacement_fixes(ref, site, ctx, ["cuda_nvcc"]), groupable=False)
    if attr in catalog.HOST_INPUTS and _patches_binaries(ctx):
        return Advice(f"`{described}` is the runfile toolkit: list the CUDA libraries the patched binaries load (`libcublas`, `cudnn`, ...)", groupable=False)
    if attr in catalog.HOST_INPUTS:
        nvcc = _nvcc_missing(site, ctx)
        also = ", with `cuda_nvcc` in `nativeBuildInputs`" if nvcc else ""
        return Advice(
            f"`{described}` is the runfile toolkit: use `cuda_cudart`, `cuda_cccl` and the CUDA libraries it links{also}",
            _replacement_fixes(ref, site, ctx, ["cuda_cudart", "cuda_cccl"], nvcc=nvcc),
            groupable=False,
        )
    return Advice(f"`{described}` is the runfile toolkit: use the redistributables it needs (`cuda_nvcc`, `cuda_cudart`, libraries)", subject=described)


def _is_profile(path: tuple[str, ...]) -> bool:
    """`environment.systemPackages`, `home.packages`, `users.users.<name>.packages`."""
    rooted = path[1:] if path[:1] == ("config",) else path
    return rooted[:2] in {("environment", "systemPackages"), ("home", "packages")} or (rooted[:2] == ("users", "users") and rooted[-1:] == ("packages",))


def _release(ref: CudaRef) -> tuple[int, int | None] | None:
    """The CUDA release a versioned toolkit names: `cudatoolkit_11` -> (11, None),
    `cudaPackages_11_8.cudatoolkit` -> (11, 8); None for the unversioned one."""
    for name in (ref.package, ref.set_name or ""):
        match = _VERSIONED.match(name)
        if match:
            return int(match.group(1)), int(match.group(2)) if match.group(2) else None
    return None


def _release_block(ref: CudaRef, ctx: Context) -> str | None:
    """Why no replacement keeps this toolkit's CUDA release, or None when one does."""
    # (the literal first: the pattern's word boundary before an alternation makes the regex
    # try every position, half a second on a 9 MB file)
    tied = _TIED.search(ctx.source.text) if "_cudatoolkit_" in ctx.source.text else None
    release = _release(ref)
    if release is None:
        return f"`{tied.group(0)}` is built against it: move both to the redistributables together (no fix)" if tied else None
    major, minor = release
    spelled = f"{major}.{minor}" if minor is not None else str(major)
    if (major, minor if minor is not None else 99) < FIRST_REDIST:
        return f"CUDA {spelled} has no redistributables: move to CUDA 11.4 or later first (no fix)"
    if _release_target(ref, ctx) is None:
        return f"the target nixpkgs has no CUDA {spelled} redistributables and a fix must not change the release"
    if tied:
        return f"`{tied.group(0)}` is built against it: move both to the redistributables together (no fix)"
    return None


def _release_target(ref: CudaRef, ctx: Context) -> Target | None:
    """The target narrowed to the versioned toolkit's release, when the target's nixpkgs has it."""
    release = _release(ref)
    if release is None:
        return ctx.target
    major, minor = release
    set_name = f"cudaPackages_{major}" + (f"_{minor}" if minor is not None else "")
    removed = ctx.reference.removed_set(set_name)
    if removed is not None and removed.throws_on(ctx.target):
        return None
    releases = [r for r in ctx.target.era.releases if r == f"{major}.{minor}" or (minor is None and r.split(".")[0] == str(major))]
    if not releases:
        return None
    return Target(ctx.target.nixpkgs, ctx.target.era, (releases[-1],), True)


def _override_argument(root: Node) -> str | None:
    """`pkg.override { cudatoolkit = <root>; }`, `callPackage f { cudatoolkit = <root>; }`,
    `generic { args = { cudatoolkit = <root>; }; }`: the argument's name, when `root` is the whole
    value of a toolkit-named argument of a call (not of a derivation or shell builder)."""
    binding = root.parent
    while binding is not None and binding.type == "parenthesized_expression":
        binding = binding.parent
    if binding is None or binding.type != "binding" or unparen(binding_value(binding)) != unparen(root):
        return None
    names = attrpath_names(binding.child_by_field_name("attrpath"))
    if len(names) != 1 or not catalog.is_runfile_toolkit(names[0]):
        return None
    attrset = binding.parent.parent if binding.parent is not None else None
    while attrset is not None and attrset.parent is not None and attrset.parent.type == "binding" and attrset.parent.parent is not None:
        attrset = attrset.parent.parent.parent  # `args = { ... }` nested in the call's argument
    holder = attrset.parent if attrset is not None else None
    while holder is not None and holder.type == "parenthesized_expression":
        attrset, holder = holder, holder.parent
    if holder is None or holder.type != "apply_expression" or holder.child_by_field_name("argument") != attrset:
        return None
    function, _ = flatten_apply(outermost_apply(holder))
    if last_name(function) in DERIVATION_BUILDERS | SHELL_BUILDERS | catalog.JOIN_BUILDERS:
        return None
    return names[0]


def _assigned_variable(root: Node, ctx: Context) -> tuple[str | None, bool]:
    """The variable the reference is the value of (`CUDA_PATH = cudatoolkit;`, `env.CUDA_HOME =
    "${cudatoolkit}";`, `export CUDA_PATH=${cudatoolkit}`, numtide devshell's `{ name = "CUDA_PATH";
    value = ...; }`), and whether a path follows it (`${cudatoolkit}/lib`)."""
    interpolation = root.parent
    if interpolation is not None and interpolation.type == "interpolation":
        string = interpolation.parent
        data = ctx.source.data
        after = data[interpolation.end_byte : interpolation.end_byte + 1]
        trailing = after == b"/" and data[interpolation.end_byte : interpolation.end_byte + 2] not in (b"/:", b'/"')
        line_start = max(ctx.source.line_start(ctx.source.line_of(interpolation.start_byte)), string.start_byte + 1)
        before = data[line_start : interpolation.start_byte].decode("utf-8", "replace")
        match = _ASSIGNED.search(before)
        if match:
            return match.group(1), trailing
        if before.strip(" '\"") or any(c.type == "interpolation" and c != interpolation for c in string.children):
            return None, trailing
        return _binding_name(string, ctx), trailing
    return _binding_name(root, ctx), False


def _binding_name(node: Node, ctx: Context) -> str | None:
    path = ctx.semantic.binding_path(node)
    if path[-1:] == ("value",):
        attrset = ctx.semantic.enclosing_binding(node).parent.parent
        named = next((b for b in bindings_of(attrset) if b.type == "binding" and attrpath_names(b.child_by_field_name("attrpath")) == ["name"]), None)
        return string_literal(binding_value(named)) if named is not None else None
    if path and unparen(binding_value(ctx.semantic.enclosing_binding(node))) in (node, unparen(node)):
        return path[-1]
    return None


def _feeds_search_path(root: Node, ctx: Context) -> bool:
    """`libs = [ cudatoolkit ... ];` in a `let` whose list goes to `lib.makeLibraryPath`."""
    binding = ctx.semantic.let_binding_holding(root)
    if binding is None:
        return False
    name = attrpath_names(binding.child_by_field_name("attrpath"))[0]
    return any(ctx.semantic.search_path_call(use) is not None for use in ctx.semantic.uses(name, binding))


def _flag_before(root: Node, ctx: Context, flag: str) -> bool:
    interpolation = root.parent
    if interpolation is None or interpolation.type != "interpolation":
        return False
    return ctx.source.data[max(0, interpolation.start_byte - len(flag)) : interpolation.start_byte] == flag.encode()


def _runs_nvcc(ctx: Context) -> bool:
    """The file compiles CUDA code, or builds with a build system that may (CMake's CUDA language
    finds nvcc on PATH, where the toolkit in `buildInputs` put it without `strictDeps`)."""
    return _RUNS_NVCC.search(ctx.source.text) is not None or _BUILD_SYSTEM.search(ctx.source.text) is not None


def _patches_binaries(ctx: Context) -> bool:
    """Prebuilt binaries whose libraries `autoPatchelfHook` resolves from the inputs: which of the
    toolkit's libraries they load is not in the file, so no replacement is safe."""
    return "autoPatchelf" in ctx.source.text


def _other_inputs(site: InputSite, ctx: Context) -> list[tuple[str, CudaRef]]:
    """CUDA references in the other input lists of the attrset holding `site`."""
    attrset = site.binding.parent.parent if site.binding is not None and site.binding.type == "binding" and site.binding.parent is not None else None
    if attrset is None:
        return []
    found = []
    for ref in ctx.semantic.cuda_refs():
        other = ctx.semantic.input_site(ref.node)
        if other is not None and other.binding != site.binding and other.binding.parent is not None and other.binding.parent.parent == attrset:
            found.append((other.attr, ref))
    return found


def _compiler_elsewhere(site: InputSite, ctx: Context) -> bool:
    """Another list of the same derivation or shell already provides nvcc (or a toolkit that
    this rule turns into `cuda_nvcc` there)."""
    return any(ref.package == "cuda_nvcc" or (catalog.is_runfile_toolkit(ref.package) and attr in COMPILER_INPUTS) for attr, ref in _other_inputs(site, ctx))


def _shell_packages(site: InputSite, ctx: Context) -> list[str]:
    """A shell puts every list on PATH and in the search paths: the replacement keeps nvcc unless
    another list has it, and the runtime unless another list keeps a toolkit for it."""
    packages = [] if _compiler_elsewhere(site, ctx) else ["cuda_nvcc"]
    others = _other_inputs(site, ctx)
    if site.attr not in COMPILER_INPUTS or not any(catalog.is_runfile_toolkit(r.package) and a not in COMPILER_INPUTS for a, r in others):
        packages += ["cuda_cudart", "cuda_cccl"]
    return packages or ["cuda_nvcc"]


def _nvcc_missing(site: InputSite, ctx: Context) -> bool:
    """The derivation may run nvcc, which the toolkit in its host inputs provided (on PATH
    without `strictDeps`), and nothing else does: the replacement adds `cuda_nvcc` to
    `nativeBuildInputs`. Any derivation that builds may (a Makefile names no compiler in Nix); an
    override only with evidence. Unneeded, it costs build closure only."""
    place = ctx.place(site.element)
    builds = place.is_package and place.builder is not None
    return (builds or _runs_nvcc(ctx)) and not _compiler_elsewhere(site, ctx)


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
    if _in_assert(root) or _only_asserted(root, ctx):
        return True
    guards = ctx.semantic.guards(root)
    if any(g.positive and _RUNFILE_SWITCH.search(g.text) for g in guards):
        return True  # `lib.optionals useCudatoolkitRunfile [ cudatoolkit ]`: the user asked for the runfile
    return any(_only_old_cuda(g.text, g.positive) for g in guards) or _file_asserts_old_cuda(ctx)


# An explicit opt-in to the runfile toolkit: `useCudatoolkitRunfile`, `withRunfileToolkit`.
_RUNFILE_SWITCH = re.compile(r"\b\w*[Rr]unfile\w*\b")


_ASSERTED_MAJOR = re.compile(r'==\s*"(\d+)(?:\.\d+)*"')


def _file_asserts_old_cuda(ctx: Context) -> bool:
    """`assert ... (let majorIs = lib.versions.major cudatoolkit.version; in majorIs == "9" ||
    majorIs == "10");`: the whole file is for CUDA releases older than the redistributables."""
    memo = ctx.semantic.memo(__name__)  # per file: whether an `assert` limits the toolkit to CUDA majors without redistributables
    found = memo.get("old cuda only")
    if found is None:
        found = False
        for node in ctx.semantic.nodes_of_type("assert_expression") if "cudatoolkit.version" in ctx.source.text else ():
            condition = node.child_by_field_name("condition")
            written = text(condition) if condition is not None else ""
            majors = [int(m) for m in _ASSERTED_MAJOR.findall(written)]
            if "cudatoolkit.version" in written and majors and max(majors) < FIRST_REDIST[0]:
                found = True
                break
        memo["old cuda only"] = found
    return found


def _in_assert(node: Node) -> bool:
    return any(a.type == "assert_expression" and (c := a.child_by_field_name("condition")) is not None and c.start_byte <= node.start_byte < c.end_byte for a in ancestors(node))


def _only_asserted(root: Node, ctx: Context) -> bool:
    """`matches = hasDependency cudatoolkit;` in a `let` whose every use is inside an `assert`:
    a metadata check, not a use of the toolkit."""
    call = root.parent
    while call is not None and call.type in {"apply_expression", "parenthesized_expression"}:
        binding = call.parent
        if binding is not None and binding.type == "binding" and binding_value(binding) == call:
            owner = binding.parent.parent if binding.parent is not None else None
            names = attrpath_names(binding.child_by_field_name("attrpath"))
            if owner is None or owner.type != "let_expression" or len(names) != 1 or names[0] is None:
                return False
            uses = ctx.semantic.uses(names[0], binding)
            return bool(uses) and all(_in_assert(use) for use in uses)
        call = binding
    return False


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
        if catalog.is_runfile_toolkit(name) and not _only_exempt_uses(name, statement, ctx):
            ctx.report(attr, f"`inherit (...) {name};` brings in the runfile toolkit: inherit the redistributables you use (`cuda_nvcc`, `cuda_cudart`, ...)")


def _only_exempt_uses(name: str, statement: Node, ctx: Context) -> bool:
    """Every use of the inherited toolkit is one the rule leaves alone (a branch for CUDA older
    than 11.4, an opt-in switch, metadata): the `inherit` serves only those."""
    uses = ctx.semantic.uses(name, statement)
    return bool(uses) and all(_is_exempt(ctx.semantic.reference_root(use), ctx) for use in uses)


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
    if value is not None and any((r := ctx.semantic.cuda_ref(ctx.semantic.reference_root(v))) is not None and catalog.is_runfile_toolkit(r.package) for v in _variables(value)):
        return  # the toolkit reference in the value is reported itself
    if value is not None and _names_redistributable(value):
        return  # `cudatoolkit = final.cuda_nvcc;`: the deprecated name now means a split package, the remedy
    if value is not None and _defines_from_file(value):
        return  # `cudatoolkit = final.callPackage ../cudatoolkit { };`: the package set defining its member
    old = next((m for m in _VERSIONED.finditer(text(value)) if (int(m.group(1)), int(m.group(2) or 99)) < FIRST_REDIST), None) if value is not None else None
    if old is not None:
        ctx.report(
            binding.child_by_field_name("attrpath"),
            f"`{names[-1]}` pins the runfile toolkit of CUDA {old.group(1)}{'.' + old.group(2) if old.group(2) else ''}, which has no redistributables: move to CUDA 11.4 or later to split it",
            severity=Severity.INFO,
        )
        return
    ctx.report(
        binding.child_by_field_name("attrpath"),
        f"`{names[-1]}` redefines the runfile toolkit: override the split redistributables (`cuda_nvcc`, `cuda_cudart`, ...) instead",
    )


def _defines_from_file(value: Node) -> bool:
    """`callPackage <path> { ... }`: the name is defined by a package file (the CUDA package set's
    own `cudatoolkit` wrapper), not redirected to another toolkit."""
    node = unparen(value)
    if node is None or node.type != "apply_expression":
        return False
    function, arguments = flatten_apply(node)
    first = unparen(arguments[0]) if arguments else None
    return last_name(function) == "callPackage" and first is not None and first.type == "path_expression"


def _names_redistributable(value: Node) -> bool:
    """The value names a split CUDA package (`final.cuda_nvcc`, `symlinkJoin { paths = [ cuda_cudart ]; }`)."""
    for node in descendants(value):
        if node.type == "identifier" and node.parent is not None and node.parent.type in {"attrpath", "variable_expression"}:
            name = text(node)
            if catalog.is_cuda_package(name) and not catalog.is_runfile_toolkit(name):
                return True
    return False


def _variables(node: Node):
    return (n for n in descendants(node) if n.type == "variable_expression")


def _cc_fix(ref: CudaRef, ctx: Context, nodes: list[Node] | None = None) -> Fix | None:
    """`cudatoolkit.cc` -> `cudaPackages.backendStdenv.cc`, at `nodes` (one line's uses) or at `ref`."""
    spelled = _spell(ref, "backendStdenv", ctx)
    if spelled is None:
        return None
    first, *others = [edits.replace(n, spelled[0] + ".cc") for n in (nodes or [ref.node])]
    return _with_formal_cleanup(ref, ctx, "Use `cudaPackages.backendStdenv.cc`", first, spelled[1], others, replaced=1 + len(others))


def _spell(ref: CudaRef, package: str, ctx: Context) -> tuple[str, list[Edit]] | None:
    """How to write `package` of the toolkit's own CUDA release where `ref` is (None when that
    cannot be written: a versioned toolkit taken as a formal)."""
    release = _release(ref)
    if release is None or ref.set_name is not None:
        return edits.package_reference(ctx.source, ctx.semantic, ref, package)
    set_name = _VERSIONED.sub(lambda m: "cudaPackages_" + m.group(1) + (f"_{m.group(2)}" if m.group(2) else ""), ref.package)
    node = unparen(ref.node)
    if node.type == "select_expression":
        return f"{text(node.child_by_field_name('expression'))}.{set_name}.{package}", []
    if ref.via == "toplevel":
        return f"{set_name}.{package}", []  # free or from `with pkgs;`, like the toolkit's own name
    return None


def _replacement_fixes(ref: CudaRef, site: InputSite | None, ctx: Context, base: list[str], nvcc: bool = False, companions: list[str] = ()) -> list[Fix | None]:
    """The minimal replacement `base` (plus `cuda_nvcc` in `nativeBuildInputs` when `nvcc`, plus
    `companions` in the host inputs of a list of tools), and for lists that link a second one
    with the libraries the file evidently uses; both write only packages of the toolkit's
    release that the target has."""
    target = _release_target(ref, ctx)
    if site is None or target is None or ref.output not in {None, "out", "lib", "dev", "bin"}:
        return []
    exists = [p for p in base if ctx.reference.exists(p, target)]
    companions = [p for p in companions if ctx.reference.exists(p, target) and p not in _held_by(site, ctx, catalog.HOST_COUNTERPART.get(site.attr, "buildInputs"))]
    if not exists or (nvcc and not ctx.reference.exists("cuda_nvcc", target)):
        return []
    if nvcc:
        native = companion_edits(ref, site, ctx, catalog.NATIVE_COUNTERPART.get(site.attr, "nativeBuildInputs"), ["cuda_nvcc"])
    else:
        native = companion_edits(ref, site, ctx, catalog.HOST_COUNTERPART.get(site.attr, "buildInputs"), companions) if companions else []
    if native is None:
        return []
    also = " (and `cuda_nvcc` in `nativeBuildInputs`)" if nvcc else (f" (and {_names(companions)} in `buildInputs`)" if companions else "")
    title = "Replace the runfile toolkit with " + _names(exists) + also
    # what the companion edits add is downloaded too
    added = ["cuda_nvcc"] if nvcc else companions
    fixes = [_replacement_fix(ref, site, ctx, exists, title, native, added)]
    if site.attr not in COMPILER_INPUTS:
        listed = _packages_listed(site, ctx)
        libraries = [p for p in _libraries_mentioned(ctx) if p not in exists and p not in listed and ctx.reference.exists(p, target)]
        if libraries:
            title = f"Replace the runfile toolkit with {_names(exists)} and the libraries this file uses ({_names(libraries)})"
            fixes.append(_replacement_fix(ref, site, ctx, exists + libraries, title, native, added))
    return fixes


def _held_by(site: InputSite, ctx: Context, attr: str) -> set[str]:
    """CUDA packages input `attr` of the attrset holding `site` already lists, however spelled."""
    attrset = site.binding.parent.parent if site.binding is not None and site.binding.parent is not None else None
    binding = edits.find_binding(attrset, attr) if attrset is not None else None
    value = binding_value(binding) if binding is not None else None
    if value is None:
        return set()
    refs = (ctx.semantic.cuda_ref(n) for n in descendants(value) if n.type in {"variable_expression", "select_expression"})
    return {r.package for r in refs if r is not None}


def companion_edits(ref: CudaRef, site: InputSite, ctx: Context, attr: str, packages: list[str]) -> list[Edit] | None:
    """Edits adding `packages` to input `attr` of the derivation or shell whose list held the
    toolkit, under the same `optionals` guard; None when that cannot be written."""
    attrset = site.binding.parent.parent if site.binding is not None and site.binding.parent is not None else None
    if attrset is None or site.list_node is None:
        return None
    destination = edits.input_destination(attrset, attr)
    spelled = [_spell_at(ref, package, ctx, destination) for package in packages]
    if any(s is None for s in spelled):
        return None
    return edits.add_input_item(ctx.source, site, attrset, attr, [s for s in spelled if s is not None])


def _spell_at(ref: CudaRef, package: str, ctx: Context, destination: Node) -> str | None:
    """`_spell` for another list than the toolkit's: a name that a `with pkgs;` (`with
    cudaPackages;`) around the toolkit's list provided is qualified with `pkgs.` (`cudaPackages.`)
    there; None when it cannot be written."""
    written = _spell(ref, package, ctx)
    if written is None:
        return None
    spelled, formal = written
    if not formal and spelled.endswith(f".{package}"):
        # `with cudaPackages; [ ... ]` at the destination: the bare name, as its neighbours
        found = ctx.semantic.resolve_name(package, destination)
        if found.kind == "with" and found.withs and " ".join(text(found.withs[0]).split()) == spelled[: -len(package) - 1]:
            return package
    root = spelled.split(".", 1)[0]
    here, there = ctx.semantic.resolve_name(root, ref.node), ctx.semantic.resolve_name(root, destination)
    if formal or there.lexical or (here.kind == there.kind and here.node == there.node and here.withs == there.withs):
        return spelled
    if here.kind == "with" and ref.set_name is not None and ctx.semantic.resolve_name(ref.set_name, destination).lexical:
        return f"{ref.set_name}.{spelled}"  # `with cudaPackages; [ ... ]` around the source list only
    if ctx.semantic.resolve_name("pkgs", destination).lexical:
        return f"pkgs.{spelled}"
    return None


def _packages_listed(site: InputSite, ctx: Context) -> set[str]:
    """CUDA packages the toolkit's input list already holds: a `cudnn` element names the library
    too, so the second fix must not add `cudaPackages.cudnn` next to it."""
    if site.list_node is None:
        return set()
    refs = (ctx.semantic.cuda_ref(element) for element in edits.list_elements(site.list_node))
    return {ref.package for ref in refs if ref is not None}


def _names(packages: list[str]) -> str:
    return ", ".join(f"`{p}`" for p in packages)


def _libraries_mentioned(ctx: Context) -> list[str]:
    """Packages of the CUDA libraries the file names in flags, strings or comments (`-lcublas`,
    `CUDA::cufft`, `nvToolsExt`, `cudnn.h`), in the reference set's library table."""
    memo = ctx.semantic.memo(__name__)  # each toolkit in host inputs asks; the answer is a scan of the whole text
    if "libraries mentioned" not in memo:
        memo["libraries mentioned"] = _scan_libraries(ctx.source.text, ctx.reference.libraries)
    return memo["libraries mentioned"]


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


def _replacement_fix(ref: CudaRef, site: InputSite, ctx: Context, packages: list[str], title: str, native: list[Edit], added: list[str] = ()) -> Fix | None:
    spelled: list[str] = []
    extra: list[Edit] = []
    for package in packages:
        written = _spell(ref, package, ctx)
        if written is None:
            return None
        spelled.append(written[0])
        extra += [e for e in written[1] if e not in extra]
    if site.element != ref.node and unparen(site.element) != unparen(ref.node):
        return None
    if site.list_node is None:
        replacement = edits.replace(ref.node, "[ " + " ".join(spelled) + " ]")
    else:
        present = {text(e) for e in edits.list_elements(site.list_node)}
        missing = [s for s in spelled if s not in present]
        if not missing:
            replacement = edits.delete_element(ctx.source, site.element)
        elif edits.is_multiline(ctx.source, site.list_node, edits.list_elements(site.list_node)) and len(missing) > 1:
            indent = ctx.source.indentation_of_line(ctx.source.line_of(ref.node.start_byte))
            replacement = edits.replace(ref.node, (ctx.source.newline + indent).join(missing))
        else:
            replacement = edits.replace(ref.node, " ".join(missing))
    fix = _with_formal_cleanup(ref, ctx, title, replacement, extra, native)
    return sizes.with_download(fix, sizes.toolkit_download(ctx.reference, ctx.target, [*packages, *added]))


def _with_formal_cleanup(ref: CudaRef, ctx: Context, title: str, replacement: Edit, formal_additions: list[Edit], more: list[Edit] = (), replaced: int = 1) -> Fix:
    """Rewrites of a `cudatoolkit` formal's uses also drop the formal with its last use (renaming
    it to `cudaPackages` when that formal is being added). `more`: the fix's other edits;
    `replaced`: how many uses of the formal the fix rewrites."""
    changes = [replacement, *formal_additions, *more]
    isolation = None
    if ref.via == "formal" and ref.name_node.parent is not None:
        binding = ctx.semantic.resolve(ref.name_node.parent)
        if binding.node is not None and binding.node.type == "formal":
            isolation = f"CUDA001:formal:{binding.node.start_byte}"  # one pass per formal, not per name
            if len(ctx.semantic.uses(ref.package, binding.node)) == replaced:
                if formal_additions:
                    # the toolkit's formal becomes the first one added (`cudaPackages`, or
                    # `cuda_cudart` in a package set's scope); the others are still added
                    first = formal_additions[0].content.strip(" ,\n\r\t")
                    changes = [replacement, edits.rename_formal(binding.node, first), *formal_additions[1:], *more]
                else:
                    changes.append(edits.remove_formal(ctx.source, binding.node))
    return Fix(title, Applicability.UNSAFE, tuple(edits.merge_edits(changes)), isolation)
