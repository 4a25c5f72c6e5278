{
  lib,
  config,
  stdenv,
  fetchFromGitHub,
  cmake,
  cudaPackages,
  cudaSupport ? config.cudaSupport,
}:
stdenv.mkDerivation {
  pname = "face-landmarks";
  version = "19.24.2";
  src = fetchFromGitHub {
    owner = "example";
    repo = "face-landmarks";
    rev = "v19.24.2";
    hash = lib.fakeHash;
  };
  nativeBuildInputs = [ cmake ] ++ lib.optionals cudaSupport [ cudaPackages.cuda_nvcc ];
  buildInputs = lib.optionals cudaSupport [
    cudaPackages.cuda_cudart
    cudaPackages.libcublas
  ];
  cmakeFlags = [ (lib.cmakeBool "FL_USE_CUDA" cudaSupport) ];
}
