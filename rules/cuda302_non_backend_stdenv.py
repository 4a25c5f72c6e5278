"""CUDA device code compiled with the plain `stdenv` where nothing picks a host compiler nvcc supports.

Flags `stdenv.mkDerivation`, `pkgs.stdenv.mkDerivation` and `buildPythonPackage` /
`buildPythonApplication` calls that compile CUDA device code in this derivation (nvcc reachable
at build time and a sign that it compiles: CMake's CUDA language or `CMAKE_CUDA_*`, nvcc named in
a phase, `.cu` sources, architecture flags, `-DUSE_CUDA`-style switches, a CMake option that
picks CUDA as the backend (`GPU_API=cuda`), `cudaPackages.flags`, a `buildPythonPackage` with torch: a torch extension) with an nvcc that does not pin its host
compiler on the target nixpkgs: the runfile toolkit (`cudatoolkit`), a `symlinkJoin` / `buildEnv`
of CUDA packages that includes `cuda_nvcc` (it drops the setup hooks), or, before December 2023,
the redistributable `cuda_nvcc` itself. Also, in a CUDA build: `overrideCC stdenv gccNN` (an older
GCC picked by hand to please nvcc, also bound in a `let` or one branch of an `if`), a
`buildBazelPackage` configured for CUDA (`TF_NEED_CUDA`, `--config=cuda`) without
`.override { stdenv = ...; }`, and, on targets from 25.11, the deprecated `stdenv` attribute of
`buildPythonPackage` (write `(buildPythonPackage.override { stdenv = ...; })`).

Not flagged: a redistributable `cuda_nvcc` among the inputs on a target with its setup hook, even
next to the toolkit (the hook sets the host compiler for every nvcc the build runs); a package
that only links CUDA libraries (an NVML monitor, a profiler's headers);
repackaged binaries (`dontBuild = true`, wheels); a `mkDerivation` that is only a nix-shell
environment (no `src`, no phases: the dev-shell context, like `mkShell`) and nvcc inside a
`buildFHSEnv`; a host compiler chosen explicitly (`-ccbin`, `CUDAHOSTCXX`, Bazel's
`GCC_HOST_COMPILER_PATH`,
`CMAKE_CUDA_HOST_COMPILER`, `CC`/`CXX`/`PATH` from `${cudatoolkit.cc}`, `${backendStdenv.cc}`,
`${gcc12Stdenv.cc}`); `overrideCC` before `backendStdenv` existed (early 2023) and with a
compiler that is not GCC (clang); `backendStdenv.mkDerivation`, `effectiveStdenv`/`stdenv'` bound to an
expression that uses `backendStdenv`, other stdenvs picked on purpose (`gcc12Stdenv`); a `stdenv`
formal the file shows is injected (its default names another stdenv, or the file calls the
function with `stdenv = cudaPackages.backendStdenv`, also through a let-bound name). A bare
`stdenv` formal filled by `callPackage` is the plain stdenv (suppress the finding where another
file passes more).

Contexts: packages get the warning; dev shells (and nix-shell environments) are never flagged;
overrides and modules are judged like the derivation they hold.

## Why
nvcc supports a limited range of host compilers and refuses (or miscompiles with) a GCC newer
than its release knows; nixpkgs' `stdenv` follows the newest GCC. What picks nvcc's compiler in
nixpkgs changed over time, so the rule is dated by the target nixpkgs:

- before December 2023: nothing but `cudaPackages.backendStdenv` (issue #370879; the
  `effectiveStdenv` pattern of PR #369956 for optional CUDA). (For a while in 2023 the runfile
  toolkit had its own `-ccbin` hook, PR #218265; it is flagged all the same.)
- from December 2023: the redistributable `cuda_nvcc` carries a setup hook that points nvcc at
  backendStdenv's compiler (`setupCudaHook`, PR #233581; propagated from `cuda_nvcc` by PR
  #271078). Plain stdenv with `cuda_nvcc` in `nativeBuildInputs` is fine from then on, in the
  multi-output and split-redist eras alike. cudalint dates the hook at 2023-12-01, so the target
  `23.11` counts as older; set a date target (`nixpkgs = "2023-12-15"`) if yours has it.
  A join of redistributables (and `cudatoolkit`, a join since 2024) loses that hook.
- from 2025-11-26 (unstable) and in 25.11 (backport PR #465957): `cuda_nvcc` pins the host
  compiler itself, with a wrapper and `compiler-bindir` in `nvcc.profile` (PR #465329), also
  outside `mkDerivation` and through joins. That does not end the advice (revised 2026-11-25):
  the rest of the package is still built by the plain stdenv's newer compiler, and reviewers kept
  asking for `backendStdenv` in CUDA builds (a compression library built with the toolkit, PR
  #482987 for issue #475536, 2026-01; an LLM runner, PR #375388). Joins and the toolkit are
  flagged on these targets too.

`overrideCC stdenv gcc12` gives nvcc a compiler it supports, but one chosen by hand: it goes stale
with the next CUDA release and links the older GCC's libstdc++, which backendStdenv avoids (it
takes the newest one, PR #223664, #275947). Before backendStdenv existed (early 2023) it was the
way, and nothing is said there. `buildBazelPackage` and `buildPythonPackage` take another stdenv
through `.override`; passing `stdenv` among `buildPythonPackage`'s attributes warns from 25.11
on (PR #476401).

The fix builds with `cudaPackages.backendStdenv.mkDerivation` (adding a `cudaPackages` formal when
nothing binds it). When CUDA is optional the switch follows the file's own CUDA switch, whatever
its name (`cudaSupport`, `enableCuda`, `withCuda`, `cudaSupport'`, `useCuda`, ...):
`effectiveStdenv = if <switch> then cudaPackages.backendStdenv else stdenv;`, so builds without
CUDA keep their compiler (a switch of another shape, `gpuBackend == "cuda"`, is taken from the
guard the file puts its nvcc under); only a file without a switch (CUDA always on) switches unconditionally.
In a file of the CUDA package set (`cuda_nvcc` is a formal) it adds a `backendStdenv` formal
instead. `overrideCC stdenv gccNN` is replaced by `cudaPackages.backendStdenv` where it stands. It
is unsafe: the compiler of the whole package changes. Python and Bazel builders get no automatic
fix; write `(buildPythonPackage.override { stdenv = cudaPackages.backendStdenv; })`, or take nvcc
from the redistributable `cuda_nvcc` on a target with its setup hook. On targets before
backendStdenv (22.11 and older) no fix is offered: the name does not exist there, and the
message points nvcc at the toolkit's own compiler (`-ccbin ${cudatoolkit.cc}/bin`) instead.

## Example
```nix
# fixture-target: nixpkgs=24.05
{ stdenv, cudatoolkit }:
stdenv.mkDerivation {
  pname = "saxpy";
  version = "1.0";
  src = ./.;
  nativeBuildInputs = [ cudatoolkit ];
  buildPhase = "nvcc -o saxpy saxpy.cu";
}
```

## Use instead
```nix
{ lib, stdenv, config, cudaPackages, cudaSupport ? config.cudaSupport }:
let
  effectiveStdenv = if cudaSupport then cudaPackages.backendStdenv else stdenv;
in
effectiveStdenv.mkDerivation {
  pname = "saxpy";
  version = "1.0";
  nativeBuildInputs = lib.optionals cudaSupport [ cudaPackages.cuda_nvcc ];
  buildInputs = lib.optionals cudaSupport [ cudaPackages.cuda_cudart ];
}
```

## References
- https://github.com/NixOS/nixpkgs/pull/465329
- https://github.com/NixOS/nixpkgs/pull/465957
- https://github.com/NixOS/nixpkgs/pull/482987
- https://github.com/NixOS/nixpkgs/issues/475536
- https://github.com/NixOS/nixpkgs/pull/223664
- https://github.com/NixOS/nixpkgs/pull/476401
- https://github.com/NixOS/nixpkgs/issues/370879
- https://github.com/NixOS/nixpkgs/pull/369956
- https://github.com/NixOS/nixpkgs/pull/233581
- https://github.com/NixOS/nixpkgs/pull/271078
- https://github.com/NixOS/nixpkgs/pull/218265
- https://nixos.org/manual/nixpkgs/unstable/#cuda
"""

