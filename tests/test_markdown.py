"""`--output-format markdown`: the review summary for a pull-request comment or the job summary."""

from __future__ import annotations

import io

from cudalint.frontend.reporters import ReportOptions, get_reporter
from cudalint.frontend.reporters.markdown import MAX_LISTED
from cudalint.knowledge import sizes
from cudalint.lint.registry import rule_by_code
from cudalint.lint.results import FileResult
from samples import TOOLKIT, checked

SUPPRESSED_AND_BROKEN = "{ a }:\n[\n  (a\n"


def render(results: list[FileResult]) -> str:
    out = io.StringIO()
    get_reporter("markdown")(results, out, ReportOptions())
    return out.getvalue()


def test_counts_per_rule_links_findings_and_sizes() -> None:
    results = [checked("pkgs/a.nix", TOOLKIT), checked("pkgs/b.nix", TOOLKIT)]
    text = render(results)
    lines = text.splitlines()
    assert lines[0] == "## cudalint"
    assert "**2 findings** in 2 files." in lines
    url = rule_by_code(results[0].diagnostics[0].code).url
    assert f"| [CUDA001]({url}) `runfile-toolkit` | 2 | `--unsafe-fixes`: 2 |" in lines
    total = sizes.report_total(results)
    assert total is not None and f"Downloads: {total.describe()} (compressed sizes of NVIDIA's redistributable archives, not Nix closure sizes)." in lines
    listed = [line for line in lines if line.startswith("- `pkgs/")]
    assert [line.split("`")[1] for line in listed] == ["pkgs/a.nix:4:25", "pkgs/b.nix:4:25"]
    assert all(f"[CUDA001]({url})" in line and "<br>fix (unsafe): Replace the runfile toolkit" in line for line in listed)


def test_no_findings_and_file_errors() -> None:
    assert render([checked("a.nix", "{ }: 1\n")]) == "## cudalint\n\nNo findings.\n"
    text = render([FileResult("bad.nix", None, error="not UTF-8 | binary")])
    assert "some files could not be checked" in text and "- `bad.nix`: not UTF-8 \\| binary" in text


def test_long_lists_are_cut() -> None:
    results = [checked(f"p{i:03}.nix", TOOLKIT) for i in range(MAX_LISTED + 3)]
    lines = render(results).splitlines()
    assert sum(line.startswith("- `p") for line in lines) == MAX_LISTED
    assert lines[-1] == "- … and 3 more (run `cudalint check` for all of them)"
