"""CUDA knowledge: package names (catalog), the shipped reference package set (data/), the
nixpkgs/CUDA target a file is read against (targets, pins) and download sizes."""
