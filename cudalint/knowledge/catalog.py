"""What cudalint knows about CUDA package names from their spelling (the scope's non-package
attributes come from the reference package set).

Naming facts only: which names denote CUDA package sets, the runfile toolkit, CUDA packages, and
what role a package plays (a tool for nativeBuildInputs, a library or headers for buildInputs, a
setup hook); which derivation attributes list inputs; the names of nixpkgs' package set, joins and
overrides. The per-release reference set replaces the name heuristics where it knows better.
"""

from __future__ import annotations

import re
from functools import cache

# `cudaPackagesGoogle`: the set jaxlib-bin and tensorflow-bin were built with (2023-2024).
PACKAGE_SET = re.compile(r"^cudaPackages(_\d+(_\d+)*|Google)?$")

# Names that denote nixpkgs' top level: the usual argument and overlay names, and the variants of
# the whole package set (`pkgsCuda`: nixpkgs with `cudaSupport`; `pkgsCross.<platform>`;
# `<flake>.legacyPackages.<system>`).
TOP_LEVEL_VARIABLES = frozenset({"pkgs", "final", "prev", "super", "self", "pkgsCuda", "nixpkgs"})
TOP_LEVEL_VARIANTS = frozenset(
    {"pkgs", "pkgsCuda", "pkgsStatic", "pkgsMusl", "pkgsi686Linux", "pkgsLLVM", "buildPackages"}
    | {"pkgsBuildBuild", "pkgsBuildHost", "pkgsBuildTarget", "pkgsHostHost", "pkgsHostTarget", "pkgsTargetTarget"}
)
# The Python package sets (`python3Packages`, `python311Packages`; `python3.pkgs` is `pkgs` after a
# `python3`).
PYTHON_SET = re.compile(r"^python\d*Packages$")
PYTHON_INTERPRETER = re.compile(r"^python\d*$")
RUNFILE_TOOLKIT = re.compile(r"^cudatoolkit(_\d+(_\d+)*)?$|^cudatoolkit-legacy-runfile$")

TOOLS = frozenset(
    {
        "cuda_nvcc",
        "cuda_cuobjdump",
        "cuda_nvdisasm",
        "cuda_nvprune",
        "cuda_gdb",
        "cuda_nsight",
        "cuda_cuxxfilt",
        "nsight_compute",
        "nsight_systems",
    }
)

# Setup hooks live in nixpkgs' top level; some were also reachable through cudaPackages.
HOOKS = frozenset(
    {
        "autoAddDriverRunpath",
        "autoAddCudaCompatRunpath",
        "addDriverRunpath",
        "autoFixElfFiles",
        "markForCudatoolkitRootHook",
        "setupCudaHook",
        "autoAddOpenGLRunpathHook",
        "autoAddCudaCompatRunpathHook",
        "addOpenGLRunpath",
    }
)

HEADER_ONLY = frozenset({"cuda_cccl", "cuda_profiler_api", "cccl"})

_LIBRARY_NAME = re.compile(
    r"^(cuda_[a-z0-9_]+|libcu[a-z0-9_]+|libnv[a-z0-9_]+|libnpp|cudnn(_\d+(_\d+)*)?|cutensor|"
    r"libcutensor|libcusparse_lt|cusparselt|nccl|tensorrt(_\d+(_\d+)*)?|cudss|libcudss|libcufile|"
    r"cudnn-frontend|nvidia_driver|cuda_compat|nvjpeg2000|libnvjpeg_2k)$"
)

# Byte strings of which every CUDA package reference holds one: the set's name, the runfile
# toolkit's, or a stem of every name `is_cuda_package` accepts (a test keeps them in step). The
# prefilter patterns of rules that act on `Semantic.cuda_ref`.
CUDA_REFERENCE_PATTERNS = (
    b"cudaPackages",
    b"cudatoolkit",
    b"cuda_",
    b"nsight_",
    b"libcu",
    b"libnv",
    b"libnpp",
    b"cudnn",
    b"cutensor",
    b"cusparselt",
    b"nccl",
    b"tensorrt",
    b"cudss",
    b"nvidia_driver",
    b"nvjpeg2000",
)


@cache
def scope_attributes() -> frozenset[str]:
    """Members of a CUDA package set that are not packages (nix/scope.nix), with the deprecated
    aliases of such members (`cudaFlags`, `cudaVersion`): never suggested or flagged as packages."""
    from cudalint.knowledge.reference import load  # the reference set is read on first use only

    reference = load()
    aliases = {d.name for d in reference.deprecations.values() if d.scope == "cudaPackages" and d.replacement in reference.scope_attributes}
    return reference.scope_attributes | aliases


# ----- derivation inputs ----------------------------------------------------------------------------