from __future__ import annotations

import re

from tree_sitter import Node

from cudalint.knowledge.reference import Target
from cudalint.lint import edits
from cudalint.lint.context import Context
from cudalint.lint.model import Applicability, Edit, Fix, FixAvailability, Severity
from cudalint.lint.rule import Rule
from cudalint.nix.syntax import (
    ATTRSET_TYPES,
    attrpath_names,
    binding_value,
    bindings_of,
    descendants,
    flatten_apply,
    last_name,
    outermost_apply,
    text,
    unparen,
)
from cudalint.rules._cuda_compilation import (
    PYTHON_BUILDERS,
    builder_label,
    compiles_device_code,
    contains,
    derivation_attrset,
    derivation_call,
    is_python_builder,
    nvcc_sources,
    reachable,
    spells,
)

RULE = Rule(
    code="CUDA302",
    name="non-backend-stdenv",
    severity=Severity.WARNING,
    fix=Applicability.UNSAFE,
    availability=FixAvailability.SOMETIMES,
    summary="CUDA device code compiled with the plain `stdenv` (or `overrideCC stdenv gccNN`) instead of `cudaPackages.backendStdenv`",
    node_types=("apply_expression",),
    patterns=(b"cudatoolkit", b"cuda_nvcc", b"cudaPackages", b"buildBazelPackage"),
)

