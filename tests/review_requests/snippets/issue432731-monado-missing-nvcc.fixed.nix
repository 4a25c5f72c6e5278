{
  lib,
  config,
  stdenv,
  fetchurl,
  cmake,
  pkg-config,
  cudaPackages,
  cudaSupport ? config.cudaSupport,
}:
stdenv.mkDerivation {
  pname = "xr-runtime";
  version = "25.0.0";
  src = fetchurl {
    url = "https://example.org/xr-runtime-25.0.0.tar.gz";
    hash = lib.fakeHash;
  };
  nativeBuildInputs = [
    cmake
    pkg-config
  ]
  ++ lib.optionals cudaSupport [ cudaPackages.cuda_nvcc ];
  buildInputs = lib.optionals cudaSupport [
    cudaPackages.cuda_cudart
    cudaPackages.libnpp
  ];
  cmakeFlags = [ (lib.cmakeBool "XRT_HAVE_CUDA" cudaSupport) ];
}
