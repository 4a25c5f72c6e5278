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
  pname = "tiny-nn-kernels";
  version = "1.7";
  format = "setuptools";
  src = fetchFromGitHub {
    owner = "example";
    repo = "tiny-nn-kernels";
    rev = "v1.7";
    hash = lib.fakeHash;
  };
  nativeBuildInputs = [ cudaPackages.cuda_nvcc ];
  buildInputs = [ cudaPackages.cuda_cudart ];
  dependencies = [ torch ];
  # CUDA-only: broken rather than an evaluation error when CUDA is off
  meta.broken = !cudaSupport;
}
