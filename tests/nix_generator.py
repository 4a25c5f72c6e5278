"""Hypothesis strategies for fuzzing: Nix files built from the grammar with the CUDA idioms of the
rule catalog, and mutations of the fixtures.

`nix_files()` follows the grammar (so most cases parse, and the rules get deep into them) but
draws names, attributes and shell text from what the rules look for: `with cudaPackages;`,
`inherit (cudaPackages) ...`, `lib.optionals cudaSupport [...]`, `++`, `let`, `rec`, nested and
dotted attribute sets, strings with interpolation, shell phases exporting LD_LIBRARY_PATH,
comments (suppressions too) after every token kind, trailing commas in formals (with comments
after them), unicode. Duplicate attributes and the
odd unbalanced piece come out of it too: the parser oracle judges every case either way.

`mutated_fixtures()` breaks real files: truncation, byte flips, inserted NULs and invalid UTF-8,
spliced tokens, deep nesting. It yields bytes (what a file on disk or an editor buffer may hold).
"""

from __future__ import annotations

from pathlib import Path

from hypothesis import strategies as st

FIXTURES = Path(__file__).parent / "fixtures"

PACKAGES = [
    "cudatoolkit",
    "cudaPackages.cudatoolkit",
    "cuda_nvcc",
    "cuda_cudart",
    "cuda_cccl",
    "libcublas",
    "libcusparse",
    "cudnn",
    "nccl",
    "cutensor",
    "tensorrt",
    "cuda_nvrtc",
    "cudaPackages_11.cudatoolkit",
    "cudaPackages_12.cuda_nvcc",
    "cudaPackages.libcublas.dev",
    "cudaPackages.cuda_cudart.static",
    "autoAddDriverRunpath",
    "addDriverRunpath",
    "autoAddOpenGLRunpathHook",
    "addOpenGLRunpath",
    "autoAddCudaCompatRunpath",
    "linuxPackages.nvidia_x11",
    "nvidia_x11",
    "config.boot.kernelPackages.nvidia_x11",
    "cmake",
    "ninja",
    "python3",
    "zlib",
    "makeWrapper",
    "gcc",
    "stdenv.cc",
    "backendStdenv.cc",
]
FUNCTIONS = [
    "lib.optionals cudaSupport",
    "lib.optional cudaSupport",
    "lib.getDev",
    "lib.getLib",
    "lib.getBin",
    'lib.getOutput "static"',
    "lib.makeLibraryPath",
    'lib.makeSearchPathOutput "lib" "lib"',
    "lib.optionalString cudaSupport",
    'lib.cmakeBool "USE_CUDA"',
    "builtins.attrValues",
    "map (x: x)",
]
BUILDERS = [
    "stdenv.mkDerivation",
    "backendStdenv.mkDerivation",
    "cudaPackages.backendStdenv.mkDerivation",
    "effectiveStdenv.mkDerivation",
    "mkShell",
    "pkgs.mkShell",
    "symlinkJoin",
    "buildEnv",
    "python3Packages.buildPythonPackage",
    "buildPythonPackage",
    "clangStdenv.mkDerivation",
]
ATTRIBUTES = [
    "nativeBuildInputs",
    "buildInputs",
    "propagatedBuildInputs",
    "checkInputs",
    "pname",
    "version",
    "src",
    "cmakeFlags",
    "env",
    "env.CUDA_PATH",
    "env.LD_LIBRARY_PATH",
    "LD_LIBRARY_PATH",
    "CUDA_HOME",
    "postFixup",
    "preFixup",
    "postInstall",
    "shellHook",
    "installPhase",
    "fixupPhase",
    "passthru",
    "meta",
    "meta.broken",
    "paths",
    "name",
    "cudaSupport",
    "requiredSystemFeatures",
    "dontStrip",
    "environment.variables.LD_LIBRARY_PATH",
    "hardware.graphics.enable",
    "cudaPropagateToOutput",
]
VARIABLES = [
    "cudaPackages",
    "cudaSupport",
    "config",
    "lib",
    "stdenv",
    "pkgs",
    "cudatoolkit",
    "cuda_nvcc",
    "libcublas",
    "cudaCapabilities",
    "flags",
    "x",
    "self",
    "final",
    "prev",
    "finalAttrs",
    "python3",
]
FORMALS = [
    "lib",
    "stdenv",
    "config",
    "cudaPackages",
    "cudatoolkit",
    "cuda_nvcc",
    "autoAddDriverRunpath",
    "addDriverRunpath",
    "cmake",
    "symlinkJoin",
    "mkShell",
    "backendStdenv",
    "linuxPackages",
    "fetchurl",
]
DEFAULTS = ["config.cudaSupport", "false", "true", "cudaPackages.cudatoolkit", "null", "{ }", "[ ]", '"12.4"']
SHELL_LINES = [
    "export LD_LIBRARY_PATH=/run/opengl-driver/lib:$LD_LIBRARY_PATH",
    "export LD_LIBRARY_PATH=${cudatoolkit}/lib:${lib.makeLibraryPath [ cudaPackages.libcublas ]}",
    "addDriverRunpath $out/bin/app",
    "addOpenGLRunpath $out/lib/libfoo.so",
    'for f in $out/lib/*.so; do addDriverRunpath "$f"; done',
    "find $out -type f -name '*.so' -exec addDriverRunpath {} \\;",
    "patchelf --set-rpath /run/opengl-driver/lib $out/bin/app",
    "wrapProgram $out/bin/app --prefix LD_LIBRARY_PATH : ${addDriverRunpath.driverLink}/lib",
    "export CUDA_PATH=${cudatoolkit}",
    "export CXX=${backendStdenv.cc}/bin/c++",
    "runHook postFixup",
    "# export LD_LIBRARY_PATH=/run/opengl-driver/lib",
    'echo "¡ünïcødé ✓ 🚀"',
    'cmake -DCMAKE_CUDA_ARCHITECTURES="75;86" ..',
]
COMMENTS = [
    "# a comment",
    "# cudalint: ignore[CUDA001]",
    "# cudalint: ignore[CUDA101, CUDA999]",
    "# cudalint: ignore-file[CUDA304]",
    "/* block */",
    "/* ünïcødé ✓ */",
    "# 🚀 日本語",
    "# cudalint: ignore",
]

