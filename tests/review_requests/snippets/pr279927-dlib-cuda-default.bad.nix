{
  lib,
  stdenv,
  fetchurl,
  cmake,
  cudaPackages,
  cudaSupport ? true,
}:
stdenv.mkDerivation {
  pname = "face-landmarks";
  version = "5.13.0";
  src = fetchurl {
    url = "https://example.org/face-landmarks-5.13.0.tar.gz";
    hash = lib.fakeHash;
  };
  nativeBuildInputs = [ cmake ] ++ lib.optionals cudaSupport [ cudaPackages.cuda_nvcc ];
  buildInputs = lib.optionals cudaSupport [ cudaPackages.cuda_cudart ];
  cmakeFlags = [ (lib.cmakeBool "FL_USE_CUDA" cudaSupport) ];
}
