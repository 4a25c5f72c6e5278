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
  pname = "boosted-trees";
  version = "1.2.2";
  src = fetchFromGitHub {
    owner = "example";
    repo = "boosted-trees";
    rev = "v1.2.2";
    hash = lib.fakeHash;
  };
  nativeBuildInputs = [ cmake ] ++ lib.optionals cudaSupport [ cudaPackages.cuda_nvcc ];
  buildInputs = lib.optionals cudaSupport (
    with cudaPackages;
    [
      cuda_cudart
      cuda_cccl
      libcurand
    ]
  );
  cmakeFlags = [
    (lib.cmakeBool "HAVE_CUDA" cudaSupport)
  ]
  ++ lib.optionals cudaSupport [
    (lib.cmakeFeature "CMAKE_CUDA_ARCHITECTURES" cudaPackages.flags.cmakeCudaArchitecturesString)
  ];
}
