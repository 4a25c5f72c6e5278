"""Deterministic benchmark inputs: a nixpkgs-like tree and a CUDA-heavy file for the editor path.

The tree (about 40,000 files, about 150 MB) is mostly small package files in the styles nixpkgs
uses (stdenv, Python, Rust, Go packages, NixOS modules, `default.nix` call sites), a few
multi-megabyte generated package databases, about 2% near misses (files that mention a word a
rule looks for, such as `symlinkJoin` or `LD_LIBRARY_PATH`, without using CUDA) and about 2% CUDA
files: the repository's rule fixtures and best-practice examples, good and bad, in the idioms of
rules.md. Everything comes from one seeded generator, so the same inputs give the same tree; the
tree is written once into a cache directory outside the repository, named by a hash of the
generator and of the fixture files it copies.

    python -m bench.generate            # print the tree's path (generating it if needed)
"""

from __future__ import annotations

import base64
import hashlib
import os
import random
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
# Bump when the generated content changes in a way the hash of this file would not show.
FORMAT = 1
SEED = 20240607

TOTAL_FILES = 40_000
CUDA_SHARE = 0.02
NEAR_MISS_SHARE = 0.02
# (relative path, generator name, approximate size in bytes)
GENERATED_FILES = (
    ("pkgs/development/haskell-modules/hackage-packages.nix", "hackage", 9_500_000),
    ("pkgs/development/node-packages/node-packages.nix", "node", 9_000_000),
    ("pkgs/development/r-modules/cran-packages.nix", "cran", 6_000_000),
    ("pkgs/applications/editors/vim/plugins/generated.nix", "vim", 5_000_000),
    ("pkgs/development/node-packages/composition-packages.nix", "node", 5_000_000),
    ("pkgs/development/r-modules/bioc-packages.nix", "cran", 4_500_000),
)

WORDS = (
    "fast small simple library tool for parsing rendering audio video network secure modern "
    "portable embedded terminal graphics image vector matrix solver compiler server client "
    "database storage stream message queue cache scheduler monitor logging config font text "
    "editor viewer browser protocol codec container cluster parallel numeric scientific"
).split()
LIBRARIES = (
    "zlib openssl curl libxml2 libpng libjpeg sqlite boost eigen fmt spdlog gtest python3 "
    "ncurses readline libffi glib gtk3 qt5.qtbase SDL2 libGL vulkan-loader ffmpeg libuv "
    "protobuf grpc abseil-cpp icu pcre2 expat bzip2 xz zstd lz4 libsodium gmp mpfr"
).split()
TOOLS = "cmake ninja meson pkg-config autoreconfHook makeWrapper installShellFiles python3 perl gettext which".split()
PYTHON_DEPS = "numpy requests click attrs rich pyyaml jinja2 packaging typing-extensions pydantic aiohttp six".split()
LICENSES = "mit asl20 bsd3 gpl3Plus lgpl21Plus mpl20 isc zlib".split()
MAINTAINERS = "alice bob carol dave erin frank grace heidi ivan judy".split()


def cache_root() -> Path:
    """Where inputs are cached: $CUDALINT_BENCH_DIR, else $XDG_CACHE_HOME/cudalint-bench."""
    explicit = os.environ.get("CUDALINT_BENCH_DIR")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "cudalint-bench"


def cuda_templates() -> list[tuple[str, str]]:
    """(name, text) of every fixture and example the CUDA share of the tree is made from."""
    roots = [REPO / "tests" / "fixtures" / "rules", REPO / "tests" / "fixtures" / "best-practice", REPO / "examples"]
    found = []
    for root in roots:
        for path in sorted(root.rglob("*.nix")):
            found.append((path.relative_to(REPO).as_posix(), path.read_text(encoding="utf-8")))
    return found


def input_key() -> str:
    digest = hashlib.sha256(f"{FORMAT} {SEED} {TOTAL_FILES}".encode())
    digest.update(Path(__file__).read_bytes())
    for name, text in cuda_templates():
        digest.update(name.encode() + b"\0" + text.encode() + b"\0")
    return digest.hexdigest()[:12]


