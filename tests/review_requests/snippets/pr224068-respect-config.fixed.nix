{
  lib,
  config,
  stdenv,
  fetchurl,
  cmake,
  cudaPackages,
  cudaSupport ? config.cudaSupport,
}:
stdenv.mkDerivation {
  pname = "sparse-direct";
  version = "5.13.0";
  src = fetchurl {
    url = "https://example.org/sparse-direct-5.13.0.tar.gz";
    hash = lib.fakeHash;
  };
  nativeBuildInputs = [ cmake ] ++ lib.optionals cudaSupport [ cudaPackages.cuda_nvcc ];
  buildInputs = lib.optionals cudaSupport [ cudaPackages.cuda_cudart ];
  cmakeFlags = [ (lib.cmakeBool "SD_USE_CUDA" cudaSupport) ];
}
