{
  lib,
  buildGoModule,
  fetchFromGitHub,
  autoAddDriverRunpath,
  cudaPackages,
}:
buildGoModule {
  pname = "llm-runner";
  version = "0.1.48";
  src = fetchFromGitHub {
    owner = "example";
    repo = "llm-runner";
    rev = "v0.1.48";
    hash = lib.fakeHash;
  };
  vendorHash = lib.fakeHash;
  nativeBuildInputs = [
    autoAddDriverRunpath
    cudaPackages.cuda_nvcc
  ];
  buildInputs = [
    cudaPackages.cuda_cudart
    cudaPackages.libcublas
  ];
}