# ---------------------------------------------------------------------------------------------
# Small files


class Writer:
    """Text pieces from one seeded random source."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng

    def name(self) -> str:
        return "-".join(self.rng.choice(WORDS) for _ in range(self.rng.randint(1, 3))) + str(self.rng.randint(0, 999))

    def hash(self) -> str:
        return "sha256-" + base64.b64encode(self.rng.getrandbits(256).to_bytes(32, "big")).decode()

    def version(self) -> str:
        return ".".join(str(self.rng.randint(0, 30)) for _ in range(self.rng.randint(2, 3)))

    def sentence(self, low: int = 4, high: int = 12) -> str:
        words = [self.rng.choice(WORDS) for _ in range(self.rng.randint(low, high))]
        return " ".join(words).capitalize()

    def paragraph(self) -> str:
        return " ".join(self.sentence(6, 16) + "." for _ in range(self.rng.randint(6, 18)))

    def sample(self, pool: list[str], low: int, high: int) -> list[str]:
        return self.rng.sample(pool, self.rng.randint(low, min(high, len(pool))))

    def meta(self, pname: str, owner: str, indent: str = "  ") -> str:
        rng = self.rng
        lines = [
            f"{indent}meta = {{",
            f'{indent}  description = "{self.sentence()}";',
            f'{indent}  homepage = "https://github.com/{owner}/{pname}";',
        ]
        if rng.random() < 0.85:
            lines += [f"{indent}  longDescription = ''", f"{indent}    {self.paragraph()}", f"{indent}  '';"]
        lines += [
            f'{indent}  changelog = "https://github.com/{owner}/{pname}/releases/tag/v${{version}}";',
            f"{indent}  license = lib.licenses.{rng.choice(LICENSES)};",
            f"{indent}  maintainers = with lib.maintainers; [ {' '.join(self.sample(list(MAINTAINERS), 1, 3))} ];",
            f"{indent}  platforms = lib.platforms.{rng.choice(['unix', 'linux', 'all'])};",
            f'{indent}  mainProgram = "{pname}";',
            f"{indent}}};",
        ]
        return "\n".join(lines)

    def patches(self, owner: str, pname: str) -> str:
        entries = "".join(
            f'    (fetchpatch {{\n      name = "{self.name()}.patch";\n'
            f'      url = "https://github.com/{owner}/{pname}/commit/{self.rng.getrandbits(160):040x}.patch";\n'
            f'      hash = "{self.hash()}";\n    }})\n'
            for _ in range(self.rng.randint(1, 4))
        )
        return f"  patches = [\n{entries}  ];\n"

    def shell(self, indent: str = "    ") -> str:
        rng = self.rng
        commands = []
        for _ in range(rng.randint(2, 10)):
            choice = rng.random()
            if choice < 0.4:
                commands.append(f'substituteInPlace {rng.choice(["CMakeLists.txt", "Makefile", "setup.py", "src/config.h"])} \\\n{indent}  --replace-fail "{rng.choice(WORDS)}" "{rng.choice(WORDS)}"')
            elif choice < 0.7:
                commands.append(f"install -Dm644 {rng.choice(WORDS)}.{rng.choice(['1', 'desktop', 'conf'])} -t $out/share/{rng.choice(WORDS)}")
            else:
                commands.append(f"patchShebangs {rng.choice(['scripts', 'tools', 'build-aux'])}")
        return "\n".join(indent + c for c in commands)


def stdenv_package(w: Writer) -> str:
    rng = w.rng
    pname, owner = w.name(), rng.choice(MAINTAINERS)
    tools = w.sample(TOOLS, 1, 4)
    libs = w.sample(LIBRARIES, 0, 8)
    patches = w.patches(owner, pname) if rng.random() < 0.5 else ""
    formals = ["lib", "stdenv", "fetchFromGitHub", *(["fetchpatch"] if patches else []), "nix-update-script", *tools, *(lib.split(".")[0] for lib in libs)]
    parts = [
        "{\n" + "".join(f"  {f},\n" for f in dict.fromkeys(formals)) + "}:\n",
        "stdenv.mkDerivation (finalAttrs: {",
        f'  pname = "{pname}";',
        f'  version = "{w.version()}";',
        "",
        "  src = fetchFromGitHub {",
        f'    owner = "{owner}";',
        f'    repo = "{pname}";',
        '    tag = "v${finalAttrs.version}";',
        f'    hash = "{w.hash()}";',
        "  };",
        "",
        patches,
        "  nativeBuildInputs = [\n" + "".join(f"    {t}\n" for t in tools) + "  ];",
    ]
    if libs:
        parts.append("\n  buildInputs = [\n" + "".join(f"    {lib}\n" for lib in libs) + "  ];")
    if "cmake" in tools and rng.random() < 0.6:
        parts.append(f'\n  cmakeFlags = [\n    (lib.cmakeBool "BUILD_TESTING" finalAttrs.doCheck)\n    (lib.cmakeFeature "{w.name().upper().replace("-", "_")}" "ON")\n  ];')
    if rng.random() < 0.5:
        parts.append("\n  postPatch = ''\n" + w.shell() + "\n  '';")
    if rng.random() < 0.3:
        parts.append("\n  postInstall = ''\n" + w.shell() + "\n  '';")
    if rng.random() < 0.5:
        flags = " ".join(f"-D{w.name().upper().replace('-', '_')}" for _ in range(rng.randint(1, 5)))
        parts.append(f'\n  env.NIX_CFLAGS_COMPILE = toString [\n    "-Wno-error"\n    "{flags}"\n  ];')
    parts.append(f"\n  doCheck = {rng.choice(['true', 'false'])};\n")
    parts.append("  passthru.updateScript = nix-update-script { };\n")
    parts.append(w.meta(pname, owner).replace("${version}", "${finalAttrs.version}"))
    parts.append("})\n")
    return "\n".join(parts)


def python_package(w: Writer) -> str:
    rng = w.rng
    pname, owner = w.name(), rng.choice(MAINTAINERS)
    deps = w.sample(PYTHON_DEPS, 1, 6)
    checks = ["pytestCheckHook", *w.sample(["pytest-asyncio", "hypothesis", "pytest-mock"], 0, 2)]
    formals = ["lib", "buildPythonPackage", "fetchFromGitHub", "setuptools", *deps, *checks]
    return "\n".join(
        [
            "{\n" + "".join(f"  {f},\n" for f in formals) + "}:\n",
            "buildPythonPackage rec {",
            f'  pname = "{pname}";',
            f'  version = "{w.version()}";',
            "  pyproject = true;",
            "",
            "  src = fetchFromGitHub {",
            f'    owner = "{owner}";',
            "    repo = pname;",
            '    tag = "v${version}";',
            f'    hash = "{w.hash()}";',
            "  };",
            "",
            "  build-system = [ setuptools ];",
            "",
            "  dependencies = [\n" + "".join(f"    {d}\n" for d in deps) + "  ];",
            "",
            "  nativeCheckInputs = [\n" + "".join(f"    {c}\n" for c in checks) + "  ];",
            "",
            f'  pythonImportsCheck = [ "{pname.replace("-", "_")}" ];',
            "",
            "  disabledTests = [\n" + "".join(f'    # {w.sentence(3, 8).lower()}\n    "test_{w.name().replace("-", "_")}"\n' for _ in range(rng.randint(2, 12))) + "  ];",
            "",
            w.meta(pname, owner),
            "}\n",
        ]
    )


def compiled_package(w: Writer) -> str:
    rng = w.rng
    pname, owner = w.name(), rng.choice(MAINTAINERS)
    rust = rng.random() < 0.5
    builder, hash_name = ("rustPlatform.buildRustPackage", "cargoHash") if rust else ("buildGoModule", "vendorHash")
    formal = "rustPlatform" if rust else "buildGoModule"
    libs = w.sample(LIBRARIES, 0, 3)
    extra = "" if rust else '\n  ldflags = [\n    "-s"\n    "-w"\n    "-X main.version=${finalAttrs.version}"\n  ];\n'
    return "\n".join(
        [
            "{\n" + "".join(f"  {f},\n" for f in ["lib", formal, "fetchFromGitHub", "pkg-config", *(x.split(".")[0] for x in libs)]) + "}:\n",
            f"{builder} (finalAttrs: {{",
            f'  pname = "{pname}";',
            f'  version = "{w.version()}";',
            "",
            "  src = fetchFromGitHub {",
            f'    owner = "{owner}";',
            f'    repo = "{pname}";',
            '    tag = "v${finalAttrs.version}";',
            f'    hash = "{w.hash()}";',
            "  };",
            "",
            f'  {hash_name} = "{w.hash()}";',
            extra,
            "  nativeBuildInputs = [ pkg-config ];",
            "  checkFlags = [\n" + "".join(f'    "--skip=tests::{w.name().replace("-", "_")}"\n' for _ in range(rng.randint(0, 10))) + "  ];",
            "  buildInputs = [ " + " ".join(libs) + " ];",
            "",
            w.meta(pname, owner).replace("${version}", "${finalAttrs.version}"),
            "})\n",
        ]
    )


def nixos_module(w: Writer) -> str:
    rng = w.rng
    service = w.name()
    options = []
    names = {rng.choice(WORDS) + rng.choice(WORDS).capitalize() for _ in range(rng.randint(3, 12))}
    for option in sorted(names):
        kind = rng.choice(["types.bool", "types.str", "types.port", "(types.listOf types.str)", "types.path"])
        default = {"types.bool": "false", "types.port": str(rng.randint(1024, 65535))}.get(kind, '""' if "str" in kind or "path" in kind else "[ ]")
        options.append(f"      {option} = mkOption {{\n        type = {kind};\n        default = {default};\n        description = ''\n          {w.paragraph()}\n        '';\n      }};\n")
    return (
        "{\n  config,\n  lib,\n  pkgs,\n  ...\n}:\n\nlet\n  inherit (lib) mkEnableOption mkIf mkOption types;\n"
        f"  cfg = config.services.{service};\nin\n{{\n  options = {{\n    services.{service} = {{\n"
        f'      enable = mkEnableOption "{w.sentence()}";\n\n' + "\n".join(options) + "    };\n  };\n\n"
        "  config = mkIf cfg.enable {\n"
        f"    systemd.services.{service} = {{\n"
        '      wantedBy = [ "multi-user.target" ];\n'
        f'      serviceConfig.ExecStart = "${{pkgs.{service}}}/bin/{service}";\n'
        "      serviceConfig.DynamicUser = true;\n    };\n  };\n}\n"
    )


def call_site(w: Writer) -> str:
    return f'{{ callPackage }}:\n\ncallPackage ./{w.rng.choice(["package.nix", "generic.nix"])} {{\n  version = "{w.version()}";\n  hash = "{w.hash()}";\n}}\n'


def near_miss(w: Writer) -> str:
    """A package without CUDA that mentions a word some rule looks for (a prefilter near miss)."""
    rng = w.rng
    pname = w.name()
    choice = rng.randrange(4)
    if choice == 0:
        return (
            "{\n  lib,\n  symlinkJoin,\n  makeWrapper,\n  " + pname + "-unwrapped,\n  plugins ? [ ],\n}:\n\n"
            f'symlinkJoin {{\n  name = "{pname}-${{{pname}-unwrapped.version}}";\n  paths = [ {pname}-unwrapped ] ++ plugins;\n'
            f"  nativeBuildInputs = [ makeWrapper ];\n  postBuild = ''\n    wrapProgram $out/bin/{pname} \\\n"
            f"      --prefix PLUGIN_PATH : $out/lib/{pname}\n  '';\n  inherit ({pname}-unwrapped) meta;\n}}\n"
        )
    body = stdenv_package(w)
    if choice == 1:
        insert = "  preFixup = ''\n    wrapProgram $out/bin/app --prefix LD_LIBRARY_PATH : ${lib.makeLibraryPath [ libGL ]}\n  '';\n\n"
    elif choice == 2:
        insert = "  postFixup = ''\n    addDriverRunpath $out/bin/app\n  '';\n\n"
    else:
        insert = '  dontDisableStatic = true;\n  configureFlags = [ "--enable-static" ];\n\n'
    return body.replace("  doCheck =", insert + "  doCheck =", 1)


SMALL_KINDS = ((stdenv_package, 0.45), (python_package, 0.25), (compiled_package, 0.15), (nixos_module, 0.07), (call_site, 0.08))


# ---------------------------------------------------------------------------------------------
# Generated package databases (multi-megabyte, no CUDA unless asked)


def _database(w: Writer, kind: str, size: int, cuda_entry: bool = False) -> str:
    rng = w.rng
    out = []
    total = 0
    if kind == "hackage":
        out.append("{ pkgs, lib, callPackage }:\n\nself: {\n")
    elif kind == "node":
        out.append("{ nodeEnv, fetchurl, fetchgit, nix-gitignore, stdenv, lib, globalBuildInputs ? [ ] }:\n\nlet\n  sources = {\n")
    elif kind == "cran":
        out.append('{ self, derive }:\nlet derive2 = derive { snapshot = "2024-06-01"; };\nin with self; {\n')
    else:
        out.append("{ lib, buildVimPlugin, buildNeovimPlugin, fetchFromGitHub, fetchgit }:\n\nfinal: prev: {\n")
    index = 0
    while total < size:
        index += 1
        name = f"{w.name()}-{index}"
        if cuda_entry and index == 1000:
            # a package database entry that links the CUDA toolkit, as a Haskell binding would
            entry = (
                f'  "cuda-bindings" = callPackage ({{ mkDerivation, base, bytestring, c2hs, cudatoolkit, lib }}:\n'
                '    mkDerivation {\n      pname = "cuda-bindings";\n      version = "0.11.0.1";\n'
                f'      sha256 = "{w.hash()}";\n      libraryHaskellDepends = [ base bytestring ];\n'
                "      librarySystemDepends = [ cudatoolkit ];\n      libraryToolDepends = [ c2hs ];\n"
                '      description = "FFI binding to the CUDA interface";\n      license = lib.licenses.bsd3;\n    }) { };\n'
            )
        elif kind == "hackage":
            deps = " ".join(sorted({f"dep{rng.randint(0, 5000)}" for _ in range(rng.randint(1, 8))}))
            entry = (
                f'  "{name}" = callPackage ({{ mkDerivation, base, lib, {deps.replace(" ", ", ")} }}:\n'
                f'    mkDerivation {{\n      pname = "{name}";\n      version = "{w.version()}";\n'
                f'      sha256 = "{w.hash()}";\n      libraryHaskellDepends = [ base {deps} ];\n'
                f'      description = "{w.sentence()}";\n      license = lib.licenses.{rng.choice(LICENSES)};\n    }}) {{ }};\n'
            )
        elif kind == "node":
            entry = (
                f'    "{name}-{w.version()}" = {{\n      name = "{name}";\n      packageName = "{name}";\n'
                f'      version = "{w.version()}";\n      src = fetchurl {{\n'
                f'        url = "https://registry.npmjs.org/{name}/-/{name}.tgz";\n        hash = "{w.hash()}";\n      }};\n    }};\n'
            )
        elif kind == "cran":
            deps = " ".join(rng.choice(WORDS) + str(rng.randint(0, 99)) for _ in range(rng.randint(0, 6)))
            entry = f'  {name.replace("-", "_")} = derive2 {{ name="{name}"; version="{w.version()}"; sha256="{w.hash()}"; depends=[{deps}]; }};\n'
        else:
            entry = (
                f'  {name.replace("-", "_")} = buildVimPlugin {{\n    pname = "{name}";\n    version = "2024-0{rng.randint(1, 9)}-1{rng.randint(0, 9)}";\n'
                f'    src = fetchFromGitHub {{\n      owner = "{rng.choice(MAINTAINERS)}";\n      repo = "{name}";\n'
                f'      rev = "{rng.getrandbits(160):040x}";\n      hash = "{w.hash()}";\n    }};\n'
                f'    meta.homepage = "https://github.com/{name}/";\n  }};\n'
            )
        out.append(entry)
        total += len(entry)
    out.append("  };\nin\n{ inherit sources; }\n" if kind == "node" else "}\n")
    return "".join(out)


# ---------------------------------------------------------------------------------------------
# CUDA-heavy text for the editor path and the single-file figures

_CUDA_ENTRIES = (
    # runfile toolkit, hand-rolled arches, LD_LIBRARY_PATH wrapper (CUDA001, CUDA305, CUDA101)
    """  {name} = stdenv.mkDerivation {{
    pname = "{name}";
    version = "{version}";
    src = fetchurl {{
      url = "https://example.org/{name}-{version}.tar.gz";
      hash = "{hash}";
    }};
    nativeBuildInputs = [
      cmake
      makeWrapper
    ];
    buildInputs = [
      cudatoolkit
      cudaPackages.cudnn
    ];
    cmakeFlags = [
      "-DCMAKE_CUDA_ARCHITECTURES=75;86"
      "-DUSE_CUDA=ON"
    ];
    postInstall = ''
      wrapProgram $out/bin/{name} \\
        --prefix LD_LIBRARY_PATH : /run/opengl-driver/lib:${{lib.makeLibraryPath [ cudatoolkit ]}}
    '';
    meta.license = lib.licenses.mit;
  }};
