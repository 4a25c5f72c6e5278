{
  lib,
  config,
  buildPythonPackage,
  fetchFromGitHub,
  cmake,
  setuptools,
  cudaPackages,
  cudaSupport ? config.cudaSupport,
}:
buildPythonPackage {
  pname = "tensor-lib";
  version = "2.9.0";
  pyproject = true;
  src = fetchFromGitHub {
    owner = "example";
    repo = "tensor-lib";
    rev = "v2.9.0";
    hash = lib.fakeHash;
  };
  build-system = [
    cmake
    setuptools
  ];
  dontUseCmakeConfigure = true;
  nativeBuildInputs = lib.optionals cudaSupport [ cudaPackages.cuda_nvcc ];
  buildInputs = lib.optionals cudaSupport [ cudaPackages.cuda_cudart ];
  cmakeFlags = [
    (lib.cmakeBool "TL_USE_CUDA" cudaSupport)
    (lib.cmakeFeature "CUDAToolkit_VERSION" cudaPackages.cudaMajorMinorVersion)
  ];
}
