"""Tests that need a GPU placed in the package's own build, where the sandbox has no GPU.

Flags, in a package's own derivation (`stdenv.mkDerivation`, `buildPythonPackage`, ... with a
`src`):

- `requiredSystemFeatures` holding `"cuda"`: every build of the package, CUDA or not, then waits
  for a builder that declares the feature;
- `doCheck` / `doInstallCheck` that is on only in CUDA builds (`doCheck = cudaSupport;`,
  `cudaSupport && ...`): those tests run exactly where the sandbox has no GPU;
- `doCheck = true` / `doInstallCheck = true` in a package that compiles CUDA only under its
  switch (`cuda_nvcc` or the toolkit in its inputs under `lib.optionals cudaSupport`, `if
  cudaSupport`) while no test setting mentions the switch: the CPU build's tests pass, the CUDA
  build runs the same suite against kernels no GPU can run (information: cudalint cannot see
  whether the suite touches the GPU);
- `doCheck = true` in a Python package's GPU check made with `finalAttrs.finalPackage.overrideAttrs`
  (under `passthru`): `buildPythonPackage` runs its tests in the install check, so that check
  runs nothing; write `doInstallCheck = true` (or use `overridePythonAttrs`);
- a GPU test (`requiredSystemFeatures` holding `"cuda"`) bound at `passthru.tests.<name>.<other>`
  with `<other>` not `gpuCheck`: the CUDA team's jobset builds only `gpuCheck`s, so the test
  never runs (from the jobset's convention on, PR #472663, 2025-12: older targets stay silent).
  The fix renames it to `gpuCheck` (unsafe: whatever refers to the old attribute path breaks).

Not flagged: `requiredSystemFeatures` and checks inside `passthru`, `passthru.tests.<name>`, a
`gpuCheck`, or a binding named like a test (`gpuTests = stdenv.mkDerivation { ... }`, flake
`checks`), derivations without a `src` (a `runCommand`-style test, `cudaPackages.writeGpuTestPython`), overrides (an
overlay asking for a GPU builder on purpose, `finalPackage.overrideAttrs { requiredSystemFeatures
= [ "cuda" ]; }`), NixOS tests, dev shells and modules (`nix.settings.system-features`); a check
switched off in CUDA builds (`doCheck = !cudaSupport;`) or whose test settings already depend
on the switch (`disabledTests = lib.optionals cudaSupport [ ... ]`); a package that is always
CUDA (no switch: its maintainers see the failures in every build); and the implicit checks of
`pytestCheckHook` without a `doCheck`, and dependencies built with CUDA (`dlib`,
`onnxruntime`) whose effect on the tests the file does not show; checks written out that need
no GPU (an `installCheckPhase` or `checkPhase` that runs only a program's `--help` or
`--version`, a Python import (`python -c "import x"`), `runHook`, `echo`, `grep`; or
`versionCheckHook` or `udevCheckHook` alone in `nativeInstallCheckInputs`); and a `"cuda"`
feature asked for only when the package's own tests are on (`requiredSystemFeatures =
lib.optionals finalAttrs.finalPackage.doCheck [ "cuda" ];` next to `doCheck = false;`, or a
switch of its own such as `doCheckGpu`: whoever turns the tests on asks for a GPU builder on
purpose).

Contexts: packages only; overrides, dev shells and modules are never flagged.

## Why
The build sandbox has no GPU and no driver, so tests that run CUDA kernels fail there (issue
#167931, xgboost, 2022). Since PR #256230 (merged 2023-09) a builder can expose its GPU to
derivations that declare `requiredSystemFeatures = [ "cuda" ]` (NixOS option
`programs.nix-required-mounts`), which is how nixpkgs runs GPU tests (issue #225912): as
separate derivations in `passthru`, never in the package, since a package marked so can only
be built on such a builder (Hydra and most users have none). The convention for those
derivations: `cudaPackages.writeGpuTestPython` returns a tester whose `passthru.gpuCheck` is the
marked derivation (pkgs/development/cuda-modules/write-gpu-test-python.nix, commit 2d5e573);
since PR #472663 (2025-12) the CUDA team's Hydra jobset collects
`<package>.passthru.tests.<name>.gpuCheck` (and still a top-level `passthru.gpuCheck`, PR
#564935, 2026-09), often `finalAttrs.finalPackage.overrideAttrs { requiredSystemFeatures = [
"cuda" ]; doInstallCheck = true; }` next to `doCheck = false` (PR #550937, 2026-09: for
`buildPythonPackage` it is `doInstallCheck` that runs the tests after `overrideAttrs`).
A GPU test under another name (`passthru.tests.cuda.plugin`) is built by nobody: PR #564935
(2026-09) renamed such a test to `gpuCheck` for that reason.
Reviewers asked to turn the checks off in CUDA builds (PR #172684, xgboost, 2022; PR #263174,
elpa, 2023).

The fixes: `doCheck = true` becomes `doCheck = !cudaSupport` (the file's switch), what those
reviews asked; it is unsafe: CUDA builds stop running the suite, including tests that did not
need a GPU. In a Python GPU check, `doCheck` becomes `doInstallCheck` (unsafe too: the tests then
run, which is the point, but the check's result changes). Moving tests into `passthru.tests` is not mechanical (a new derivation, and the
builder decides whether `doCheck` or `doInstallCheck` runs them), nor is dropping
`requiredSystemFeatures` (the package may have been marked because its checks need the GPU).

## Example
```nix
{ lib, config, stdenv, cmake, cudaPackages, cudaSupport ? config.cudaSupport }:
stdenv.mkDerivation {
  pname = "grad-boost";
  version = "1.0";
  src = ./.;
  nativeBuildInputs = [ cmake ] ++ lib.optionals cudaSupport [ cudaPackages.cuda_nvcc ];
  buildInputs = lib.optionals cudaSupport [ cudaPackages.cuda_cudart ];
  cmakeFlags = [ (lib.cmakeBool "USE_CUDA" cudaSupport) ];
  doCheck = true;
  requiredSystemFeatures = lib.optionals cudaSupport [ "cuda" ];
}
```

## Use instead
```nix
{ lib, config, stdenv, cmake, cudaPackages, cudaSupport ? config.cudaSupport }:
stdenv.mkDerivation (finalAttrs: {
  pname = "grad-boost";
  version = "1.0";
  src = ./.;
  nativeBuildInputs = [ cmake ] ++ lib.optionals cudaSupport [ cudaPackages.cuda_nvcc ];
  buildInputs = lib.optionals cudaSupport [ cudaPackages.cuda_cudart ];
  cmakeFlags = [ (lib.cmakeBool "USE_CUDA" cudaSupport) ];
  # the CUDA tests need a GPU: they run in passthru.tests.cuda.gpuCheck
  doCheck = !cudaSupport;
  passthru.tests.cuda.gpuCheck = finalAttrs.finalPackage.overrideAttrs {
    requiredSystemFeatures = [ "cuda" ];
    doCheck = true;
  };
})
```

## References
- https://github.com/NixOS/nixpkgs/issues/167931
- https://github.com/NixOS/nixpkgs/issues/225912
- https://github.com/NixOS/nixpkgs/pull/256230
- https://github.com/NixOS/nixpkgs/pull/172684
- https://github.com/NixOS/nixpkgs/pull/263174
- https://github.com/NixOS/nixpkgs/pull/472663
- https://github.com/NixOS/nixpkgs/pull/550937
- https://github.com/NixOS/nixpkgs/pull/564935
- https://github.com/NixOS/nixpkgs/blob/2d5e573acf2af54df6a8d6bcc4dc5dce639b2d72/pkgs/development/cuda-modules/write-gpu-test-python.nix
"""

