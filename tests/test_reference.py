"""The reference package set: nix/ evaluates to the shipped export, agrees with the manifests it
was derived from, and answers the questions rules, hover and completion ask."""

from __future__ import annotations

import importlib.util
import json
import shutil
import subprocess
from pathlib import Path

import pytest

from cudalint.knowledge import reference
from requirements import require_executable, require_shared

REPO = Path(__file__).resolve().parents[1]
EXPORT = REPO / "cudalint" / "knowledge" / "data" / "reference.json"
GENERIC_BUILDER_ERAS = ("symlink-farm", "multi-output")


def _generator():
    spec = importlib.util.spec_from_file_location("nix_generate", REPO / "nix" / "generate.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def exported() -> dict:
    return json.loads(EXPORT.read_text(encoding="utf-8"))


def test_nix_evaluation_equals_the_shipped_export(exported):
    require_executable("nix-instantiate", "evaluates the reference set in nix/")
    assert _generator().evaluate(str(REPO / "nix")) == exported


def test_export_is_formatted_as_the_generator_writes_it(exported):
    # A hand-edited export would drift from the Nix; the generator's formatting is the proof of origin.
    assert EXPORT.read_text(encoding="utf-8") == _generator().export_text(exported)


def test_generated_files_are_what_the_generator_makes_from_the_data(tmp_path):
    data = require_shared() / "reference-data"
    generator = _generator()
    shutil.copytree(REPO / "nix", tmp_path / "nix")
    for generated in ("releases", "products"):
        shutil.rmtree(tmp_path / "nix" / generated)
    generator.generate(str(data), str(tmp_path / "nix"))
    for generated in ("releases", "products"):
        ours = sorted(p.name for p in (REPO / "nix" / generated).iterdir())
        assert ours == sorted(p.name for p in (tmp_path / "nix" / generated).iterdir())
        for name in ours:
            assert (REPO / "nix" / generated / name).read_text() == (tmp_path / "nix" / generated / name).read_text(), name


def test_every_output_fact_of_the_summary_agrees(exported):
    summary = json.loads((require_shared() / "reference-data" / "outputs-summary.json").read_text())
    checked = 0
    for release, packages in summary.items():
        assert release in exported["releases"], release
        ours = exported["releases"][release]["packages"]
        assert set(ours) == set(packages), release
        for name, outputs in packages.items():
            for era in GENERIC_BUILDER_ERAS:
                assert ours[name]["outputs"][era] == outputs, (release, name, era)
                checked += 1
    assert checked > 1000


def test_generated_split_outputs_agree_with_the_include_stubs_manifests():
    # nix/split-redist.nix overrides these with nixpkgs' declarations; the generated layer must
    # still say exactly what NVIDIA's include/stubs manifests say.
    summary = json.loads((require_shared() / "reference-data" / "outputs-summary-include-stubs.json").read_text())
    checked = 0
    for release, packages in summary.items():
        generated = _evaluate(REPO / "nix" / "releases" / f"{release}.nix")["packages"]
        for name, outputs in packages.items():
            assert set(generated[name]["splitOutputs"]) == set(outputs), (release, name)
            checked += 1
    assert checked > 100


def test_nixpkgs_declared_split_outputs_win(exported):
    declared = _evaluate(REPO / "nix" / "split-redist.nix")
    assert declared["cuda_nvcc"] == ["out"]
    for name, outputs in declared.items():
        for release in exported["releases"].values():
            if name in release["packages"]:
                assert release["packages"][name]["outputs"]["split-redist"] == outputs, name


def test_versions_agree_with_the_manifests(exported):
    versions = json.loads((require_shared() / "reference-data" / "package-versions.json").read_text())
    for release, packages in versions.items():
        ours = exported["releases"][release]["packages"]
        for name, version in packages.items():
            if name in ours:
                assert ours[name]["version"] == version, (release, name)


def _evaluate(path: Path):
    nix = require_executable("nix-instantiate", "evaluates the files of nix/")
    command = [nix, "--store", "dummy://", "--eval", "--strict", "--json", str(path)]
    return json.loads(subprocess.run(command, capture_output=True, text=True, check=True).stdout)


# ----- the API ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("nixpkgs", "era"),
    [
        ("22.11", "single-output"),
        ("23.05", "single-output"),
        ("23.11", "symlink-farm"),
        ("24.05", "symlink-farm"),
        ("2024-06-30", "symlink-farm"),
        ("2024-07-01", "multi-output"),
        ("24.11", "multi-output"),
        ("25.05", "multi-output"),
        ("25.11", "split-redist"),
        ("unstable", "split-redist"),
        (None, "split-redist"),
    ],
)
def test_era_of_a_target(nixpkgs, era):
    assert reference.era_of(nixpkgs).id == era


def test_the_eras_offer_the_releases_nixpkgs_had():
    ref = reference.load()
    by_id = {era.id: era for era in ref.eras}
    # cudaPackages_11* and 12_0..12_5 throw since 2025-08-08: none of them in the split-redist era.
    assert by_id["split-redist"].releases == ("12.6", "12.8", "12.9", "13.0")
    assert "13.0" not in by_id["multi-output"].releases
    assert "11.4" in by_id["symlink-farm"].releases


def test_target_defaults_to_the_release_cudapackages_pointed_at():
    assert reference.target("24.05").releases == ("12.2",)
    assert reference.target("25.11").releases == ("12.8",)
    assert reference.target("25.11", ("13.0", "12.8")).releases == ("12.8", "13.0")
    assert "symlink-farm" in reference.target("24.05").describe()


def test_outputs_change_with_the_era():
    assert reference.outputs("cuda_nvcc", reference.target("25.05")) == ("out", "bin", "static", "dev")
    assert reference.outputs("cuda_nvcc", reference.target("25.11")) == ("out",)
    assert reference.outputs("libcublas", reference.target("23.05")) == ("out",)
    assert "stubs" in reference.outputs("libcublas", reference.target("25.11"))
    assert "stubs" not in reference.outputs("libcublas", reference.target("25.05"))


def test_lookup_gives_role_size_and_deprecation():
    target = reference.target("25.05")
    cublas = reference.lookup("libcublas", target)
    assert cublas.kind == "redist" and cublas.role == "library" and cublas.releases[0].size > 100_000_000
    assert reference.lookup("cuda_nvcc", target).role == "tool"
    assert reference.lookup("cuda_cccl", target).role == "headers"
    assert reference.lookup("cudnn", target).kind == "non-redist"
    assert reference.lookup("cudatoolkit", target).deprecation.status == "deprecated"
    assert reference.lookup("libcublass", target) is None
    # cuda_crt is new in CUDA 13: known, but not in 12.8.
    crt = reference.lookup("cuda_crt", target)
    assert crt.releases == () and "13.0" in crt.available_in


def test_package_names_and_deprecated_names_for_completion():
    names = reference.package_names(reference.target("25.11", ("13.0",)))
    assert "cuda_crt" in names and "libcublas" in names and "flags" not in names
    deprecated = {d.name for d in reference.deprecated_names(reference.target("25.11"))}
    assert {"cudaFlags", "cusparselt", "autoAddOpenGLRunpathHook"} <= deprecated


def test_closest_names():
    from cudalint.rules.cuda003_unknown_cuda_package import _suggestions

    ref = reference.load()
    assert _suggestions(ref, "libcublass")[0][0] == "libcublas"
    assert _suggestions(ref, "cuda_nvccc")[0][0] == "cuda_nvcc"
    assert ref.libraries["nvToolsExt"] == "cuda_nvtx"
