"""The text, json, github and statistics output formats, on findings of real Nix snippets."""

from __future__ import annotations

import io
import json
import re

import pytest

from cudalint.frontend.reporters import FORMATS, ReportOptions, get_reporter
from cudalint.frontend.reporters.github import escape_data, escape_property
from cudalint.frontend.reporters.statistics import LEGEND, write_statistics, write_statistics_json
from cudalint.frontend.reporters.text import expand_line
from cudalint.knowledge import reference, sizes
from cudalint.lint.engine import lint
from cudalint.lint.fixing import apply_edits
from cudalint.lint.model import Applicability, Diagnostic, Edit, Fix, Severity
from cudalint.lint.results import FileResult, ReportedTarget
from cudalint.nix.source import SourceFile
from samples import SETTINGS, TOOLKIT, checked

# The toolkit fix's title and the summary's size note, as cudalint/knowledge/sizes.py words them (the
# figures themselves are checked against the reference set in test_sizes.py).
NVCC_DOWNLOAD = sizes.toolkit_download(reference.load(), reference.target(None), ["cuda_nvcc"])
NVCC_FIX = f"Replace the runfile toolkit with `cuda_nvcc`: {NVCC_DOWNLOAD.describe()}"
ONE_TOOLKIT = sizes.total([[Diagnostic("CUDA001", "m", 0, 1, Severity.WARNING, (Fix("f", Applicability.UNSAFE, (Edit(0, 1, ""),), download=NVCC_DOWNLOAD),))]])
assert ONE_TOOLKIT is not None
SIZE_NOTE = ONE_TOOLKIT.describe()


# CUDA901 (safe fix) on line 3 and CUDA001 (unsafe fix) on line 5.
SUPPRESSION = """\
{ stdenv, cudatoolkit }:
stdenv.mkDerivation {
  # cudalint: ignore[CUDA001]
  pname = "x"; src = ./.;
  nativeBuildInputs = [ cudatoolkit ];
}
"""

UNICODE = '{ cudatoolkit }:\n{\n\tname = "日本🚀"; x = [ cudatoolkit ];\n}\n'

BROKEN = "{ a }:\n[\n  (a\n    b\n  c\n"

PLAIN = ReportOptions(color=False, unsafe_fixes=False)
ANSI = re.compile(r"\x1b\[[0-9;]*m")


def render(name: str, results: list[FileResult], options: ReportOptions = PLAIN) -> str:
    out = io.StringIO()
    get_reporter(name)(results, out, options)
    return out.getvalue()


# get_reporter


def test_every_format_has_a_reporter() -> None:
    assert set(FORMATS) == {"text", "concise", "json", "sarif", "github", "rdjson", "markdown"}
    for name in FORMATS:
        assert callable(get_reporter(name))


@pytest.mark.parametrize("name", ["xml", "", "TEXT", None])
def test_unknown_format_raises_key_and_value_error(name) -> None:
    with pytest.raises(KeyError):
        get_reporter(name)
    with pytest.raises(ValueError, match="unknown output format"):
        get_reporter(name)


def test_report_options_defaults() -> None:
    options = ReportOptions(color=True, unsafe_fixes=False)
    assert options.show_fixes is True


# text


def test_text_header_source_line_and_caret() -> None:
    output = render("text", [checked("pkgs/a.nix", TOOLKIT)])
    lines = output.splitlines()
    assert lines[0].startswith("pkgs/a.nix:4:25: CUDA001 [warning] `cudatoolkit` is the runfile toolkit")
    assert lines[1] == "  |"
    assert lines[2] == "4 |   nativeBuildInputs = [ cudatoolkit ];"
    assert lines[3] == "  |                         ^^^^^^^^^^^"
    caret = lines[3].index("^")
    assert lines[2][caret : caret + len("cudatoolkit")] == "cudatoolkit"


def test_text_unsafe_fix_is_hidden_without_unsafe_fixes() -> None:
    output = render("text", [checked("a.nix", TOOLKIT)])
    assert f"  = help: {NVCC_FIX} (unsafe fix, hidden: enable with --unsafe-fixes)" in output
    assert output.endswith(f"Found 1 finding (1 fixable with --unsafe-fixes; {SIZE_NOTE}).\n")


