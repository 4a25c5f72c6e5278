{
  lib,
  config,
  buildPythonPackage,
  fetchFromGitHub,
  cudaPackages,
  cudaSupport ? config.cudaSupport,
}:
let
  inherit (cudaPackages) cudnn nccl;
in
assert cudaSupport -> cudnn != null && nccl != null;
buildPythonPackage {
  pname = "graph-learn";
  version = "2.19.0";
  format = "setuptools";
  src = fetchFromGitHub {
    owner = "example";
    repo = "graph-learn";
    rev = "v2.19.0";
    hash = lib.fakeHash;
  };
  nativeBuildInputs = lib.optionals cudaSupport [ cudaPackages.cuda_nvcc ];
  buildInputs = lib.optionals cudaSupport [
    cudaPackages.cuda_cudart
    cudnn
    nccl
  ];
}
