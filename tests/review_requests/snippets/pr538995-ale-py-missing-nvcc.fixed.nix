{
  lib,
  buildPythonPackage,
  fetchFromGitHub,
  cmake,
  setuptools,
  opencv4,
  cudaPackages,
}:
buildPythonPackage {
  pname = "arcade-env";
  version = "0.11.2";
  pyproject = true;
  src = fetchFromGitHub {
    owner = "example";
    repo = "arcade-env";
    rev = "v0.11.2";
    hash = lib.fakeHash;
  };
  build-system = [ setuptools ];
  # OpenCV's CMake config looks for nvcc when OpenCV was built with CUDA
  nativeBuildInputs = [ cmake ] ++ lib.optionals opencv4.cudaSupport [ cudaPackages.cuda_nvcc ];
  dontUseCmakeConfigure = true;
  buildInputs = [
    (lib.getOutput "cxxdev" opencv4)
  ]
  ++ lib.optionals opencv4.cudaSupport [ cudaPackages.cuda_cudart ];
}