names = st.sampled_from
identifier = names(VARIABLES)


@st.composite
def gap(draw) -> str:
    """White space between tokens: mostly a space, sometimes a newline, a comment or nothing."""
    choice = draw(st.integers(0, 9))
    if choice < 6:
        return " "
    if choice < 8:
        return "\n" + " " * draw(st.integers(0, 4))
    if choice == 8:
        comment = draw(names(COMMENTS))
        return f" {comment}\n" if comment.startswith("#") else f" {comment} "
    return "\t"


def spaced(draw, *tokens: str) -> str:
    """`tokens` with a drawn gap after each but the last: a comment can follow any token kind
    (`{`, a formal, `?`, `,`, `...`, `}`, `@`, `:`, `=`, `;`, `inherit`, `(`, `.`, `or`,
    keywords, operators), which is where the grammar's error recovery has been wrong before."""
    return "".join(token + draw(gap()) for token in tokens[:-1]) + tokens[-1]


def joined(parts: list[str], separators: list[str]) -> str:
    return "".join(p + s for p, s in zip(parts, separators + [""]))


@st.composite
def string_literal(draw, expressions) -> str:
    pieces = []
    for _ in range(draw(st.integers(0, 3))):
        kind = draw(st.integers(0, 4))
        if kind == 0:
            pieces.append(spaced(draw, "${", draw(expressions), "}"))
        elif kind == 1:
            pieces.append(draw(names(["/run/opengl-driver/lib", "/lib", "\\n", '\\"', "\\$", "$$", "ü✓🚀", "${addDriverRunpath.driverLink}/lib"])))
        else:
            pieces.append(draw(st.text(st.characters(blacklist_characters='"\\$', blacklist_categories=("Cs",)), max_size=8)))
    return '"' + "".join(pieces) + '"'


@st.composite
def indented_string(draw, expressions) -> str:
    lines = []
    for _ in range(draw(st.integers(0, 4))):
        line = draw(names(SHELL_LINES))
        if draw(st.booleans()):
            line = line.replace("${cudatoolkit}", "${" + draw(expressions) + "}")
        lines.append("  " + line)
    return "''\n" + "\n".join(lines) + "\n''"