# The date from which `cuda_nvcc`'s setup hook points nvcc at backendStdenv's compiler.
HOOK_DATE = "2023-12-01"
# The date from which `cuda_nvcc` pins the host compiler itself (wrapper + `nvcc.profile`,
# PR #465329), so joins and today's `cudatoolkit` (a join of redistributables) have it too;
# backported to release-25.11 (PR #465957) after its branch-off.
PINNED_DATE = "2025-11-26"
PINNED_RELEASES = frozenset({"25.11"})
# `buildPythonPackage { stdenv = ...; }` warns from 25.11 on (PR #476401: it stops evaluating
# cleanly once 25.11 is the oldest supported release); `.override { stdenv = ...; }` replaces it.
PYTHON_STDENV_DEPRECATED = "2025-11-01"
# (`GCC_HOST_COMPILER_PATH`: how TensorFlow/XLA Bazel builds are told nvcc's host compiler)
_HOST_COMPILER = re.compile(r"-ccbin|--compiler-bindir|CUDAHOSTCXX|CUDA_HOST_COMPILER|NVCC_CCBIN|NVCC_PREPEND_FLAGS|GCC_HOST_COMPILER")
# Compilers chosen on purpose: `${cudatoolkit.cc}`, `${backendStdenv.cc}`, `${gcc12Stdenv.cc}`, `${gcc12}`.
_CHOSEN_COMPILER_OWNER = re.compile(r"^(?:backendStdenv|gcc\d+Stdenv|clang\d+Stdenv|gcc\d+|cudatoolkit(?:_\d+(?:_\d+)?)?)$")
# A GCC handed to `overrideCC` (`gcc11`, `buildPackages.gcc12`, `gcc12.cc`): nvcc's compiler picked by hand.
_GCC = re.compile(r"^gcc\d*$")
# A Bazel build that compiles CUDA (TensorFlow-style configuration).
_BAZEL_CUDA = re.compile(r"TF_NEED_CUDA|--config=cuda\b|@local_config_cuda|TF_CUDA_|CUDA_TOOLKIT_PATH")
_MAX_DEPTH = 4


