"""The shell reader (cudalint/nix/shell.py): tree-sitter-bash over the shell text of Nix strings, with
offsets that are the Nix source's, and the one way to remove shell code (`edits.remove_shell`)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from cudalint.lint.edits import remove_shell
from cudalint.lint.model import Edit
from cudalint.nix.parsing import descendants, parse
from cudalint.nix.shell import ShellText
from cudalint.nix.source import SourceFile


def _shell(script: str, quoted: bool = False) -> tuple[ShellText, SourceFile]:
    """The shell view of the first string of a small derivation holding `script`."""
    value = '"' + script + '"' if quoted else "''\n" + script + "''"
    source = SourceFile("t.nix", "{ cuda, lib }: {\n  postFixup = " + value + ";\n}\n")
    string = next(n for n in descendants(parse(source).root_node) if n.type in {"indented_string_expression", "string_expression"})
    return ShellText(string, source), source


def _apply(source: SourceFile, edit: Edit) -> str:
    return (source.data[: edit.start] + edit.content.encode() + source.data[edit.end :]).decode()


def test_commands_and_words_keep_the_nix_offsets() -> None:
    shell, source = _shell('    export LD_LIBRARY_PATH="${cuda}/lib:$LD_LIBRARY_PATH" # why\n    wrapProgram $out/bin/x \\\n      --prefix PATH : ${lib.makeBinPath [ cuda ]}\n    X=1 make -j4\n')
    found = [(c.name, [source.data[w.start : w.end].decode() for w in c.words]) for c in shell.commands()]
    assert found == [
        (b"export", ["export", 'LD_LIBRARY_PATH="${cuda}/lib:$LD_LIBRARY_PATH"']),
        (b"wrapProgram", ["wrapProgram", "$out/bin/x", "--prefix", "PATH", ":", "${lib.makeBinPath [ cuda ]}"]),
        (b"make", ["X=1", "make", "-j4"]),
    ]
    # the interpolations stay masked in the words' bytes, for the rules' regexes
    assert shell.commands()[1].words[-1].raw == b"\x01" * len("${lib.makeBinPath [ cuda ]}")
    assert [w.plain for w in shell.commands()[2].arguments()] == [b"-j4"]


def test_comments_are_the_shells() -> None:
    shell, source = _shell("    echo 'a # not a comment' # a comment\n    # export X=1\n    echo a#b\n")
    assert [source.data[a:b].decode() for a, b in shell.comments()] == ["# a comment", "# export X=1"]
    # logical lines of the whole string, its delimiters included
    assert [line.code.strip() for line in shell.lines()] == [b"''", b"echo 'a # not a comment'", b"", b"echo a#b", b"''"]


def test_the_scripts_heredocs_write_are_read_too() -> None:
    shell, source = _shell("    cat > $out/bin/run <<EOF\n    #!/bin/sh\n    export LD_LIBRARY_PATH=${cuda}/lib\n    EOF\n")
    assert [c.name for c in shell.commands()] == [b"cat", b"export"]
    assert [source.data[a:b] for a, b in shell.comments()] == [b"#!/bin/sh"]


def test_loops_and_statements() -> None:
    shell, _ = _shell("    find $out -name '*.so' | while read f; do\n      addDriverRunpath \"$f\"\n    done\n    for f in a b; do :; done < /dev/null\n")
    assert [s.type for s in shell.statements()] == ["pipeline", "redirected_statement"]


def test_nix_escapes_keep_the_shell_structure() -> None:
    # `''${x}` is a literal `${x}` for the shell; `\\;` in a "..." string is the shell's `\;`
    shell, source = _shell("    echo ''${HOME} done\n")
    assert [len(c.words) for c in shell.commands()] == [3]
    shell, source = _shell("find $out -exec addDriverRunpath {} \\\\; ; echo installed", quoted=True)
    assert [c.name for c in shell.commands()] == [b"find", b"echo"]
    assert source.data[shell.commands()[0].words[-1].start : shell.commands()[0].words[-1].end] == b"\\\\;"


@pytest.mark.parametrize(
    ("script", "target", "expected"),
    [
        # a statement on its own line goes with the line (and its comment)
        ("    a\n    export X=1 # set\n    b\n", "export X=1", "    a\n    b\n"),
        # with the `;` that follows it, or the one before it
        ("    export X=1; b\n", "export X=1", "    b\n"),
        ("    a; export X=1\n", "export X=1", "    a\n"),
        # the left side of `&&` goes with the operator; anything that would break a list, a
        # pipeline or a block is replaced by `:`
        ("    export X=1 && b\n", "export X=1", "    b\n"),
        ("    a && export X=1\n", "export X=1", "    a && :\n"),
        ("    export X=1 | b\n", "export X=1", "    : | b\n"),
        ("    if a; then export X=1; fi\n", "export X=1", "    if a; then :; fi\n"),
        ("    for f in a; do\n      export X=1\n    done\n", "export X=1", "    for f in a; do\n      :\n    done\n"),
        # words of a command go with the blanks before the next word (or after the previous one)
        ("    env X=1 Y=2 make\n", "X=1", "    env Y=2 make\n"),
        ("    wrap a --set X y\n", "--set X y", "    wrap a\n"),
        # array elements alone on their line go with the line
        ("    args+=(\n      --set X y\n      --set Z w\n    )\n", "--set X y", "    args+=(\n      --set Z w\n    )\n"),
    ],
)
def test_removal_leaves_valid_shell(script: str, target: str, expected: str) -> None:
    shell, source = _shell(script)
    start = source.data.index(target.encode())
    assert _apply(source, remove_shell(shell, start, start + len(target.encode()))) == source.text.replace(script, expected)


def test_the_parser_is_loaded_only_for_shell_text() -> None:
    """A file holding CUDA references but no shell text never imports tree-sitter-bash."""
    probe = (
        "import sys\n"
        "from cudalint.lint.engine import lint\n"
        "from cudalint.lint.settings import LintSettings\n"
        "from cudalint.nix.source import SourceFile\n"
        "lint(SourceFile('a.nix', sys.argv[1]), LintSettings())\n"
        "print('tree_sitter_bash' in sys.modules)\n"
    )
    no_shell = '{ cudaPackages, stdenv }: stdenv.mkDerivation { pname = "a"; buildInputs = [ cudaPackages.cuda_cudart ]; }\n'
    shell = "{ stdenv }: stdenv.mkDerivation { pname = \"a\"; postFixup = ''\n  # patch\n  addDriverRunpath $out/lib/a.so $out/lib/b.so\n''; }\n"
    loaded = [subprocess.run([sys.executable, "-c", probe, text], capture_output=True, text=True, check=True).stdout.strip() for text in (no_shell, shell)]
    assert loaded == ["False", "True"]
