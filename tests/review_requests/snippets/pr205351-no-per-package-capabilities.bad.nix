{
  lib,
  config,
  buildPythonPackage,
  fetchPypi,
  cudaPackages,
  cudaSupport ? config.cudaSupport,
  cudaCapabilities ? [
    "sm_35"
    "sm_50"
    "sm_70"
    "compute_80"
  ],
}:
buildPythonPackage rec {
  pname = "tensor-graph";
  version = "2.10.1";
  format = "setuptools";
  src = fetchPypi {
    inherit pname version;
    hash = lib.fakeHash;
  };
  nativeBuildInputs = lib.optionals cudaSupport [ cudaPackages.cuda_nvcc ];
  buildInputs = lib.optionals cudaSupport [ cudaPackages.cuda_cudart ];
  env = lib.optionalAttrs cudaSupport {
    TG_CUDA_COMPUTE_CAPABILITIES = lib.concatStringsSep "," cudaCapabilities;
  };
}
