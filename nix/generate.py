#!/usr/bin/env python3
"""Regenerate the reference package set's generated files and the JSON export cudalint ships.

    python3 nix/generate.py [--data DIR]     # releases/*.nix and products/*.nix from the data
    python3 nix/generate.py --export         # cudalint/knowledge/data/reference.json from nix/ (needs Nix)

`--data` is the folder of NVIDIA and nixpkgs manifests (default: ../shared/reference-data next
to the repository). The generated .nix files hold facts only (names, versions, archive sizes,
outputs); everything a maintainer decides by hand (eras, roles, deprecations, the scope's
attributes, nixpkgs' declared outputs in the split-redist era) lives in the other files of nix/.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import re
import subprocess
import sys

NIX_DIR = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(NIX_DIR)
DEFAULT_DATA = os.path.join(os.path.dirname(REPO), "shared", "reference-data")
EXPORT = os.path.join(REPO, "cudalint", "knowledge", "data", "reference.json")

# nixpkgs' generic builder turned the feature manifests' flags into outputs in this order.
FEATURE_OUTPUTS = ("bin", "lib", "static", "dev", "doc", "sample", "python")
# Platforms searched when linux-x86_64 lacks a package (Jetson-only packages such as cuda_compat).
FALLBACK_PLATFORMS = ("linux-sbsa", "linux-aarch64", "linux-all")
SPLIT_ORDER = ("out", "bin", "dev", "include", "lib", "static", "stubs", "doc", "sample", "python")

# NVIDIA's products outside the CUDA release manifests, by the nixpkgs attribute they become.
PRODUCTS = {
    "cudnn": ("cudnn", "cudnn"),
    "cutensor": ("libcutensor", "cutensor"),
    "cusparselt": ("libcusparse_lt", "cusparselt"),
    "tensorrt": ("tensorrt", "tensorrt"),
    "nvjpeg2000": ("libnvjpeg_2k", "nvjpeg2000"),
    "cudss": ("libcudss", "cudss"),
    "nppplus": ("libnpp_plus", "nppplus"),
}


def load(path: str) -> dict:
    with open(path, encoding="utf-8") as handle:
        return json.load(handle)


def version_key(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in re.findall(r"\d+", version))


def release_of(path: str) -> str:
    version = re.search(r"(\d+\.\d+(\.\d+)*)\.json$", path).group(1)
    return ".".join(version.split(".")[:2])


def feature_outputs(platforms: dict) -> list[str]:
    """Outputs nixpkgs' generic builder made from one package's feature flags. Packages NVIDIA
    ships for Windows only still got an attribute (marked unsupported on Linux)."""
    if "linux-x86_64" in platforms:
        chosen = [platforms["linux-x86_64"]]
    else:
        chosen = [platforms[p] for p in FALLBACK_PLATFORMS if p in platforms] or list(platforms.values())
    flags = {o for entry in chosen for o, present in entry["outputs"].items() if present}
    return ["out"] + [o for o in FEATURE_OUTPUTS if o in flags]


def manifest_outputs(entry: dict) -> list[str] | None:
    """Outputs from a manifest in the include/stubs layout (ConnorBaker/cuda-packages)."""
    platforms = entry.get("packages", {})
    chosen = [platforms["linux-x86_64"]] if "linux-x86_64" in platforms else [platforms[p] for p in FALLBACK_PLATFORMS if p in platforms]
    found = {o for variants in chosen for variant in variants.values() for o in variant["features"]["outputs"]}
    return [o for o in SPLIT_ORDER if o in found] or None


def archive_size(entry: dict) -> int | None:
    """Bytes of the linux-x86_64 archive; for per-CUDA variants, the newest variant's."""
    platform = entry.get("linux-x86_64")
    if not isinstance(platform, dict):
        return None
    if "size" in platform:
        return int(platform["size"])
    variants = sorted((k for k in platform if k.startswith("cuda")), key=version_key)
    return int(platform[variants[-1]]["size"]) if variants else None


def infer_split(outputs: list[str], has_stubs: bool) -> list[str]:
    """The split-redist layout where no manifest records it: headers move from `dev` to `include`."""
    present = set(outputs) | ({"include"} if "dev" in outputs else set()) | ({"stubs"} if has_stubs else set())
    return [o for o in SPLIT_ORDER if o in present]


