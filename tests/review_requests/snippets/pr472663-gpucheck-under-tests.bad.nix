{
  lib,
  stdenv,
  fetchFromGitHub,
  cmake,
  cudaPackages,
}:
stdenv.mkDerivation (finalAttrs: {
  pname = "saxpy-demo";
  version = "0-unstable-2023-07-11";
  src = fetchFromGitHub {
    owner = "example";
    repo = "saxpy-demo";
    rev = "0c6d3b4f2c1c5e3c1d5c7d43c5d6f0b1c2d3e4f5";
    hash = lib.fakeHash;
  };
  nativeBuildInputs = [
    cmake
    cudaPackages.cuda_nvcc
  ];
  buildInputs = [ cudaPackages.cuda_cudart ];
  cmakeFlags = [
    (lib.cmakeFeature "CMAKE_CUDA_ARCHITECTURES" cudaPackages.flags.cmakeCudaArchitecturesString)
  ];
  passthru.gpuCheck = stdenv.mkDerivation {
    name = "saxpy-demo-gpu-check";
    requiredSystemFeatures = [ "cuda" ];
    dontUnpack = true;
    buildPhase = ''
      ${finalAttrs.finalPackage}/bin/saxpy
      touch $out
    '';
  };
})
