{
  lib,
  config,
  stdenv,
  fetchFromGitHub,
  cmake,
  cudaPackages,
  cudaSupport ? config.cudaSupport,
}:
stdenv.mkDerivation {
  pname = "molecular-dynamics";
  version = "2Aug2023";
  src = fetchFromGitHub {
    owner = "example";
    repo = "molecular-dynamics";
    rev = "stable_2Aug2023";
    hash = lib.fakeHash;
  };
  nativeBuildInputs = [ cmake ];
  buildInputs = lib.optionals cudaSupport [ cudaPackages.cudatoolkit ];
  cmakeFlags = [
    (lib.cmakeBool "PKG_GPU" cudaSupport)
    (lib.cmakeFeature "GPU_API" "cuda")
  ];
}
