{
  lib,
  config,
  stdenv,
  fetchurl,
  cmake,
  cudaPackages,
  cudaSupport ? config.cudaSupport or false,
}:
stdenv.mkDerivation {
  pname = "gbdt-engine";
  version = "5.13.0";
  src = fetchurl {
    url = "https://example.org/gbdt-engine-5.13.0.tar.gz";
    hash = lib.fakeHash;
  };
  nativeBuildInputs = [ cmake ] ++ lib.optionals cudaSupport [ cudaPackages.cuda_nvcc ];
  buildInputs = lib.optionals cudaSupport [ cudaPackages.cuda_cudart ];
  cmakeFlags = [ (lib.cmakeBool "SD_USE_CUDA" cudaSupport) ];
}
