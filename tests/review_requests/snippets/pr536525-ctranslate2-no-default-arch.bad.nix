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
  pname = "seq-translate";
  version = "4.6.0";
  src = fetchFromGitHub {
    owner = "example";
    repo = "seq-translate";
    rev = "v4.6.0";
    hash = lib.fakeHash;
  };
  nativeBuildInputs = [ cmake ] ++ lib.optionals cudaSupport [ cudaPackages.cuda_nvcc ];
  buildInputs = lib.optionals cudaSupport [
    cudaPackages.cuda_cudart
    cudaPackages.libcublas
  ];
  cmakeFlags = [
    (lib.cmakeBool "WITH_CUDA" cudaSupport)
  ]
  ++ lib.optionals cudaSupport [
    "-DCUDA_NVCC_FLAGS=-gencode=arch=compute_53,code=sm_53"
  ];
}
