{
  lib,
  buildPythonPackage,
  fetchFromGitHub,
  setuptools,
  torch,
}:
let
  inherit (torch) cudaPackages;
in
buildPythonPackage {
  pname = "expert-parallel";
  version = "1.2.1";
  pyproject = true;
  src = fetchFromGitHub {
    owner = "example";
    repo = "expert-parallel";
    rev = "v1.2.1";
    hash = lib.fakeHash;
  };
  build-system = [
    setuptools
    torch
  ];
  nativeBuildInputs = [ cudaPackages.cuda_nvcc ];
  buildInputs = [
    cudaPackages.cuda_cudart
    cudaPackages.nccl
  ]
  # before CUDA 13 these headers ship with cuda_nvcc
  ++ lib.optionals (cudaPackages.cudaAtLeast "13.0") [ cudaPackages.cuda_crt ];
  dependencies = [ torch ];
}