@RULE
def check(apply: Node, ctx: Context) -> None:
    if _check_bazel(apply, ctx):
        return
    call = derivation_call(apply, ctx)
    if call is None:
        return
    function, attrset = call
    if ctx.place(attrset).is_shell:
        return  # a nix-shell environment (no source, no phases) compiles nothing itself
    sources = nvcc_sources(attrset, ctx)
    cuda_build = bool(sources) and compiles_device_code(attrset, function, ctx)
    if is_python_builder(function) and _python_stdenv_argument(function, attrset, cuda_build, ctx):
        return
    if not cuda_build or _picks_host_compiler(attrset, ctx):
        return
    chosen = _stdenv_expression(function)
    override = _override_cc(chosen, ctx, 0) if chosen is not None else None
    if override is not None:
        _report_override_cc(override, sources, ctx)  # whatever nvcc: the GCC is picked by hand
        return
    kinds = {k for k, _ in sources}
    if "redist" in kinds and ctx.target.includes(HOOK_DATE):
        return  # the hook exports nvcc's host compiler for the whole build, toolkit's nvcc too
    pinned = _pins_its_compiler(ctx.target)
    builder = _builder(function, ctx)
    if builder is None:
        return
    kind, stdenv_span = builder
    if pinned:
        # nvcc pins its own compiler since PR #465329; the rest of the package is built by another
        reason = "the plain stdenv, whose C++ compiler is not the one nvcc uses"
    elif "runfile" in kinds:
        node = next(n for k, n in sources if k == "runfile")
        reason = f"nvcc from `{_short(node)}`, which does not pin a supported host compiler"  # the runfile toolkit
    elif "join" in kinds:
        node = next(n for k, n in sources if k == "join")
        reason = f"nvcc from the join `{_short(node)}`, which drops `cuda_nvcc`'s setup hook"
    else:
        reason = "`cuda_nvcc`, whose setup hook picks a supported host compiler only from December 2023"
    called = builder_label(function)  # the call's own text can be long
    fixes: list[Fix | None] = []
    if not _has_backend_stdenv(ctx):
        advice = "point nvcc at the toolkit's compiler (`-ccbin ${cudatoolkit.cc}/bin`)"  # no backendStdenv yet
    elif kind == "python" and ctx.target.includes(PYTHON_STDENV_DEPRECATED):
        advice = "write `(buildPythonPackage.override { stdenv = cudaPackages.backendStdenv; })`"
    elif kind == "python":
        advice = "override its stdenv with `cudaPackages.backendStdenv`"
    else:
        advice = "build with `cudaPackages.backendStdenv`"
        assert stdenv_span is not None
        fixes = [_fix(apply, stdenv_span, sources, ctx)]
    ctx.report(function, f"`{called}` compiles CUDA with {reason}: {advice}", fixes=fixes)


def _pins_its_compiler(target: Target) -> bool:
    """From PR #465329 every nvcc of the package set is `cuda_nvcc`'s, which pins its compiler."""
    return (target.nixpkgs or "").strip() in PINNED_RELEASES or target.includes(PINNED_DATE)


def _short(node: Node) -> str:
    written = " ".join(text(node).split())
    return written if len(written) <= 30 else written[:27] + "..."


# ----- overrideCC, Bazel, and the stdenv argument of Python builders ------------------------------


def _stdenv_expression(function: Node) -> Node | None:
    """The stdenv the call builds with, as written: `X` of `X.mkDerivation`, or the `stdenv`
    given to `(buildPythonPackage.override { stdenv = X; })`."""
    function = unparen(function)
    if function is None:
        return None
    if function.type == "select_expression" and last_name(function) == "mkDerivation":
        names = attrpath_names(function.child_by_field_name("attrpath"))
        return function.child_by_field_name("expression") if len(names) == 1 else None
    if function.type == "apply_expression":
        _, arguments = flatten_apply(function)
        attrset = unparen(arguments[-1]) if arguments else None
        given = edits.find_binding(attrset, "stdenv") if attrset is not None and attrset.type in ATTRSET_TYPES else None
        return binding_value(given) if given is not None else None
    return None


def _override_cc(node: Node | None, ctx: Context, depth: int) -> Node | None:
    """The `overrideCC stdenv gccNN` call the stdenv expression is (or may be, through a `let`
    or a branch of an `if`): nvcc's compiler chosen by hand."""
    node = unparen(node)
    if node is None or depth > _MAX_DEPTH:
        return None
    if node.type == "if_expression":
        for branch in ("consequence", "alternative"):
            found = _override_cc(node.child_by_field_name(branch), ctx, depth + 1)
            if found is not None:
                return found
        return None
    if node.type == "variable_expression":
        binding = ctx.semantic.resolve(node)
        return _override_cc(binding.value, ctx, depth + 1) if binding.kind in {"let", "rec"} else None
    if node.type != "apply_expression":
        return None
    callee, arguments = flatten_apply(node)
    if last_name(callee) != "overrideCC" or len(arguments) != 2:
        return None
    compiler = unparen(arguments[1])
    if compiler is not None and compiler.type == "select_expression" and last_name(compiler) == "cc":
        compiler = compiler.child_by_field_name("expression")  # `gcc12.cc`
        names = attrpath_names(unparen(arguments[1]).child_by_field_name("attrpath"))
        owner = names[-2] if len(names) >= 2 else last_name(compiler)
    else:
        owner = last_name(compiler)
    return node if owner is not None and _GCC.match(owner) else None


