{
  lib,
  buildPythonPackage,
  fetchFromGitHub,
  torch,
  cudaPackages,
}:
buildPythonPackage {
  pname = "llm-serve";
  version = "0.1.3";
  pyproject = true;
  src = fetchFromGitHub {
    owner = "example";
    repo = "llm-serve";
    rev = "v0.1.3";
    hash = lib.fakeHash;
  };
  nativeBuildInputs = [ cudaPackages.cuda_nvcc ];
  buildInputs = [
    cudaPackages.cuda_cudart
    cudaPackages.libcublas
  ];
  dependencies = [ torch ];
}