from __future__ import annotations

import re

from tree_sitter import Node

from cudalint.knowledge import catalog
from cudalint.lint import edits
from cudalint.lint.context import Context
from cudalint.lint.model import Applicability, Fix, FixAvailability, Severity
from cudalint.lint.rule import Rule
from cudalint.nix.places import DERIVATION_BUILDERS
from cudalint.nix.shell import Command
from cudalint.nix.syntax import (
    ancestors,
    attrpath_names,
    binding_value,
    bindings_of,
    descendants,
    flatten_apply,
    last_name,
    string_literal,
    text,
    unparen,
)

RULE = Rule(
    code="CUDA313",
    preview=True,  # below 0.95 on the corpora: off by default until it passes
    precision="0.00 (0 true of 1 judged findings on the real-world corpora, 2026-11-25; tests/realworld/)",
    name="gpu-tests-placement",
    severity=Severity.WARNING,
    fix=Applicability.UNSAFE,
    availability=FixAvailability.SOMETIMES,
    summary="Tests that need a GPU in the package's own build instead of `passthru.tests` (`gpuCheck`)",
    node_types=("binding",),
    patterns=(b"cuda", b"Cuda", b"CUDA"),  # the feature name, the switch or nvcc: no finding without one
    attrpath_patterns=(b"doCheck", b"doInstallCheck", b"requiredSystemFeatures"),
)