def _has_backend_stdenv(ctx: Context) -> bool:
    """`cudaPackages.backendStdenv` exists from 2023-03 (the reference set's vocabulary); before,
    nvcc's compiler was the toolkit's own `cudatoolkit.cc`, and no fix writes the name."""
    return ctx.reference.idiom("backendStdenv", ctx.target) is not None


def _report_override_cc(override: Node, sources: tuple[tuple[str, Node], ...], ctx: Context) -> None:
    written = _short(override)
    if not _has_backend_stdenv(ctx):
        return  # before backendStdenv, a GCC nvcc supports was picked exactly like this
    fix = None
    spelled = _backend_spelling(override, (override.start_byte, override.start_byte), list(sources), ctx)
    if spelled is not None:
        backend, formal_edits = spelled
        fix = Fix(f"Use `{backend}`", Applicability.UNSAFE, tuple(edits.merge_edits([edits.replace(override, backend), *formal_edits])))
    message = f"`{written}` picks nvcc's compiler by hand: use `cudaPackages.backendStdenv`, which follows the CUDA release"
    ctx.report(override, message, fixes=[fix])


def _python_stdenv_argument(function: Node, attrset: Node, cuda_build: bool, ctx: Context) -> bool:
    """`buildPythonPackage { stdenv = X; ... }` with X not the plain stdenv: the choice is made
    (True); in a CUDA build on a target where the argument is deprecated, say so."""
    given = edits.find_binding(attrset, "stdenv")
    value = binding_value(given) if given is not None else None
    if given is None or value is None or _is_plain(value, ctx, 0):
        return False
    if (cuda_build or "backendStdenv" in text(value)) and ctx.target.includes(PYTHON_STDENV_DEPRECATED):
        written = _short(value)
        message = f"`stdenv` given to `{builder_label(function)}` is deprecated: write `(buildPythonPackage.override {{ stdenv = {written}; }})`"
        ctx.report(given, message)
    return True


def _check_bazel(apply: Node, ctx: Context) -> bool:
    """`buildBazelPackage { ... }` (not `.override { stdenv = ...; }`) configured for CUDA builds
    with the plain stdenv. True when the call is a Bazel build (judged here)."""
    if outermost_apply(apply) != apply:
        return False
    function, arguments = flatten_apply(apply)
    if not arguments or unparen(function) is None or unparen(function).type == "apply_expression" or last_name(function) != "buildBazelPackage":
        return False
    attrset = derivation_attrset(arguments[-1])
    if attrset is None or ctx.place(attrset).is_shell:
        return True
    if not any(spells(node, _BAZEL_CUDA) for node in reachable(attrset, ctx)) or _picks_host_compiler(attrset, ctx):
        return True
    if not _has_backend_stdenv(ctx):
        ctx.report(function, "`buildBazelPackage` compiles CUDA with the plain stdenv: point nvcc at the toolkit's compiler (`-ccbin ${cudatoolkit.cc}/bin`)")
        return True
    ctx.report(function, "`buildBazelPackage` compiles CUDA with the plain stdenv: write `(buildBazelPackage.override { stdenv = cudaPackages.backendStdenv; })`")
    return True


# ----- which builder, with which stdenv --------------------------------------------------------


