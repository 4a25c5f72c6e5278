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
  pname = "molecular-dynamics";
  version = "2Aug2023";
  src = fetchFromGitHub {
    owner = "example";
    repo = "molecular-dynamics";
    rev = "stable_2Aug2023";
    hash = lib.fakeHash;
  };
  nativeBuildInputs = [ cmake ] ++ lib.optionals cudaSupport [ cudaPackages.cuda_nvcc ];
  buildInputs = lib.optionals cudaSupport [
    cudaPackages.cuda_cudart
    cudaPackages.libcufft
  ];
  cmakeFlags = [
    (lib.cmakeBool "PKG_GPU" cudaSupport)
    (lib.cmakeFeature "GPU_API" "cuda")
  ]
  ++ lib.optionals cudaSupport [
    (lib.cmakeFeature "CMAKE_CUDA_ARCHITECTURES" cudaPackages.flags.cmakeCudaArchitecturesString)
  ];
}
