{
  lib,
  stdenv,
  fetchurl,
  cmake,
  cudaPackages,
}:
stdenv.mkDerivation {
  pname = "sparse-solver";
  version = "2.8.0";
  src = fetchurl {
    url = "https://example.org/sparse-solver-2.8.0.tar.gz";
    hash = lib.fakeHash;
  };
  nativeBuildInputs = [
    cmake
    cudaPackages.cuda_nvcc
  ];
  buildInputs = [ cudaPackages.cuda_cudart ];
  cmakeFlags = [
    (lib.cmakeFeature "CMAKE_CUDA_ARCHITECTURES" cudaPackages.cudaFlags.cmakeCudaArchitecturesString)
  ];
}