def _builder(function: Node, ctx: Context) -> tuple[str, tuple[int, int] | None] | None:
    """("stdenv", span of the stdenv part of `X.mkDerivation`) or ("python", None) when the call
    builds with the plain stdenv; None otherwise."""
    function = unparen(function)
    if function is None:
        return None
    if function.type == "apply_expression":
        return _python_override(function, ctx)
    name = last_name(function)
    if name in PYTHON_BUILDERS:
        return ("python", None)
    if name != "mkDerivation" or function.type != "select_expression":
        return None
    base = function.child_by_field_name("expression")
    attrpath = function.child_by_field_name("attrpath")
    names = attrpath_names(attrpath)
    attrs = attrpath.children_by_field_name("attr")
    dot = attrs[-1].prev_sibling if len(attrs) > 1 else attrpath.prev_sibling
    if dot is None or dot.type != ".":
        return None
    span = (function.start_byte, dot.start_byte)
    if len(names) >= 2:
        return ("stdenv", span) if names[-2] == "stdenv" else None
    return ("stdenv", span) if _is_plain(base, ctx, 0) else None


def _python_override(call: Node, ctx: Context) -> tuple[str, None] | None:
    """`(buildPythonPackage.override { stdenv = ...; })`: plain unless the stdenv given is not."""
    function, arguments = flatten_apply(call)
    function = unparen(function)
    if function is None or function.type != "select_expression" or last_name(function) != "override":
        return None
    names = attrpath_names(function.child_by_field_name("attrpath"))
    owner = names[-2] if len(names) >= 2 else last_name(function.child_by_field_name("expression"))
    if owner not in PYTHON_BUILDERS or not arguments:
        return None
    attrset = unparen(arguments[-1])
    if attrset is None or attrset.type not in ATTRSET_TYPES:
        return None
    given = edits.find_binding(attrset, "stdenv")
    if given is not None and not _is_plain(binding_value(given), ctx, 0):
        return None
    return ("python", None)


def _is_plain(node: Node | None, ctx: Context, depth: int) -> bool:
    """Whether an expression denotes nixpkgs' default `stdenv` (not backendStdenv, not another
    compiler's stdenv, not an `effectiveStdenv` that can be backendStdenv)."""
    node = unparen(node)
    if node is None or depth > _MAX_DEPTH:
        return False
    if node.type == "if_expression":
        return _is_plain(node.child_by_field_name("consequence"), ctx, depth + 1) and _is_plain(node.child_by_field_name("alternative"), ctx, depth + 1)
    if node.type == "select_expression":
        return node.child_by_field_name("default") is None and last_name(node) == "stdenv"
    if node.type != "variable_expression":
        return False
    name = text(node)
    binding = ctx.semantic.resolve(node)
    if binding.kind in {"let", "rec"}:
        return _is_plain(binding.value, ctx, depth + 1)
    if name != "stdenv":
        return False  # `backendStdenv`, `gcc12Stdenv`, a formal named `stdenv'`: a choice was made
    if binding.kind == "formal" and binding.node is not None and binding.node.type == "formal":
        default = binding.node.child_by_field_name("default")
        if default is not None:
            return _is_plain(default, ctx, depth + 1)
        return not _injected(binding.node, ctx)
    return True  # `inherit (pkgs) stdenv;`, `with pkgs;`, free


def _injected(formal: Node, ctx: Context) -> bool:
    """Whether this file calls the function declaring `formal` with another `stdenv`:
    `callPackage f { stdenv = cudaPackages.backendStdenv; }`, also through a let-bound `f`."""
    formals = formal.parent
    function = formals.parent if formals is not None else None
    if function is None or function.type != "function_expression":
        return False
    for given, parts in _calls_giving_stdenv(ctx):
        if _is_plain(binding_value(given), ctx, 0):
            continue
        for part in parts:
            if contains(part, function):
                return True
            for variable in descendants(part):
                if variable.type != "variable_expression":
                    continue
                bound = ctx.semantic.resolve(variable)
                if bound.kind in {"let", "rec"} and contains(bound.value, function):
                    return True
    return False


def _calls_giving_stdenv(ctx: Context) -> list[tuple[Node, list[Node]]]:
    """The file's calls with a `stdenv = ...` argument: (that binding, [callee, *arguments]).
    Found in one walk per file; asking per formal walked the file once for each (quadratic)."""
    cache = ctx.semantic.memo(__name__)
    if "calls" not in cache:
        calls = []
        for call in ctx.semantic.nodes_of_type("apply_expression"):
            if outermost_apply(call) != call:
                continue
            callee, arguments = flatten_apply(call)
            given = None
            for argument in arguments:
                argument = unparen(argument)
                if argument is not None and argument.type in ATTRSET_TYPES:
                    given = edits.find_binding(argument, "stdenv") or given
            if given is not None:
                calls.append((given, [callee, *arguments]))
        cache["calls"] = calls
    return cache["calls"]


