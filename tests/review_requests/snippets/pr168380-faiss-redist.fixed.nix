{
  lib,
  stdenv,
  fetchFromGitHub,
  cmake,
  blas,
  cudaPackages,
}:
stdenv.mkDerivation {
  pname = "vector-search";
  version = "1.7.2";
  src = fetchFromGitHub {
    owner = "example";
    repo = "vector-search";
    rev = "v1.7.2";
    hash = lib.fakeHash;
  };
  nativeBuildInputs = [
    cmake
    cudaPackages.cuda_nvcc
  ];
  buildInputs = [
    blas
    cudaPackages.cuda_cudart
    cudaPackages.libcublas
  ];
  cmakeFlags = [
    "-DVS_ENABLE_GPU=ON"
    "-DCMAKE_CUDA_ARCHITECTURES=${cudaPackages.flags.cmakeCudaArchitecturesString}"
  ];
}