# The everyday inputs for tools and setup hooks that run on the build machine (own and propagated).
NATIVE_INPUTS = frozenset({"nativeBuildInputs", "propagatedNativeBuildInputs"})
# The everyday inputs for libraries and headers of the machine the package runs on (own and propagated).
HOST_INPUTS = frozenset({"buildInputs", "propagatedBuildInputs"})
# Where a build tool listed in a host input belongs: the native input that propagates alike.
NATIVE_COUNTERPART = {"buildInputs": "nativeBuildInputs", "propagatedBuildInputs": "propagatedNativeBuildInputs"}
# Where a library listed in a native input belongs: the host input that propagates alike.
HOST_COUNTERPART = {native: host for host, native in NATIVE_COUNTERPART.items()}
# Inputs handed on to every package that depends on this one, so they join its closure too.
PROPAGATED_INPUTS = frozenset(
    {
        "propagatedBuildInputs",
        "propagatedNativeBuildInputs",
        "depsTargetTargetPropagated",
        "depsBuildBuildPropagated",
        "depsBuildTargetPropagated",
        "depsHostHostPropagated",
    }
)
# Every attribute whose list value is a package's dependencies: stdenv's, Python's, the user environment's.
INPUT_ATTRIBUTES = frozenset(
    {
        "nativeBuildInputs",
        "buildInputs",
        "propagatedBuildInputs",
        "propagatedNativeBuildInputs",
        "depsBuildBuild",
        "depsBuildBuildPropagated",
        "depsBuildTarget",
        "depsBuildTargetPropagated",
        "depsHostHost",
        "depsHostHostPropagated",
        "depsTargetTarget",
        "depsTargetTargetPropagated",
        "checkInputs",
        "nativeCheckInputs",
        "installCheckInputs",
        "nativeInstallCheckInputs",
        "dependencies",
        "build-system",
        "propagatedUserEnvPkgs",
    }
)


# ----- nixpkgs functions and package sets -----------------------------------------------------------

# Names under which code reaches the whole nixpkgs package set (`with pkgs;`, overlays' `final`/`prev`).
NIXPKGS_NAMES = frozenset({"pkgs", "final", "prev", "self", "super", "nixpkgs", "pkgs'"})
# Builders that join packages into one tree of symlinks: what their `paths` hold ships with it.
JOIN_BUILDERS = frozenset({"symlinkJoin", "buildEnv"})
# Functions that make a package from another by overriding its arguments or attributes.
OVERRIDE_FUNCTIONS = frozenset({"override", "overrideAttrs", "overrideDerivation", "overridePythonAttrs"})


def is_package_set_name(name: str | None) -> bool:
    return name is not None and PACKAGE_SET.match(name) is not None


def reaches_top_level(names: list[str | None], index: int, base: str | None) -> bool:
    """Whether component `index` of a selection `base.names[0]...` is an attribute of nixpkgs'
    top level: `pkgs.x`, `final.x`, `pkgs.pkgsCuda.x`, `pkgsCross.aarch64-multiplatform.x`,
    `nixpkgs.legacyPackages.${system}.x` (`base`: the name of the variable the selection starts
    from, None for another expression)."""
    if index == 0:
        return base in TOP_LEVEL_VARIABLES
    previous = names[index - 1]
    before = base if index == 1 else names[index - 2]
    if previous in TOP_LEVEL_VARIANTS and not (previous == "pkgs" and PYTHON_INTERPRETER.match(before or "")):
        return True
    return before in ("pkgsCross", "legacyPackages")


def reaches_python_set(names: list[str | None], index: int, base: str | None) -> bool:
    """Whether component `index` is an attribute of a Python package set (`python3Packages.x`,
    `python3.pkgs.x`, `pkgs.python311Packages.x`)."""
    previous = base if index == 0 else names[index - 1]
    if previous is not None and PYTHON_SET.match(previous):
        return True
    before = base if index == 1 else names[index - 2] if index >= 2 else None
    return previous == "pkgs" and before is not None and PYTHON_INTERPRETER.match(before) is not None


def is_runfile_toolkit(name: str | None) -> bool:
    return name is not None and RUNFILE_TOOLKIT.match(name) is not None


def is_cuda_package(name: str | None) -> bool:
    """A name that, brought into scope by `with`/formals, denotes a CUDA package."""
    if name is None or name in scope_attributes():
        return False
    return is_runfile_toolkit(name) or name in TOOLS or _LIBRARY_NAME.match(name) is not None


def role(name: str) -> str:
    """`tool`, `hook`, `headers`, `toolkit` or `library`."""
    if name in TOOLS:
        return "tool"
    if name in HOOKS:
        return "hook"
    if name in HEADER_ONLY:
        return "headers"
    if is_runfile_toolkit(name):
        return "toolkit"
    return "library"