""",
    # the current idiom: no findings
    """  {name} = cudaPackages.backendStdenv.mkDerivation (finalAttrs: {{
    pname = "{name}";
    version = "{version}";
    src = fetchurl {{
      url = "https://example.org/{name}-{version}.tar.gz";
      hash = "{hash}";
    }};
    nativeBuildInputs = [
      cmake
      cudaPackages.cuda_nvcc
      autoAddDriverRunpath
    ];
    buildInputs = with cudaPackages; [
      cuda_cudart
      cuda_cccl
      libcublas
      (lib.getDev libcusparse)
    ];
    cmakeFlags = [
      (lib.cmakeFeature "CMAKE_CUDA_ARCHITECTURES" cudaPackages.flags.cmakeCudaArchitecturesString)
    ];
    meta.license = lib.licenses.asl20;
  }});
""",
    # renamed hook, nvcc among the libraries, static output propagated (CUDA104, CUDA301, CUDA201)
    """  {name} = stdenv.mkDerivation {{
    pname = "{name}";
    version = "{version}";
    src = fetchurl {{
      url = "https://example.org/{name}-{version}.tar.gz";
      hash = "{hash}";
    }};
    nativeBuildInputs = [ addOpenGLRunpath ];
    buildInputs = [
      cudaPackages.cuda_nvcc
      cudaPackages.cuda_cudart
    ];
    propagatedBuildInputs = [ cudaPackages.libcublas.static ];
    postFixup = ''
      for lib in $out/lib/*.so; do
        addOpenGLRunpath "$lib"
      done
    '';
    meta.license = lib.licenses.bsd3;
  }};
""",
    # optional CUDA, guarded and unguarded inputs (CUDA304)
    """  {name} = stdenv.mkDerivation {{
    pname = "{name}";
    version = "{version}";
    src = fetchurl {{
      url = "https://example.org/{name}-{version}.tar.gz";
      hash = "{hash}";
    }};
    nativeBuildInputs = [ cmake ] ++ lib.optionals cudaSupport [ cudaPackages.cuda_nvcc ];
    buildInputs = [
      zlib
      cudaPackages.libcufft
    ]
    ++ lib.optionals cudaSupport [ cudaPackages.cuda_cudart ];
    cmakeFlags = [ (lib.cmakeBool "WITH_CUDA" cudaSupport) ];
    meta.license = lib.licenses.gpl3Plus;
  }};
""",
)


def cuda_heavy_file(lines: int = 3000, seed: int = SEED) -> str:
    """One Nix file of about `lines` lines: a package set of CUDA derivations, good and bad."""
    w = Writer(random.Random(seed))
    head = (
        "{\n  lib,\n  stdenv,\n  config,\n  fetchurl,\n  cmake,\n  makeWrapper,\n  zlib,\n  cudatoolkit,\n"
        "  cudaPackages,\n  autoAddDriverRunpath,\n  addOpenGLRunpath,\n  cudaSupport ? config.cudaSupport,\n}:\n\n{\n"
    )
    parts = [head]
    count = head.count("\n") + 1
    index = 0
    while count < lines:
        entry = _CUDA_ENTRIES[index % len(_CUDA_ENTRIES)].format(name=f"gpu-{w.name()}-{index}", version=w.version(), hash=w.hash())
        parts.append(entry)
        count += entry.count("\n")
        index += 1
    parts.append("}\n")
    return "".join(parts)


def small_cuda_file() -> str:
    """A short package with findings: what the cold single-file figure checks."""
    return cuda_heavy_file(lines=30, seed=SEED + 1)


# ---------------------------------------------------------------------------------------------
# The tree


@dataclass(frozen=True)
class Inputs:
    root: Path  # the directory of this input generation
    tree: Path  # the nixpkgs-like tree
    editor_file: Path  # the 3000-line CUDA-heavy file
    small_file: Path  # a short CUDA file with findings
    large_cuda_file: Path  # a generated multi-megabyte database with one CUDA entry (outside the tree)


def tree_files(rng: random.Random, total: int = TOTAL_FILES, database_scale: float = 1.0) -> list[tuple[str, str]]:
    """(relative path, text) of every file of the tree; smaller trees for the tests."""
    w = Writer(rng)
    templates = cuda_templates()
    generated = [(path, _database(w, kind, int(size * database_scale))) for path, kind, size in GENERATED_FILES]
    small_count = total - len(generated)
    cuda_count = round(total * CUDA_SHARE)
    near_count = round(total * NEAR_MISS_SHARE)
    kinds = ["cuda"] * cuda_count + ["near"] * near_count
    functions, weights = zip(*SMALL_KINDS)
    kinds += rng.choices(range(len(functions)), weights, k=small_count - len(kinds))
    rng.shuffle(kinds)
    files = list(generated)
    used: set[str] = set()
    for index, kind in enumerate(kinds):
        name = w.name()
        if kind == "cuda":
            template_name, text = templates[index % len(templates)]
            text = f"# from {template_name}\n{text}"
        elif kind == "near":
            text = near_miss(w)
        else:
            text = functions[kind](w)
        if kind == 3:
            path = f"nixos/modules/services/{name[:2]}/{name}.nix"
        elif kind == 1:
            path = f"pkgs/development/python-modules/{name}/default.nix"
        else:
            path = f"pkgs/by-name/{name[:2]}/{name}/{'default' if kind == 4 else 'package'}.nix"
        while path in used:
            path = path.replace(".nix", "-1.nix")
        used.add(path)
        files.append((path, text))
    return files


def ensure_inputs(log=None) -> Inputs:
    """Generate the inputs into the cache unless a complete generation with this key exists."""
    root = cache_root() / f"inputs-{input_key()}"
    inputs = Inputs(root, root / "nixpkgs", root / "editor-3000.nix", root / "small.nix", root / "hackage-with-cuda.nix")
    if (root / ".complete").exists():
        return inputs
    if log:
        log(f"generating benchmark inputs in {root} (once) ...")
    if root.exists():
        shutil.rmtree(root)
    rng = random.Random(SEED)
    for relative, text in tree_files(rng):
        path = inputs.tree / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    inputs.editor_file.write_text(cuda_heavy_file(), encoding="utf-8")
    inputs.small_file.write_text(small_cuda_file(), encoding="utf-8")
    inputs.large_cuda_file.write_text(_database(Writer(random.Random(SEED + 2)), "hackage", 9_000_000, cuda_entry=True), encoding="utf-8")
    (root / ".complete").write_text("", encoding="utf-8")
    return inputs


def main() -> int:
    inputs = ensure_inputs(log=lambda message: print(message, file=sys.stderr))
    print(inputs.root)
    return 0


if __name__ == "__main__":
    sys.exit(main())
