{
  lib,
  stdenv,
  fetchFromGitHub,
  cmake,
  blas,
  cudatoolkit,
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
  nativeBuildInputs = [ cmake ];
  buildInputs = [
    blas
    cudatoolkit
  ];
  cmakeFlags = [ "-DVS_ENABLE_GPU=ON" ];
}
