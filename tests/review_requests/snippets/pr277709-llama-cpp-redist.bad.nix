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
  cudatoolkit_joined = symlinkJoin {
    name = "cuda-joined";
    paths = [
      cudaPackages.cudatoolkit.out
      cudaPackages.cudatoolkit.lib
    ];
  };
in
stdenv.mkDerivation {
  pname = "llm-infer";
  version = "1573";
  src = fetchFromGitHub {
    owner = "example";
    repo = "llm-infer";
    rev = "b1573";
    hash = lib.fakeHash;
  };
  nativeBuildInputs = [ cmake ];
  buildInputs = lib.optionals cudaSupport [ cudatoolkit_joined ];
  cmakeFlags = lib.optionals cudaSupport [ "-DLLM_CUBLAS=ON" ];
}
