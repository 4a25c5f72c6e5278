{
  lib,
  config,
  stdenv,
  fetchFromGitHub,
  cmake,
  gtest,
  cudaPackages,
  cudaSupport ? config.cudaSupport,
}:
stdenv.mkDerivation {
  pname = "grad-boost";
  version = "1.5.2";
  src = fetchFromGitHub {
    owner = "example";
    repo = "grad-boost";
    rev = "v1.5.2";
    hash = lib.fakeHash;
  };
  nativeBuildInputs = [ cmake ] ++ lib.optionals cudaSupport [ cudaPackages.cuda_nvcc ];
  buildInputs = [ gtest ] ++ lib.optionals cudaSupport [ cudaPackages.cuda_cudart ];
  cmakeFlags = [
    (lib.cmakeBool "GOOGLE_TEST" true)
    (lib.cmakeBool "USE_CUDA" cudaSupport)
  ];
  doCheck = true;
  checkPhase = ''
    runHook preCheck
    ./testgb
    runHook postCheck
  '';
}
