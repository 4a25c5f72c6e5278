{
  lib,
  config,
  stdenv,
  fetchurl,
  gfortran,
  mpi,
  cudaPackages,
  cudaSupport ? config.cudaSupport,
}:
stdenv.mkDerivation {
  pname = "eigen-solver";
  version = "2023.05.001";
  src = fetchurl {
    url = "https://example.org/eigen-solver-2023.05.001.tar.gz";
    hash = lib.fakeHash;
  };
  nativeBuildInputs = [ gfortran ] ++ lib.optionals cudaSupport [ cudaPackages.cuda_nvcc ];
  buildInputs = [ mpi ] ++ lib.optionals cudaSupport [
    cudaPackages.cuda_cudart
    cudaPackages.libcublas
  ];
  configureFlags = lib.optionals cudaSupport [
    "--enable-nvidia-gpu"
    "--with-NVIDIA-GPU-compute-capability=${lib.head cudaPackages.flags.realArches}"
  ];
  # the GPU kernels cannot run in the sandbox
  doCheck = !cudaSupport;
}