def test_text_unsafe_fix_is_shown_with_unsafe_fixes() -> None:
    output = render("text", [checked("a.nix", TOOLKIT)], ReportOptions(color=False, unsafe_fixes=True))
    assert f"  = help: {NVCC_FIX} (unsafe)\n" in output
    assert "a.nix:4:25: CUDA001 [warning]" in output
    assert output.endswith(f"Found 1 finding (1 fixable with --fix; {SIZE_NOTE}).\n")


def test_text_safe_and_unsafe_fixes_counted_in_summary() -> None:
    output = render("text", [checked("a.nix", SUPPRESSION)])
    assert "a.nix:3:3: CUDA901 [warning] suppression comment matched no finding of CUDA001; remove it\n" in output
    assert "  = help: Remove the unused suppression comment\n" in output
    assert output.endswith(f"Found 2 findings (1 fixable with --fix; 1 more with --unsafe-fixes; {SIZE_NOTE}).\n")


def test_text_show_fixes_false_omits_help() -> None:
    output = render("text", [checked("a.nix", SUPPRESSION)], ReportOptions(color=False, unsafe_fixes=False, show_fixes=False))
    assert "help:" not in output
    assert "Found 2 findings" in output


def test_text_all_checks_passed() -> None:
    output = render("text", [checked("a.nix", "{ cudaPackages }: cudaPackages.cuda_nvcc\n")])
    assert output == "Checked 1 file.\nAll checks passed!\n"
    assert render("text", []) == "All checks passed!\n"


def test_text_summary_says_what_the_prefilter_skipped() -> None:
    # "All checks passed!" must not hide that a file was never parsed
    output = render("text", [checked("a.nix", "{ cudaPackages }: cudaPackages.cuda_nvcc\n"), FileResult("b.nix", None)])
    assert output == "Checked 1 file; skipped 1 file without CUDA names (not parsed).\nAll checks passed!\n"


def test_targets_are_stated_once_per_run_per_distinct_target() -> None:
    pinned = ReportedTarget("23.05", "flake.nix inputs.nixpkgs.url", "single-output", ("11.7",))
    newest = ReportedTarget(None, None, "split-redist", ("12.9",))
    results = [checked("a.nix", SUPPRESSION), checked("b.nix", SUPPRESSION), checked("c/d.nix", SUPPRESSION)]
    results[0].target = results[1].target = pinned
    results[2].target = newest
    text = render("text", results)
    assert text.count("Target: nixpkgs 23.05 (flake.nix inputs.nixpkgs.url), CUDA 11.7\n") == 1
    assert "Target: the newest nixpkgs (nothing pins it), CUDA 12.9\n" in text
    assert "assumed" not in text
    data = json.loads(render("json", results))
    assert [f["target"]["nixpkgs"] for f in data if f["filename"] == "c/d.nix"] == ["unstable"] * 2
    assert [f["target"]["source"] for f in data if f["filename"] == "a.nix"] == ["flake.nix inputs.nixpkgs.url"] * 2
    sarif = json.loads(render("sarif", results))
    run_targets = sarif["runs"][0]["properties"]["targets"]
    assert [t["description"] for t in run_targets] == [pinned.describe(), newest.describe()]


def test_text_tabs_and_wide_characters_keep_the_caret_under_the_span() -> None:
    output = render("text", [checked("u.nix", UNICODE)])
    lines = output.splitlines()
    assert lines[0].startswith("u.nix:3:22: CUDA001")  # columns count characters: tab=1, 🚀=1
    source_line, underline = lines[2], lines[3]
    assert "\t" not in source_line
    assert source_line == '3 |     name = "日本🚀"; x = [ cudatoolkit ];'
    # 日, 本 and 🚀 take two terminal cells each: the caret is placed by display width.
    prefix = source_line[: source_line.index("cudatoolkit")]
    wide = sum(1 for c in prefix if c in "日本🚀")
    assert underline.index("^") == len(prefix) + wide
    assert underline.count("^") == len("cudatoolkit")


def test_expand_line_tab_stops() -> None:
    shown, columns = expand_line("a\tb\t\tc")
    assert shown == "a   b       c"
    assert columns == [0, 1, 4, 5, 8, 12, 13]
    shown, columns = expand_line("\x07x")
    assert shown == "\u2407x" and columns == [0, 1, 2]


