{
  lib,
  config,
  buildPythonPackage,
  fetchFromGitHub,
  torch,
  cudaSupport ? config.cudaSupport,
}:
let
  inherit (torch) cudaPackages;
in
buildPythonPackage {
  pname = "llm-serve";
  version = "0.5.2";
  pyproject = true;
  src = fetchFromGitHub {
    owner = "example";
    repo = "llm-serve";
    rev = "v0.5.2";
    hash = lib.fakeHash;
  };
  nativeBuildInputs = lib.optionals cudaSupport [ cudaPackages.cuda_nvcc ];
  buildInputs = lib.optionals cudaSupport [
    cudaPackages.cuda_cudart
    cudaPackages.cuda_cccl
    cudaPackages.libcusparse
    cudaPackages.libcublas
  ];
  dependencies = [ torch ];
}
