{
  lib,
  config,
  stdenv,
  fetchFromGitHub,
  cmake,
  symlinkJoin,
  cudaPackages,
  cudaSupport ? config.cudaSupport,
}:
let
  cuda-redist = symlinkJoin {
    name = "cuda-redist";
    paths = with cudaPackages; [
      cuda_cudart
      cuda_cccl
      libcurand
    ];
  };
in
stdenv.mkDerivation {
  pname = "boosted-trees";
  version = "1.2.2";
  src = fetchFromGitHub {
    owner = "example";
    repo = "boosted-trees";
    rev = "v1.2.2";
    hash = lib.fakeHash;
  };
  nativeBuildInputs = [ cmake ] ++ lib.optionals cudaSupport [ cudaPackages.cuda_nvcc ];
  buildInputs = lib.optionals cudaSupport [ cuda-redist ];
  cmakeFlags = [ (lib.cmakeBool "HAVE_CUDA" cudaSupport) ];
}
