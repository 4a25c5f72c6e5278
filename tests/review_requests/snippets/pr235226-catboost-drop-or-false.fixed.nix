{
  lib,
  config,
  stdenv,
  fetchurl,
  cmake,
  cudaPackages,
  cudaSupport ? config.cudaSupport,
}:
let
  effectiveStdenv = if cudaSupport then cudaPackages.backendStdenv else stdenv;
in
effectiveStdenv.mkDerivation {
  pname = "gbdt-engine";
  version = "5.13.0";
  src = fetchurl {
    url = "https://example.org/gbdt-engine-5.13.0.tar.gz";
    hash = lib.fakeHash;
  };
  nativeBuildInputs = [ cmake ] ++ lib.optionals cudaSupport [ cudaPackages.cuda_nvcc ];
  buildInputs = lib.optionals cudaSupport [
    cudaPackages.cuda_cudart.dev
    cudaPackages.cuda_cudart.lib
  ];
  cmakeFlags = [ (lib.cmakeBool "SD_USE_CUDA" cudaSupport) ];
}