def _picks_host_compiler(attrset: Node, ctx: Context) -> bool:
    """The derivation sets nvcc's host compiler itself (`-ccbin`, `CUDAHOSTCXX`, ...), or points
    the build at `backendStdenv`'s compiler (`export CXX=${backendStdenv.cc}/bin/c++`,
    `-DCMAKE_CXX_COMPILER=${cudaPackages.backendStdenv.cc}/bin/c++`), which nvcc then uses."""
    for node in descendants(attrset):
        if node.type == "string_fragment" and _HOST_COMPILER.search(text(node)):
            return True
        if node.type == "select_expression" and _is_backend_compiler(node, ctx):
            return True
        if node.type == "variable_expression" and re.fullmatch(r"gcc\d+", text(node)) and _in_string(node):
            return True  # `export CC=${gcc12}/bin/gcc`
        if node.type == "binding":
            names = attrpath_names(node.child_by_field_name("attrpath"))
            if names and names[-1] is not None and _HOST_COMPILER.search(names[-1]):
                return True
    return False


def _is_backend_compiler(select: Node, ctx: Context) -> bool:
    """`.cc` of a compiler chosen on purpose: `backendStdenv.cc`, `cudaPackages.backendStdenv.cc`,
    `cudatoolkit.cc` (the toolkit's supported GCC), `gcc12Stdenv.cc`, or of a variable bound to
    backendStdenv."""
    names = attrpath_names(select.child_by_field_name("attrpath"))
    if not names or names[-1] != "cc":
        return False
    base = unparen(select.child_by_field_name("expression"))
    if base is None:
        return False
    owner = names[-2] if len(names) >= 2 else last_name(base)
    if owner is not None and _CHOSEN_COMPILER_OWNER.match(owner):
        return True
    return len(names) == 1 and base.type == "variable_expression" and _backend_bound(base, ctx)


def _in_string(node: Node) -> bool:
    parent = node.parent
    return parent is not None and parent.type == "interpolation"


def _backend_bound(variable: Node, ctx: Context) -> bool:
    binding = ctx.semantic.resolve(variable)
    return binding.kind in {"let", "rec"} and binding.value is not None and last_name(binding.value) == "backendStdenv"


# ----- the fix -----------------------------------------------------------------------------------


def _fix(call: Node, stdenv_span: tuple[int, int], sources: list[tuple[str, Node]], ctx: Context) -> Fix | None:
    semantic, source = ctx.semantic, ctx.source
    spelled = _backend_spelling(call, stdenv_span, sources, ctx)
    if spelled is None:
        return None
    backend, formal_edits = spelled
    stdenv_text = source.slice(*stdenv_span)
    switch = _cuda_switch(call, ctx) or _guard_of_nvcc(sources, ctx)
    if switch is None or semantic.resolve_name("effectiveStdenv", call).kind != "free":
        changes = [Edit(stdenv_span[0], stdenv_span[1], backend), *formal_edits]
        return Fix(f"Build with `{backend}`", Applicability.UNSAFE, tuple(edits.merge_edits(changes)))
    definition = f"effectiveStdenv = if {switch} then {backend} else {stdenv_text};"
    holder = call.parent
    while holder is not None and holder.type == "parenthesized_expression":
        holder = holder.parent
    changes = list(formal_edits)
    if holder is not None and holder.type == "let_expression" and contains(holder.child_by_field_name("body"), call) and bindings_of(holder):
        changes.append(_append_let_binding(holder, definition, ctx))
        changes.append(Edit(stdenv_span[0], stdenv_span[1], "effectiveStdenv"))
    else:
        line = source.line_of(call.start_byte)
        nl = source.newline
        if not source.data[source.line_start(line) : call.start_byte].strip():
            indent = source.indentation_of_line(line)
            prefix = f"let{nl}{indent}  {definition}{nl}{indent}in{nl}{indent}"
        else:
            prefix = f"let {definition} in "
        changes.append(Edit(stdenv_span[0], stdenv_span[1], prefix + "effectiveStdenv"))
    return Fix(
        f"Use `effectiveStdenv = if {switch} then {backend} else {stdenv_text}`",
        Applicability.UNSAFE,
        tuple(edits.merge_edits(changes)),
    )


