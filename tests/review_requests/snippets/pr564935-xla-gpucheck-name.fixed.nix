{
  lib,
  stdenv,
  fetchFromGitHub,
  runCommand,
  cmake,
  cudaPackages,
}:
stdenv.mkDerivation (finalAttrs: {
  pname = "tensor-compiler";
  version = "0.7.2";
  src = fetchFromGitHub {
    owner = "example";
    repo = "tensor-compiler";
    tag = "v${finalAttrs.version}";
    hash = lib.fakeHash;
  };
  nativeBuildInputs = [
    cmake
    cudaPackages.cuda_nvcc
  ];
  buildInputs = [ cudaPackages.cuda_cudart ];
  cmakeFlags = [
    (lib.cmakeFeature "CMAKE_CUDA_ARCHITECTURES" cudaPackages.flags.cmakeCudaArchitecturesString)
  ];
  passthru.tests.cuda.gpuCheck = runCommand "tensor-compiler-plugin-test" {
    requiredSystemFeatures = [ "cuda" ];
  } ''
    ${finalAttrs.finalPackage}/bin/tc-selftest --device=cuda
    touch $out
  '';
})
