# An expression written the way many CUDA packages were before the split redistributables.
# Try: cudalint check examples/legacy-cuda-package.nix
#      cudalint check --diff --unsafe-fixes examples/legacy-cuda-package.nix
{
  lib,
  stdenv,
  fetchFromGitHub,
  cmake,
  makeWrapper,
  cudatoolkit,
  addOpenGLRunpath,
  linuxPackages,
  cudaSupport ? false,
}:
stdenv.mkDerivation rec {
  pname = "matmul-bench";
  version = "1.0.0";

  src = fetchFromGitHub {
    owner = "example";
    repo = "matmul-bench";
    rev = "v${version}";
    hash = "sha256-DDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDD=";
  };

  nativeBuildInputs = [
    cmake
    makeWrapper
    addOpenGLRunpath
  ];

  buildInputs = [
    cudatoolkit
    linuxPackages.nvidia_x11
  ];

  cmakeFlags = [ "-DCMAKE_CUDA_ARCHITECTURES=86" ];

  postInstall = ''
    wrapProgram $out/bin/matmul-bench \
      --prefix LD_LIBRARY_PATH : /run/opengl-driver/lib:${lib.makeLibraryPath [ cudatoolkit ]}
  '';

  meta = {
    description = "Matrix multiplication benchmark";
    license = lib.licenses.mit;
  };
}
