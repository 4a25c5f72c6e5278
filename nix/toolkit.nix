# What `cudaPackages.cudatoolkit` joins where it is a symlinkJoin of redistributables rather than
# NVIDIA's runfile installer (issue NixOS/nixpkgs#295655, 2024-03: "rename, replace with a
# symlinkJoin"). cudalint uses it to state what CUDA001's fixes save, by archive size.
#
# Per era: `packages` joined for every release, `atLeast.<release>` joined from that release on.
# Eras absent here (single-output, symlink-farm) build the runfile toolkit, whose size the set
# does not know.
let
  # Both nixpkgs files join the same host tools and target libraries.
  tools = [ "cuda_cuobjdump" "cuda_gdb" "cuda_nvcc" "cuda_nvdisasm" "cuda_nvprune" ];
  libraries = [
    "cuda_cccl" "cuda_cudart" "cuda_cupti" "cuda_cuxxfilt" "cuda_nvml_dev" "cuda_nvrtc"
    "cuda_nvtx" "cuda_profiler_api" "cuda_sanitizer_api"
    "libcublas" "libcufft" "libcurand" "libcusolver" "libcusparse" "libnpp"
  ];
in
{
  # pkgs/development/cuda-modules/cudatoolkit/redist-wrapper.nix
  # (nixpkgs commit 1107f7907e5f7403a80baa29dc8f32f59a5ab269): bin, lib and dev of each, plus
  # `cuda_cudart.static`.
  multi-output = {
    packages = tools ++ libraries;
    atLeast = { "12.0" = [ "cuda_opencl" "libnvjitlink" ]; };
  };
  # pkgs/development/cuda-modules/packages/cudatoolkit.nix
  # (nixpkgs commit 044b684b71e9ae48b17a6ca53567362dacce6c9a): every output but `static`.
  split-redist = {
    packages = tools ++ libraries;
    atLeast = { "13.0" = [ "cuda_crt" ]; };
  };
}
