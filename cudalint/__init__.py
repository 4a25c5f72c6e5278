"""cudalint: lint Nix expressions that use NVIDIA CUDA packages."""

__version__ = "0.1.0"