@st.composite
def attrset(draw, expressions, recursive: bool = False) -> str:
    bindings = []
    for _ in range(draw(st.integers(0, 5))):
        kind = draw(st.integers(0, 9))
        if kind == 0:
            bindings.append(spaced(draw, "inherit", *draw(st.lists(identifier, min_size=1, max_size=3)), ";"))
        elif kind == 1:
            inherited = draw(st.lists(names(["cuda_nvcc", "libcublas", "backendStdenv", "flags", "cudatoolkit"]), min_size=1, max_size=3))
            owner = draw(names(["cudaPackages", "pkgs", "cudaPackages_12"]))
            bindings.append(spaced(draw, "inherit", "(", owner, ")", *inherited, ";"))
        else:
            path = draw(names(ATTRIBUTES)).split(".")
            dotted = [part for name in path for part in (name, ".")][:-1]
            bindings.append(spaced(draw, *dotted, "=", draw(expressions), ";"))
    separators = [draw(gap()) for _ in bindings]
    body = joined(bindings, separators)
    return ("rec" + draw(gap()) if recursive else "") + "{" + draw(gap()) + body + draw(gap()) + "}"


@st.composite
def function(draw, expressions) -> str:
    chosen = draw(st.lists(names(FORMALS), min_size=0, max_size=5, unique=True))
    formals = []
    for name in chosen:
        formals.append(spaced(draw, name, "?", draw(names(DEFAULTS))) if draw(st.integers(0, 3)) == 0 else name)
    if draw(st.booleans()):
        formals.append("...")
    if draw(st.booleans()):  # one per line with trailing commas: nixfmt's style (none after `...`,
        # which Nix rejects, except now and then), with comments after any token, commas included
        items = [spaced(draw, f, ",") if f != "..." or not draw(st.integers(0, 5)) else f for f in formals]
        head = "{\n" + "".join(f"  {item}{draw(gap())}\n" for item in items) + "}"
    else:
        head = "{" + draw(gap()) + "".join(f + draw(gap()) + ("," + draw(gap()) if i < len(formals) - 1 else "") for i, f in enumerate(formals)) + "}"
    kind = draw(st.integers(0, 9))
    if kind == 0:
        head = spaced(draw, "args", "@", head)
    elif kind == 1:
        head = spaced(draw, head, "@", "args")
    elif kind == 2:
        head = draw(identifier)
    return spaced(draw, head, ":", draw(expressions))


