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
assert lib.assertMsg cudaSupport "tiny-nn-kernels is only available with CUDA support";
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
}
