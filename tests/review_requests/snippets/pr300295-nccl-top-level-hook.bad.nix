{
  lib,
  stdenv,
  fetchFromGitHub,
  which,
  cudaPackages,
}:
stdenv.mkDerivation {
  pname = "collective-comm";
  version = "2.20.5";
  src = fetchFromGitHub {
    owner = "example";
    repo = "collective-comm";
    rev = "v2.20.5";
    hash = lib.fakeHash;
  };
  nativeBuildInputs = [
    which
    cudaPackages.autoAddOpenGLRunpathHook
    cudaPackages.cuda_nvcc
  ];
  buildInputs = [
    cudaPackages.cuda_cudart.dev
    cudaPackages.cuda_cudart.lib
  ];
  makeFlags = [ "NVCC_GENCODE=${cudaPackages.flags.gencodeString}" ];
}
