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
  pname = "render-suite";
  version = "5.1.0";
  src = fetchurl {
    url = "https://example.org/render-suite-5.1.0.tar.xz";
    hash = lib.fakeHash;
  };
  nativeBuildInputs = [ cmake ] ++ lib.optionals cudaSupport [ cudaPackages.cuda_nvcc ];
  buildInputs = lib.optionals cudaSupport [ cudaPackages.cuda_cudart ];
  cmakeFlags = lib.optionals cudaSupport [
    (lib.cmakeBool "WITH_CYCLES_CUDA_BINARIES" true)
    (lib.cmakeFeature "CYCLES_CUDA_BINARIES_ARCH" (lib.concatStringsSep ";" cudaPackages.flags.realArches))
  ];
}
