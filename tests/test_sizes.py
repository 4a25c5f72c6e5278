"""Download figures (cudalint/knowledge/sizes.py) against sums done here by hand from the reference set."""

from __future__ import annotations

import json
from importlib import resources

from cudalint.knowledge import reference, sizes
from cudalint.lint.engine import lint
from cudalint.lint.model import Applicability, Diagnostic, Fix, Severity
from cudalint.lint.settings import LintSettings
from cudalint.nix.source import SourceFile

DATA = json.loads(resources.files("cudalint.knowledge").joinpath("data/reference.json").read_text(encoding="utf-8"))
# What nixpkgs' pkgs/development/cuda-modules/packages/cudatoolkit.nix joins (split-redist era),
# written out here rather than read from nix/toolkit.nix.
SPLIT_REDIST_JOIN = [
    "cuda_cuobjdump", "cuda_gdb", "cuda_nvcc", "cuda_nvdisasm", "cuda_nvprune", "cuda_cccl", "cuda_cudart", "cuda_cupti",
    "cuda_cuxxfilt", "cuda_nvml_dev", "cuda_nvrtc", "cuda_nvtx", "cuda_profiler_api", "cuda_sanitizer_api",
    "libcublas", "libcufft", "libcurand", "libcusolver", "libcusparse", "libnpp",
]  # fmt: skip
PACKAGE = """\
{ stdenv, cudatoolkit }:
stdenv.mkDerivation {
  pname = "gemm";
  version = "1";
  buildInputs = [ cudatoolkit ];
  NIX_LDFLAGS = "-lcublas";
}
"""


def archive(release: str, name: str) -> int:
    return DATA["releases"][release]["packages"][name]["size"]


def test_the_issue_example_by_hand() -> None:
    """cudart + cccl + cublas for 12.9 on unstable, and what the toolkit joins there."""
    target = reference.target("unstable", ("12.9",))
    after = archive("12.9", "cuda_cudart") + archive("12.9", "cuda_cccl") + archive("12.9", "libcublas")
    before = sum(archive("12.9", name) for name in SPLIT_REDIST_JOIN)
    download = sizes.toolkit_download(reference.load(), target, ["cuda_cudart", "cuda_cccl", "libcublas"])
    assert (download.before, download.after, download.joined) == (before, after, 20)
    assert sizes.format_bytes(after) == "0.94 GB"
    assert download.describe() == f"{sizes.format_bytes(before)} -> 0.94 GB to download, by NVIDIA archive size (`cudatoolkit` joins 20 redistributables for CUDA 12.9)"


def test_cuda_13_joins_cuda_crt_and_the_newest_release_counts() -> None:
    target = reference.target("unstable", ("12.9", "13.0"))
    download = sizes.toolkit_download(reference.load(), target, ["cuda_nvcc"])
    assert download.release == "13.0" and download.joined == 21
    assert download.before == sum(archive("13.0", name) for name in [*SPLIT_REDIST_JOIN, "cuda_crt"])


def test_runfile_eras_count_at_least_the_components_the_runfile_installs() -> None:
    target = reference.target("24.05")
    download = sizes.toolkit_download(reference.load(), target, ["cuda_nvcc"])
    members = sizes.toolkit_members(reference.load(), target, "12.2", runfile=True)
    assert members is not None and "cuda_nvcc" in members and "libcublas" in members
    assert download.runfile and download.before == sum(archive("12.2", m) for m in members) and download.after == archive("12.2", "cuda_nvcc")
    assert download.describe().startswith(f"at least {sizes.format_bytes(download.before)} -> ")
    assert "unknown" not in download.describe() and "the runfile installer of CUDA 12.2 holds these" in download.describe()
    total = sizes.total([[Diagnostic("CUDA001", "m", 0, 1, Severity.WARNING, (Fix("f", Applicability.UNSAFE, (), download=download),))]])
    assert total is not None and total.describe().startswith("fixes cut NVIDIA archive downloads from at least ")


def test_the_inferred_fix_states_its_figure_and_the_totals_add_up() -> None:
    settings = LintSettings(enabled=frozenset({"CUDA001"}), nixpkgs="unstable", cuda=("12.9",))
    (finding,) = lint(SourceFile("a.nix", PACKAGE), settings).diagnostics
    minimal, inferred = finding.fixes
    # the package builds, so the replacement also writes `cuda_nvcc` to nativeBuildInputs (CUDA001)
    nvcc = archive("12.9", "cuda_nvcc")
    assert inferred.download is not None and inferred.download.after == nvcc + archive("12.9", "cuda_cudart") + archive("12.9", "cuda_cccl") + archive("12.9", "libcublas")
    assert inferred.title.endswith(inferred.download.describe()) and "1.02 GB" in inferred.title
    # two files with the same finding: each downloads the toolkit once; totals use the primary fix
    total = sizes.total([[finding], [finding, finding]])
    assert total is not None and total.findings == 3
    assert total.before == 2 * sum(archive("12.9", name) for name in SPLIT_REDIST_JOIN)
    assert total.after == 2 * (nvcc + archive("12.9", "cuda_cudart") + archive("12.9", "cuda_cccl"))


def test_hover_names_what_the_toolkit_joins() -> None:
    lines = sizes.hover_lines(reference.load(), "cudatoolkit", reference.target("unstable", ("12.9",)))
    assert "Joins 20 redistributables for CUDA 12.9" in lines[-1] and "not a Nix closure size" in lines[-1]
    assert sizes.hover_lines(reference.load(), "libcublas", reference.target("unstable")) == []


def test_a_whole_package_join_states_its_archives() -> None:
    text = '{ symlinkJoin, cudaPackages }:\nsymlinkJoin {\n  name = "cuda";\n  paths = with cudaPackages; [ cuda_nvcc libcublas ];\n}\n'
    settings = LintSettings(enabled=frozenset({"CUDA203"}), nixpkgs="unstable", cuda=("12.9",))
    (finding,) = lint(SourceFile("a.nix", text), settings).diagnostics
    expected = sizes.format_bytes(archive("12.9", "cuda_nvcc") + archive("12.9", "libcublas"))
    assert finding.message.endswith(f"; list them as inputs ({expected} of NVIDIA archives)")