# Names files give their CUDA switch: `cudaSupport`, `enableCuda`, `withCuda`, `cudaSupport'`, `useCuda`...
_SWITCH = re.compile(r"\b(?:cuda[Ss]upport|(?:enable|with|use)(?:Cuda|CUDA)|cudaEnable[d]?|cuda[Ee]nabled)'*(?![\w'-])")


def _cuda_switch(call: Node, ctx: Context) -> str | None:
    """The file's own CUDA switch bound where the call stands (a formal or a `let`), whatever
    its name; the new stdenv follows it, so CUDA-less builds keep the plain stdenv."""
    candidates = dict.fromkeys(_SWITCH.findall(ctx.source.text))
    for name in candidates:
        if ctx.semantic.resolve_name(name, call).lexical:
            return name
    return None


def _guard_of_nvcc(sources: list[tuple[str, Node]], ctx: Context) -> str | None:
    """The condition the file puts its nvcc under when its switch has no switch-like name
    (`lib.optionals (gpuBackend == "cuda") [ cudaPackages.cudatoolkit ]`): the new stdenv
    follows it, so the other backends keep their compiler."""
    for _, node in sources:
        for guard in ctx.semantic.guards(node):
            if guard.positive:
                return " ".join(guard.text.split())
    return None


def _append_let_binding(let: Node, definition: str, ctx: Context) -> Edit:
    source = ctx.source
    last = bindings_of(let)[-1]
    line = source.line_of(last.start_byte)
    let_keyword = let.children[0]
    if line == source.line_of(let_keyword.start_byte):
        return Edit(last.end_byte, last.end_byte, " " + definition)
    indent = source.indentation_of_line(line)
    return Edit(last.end_byte, last.end_byte, source.newline + indent + definition)


def _backend_spelling(call: Node, stdenv_span: tuple[int, int], sources: list[tuple[str, Node]], ctx: Context) -> tuple[str, list[Edit]] | None:
    """How to write `cudaPackages.backendStdenv` at the call, and edits that make it resolve."""
    semantic = ctx.semantic
    if semantic.resolve_name("cudaPackages", call).lexical:
        return "cudaPackages.backendStdenv", []
    if semantic.resolve_name("backendStdenv", call).lexical:
        return "backendStdenv", []
    for _, node in sources:
        ref = semantic.cuda_ref(node)
        if ref is not None and ref.set_name is not None and semantic.resolve_name(ref.set_name, call).lexical:
            return f"{ref.set_name}.backendStdenv", []
    stdenv_text = ctx.source.slice(*stdenv_span)
    if stdenv_text.endswith(".stdenv"):
        return stdenv_text[: -len("stdenv")] + "cudaPackages.backendStdenv", []
    if semantic.resolve_name("pkgs", call).lexical:
        return "pkgs.cudaPackages.backendStdenv", []
    if semantic.resolve_name("cudaPackages", call).kind == "with":
        return "cudaPackages.backendStdenv", []
    function = semantic.top_function()
    formals = function.child_by_field_name("formals") if function is not None else None
    if function is None or formals is None or not contains(function.child_by_field_name("body"), call):
        return None
    if any(_scope_member_formal(node, ctx) for _, node in sources):
        # a file of the CUDA package set (its packages are formals): the scope passes `backendStdenv`
        added = edits.add_formal(ctx.source, formals, "backendStdenv")
        return "backendStdenv", [added] if added is not None else []
    added = edits.add_formal(ctx.source, formals, "cudaPackages")
    return "cudaPackages.backendStdenv", [added] if added is not None else []


def _scope_member_formal(node: Node, ctx: Context) -> bool:
    """`cuda_nvcc` taken as a formal: only the CUDA package set's own callPackage passes it."""
    ref = ctx.semantic.cuda_ref(node)
    return ref is not None and ref.via == "formal" and ref.package == "cuda_nvcc"
