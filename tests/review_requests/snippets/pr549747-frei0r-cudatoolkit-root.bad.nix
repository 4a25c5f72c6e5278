{
  lib,
  config,
  stdenv,
  fetchFromGitHub,
  cmake,
  cudaPackages,
  cudaSupport ? config.cudaSupport,
}:
stdenv.mkDerivation {
  pname = "video-filters";
  version = "2.5.1";
  src = fetchFromGitHub {
    owner = "example";
    repo = "video-filters";
    rev = "v2.5.1";
    hash = lib.fakeHash;
  };
  nativeBuildInputs = [ cmake ] ++ lib.optionals cudaSupport [ cudaPackages.cuda_nvcc ];
  buildInputs = lib.optionals cudaSupport [ cudaPackages.cuda_cudart ];
  cmakeFlags = lib.optionals cudaSupport [
    (lib.cmakeFeature "CUDAToolkit_ROOT" "${lib.getBin cudaPackages.cuda_nvcc}")
  ];
}
