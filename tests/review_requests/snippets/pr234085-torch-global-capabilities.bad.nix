{
  lib,
  config,
  buildPythonPackage,
  fetchFromGitHub,
  cudaPackages,
  cudaSupport ? config.cudaSupport,
}:
buildPythonPackage {
  pname = "tensor-lib";
  version = "2.0.1";
  format = "setuptools";
  src = fetchFromGitHub {
    owner = "example";
    repo = "tensor-lib";
    rev = "v2.0.1";
    hash = lib.fakeHash;
  };
  nativeBuildInputs = lib.optionals cudaSupport [ cudaPackages.cuda_nvcc ];
  buildInputs = lib.optionals cudaSupport [ cudaPackages.cuda_cudart ];
  env = lib.optionalAttrs cudaSupport {
    TORCH_CUDA_ARCH_LIST = "5.0;6.0;7.0;7.5;8.0;8.6";
  };
}
