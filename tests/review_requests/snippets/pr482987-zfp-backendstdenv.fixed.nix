{
  lib,
  config,
  stdenv,
  fetchFromGitHub,
  cmake,
  cudaPackages,
  cudaSupport ? config.cudaSupport,
}:
let
  effectiveStdenv = if cudaSupport then cudaPackages.backendStdenv else stdenv;
in
effectiveStdenv.mkDerivation {
  pname = "float-compress";
  version = "1.0.1";
  src = fetchFromGitHub {
    owner = "example";
    repo = "float-compress";
    rev = "1.0.1";
    hash = lib.fakeHash;
  };
  nativeBuildInputs = [ cmake ];
  buildInputs = lib.optionals cudaSupport [ cudaPackages.cudatoolkit ];
  cmakeFlags = [
    (lib.cmakeBool "FC_WITH_CUDA" cudaSupport)
  ]
  ++ lib.optionals cudaSupport [
    (lib.cmakeFeature "CMAKE_CUDA_ARCHITECTURES" cudaPackages.flags.cmakeCudaArchitecturesString)
  ];
}
