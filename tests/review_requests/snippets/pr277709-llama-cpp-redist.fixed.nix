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
  pname = "llm-infer";
  version = "1573";
  src = fetchFromGitHub {
    owner = "example";
    repo = "llm-infer";
    rev = "b1573";
    hash = lib.fakeHash;
  };
  nativeBuildInputs = [ cmake ] ++ lib.optionals cudaSupport [ cudaPackages.cuda_nvcc ];
  buildInputs = lib.optionals cudaSupport [
    cudaPackages.cuda_cudart
    cudaPackages.cuda_cccl
    cudaPackages.libcublas
  ];
  cmakeFlags = lib.optionals cudaSupport [
    "-DLLM_CUBLAS=ON"
    "-DCMAKE_CUDA_ARCHITECTURES=${cudaPackages.flags.cmakeCudaArchitecturesString}"
  ];
}