def expressions() -> st.SearchStrategy[str]:
    leaves = st.one_of(
        names(PACKAGES),
        identifier,
        names(["1", "0.5", "true", "false", "null", "./src", "/run/opengl-driver/lib", "<nixpkgs>", '"12.0"']),
    )

    def extend(inner: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
        listed = st.lists(inner, max_size=4).flatmap(lambda items: st.lists(gap(), min_size=len(items) + 1, max_size=len(items) + 1).map(lambda seps: "[" + seps[-1] + joined(items, seps[:-1]) + " ]"))

        def spaced_with(*parts):
            return st.tuples(*parts).flatmap(lambda t: st.composite(lambda draw: spaced(draw, *t))())

        return st.one_of(
            listed,
            st.tuples(names(FUNCTIONS), listed).map(lambda t: f"{t[0]} {t[1]}"),
            spaced_with(st.just("("), names(["lib.getDev", "lib.getLib", "lib.getBin"]), names(PACKAGES), st.just(")")),
            spaced_with(listed, st.just("++"), listed),
            st.tuples(names(BUILDERS), attrset(inner)).map(lambda t: f"{t[0]} {t[1]}"),
            spaced_with(names(BUILDERS), st.just("("), names(["finalAttrs"]), st.just(":"), attrset(inner), st.just(")")),
            attrset(inner),
            attrset(inner, recursive=True),
            spaced_with(st.just("with"), names(["cudaPackages", "pkgs", "lib", "cudaPackages_12", "pkgs.cudaPackages"]), st.just(";"), inner),
            st.tuples(st.lists(st.tuples(identifier, inner), min_size=1, max_size=3), inner).flatmap(
                lambda t: spaced_with(st.just("let"), *[st.just(f"{n} = {v};") for n, v in t[0]], st.just("in"), st.just(t[1]))
            ),
            spaced_with(
                st.just("if"), names(["cudaSupport", "config.cudaSupport", '(cudaAtLeast "12.0")', "!cudaSupport", "stdenv.hostPlatform.isLinux"]), st.just("then"), inner, st.just("else"), inner
            ),
            spaced_with(st.just("("), inner, names(["//", "+", "==", "&&", "||", "->", "!="]), inner, st.just(")")),
            spaced_with(st.just("("), inner, st.just(")"), st.just("."), names(ATTRIBUTES), st.just("or"), st.just("null")),
            spaced_with(st.just("("), inner, st.just("?"), names(["cudaSupport", "dev", "lib"]), st.just(")")),
            spaced_with(st.just("assert"), names(["cudaSupport", "cudaPackages ? cudatoolkit"]), st.just(";"), inner),
            spaced_with(st.just("("), names(["!", "-"]), inner, st.just(")")),
            inner.map(lambda e: f"({e})"),
            string_literal(inner),
            indented_string(inner),
            function(inner),
        )

    return st.recursive(leaves, extend, max_leaves=25)


@st.composite
def nix_files(draw) -> str:
    """A whole file: usually a package function, sometimes a bare expression; unicode and a
    trailing newline or not."""
    body = draw(expressions())
    if draw(st.integers(0, 3)):
        body = draw(function(st.just(body)))
    leading = draw(st.sampled_from(["", "# ünïcødé header ✓\n", "# cudalint: ignore-file[CUDA001]\n", "\n"]))
    return leading + body + draw(st.sampled_from(["\n", "", "\n\n"]))


# ---------------------------------------------------------------------------------------------
# Mutations of real files

DEPTH = 10_000
NESTINGS = [("(", ")"), ("[ ", " ]"), ("{ a = ", "; }"), ("let a = ", "; in a"), ('"${', '}"'), ("x: ", ""), ("with cudaPackages; ", "")]


def fixture_paths() -> list[Path]:
    return sorted(FIXTURES.rglob("*.nix"))


@st.composite
def mutated_fixtures(draw) -> bytes:
    """A fixture with one to three of: truncation, byte flips, NULs, invalid UTF-8, a token
    spliced in or deleted, a line duplicated, or its body nested 10,000 levels deep."""
    data = draw(names(fixture_paths())).read_bytes()
    for _ in range(draw(st.integers(1, 3))):
        kind = draw(st.integers(0, 7))
        at = draw(st.integers(0, len(data)))
        if kind == 0:
            data = data[:at]
        elif kind == 1 and data:
            at = min(at, len(data) - 1)
            data = data[:at] + bytes([data[at] ^ (1 << draw(st.integers(0, 7)))]) + data[at + 1 :]
        elif kind == 2:
            data = data[:at] + b"\0" + data[at:]
        elif kind == 3:
            data = data[:at] + draw(names([b"\xff", b"\xc3", b"\xed\xa0\x80", b"\xe2\x82", b"\x80\x80"])) + data[at:]
        elif kind == 4:
            token = draw(names([b",", b";", b"}", b"{", b"[", b"]", b"(", b")", b"''", b'"', b"${", b"=", b" in ", b"let ", b"@", b"...", b"#", b"/*"]))
            data = data[:at] + token + data[at:]
        elif kind == 5 and data:
            end = min(len(data), at + draw(st.integers(1, 12)))
            data = data[:at] + data[end:]
        elif kind == 6:
            lines = data.split(b"\n")
            line = draw(st.integers(0, len(lines) - 1))
            lines.insert(line, lines[line])
            data = b"\n".join(lines)
        else:
            opening, closing = draw(names(NESTINGS))
            data = opening.encode() * DEPTH + data + closing.encode() * DEPTH
    return data


def _dense_element(rule: str | None = None) -> bytes:
    """A fire fixture (of `rule`, or of any rule but CUDA001, whose fix-all does not converge
    over many functions yet: see test_fuzz) without comments or indented strings (which would
    swallow the rest of a line), on one line, parenthesised: an element of a list."""
    for path in fixture_paths():
        data = path.read_bytes()
        wanted = path.parent.name == rule if rule else path.parent.name not in ("CUDA001", "CUDA900")
        if wanted and path.name.startswith("fire_") and b"#" not in data and b"''" not in data:
            return b"(" + data.replace(b"\n", b" ") + b") "
    raise AssertionError("no fire fixture without comments and indented strings")


def dense_list(copies: int, rule: str | None = None) -> bytes:
    """A list of `copies` package functions on one line: valid Nix, dense with findings."""
    return b"[ " + _dense_element(rule) * copies + b"]"


def one_line(size: int) -> bytes:
    """A dense list on one line of about `size` bytes (a minified or generated file)."""
    return dense_list(size // len(_dense_element()))