def test_text_multiline_span_underlines_the_first_line_only() -> None:
    output = render("text", [checked("b.nix", BROKEN)])
    block = output.split("\n\n")[0].splitlines()
    assert block[0].startswith("b.nix:1:1: CUDA900 [error] syntax error")
    assert block[2] == "1 | { a }:"
    assert block[3] == "  | ^^^^^^..."


def test_text_zero_width_span_gets_one_caret() -> None:
    source = SourceFile("z.nix", "let\n  x = {\n    b = ;\n  };\nin x\n")
    result = lint(source, SETTINGS, prefilter=False)
    empty = [d for d in result.diagnostics if d.start == d.end]
    assert empty, "expected an empty-span syntax error"
    output = render("text", [FileResult("z.nix", source, empty)])
    lines = output.splitlines()
    assert lines[2] == "3 |     b = ;"
    assert lines[3] == "  |        ^"  # the empty span after `=`, column 8


def test_text_span_at_end_of_file_without_newline() -> None:
    source = SourceFile("e.nix", "[ 1")
    result = lint(source, SETTINGS, prefilter=False)
    assert result.diagnostics
    output = render("text", [FileResult("e.nix", source, result.diagnostics)])
    assert "1 | [ 1" in output and "Found" in output


def test_text_crlf_lines_show_without_carriage_return() -> None:
    output = render("text", [checked("c.nix", TOOLKIT.replace("\n", "\r\n"))])
    assert "\r" not in output
    assert "4 |   nativeBuildInputs = [ cudatoolkit ];\n" in output


@pytest.mark.parametrize("filler", ['"0000"', '"日本"', '"\t"'])
def test_text_long_lines_are_clipped_around_the_span(filler) -> None:
    text = "{ cudatoolkit }:\n[ " + " ".join([filler] * 100) + " cudatoolkit " + " ".join([filler] * 100) + " ]\n"
    output = render("text", [checked("l.nix", text)])
    lines = output.splitlines()
    assert lines[0].startswith("l.nix:2:")
    shown, underline = lines[2], lines[3]
    assert len(shown) < 260
    assert shown.startswith("2 | …") and shown.endswith("…")
    caret = underline.index("^")
    cells = 0  # display cells of the shown line before the caret
    position = 0
    while cells < caret:
        cells += 2 if shown[position] in "日本" else 1
        position += 1
    assert shown[position:].startswith("cudatoolkit")
    assert underline.count("^") == len("cudatoolkit")


def test_text_colour_only_when_asked() -> None:
    plain = render("text", [checked("a.nix", SUPPRESSION)])
    coloured = render("text", [checked("a.nix", SUPPRESSION)], ReportOptions(color=True, unsafe_fixes=False))
    assert "\x1b[" not in plain
    assert "\x1b[" in coloured
    assert ANSI.sub("", coloured) == plain


def test_text_file_errors_and_internal_errors() -> None:
    results = [
        FileResult("bad.nix", None, error="not valid UTF-8"),
        FileResult("ok.nix", SourceFile("ok.nix", "1\n"), internal_errors=["internal error in CUDA123: boom\nTraceback..."]),
    ]
    output = render("text", results)
    # the CLI prints them to standard error, once
    assert "bad.nix" not in output and "boom" not in output
    assert output.endswith("No findings; 1 file could not be checked; 1 internal error.\n")
    output = render("text", [checked("a.nix", TOOLKIT), results[0]])
    assert output.endswith(f"Found 1 finding (1 fixable with --unsafe-fixes; {SIZE_NOTE}); 1 file could not be checked.\n")


def test_text_summary_counts_applied_fixes() -> None:
    result = checked("a.nix", TOOLKIT)
    result.fixed = 2
    assert render("text", [result]).endswith(f"Found 3 findings (2 fixed, 1 remaining; 1 fixable with --unsafe-fixes; {SIZE_NOTE}).\n")
    clean = checked("b.nix", "1\n")
    clean.fixed = 1
    assert render("text", [clean]).endswith("Found 1 finding (1 fixed, 0 remaining).\n")
    clean.diff = "--- a.nix\n+++ a.nix\n"  # --diff: nothing was written
    assert render("text", [clean]).endswith("Found 1 finding (1 would be fixed, 0 remaining).\n")


def test_text_files_sorted_by_path() -> None:
    output = render("text", [checked("b.nix", TOOLKIT), checked("a.nix", TOOLKIT)])
    assert output.index("a.nix:4:25") < output.index("b.nix:4:25")


# json


