{
  lib,
  stdenv,
  fetchFromGitHub,
  which,
  autoAddDriverRunpath,
  cudaPackages,
}:
stdenv.mkDerivation {
  pname = "collective-comm";
  version = "2.16.2";
  src = fetchFromGitHub {
    owner = "example";
    repo = "collective-comm";
    rev = "v2.16.2";
    hash = lib.fakeHash;
  };
  nativeBuildInputs = [
    which
    autoAddDriverRunpath
    cudaPackages.cuda_nvcc
  ];
  buildInputs = [ cudaPackages.cuda_cudart ];
  makeFlags = [ "NVCC_GENCODE=${cudaPackages.flags.gencodeString}" ];
}
