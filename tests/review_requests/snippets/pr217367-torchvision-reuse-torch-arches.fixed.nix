{
  lib,
  buildPythonPackage,
  fetchFromGitHub,
  torch,
}:
let
  inherit (torch) cudaPackages;
in
buildPythonPackage {
  pname = "torch-vision-ops";
  version = "0.14.1";
  format = "setuptools";
  src = fetchFromGitHub {
    owner = "example";
    repo = "torch-vision-ops";
    rev = "v0.14.1";
    hash = lib.fakeHash;
  };
  nativeBuildInputs = lib.optionals torch.cudaSupport [ cudaPackages.cuda_nvcc ];
  dependencies = [ torch ];
  env = lib.optionalAttrs torch.cudaSupport {
    FORCE_CUDA = "1";
    TORCH_CUDA_ARCH_LIST = "${lib.concatStringsSep ";" torch.cudaCapabilities}";
  };
}