def test_json_shape_matches_ruff() -> None:
    data = json.loads(render("json", [checked("pkgs/a.nix", TOOLKIT)]))
    assert data == [
        {
            "code": "CUDA001",
            "rule": "runfile-toolkit",
            "message": data[0]["message"],
            "severity": "warning",
            "filename": "pkgs/a.nix",
            "location": {"row": 4, "column": 25},
            "end_location": {"row": 4, "column": 36},
            "context": "package",
            "fix": {
                "applicability": "unsafe",
                "message": NVCC_FIX,
                "edits": data[0]["fix"]["edits"],
            },
            "url": "https://github.com/cudalint/cudalint/blob/main/docs/rules.md#cuda001-runfile-toolkit",
            "target": None,  # a result from outside a check run: no target recorded
        }
    ]
    assert data[0]["context"] in {"package", "dev shell", "module", "override"}
    edits = data[0]["fix"]["edits"]
    assert {"content": "cudaPackages.cuda_nvcc", "location": {"row": 4, "column": 25}, "end_location": {"row": 4, "column": 36}} in edits
    assert all(set(e) == {"content", "location", "end_location"} for e in edits)
    # Edits are listed in file order.
    assert [(e["location"]["row"], e["location"]["column"]) for e in edits] == sorted((e["location"]["row"], e["location"]["column"]) for e in edits)


def _offset(text: str, row: int, column: int) -> int:
    lines = text.splitlines(keepends=True)
    return sum(len(line) for line in lines[: row - 1]) + column - 1


def test_json_edits_apply_to_the_source() -> None:
    """Rows and character columns of the edits address the text exactly: applying them gives
    what the engine's byte-offset edits give."""
    text = SUPPRESSION.replace('"x"', '"日本🚀"')
    result = checked("a.nix", text)
    data = json.loads(render("json", [result]))
    assert [d["code"] for d in data] == ["CUDA901", "CUDA001"]
    for item, diagnostic in zip(data, result.diagnostics):
        fixed = text
        for edit in sorted(item["fix"]["edits"], key=lambda e: (e["location"]["row"], e["location"]["column"]), reverse=True):
            start = _offset(text, edit["location"]["row"], edit["location"]["column"])
            end = _offset(text, edit["end_location"]["row"], edit["end_location"]["column"])
            fixed = fixed[:start] + edit["content"] + fixed[end:]
        assert fixed == apply_edits(text.encode(), list(diagnostic.fix.edits)).decode()
        assert fixed != text


def test_json_columns_count_characters() -> None:
    data = json.loads(render("json", [checked("u.nix", UNICODE)]))
    (item,) = data
    assert item["location"] == {"row": 3, "column": 22}  # the tab, 日, 本 and 🚀 are one column each
    assert item["end_location"] == {"row": 3, "column": 33}


def test_json_sorted_by_filename_then_position_and_errors_excluded() -> None:
    results = [
        checked("z.nix", SUPPRESSION),
        FileResult("bad.nix", None, error="unreadable"),
        checked("a.nix", BROKEN),
        checked("m.nix", TOOLKIT),
    ]
    data = json.loads(render("json", results))
    keys = [(d["filename"], d["location"]["row"], d["location"]["column"]) for d in data]
    assert keys == sorted(keys)
    assert "bad.nix" not in {d["filename"] for d in data}
    assert {d["filename"] for d in data} == {"a.nix", "m.nix", "z.nix"}
    assert all(d["fix"] is None for d in data if d["code"] == "CUDA900")


def test_json_empty_is_an_empty_list() -> None:
    assert json.loads(render("json", [])) == []


# github


def test_github_annotations() -> None:
    output = render("github", [checked("pkgs/a.nix", SUPPRESSION)])
    lines = output.splitlines()
    assert lines[0] == ("::warning file=pkgs/a.nix,line=3,col=3,endLine=3,endColumn=30,title=CUDA901 (unused-suppression)::suppression comment matched no finding of CUDA001; remove it")
    assert lines[1].startswith("::warning file=pkgs/a.nix,line=5,col=25,endLine=5,endColumn=36,title=CUDA001 (runfile-toolkit)::`cudatoolkit`")


