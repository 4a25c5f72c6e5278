"""cudalint: lint Nix expressions that use NVIDIA CUDA packages."""

# A .dev version until the next release is tagged: what the CHANGELOG lists as unreleased ships
# under it, never under the last release's number.
__version__ = "0.2.0.dev0"
