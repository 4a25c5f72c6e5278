{
  lib,
  config,
  stdenv,
  fetchurl,
  cmake,
  cudaPackages,
  cudaSupport ? config.cudaSupport,
}:
assert cudaSupport -> cudaPackages.cudaAtLeast "11.4";
stdenv.mkDerivation {
  pname = "dense-linalg";
  version = "2.7.1";
  src = fetchurl {
    url = "https://example.org/dense-linalg-2.7.1.tar.gz";
    hash = lib.fakeHash;
  };
  nativeBuildInputs = [ cmake ] ++ lib.optionals cudaSupport [ cudaPackages.cuda_nvcc ];
  buildInputs = lib.optionals cudaSupport [ cudaPackages.cuda_cudart ];
}