def test_github_levels_multiline_and_errors() -> None:
    results = [checked("b.nix", BROKEN), FileResult("x,y:z.nix", None, error="100% broken\nreally")]
    output = render("github", results)
    assert "::error file=x%2Cy%3Az.nix,title=cudalint::100%25 broken%0Areally\n" in output
    assert "::error file=b.nix,line=1,col=1,endLine=5,title=CUDA900 (syntax-error)::syntax error" in output
    severities = {Severity.INFO: "notice", Severity.WARNING: "warning", Severity.ERROR: "error"}
    source = SourceFile("i.nix", "{ a }: a\n")
    for severity, command in severities.items():
        result = FileResult("i.nix", source, [Diagnostic("CUDA001", "m", 0, 1, severity)])
        assert render("github", [result]).startswith(f"::{command} file=i.nix,line=1,col=1,endLine=1,endColumn=2,")


def test_github_escaping() -> None:
    assert escape_data("a%b\r\nc: d, e") == "a%25b%0D%0Ac: d, e"
    assert escape_property("a%b\r\nc: d, e") == "a%25b%0D%0Ac%3A d%2C e"


# statistics


def test_statistics() -> None:
    results = [checked("a.nix", SUPPRESSION), checked("b.nix", TOOLKIT), checked("c.nix", BROKEN), FileResult("d.nix", None, error="x")]
    out = io.StringIO()
    write_statistics(results, out)
    lines = out.getvalue().splitlines()
    assert lines[0] == "2  CUDA001  [-] runfile-toolkit"
    assert lines[1:3] == ["1  CUDA900  [ ] syntax-error", "1  CUDA901  [*] unused-suppression"]
    # two files, one toolkit each: the total counts each file's toolkit once
    total = sizes.total([[d for d in r.diagnostics] for r in results if r.source is not None])
    assert total is not None and total.before == 2 * NVCC_DOWNLOAD.before and total.after == 2 * NVCC_DOWNLOAD.after
    assert lines[3:5] == ["4  total", LEGEND]
    assert lines[5:] == [total.describe()[:1].upper() + total.describe()[1:] + "."]
    out = io.StringIO()
    write_statistics_json(results, out)
    assert json.loads(out.getvalue())[:2] == [
        {"code": "CUDA001", "name": "runfile-toolkit", "count": 2, "fixable": "some"},
        {"code": "CUDA900", "name": "syntax-error", "count": 1, "fixable": "none"},
    ]


def test_statistics_empty() -> None:
    out = io.StringIO()
    write_statistics([checked("a.nix", "1\n")], out)
    assert out.getvalue() == "No findings.\n"


def test_statistics_marks_partly_fixable() -> None:
    source = SourceFile("a.nix", "{ a }: a\n")
    fix = Fix("f", Applicability.SAFE, (Edit(0, 1, "x"),))
    diagnostics = [Diagnostic("CUDA001", "m", 0, 1, Severity.WARNING, (fix,)), Diagnostic("CUDA001", "m", 2, 3, Severity.WARNING)]
    out = io.StringIO()
    write_statistics([FileResult("a.nix", source, diagnostics)], out)
    assert out.getvalue() == f"2  CUDA001  [-] runfile-toolkit\n2  total\n{LEGEND}\n"


def test_text_escapes_control_characters() -> None:
    source = SourceFile("a\x1b[31m.nix", "{ a }:\n  \u202e[ a ]\n")
    diagnostic = Diagnostic("CUDA001", "line one\nline two", 9, 10, Severity.WARNING)
    output = render("text", [FileResult(source.path, source, [diagnostic]), FileResult("e.nix", None, error="bad\rthing")])
    assert "\x1b" not in output and "\u202e" not in output and "\r" not in output
    assert "a\\x1b[31m.nix:2:3: CUDA001 [warning] line one\\nline two\n" in output
    assert "2 |   \ufffd[ a ]\n" in output
    assert "  |   ^\n" in output
    assert "e.nix" not in output  # its error goes to standard error (tests/test_cli.py)


def test_concise_is_a_line_per_finding_then_the_summary() -> None:
    results = [checked("b.nix", TOOLKIT), checked("a.nix", SUPPRESSION)]
    full = render("text", results)
    concise = render("concise", results).splitlines()
    headers = [line for line in full.splitlines() if re.match(r"^[ab]\.nix:\d+:\d+: CUDA\d{3} \[", line)]
    assert concise[: len(headers)] == headers and len(headers) >= 2
    assert concise[len(headers) :] == full.splitlines()[-len(concise[len(headers) :]) :]  # the same closing lines
