# Where the reference set's facts come from, for `cudalint --version` and bug reports.
{
  # NVIDIA's and nixpkgs' manifests, collected for the set (../shared/reference-data/README.md).
  collected = "2025-11";
  # The nixpkgs history the manifests and output facts were read from (its HEAD then).
  nixpkgs = {
    rev = "9856d70acc3e2ae9081930b33d946326e07f1482";
    date = "2025-11-10";
  };
  # The last day the dated vocabulary (vocabulary.nix, deprecations.nix) was checked against nixpkgs' PRs.
  reviewed = "2026-11-25";
}