# PR #472663 (2025-12): the CUDA team's jobset collects `passthru.tests.<name>.gpuCheck`.
_GPU_CHECK_JOBSET_SINCE = "2026-01-01"
CHECK_SWITCHES = frozenset({"doCheck", "doInstallCheck"})
PYTHON_BUILDERS = frozenset({"buildPythonPackage", "buildPythonApplication"})
# Bindings whose value is a test, not the package: `passthru`, `tests`, `gpuCheck`, `gpuTests`.
_TEST_SLOT = re.compile(r"^passthru$|[Tt]ests?$|[Cc]hecks?$|^tests?")
# Settings of the package's own checks (`disabledTests`, `preCheck`, `checkFlags`, `nativeCheckInputs`).
_TEST_SETTING = re.compile(r"[Cc]heck|[Tt]est")
_SOURCES = frozenset({"src", "srcs"})
# The phase each check switch runs, and its hooks.
_CHECK_PHASES = {"doCheck": ("checkPhase", "preCheck", "postCheck"), "doInstallCheck": ("installCheckPhase", "preInstallCheck", "postInstallCheck")}
# `doCheck`, `doInstallCheck`, and a package's own switch for its GPU tests (`doCheckGpu`).
_CHECK_SWITCH_WORD = re.compile(r"\bdo\w*Checks?\w*\b")
# Install-check hooks that look at the installed files, never run the package's code on a GPU.
_STATIC_CHECK_HOOKS = frozenset({"versionCheckHook", "udevCheckHook"})
# Arguments with which a program describes itself instead of doing its work.
_SELF_DESCRIPTIONS = frozenset({b"--help", b"-h", b"-help", b"--version", b"-V", b"-v", b"-version", b"version", b"help", b"--usage"})
# Commands of a check phase that run no program of the package.
_HARMLESS_COMMANDS = frozenset({b"runHook", b"echo", b"printf", b"true", b":", b"test", b"[", b"[[", b"cd", b"pushd", b"popd", b"grep", b"mkdir", b"ls"})


@RULE
def check(binding: Node, ctx: Context) -> None:
    names = attrpath_names(binding.child_by_field_name("attrpath"))
    if len(names) != 1 or names[0] not in CHECK_SWITCHES | {"requiredSystemFeatures"}:
        return
    if names[0] == "requiredSystemFeatures" and _check_gpu_check_name(binding, ctx):
        return
    attrset = binding.parent.parent if binding.parent is not None else None
    call = ctx.semantic.enclosing_call(binding)
    if attrset is None or call is None or call.attrset != attrset:
        return
    if call.name == "overrideAttrs" and names[0] == "doCheck":
        _check_python_gpu_check(binding, call, ctx)
        return
    if call.name not in DERIVATION_BUILDERS:
        return
    if not ctx.place(binding).is_package or not _builds_source(attrset) or _in_test_slot(call.node):
        return
    value = unparen(binding_value(binding))
    if value is None:
        return
    if names[0] == "requiredSystemFeatures":
        if _asks_for_gpu(value) and not _follows_check_switch(value, ctx):
            ctx.report(binding, '`requiredSystemFeatures` with "cuda" lets only GPU builders build this package: run GPU tests from `passthru.tests.<name>.gpuCheck`')
        return
    if _requires_gpu_builder(attrset):
        return  # reported at `requiredSystemFeatures`
    name = names[0]
    if _checks_need_no_gpu(attrset, name, ctx):
        return
    switch = _positive_switch(value, ctx)
    if switch is not None:
        ctx.report(binding, f"`{name}` is on only in CUDA builds, whose sandbox has no GPU: move the tests to `passthru.tests.<name>.gpuCheck`")
        return
    if text(value) != "true":
        return
    switch = _switch_guarding_nvcc(attrset, ctx)
    if switch is None or _tests_follow_switch(attrset, switch):
        return
    fix = Fix(f"Run the checks only without CUDA (`!{switch}`)", Applicability.UNSAFE, (edits.replace(value, f"!{switch}"),))
    ctx.report(
        binding,
        f"`{name} = true` runs the tests in CUDA builds too, where the sandbox has no GPU: write `{name} = !{switch}`",
        severity=Severity.INFO,
        fixes=[fix],
    )


