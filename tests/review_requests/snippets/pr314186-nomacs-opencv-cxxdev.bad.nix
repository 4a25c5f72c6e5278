{
  lib,
  stdenv,
  fetchFromGitHub,
  cmake,
  libraw,
  opencv4,
  cudaPackages,
}:
stdenv.mkDerivation {
  pname = "image-viewer";
  version = "3.17.2287";
  src = fetchFromGitHub {
    owner = "example";
    repo = "image-viewer";
    rev = "3.17.2287";
    hash = lib.fakeHash;
  };
  nativeBuildInputs = [ cmake ];
  buildInputs = [
    libraw
    opencv4
  ]
  ++ lib.optionals opencv4.cudaSupport [
    cudaPackages.cuda_cudart
    cudaPackages.libnpp
    cudaPackages.libcublas
  ];
}
