{
  lib,
  stdenv,
  fetchFromGitHub,
  cmake,
  cudaPackages,
}:
stdenv.mkDerivation {
  pname = "gpu-health";
  version = "3.1.8";
  src = fetchFromGitHub {
    owner = "example";
    repo = "gpu-health";
    rev = "v3.1.8";
    hash = lib.fakeHash;
  };
  nativeBuildInputs = [ cmake ];
  buildInputs = with cudaPackages; [
    cuda_cudart
    cuda_nvml_dev
    libcublas
  ];
}