def _check_gpu_check_name(binding: Node, ctx: Context) -> bool:
    """A GPU test under `passthru.tests.<name>.<other>`: the CUDA jobset collects only
    `tests.<name>.gpuCheck` (PR #472663, PR #564935). True when reported."""
    value = binding_value(binding)
    if value is None or not _asks_for_gpu(value) or not ctx.target.includes(_GPU_CHECK_JOBSET_SINCE):
        return False
    holder = next((a for a in ancestors(binding) if a.type == "binding"), None)
    if holder is None or not ctx.place(holder).is_package:  # the test itself may be an `overrideAttrs`
        return False
    path = [name for a in reversed([holder, *(a for a in ancestors(holder) if a.type == "binding")]) for name in attrpath_names(a.child_by_field_name("attrpath"))]
    if "tests" not in path:
        return False
    below = path[len(path) - path[::-1].index("tests") :]
    last = holder.child_by_field_name("attrpath").children_by_field_name("attr")[-1]
    if len(below) != 2 or below[-1] in (None, "gpuCheck") or below[-1] != text(last):
        return False
    fix = Fix("Rename the test to `gpuCheck`", Applicability.UNSAFE, (edits.replace(last, "gpuCheck"),))
    ctx.report(
        last,
        f"the CUDA jobset builds only GPU tests named `gpuCheck`: rename `tests.{below[0]}.{below[1]}` to `tests.{below[0]}.gpuCheck`",
        fixes=[fix],
    )
    return True


def _check_python_gpu_check(binding: Node, call, ctx: Context) -> None:
    """`passthru.gpuCheck = finalAttrs.finalPackage.overrideAttrs { doCheck = true; ... }` in a
    Python package: `buildPythonPackage` runs its tests in the install check, so `doCheck` seen
    by `overrideAttrs` runs nothing (PR #550937)."""
    value = unparen(binding_value(binding))
    if value is None or text(value) != "true" or not _in_test_slot(call.node):
        return
    if any(b.type == "binding" and attrpath_names(b.child_by_field_name("attrpath")) == ["doInstallCheck"] for b in bindings_of(call.attrset)):
        return  # the install check is set too: the tests run (or were turned off on purpose)
    function, _ = flatten_apply(call.node)
    path = attrpath_names(function.child_by_field_name("attrpath")) if function.type == "select_expression" else []
    if path[-2:] != ["finalPackage", "overrideAttrs"]:
        return  # another package's override: what it builds is not known here
    package = ctx.semantic.enclosing_call(call.node)
    if package is None or package.name not in PYTHON_BUILDERS:
        return
    attrpath = binding.child_by_field_name("attrpath")
    fix = Fix("Write `doInstallCheck = true`", Applicability.UNSAFE, (edits.replace(attrpath, "doInstallCheck"),))
    ctx.report(
        binding,
        "after `overrideAttrs`, a Python package's tests run from `doInstallCheck`, not `doCheck`: write `doInstallCheck = true`",
        fixes=[fix],
    )


def _builds_source(attrset: Node) -> bool:
    """A package built from source; test derivations (`runCommand`-like, `dontUnpack`) have none."""
    return any(set(attrpath_names(b.child_by_field_name("attrpath"))[:1]) & _SOURCES if b.type == "binding" else bool(_SOURCES & set(text(b).replace(";", " ").split())) for b in bindings_of(attrset))


def _in_test_slot(node: Node) -> bool:
    """The derivation is the value of `passthru...`, `tests.<name>`, `gpuCheck`, `gpuTests = ...`."""
    for ancestor in ancestors(node):
        if ancestor.type == "binding":
            if any(n is not None and _TEST_SLOT.search(n) for n in attrpath_names(ancestor.child_by_field_name("attrpath"))):
                return True
    return False


def _asks_for_gpu(value: Node) -> bool:
    return any(node.type in ("string_expression", "indented_string_expression") and string_literal(node) == "cuda" for node in descendants(value))


def _follows_check_switch(value: Node, ctx: Context) -> bool:
    """Every "cuda" of `requiredSystemFeatures` is asked for only when the package's own tests
    are on (`lib.optionals finalAttrs.finalPackage.doCheck [ "cuda" ]`): with the tests off, as
    by default, any builder builds it; whoever turns them on asks for a GPU builder on purpose."""
    wanted = [node for node in descendants(value) if node.type in ("string_expression", "indented_string_expression") and string_literal(node) == "cuda"]
    return bool(wanted) and all(any(_CHECK_SWITCH_WORD.search(text(g.condition)) for g in ctx.semantic.guards(node)) for node in wanted)


