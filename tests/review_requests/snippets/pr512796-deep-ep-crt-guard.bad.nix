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
    cudaPackages.cuda_crt
    cudaPackages.nccl
  ];
  dependencies = [ torch ];
}
