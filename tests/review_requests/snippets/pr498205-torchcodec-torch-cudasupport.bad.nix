{
  lib,
  config,
  buildPythonPackage,
  fetchFromGitHub,
  cmake,
  ffmpeg,
  torch,
  cudaSupport ? config.cudaSupport,
}:
let
  inherit (torch) cudaPackages;
in
buildPythonPackage {
  pname = "torch-media";
  version = "0.10.0";
  pyproject = true;
  src = fetchFromGitHub {
    owner = "example";
    repo = "torch-media";
    rev = "v0.10.0";
    hash = lib.fakeHash;
  };
  nativeBuildInputs = [ cmake ] ++ lib.optionals cudaSupport [ cudaPackages.cuda_nvcc ];
  buildInputs = [ ffmpeg ] ++ lib.optionals cudaSupport [ cudaPackages.cuda_cudart ];
  dependencies = [ torch ];
  env.ENABLE_CUDA = lib.optionalString cudaSupport "1";
}
