{
  lib,
  config,
  buildPythonPackage,
  fetchPypi,
  torch,
  cudaSupport ? config.cudaSupport,
}:
let
  inherit (torch) cudaPackages;
in
buildPythonPackage rec {
  pname = "vision-ops";
  version = "1.7.1";
  format = "setuptools";
  src = fetchPypi {
    inherit pname version;
    hash = lib.fakeHash;
  };
  nativeBuildInputs = lib.optionals cudaSupport [ cudaPackages.cuda_nvcc ];
  buildInputs = lib.optionals cudaSupport [
    cudaPackages.cuda_cudart
    cudaPackages.cuda_cccl
  ];
  dependencies = [ torch ];
  env = lib.optionalAttrs cudaSupport { VISION_OPS_WITH_CUDA = "1"; };
}
