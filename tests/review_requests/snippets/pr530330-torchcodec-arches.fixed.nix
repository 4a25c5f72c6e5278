{
  lib,
  buildPythonPackage,
  fetchFromGitHub,
  cmake,
  ffmpeg,
  torch,
}:
let
  inherit (torch) cudaPackages cudaSupport;
in
buildPythonPackage {
  pname = "torch-media";
  version = "0.11.0";
  pyproject = true;
  src = fetchFromGitHub {
    owner = "example";
    repo = "torch-media";
    rev = "v0.11.0";
    hash = lib.fakeHash;
  };
  nativeBuildInputs = [ cmake ] ++ lib.optionals cudaSupport [ cudaPackages.cuda_nvcc ];
  buildInputs = [ ffmpeg ] ++ lib.optionals cudaSupport [ cudaPackages.cuda_cudart ];
  dependencies = [ torch ];
  env = lib.optionalAttrs cudaSupport {
    ENABLE_CUDA = "1";
    TORCH_CUDA_ARCH_LIST = "${lib.concatStringsSep ";" torch.cudaCapabilities}";
  };
}
