{
  lib,
  buildGoModule,
  fetchFromGitHub,
  makeWrapper,
  addDriverRunpath,
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
    makeWrapper
    cudaPackages.cuda_nvcc
  ];
  buildInputs = [
    cudaPackages.cuda_cudart
    cudaPackages.libcublas
  ];
  postFixup = ''
    wrapProgram $out/bin/llm-runner --suffix LD_LIBRARY_PATH : '${addDriverRunpath.driverLink}/lib'
  '';
}