# ----- rendering ------------------------------------------------------------------------------------

_PLAIN_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_'-]*$")


def nix_string(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"').replace("${", "\\${") + '"'


def nix_name(name: str) -> str:
    return name if _PLAIN_NAME.match(name) else nix_string(name)


def nix_value(value) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return nix_string(value)
    if isinstance(value, list):
        return "[ " + " ".join(nix_value(v) for v in value) + " ]" if value else "[ ]"
    raise TypeError(value)


def render_package(name: str, fields: dict, indent: str) -> list[str]:
    lines = [f"{indent}{nix_name(name)} = {{"]
    for key, value in fields.items():
        lines.append(f"{indent}  {key} = {nix_value(value)};")
    lines.append(f"{indent}}};")
    return lines


def render(header: list[str], top: dict, packages: dict[str, dict]) -> str:
    lines = [f"# {line}" if line else "#" for line in header]
    lines.append("{")
    for key, value in top.items():
        lines.append(f"  {key} = {nix_value(value)};")
    lines.append("  packages = {")
    for name in sorted(packages):
        lines.extend(render_package(name, packages[name], "    "))
    lines.append("  };")
    lines.append("}")
    return "\n".join(lines) + "\n"


# ----- CUDA releases --------------------------------------------------------------------------------


def cuda_releases(data: str) -> dict[str, str]:
    """CUDA release -> (nixpkgs feature manifest, NVIDIA redistrib manifest)."""
    releases = {}
    for path in glob.glob(os.path.join(data, "nvidia-redistrib-manifests", "cuda", "redistrib_*.json")):
        release = release_of(path)
        releases[release] = os.path.join(data, "nixpkgs-feature-manifests", "cuda", f"feature_{_feature_version(data, release)}.json"), path
    return releases


def _feature_version(data: str, release: str) -> str:
    candidates = glob.glob(os.path.join(data, "nixpkgs-feature-manifests", "cuda", f"feature_{release}.*.json"))
    if len(candidates) != 1:
        raise SystemExit(f"expected one feature manifest for CUDA {release}, found {candidates}")
    return re.search(r"feature_(.*)\.json$", candidates[0]).group(1)


def split_manifests(data: str) -> dict[str, dict]:
    return {release_of(path): load(path) for path in glob.glob(os.path.join(data, "connorbaker-cuda-packages-manifests", "cuda_*.json"))}


def generate_release(data: str, release: str, feature_path: str, redist_path: str, split: dict[str, dict], stubs: set[str]) -> str:
    feature, redist = load(feature_path), load(redist_path)
    split_manifest = split.get(release)
    packages = {}
    for name in sorted(feature):
        outputs = feature_outputs(feature[name])
        entry = redist.get(name, {})
        if split_manifest is not None and name in split_manifest:
            split_outputs = manifest_outputs(split_manifest[name])
        else:
            split_outputs = infer_split(outputs, name in stubs)
        packages[name] = {
            "description": entry.get("name"),
            "version": entry.get("version"),
            "size": archive_size(entry),
            "outputs": outputs,
            "splitOutputs": split_outputs,
        }
    manifest = re.search(r"redistrib_(.*)\.json$", redist_path).group(1)
    header = [
        f"CUDA {release}: generated by nix/generate.py; do not edit by hand.",
        f"Names, versions and linux-x86_64 archive sizes (bytes) from NVIDIA's redistrib_{manifest}.json;",
        f"outputs from nixpkgs' {os.path.basename(feature_path)} (the generic builder, 2023-07 .. 2025-10);",
        "splitOutputs (the buildRedist layout, 2025-10 on) from "
        + (f"ConnorBaker/cuda-packages' cuda_{_split_version(data, release)}.json;" if split_manifest else "the outputs: `include` beside `dev`, `stubs` where CUDA 12.8 has them;"),
        "nix/split-redist.nix overrides splitOutputs with what nixpkgs declares.",
    ]
    top = {"release": release, "manifest": manifest, "date": redist.get("release_date")}
    return render(header, top, packages)


def _split_version(data: str, release: str) -> str:
    path = glob.glob(os.path.join(data, "connorbaker-cuda-packages-manifests", f"cuda_{release}.*.json"))[0]
    return re.search(r"cuda_(.*)\.json$", path).group(1)


def packages_with_stubs(split: dict[str, dict]) -> set[str]:
    return {name for manifest in split.values() for name, entry in manifest.items() if "stubs" in (manifest_outputs(entry) or [])}


# ----- other NVIDIA products ------------------------------------------------------------------------


def generate_product(data: str, product: str, attribute: str) -> str | None:
    redists = sorted(glob.glob(os.path.join(data, "nvidia-redistrib-manifests", "other", f"{product}_redistrib_*.json")), key=version_key)
    features = sorted(glob.glob(os.path.join(data, "nixpkgs-feature-manifests", product, "feature_*.json")), key=version_key)
    splits = sorted(glob.glob(os.path.join(data, "connorbaker-cuda-packages-manifests", f"{product}_*.json")), key=version_key)
    if not (redists or features or splits):
        return None
    newest = load(redists[-1]) if redists else {}
    entry = newest.get(attribute, {})
    fields: dict = {"description": entry.get("name"), "version": entry.get("version"), "size": archive_size(entry)}
    sources = []
    if redists:
        sources.append(f"NVIDIA's {os.path.basename(redists[-1])} (name, version, size)")
    if features:
        fields["outputs"] = feature_outputs(load(features[-1])[attribute])
        sources.append(f"nixpkgs' {product}/{os.path.basename(features[-1])} (outputs)")
    if splits:
        split_manifest = load(splits[-1])
        if attribute in split_manifest:
            fields["splitOutputs"] = manifest_outputs(split_manifest[attribute])
            sources.append(f"ConnorBaker/cuda-packages' {os.path.basename(splits[-1])} (splitOutputs)")
    header = [f"{attribute}: generated by nix/generate.py; do not edit by hand.", "From:"] + [f"- {source}" for source in sources]
    return render(header, {"product": product}, {attribute: fields})


# ----- entry points ---------------------------------------------------------------------------------


def write(path: str, text: str) -> bool:
    if os.path.exists(path):
        with open(path, encoding="utf-8") as handle:
            if handle.read() == text:
                return False
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(text)
    return True


def generate(data: str, nix_dir: str = NIX_DIR) -> list[str]:
    if not os.path.isdir(data):
        raise SystemExit(f"reference data not found at {data} (pass --data DIR)")
    split = split_manifests(data)
    stubs = packages_with_stubs(split)
    written = []
    for release, (feature_path, redist_path) in sorted(cuda_releases(data).items(), key=lambda item: version_key(item[0])):
        path = os.path.join(nix_dir, "releases", f"{release}.nix")
        if write(path, generate_release(data, release, feature_path, redist_path, split, stubs)):
            written.append(path)
    for product, (attribute, _) in PRODUCTS.items():
        text = generate_product(data, product, attribute)
        path = os.path.join(nix_dir, "products", f"{attribute}.nix")
        if text is not None and write(path, text):
            written.append(path)
    return written


def evaluate(nix_dir: str = NIX_DIR) -> dict:
    """The reference set as Nix evaluates it (what the JSON export must equal)."""
    command = ["nix-instantiate", "--store", "dummy://", "--eval", "--strict", "--json", nix_dir]
    completed = subprocess.run(command, capture_output=True, text=True, check=False)
    if completed.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed:\n{completed.stderr}")
    return json.loads(completed.stdout)


def export_text(value: dict) -> str:
    return json.dumps(value, indent=1, sort_keys=True) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", default=DEFAULT_DATA, help="the reference-data folder (default: %(default)s)")
    parser.add_argument("--export", action="store_true", help=f"evaluate nix/ and write {os.path.relpath(EXPORT, REPO)}")
    args = parser.parse_args(argv)
    if args.export:
        changed = write(EXPORT, export_text(evaluate()))
        print(f"{'wrote' if changed else 'unchanged'} {os.path.relpath(EXPORT, REPO)}")
        return 0
    for path in generate(args.data):
        print(f"wrote {os.path.relpath(path, REPO)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