def _checks_need_no_gpu(attrset: Node, switch: str, ctx: Context) -> bool:
    """The checks `switch` turns on are written out and run nothing that needs a GPU: a program's
    `--help` or `--version`, a Python import, `runHook`, `echo`; or, for the install check,
    `versionCheckHook` or `udevCheckHook` alone."""
    bindings = {attrpath_names(b.child_by_field_name("attrpath"))[0]: b for b in bindings_of(attrset) if b.type == "binding" and len(attrpath_names(b.child_by_field_name("attrpath"))) == 1}
    phase, *hooks = _CHECK_PHASES[switch]
    if phase not in bindings:
        inputs = bindings.get("nativeInstallCheckInputs")
        value = binding_value(inputs) if inputs is not None else None
        elements = [n for n in descendants(value) if n.type in ("variable_expression", "select_expression") and n.parent is not None and n.parent.type == "list_expression"] if value else []
        if switch != "doInstallCheck" or not elements or any(last_name(n) not in _STATIC_CHECK_HOOKS for n in elements):
            return False
    for name in (phase, *hooks):
        binding = bindings.get(name)
        value = binding_value(binding) if binding is not None else None
        if value is None:
            continue
        for string in descendants(value):
            if string.type not in ("string_expression", "indented_string_expression"):
                continue
            shell = ctx.semantic.shell_text(string)
            if shell is None or not all(_needs_no_gpu(command) for command in shell.commands()):
                return False
    return True


def _needs_no_gpu(command: Command) -> bool:
    if command.name_index is None or command.name in _HARMLESS_COMMANDS:
        return True
    arguments = [word.plain for word in command.arguments()]
    if any(argument in _SELF_DESCRIPTIONS for argument in arguments):
        return True
    return b"-c" in arguments and all(part.strip().startswith((b"import ", b"from ")) for part in b" ".join(arguments[arguments.index(b"-c") + 1 :]).split(b";") if part.strip())


def _requires_gpu_builder(attrset: Node) -> bool:
    for binding in bindings_of(attrset):
        if binding.type == "binding" and attrpath_names(binding.child_by_field_name("attrpath")) == ["requiredSystemFeatures"]:
            value = binding_value(binding)
            return value is not None and _asks_for_gpu(value)
    return False


def _is_switch(node: Node | None, ctx: Context) -> bool:
    """The file's CUDA switch: `cudaSupport` (a formal or `let`), `config.cudaSupport`."""
    node = unparen(node)
    if node is None:
        return False
    if node.type == "variable_expression":
        return bool(re.search(r"[Cc]uda", text(node))) and ctx.semantic.resolve(node).lexical
    if node.type == "select_expression":
        return attrpath_names(node.child_by_field_name("attrpath"))[-1:] == ["cudaSupport"]
    return False


def _positive_switch(value: Node, ctx: Context) -> Node | None:
    """`cudaSupport`, or a conjunct of `cudaSupport && ...`: true only in CUDA builds."""
    if _is_switch(value, ctx):
        return value
    if value.type == "binary_expression" and text(value.child_by_field_name("operator")) == "&&":
        for side in (value.child_by_field_name("left"), value.child_by_field_name("right")):
            side = unparen(side)
            if side is not None and (found := _positive_switch(side, ctx)) is not None:
                return found
    return None


def _switch_guarding_nvcc(attrset: Node, ctx: Context) -> str | None:
    """The switch under which the derivation gets nvcc (`cuda_nvcc`, the toolkit) at build time."""
    for binding in bindings_of(attrset):
        if binding.type != "binding" or attrpath_names(binding.child_by_field_name("attrpath"))[:1] != ["nativeBuildInputs"]:
            continue
        for node in descendants(binding):
            if node.type not in ("variable_expression", "select_expression"):
                continue
            ref = ctx.semantic.cuda_ref(node)
            if ref is None or ref.node != node or not (ref.package == "cuda_nvcc" or catalog.is_runfile_toolkit(ref.package)):
                continue
            for guard in ctx.semantic.guards(node):
                if guard.positive and _is_switch(guard.condition, ctx):
                    return " ".join(text(unparen(guard.condition)).split())
    return None


def _tests_follow_switch(attrset: Node, switch: str) -> bool:
    """A test setting already depends on the switch (`disabledTests = lib.optionals cudaSupport [...]`)."""
    word = re.compile(rf"(?<![\w'-]){re.escape(switch)}(?![\w'-])")
    for binding in bindings_of(attrset):
        if binding.type != "binding":
            continue
        names = attrpath_names(binding.child_by_field_name("attrpath"))
        if names[:1] and names[0] not in CHECK_SWITCHES and names[0] is not None and _TEST_SETTING.search(names[0]):
            if word.search(text(binding)):
                return True
    return False
