{
  lib,
  stdenv,
  fetchurl,
  autoPatchelfHook,
  autoAddDriverRunpath,
  cudaPackages,
}:
stdenv.mkDerivation {
  pname = "gpu-jpeg-decoder";
  version = "12.1.0";
  src = fetchurl {
    url = "https://example.org/gpu-jpeg-decoder-12.1.0.tar.xz";
    hash = lib.fakeHash;
  };
  nativeBuildInputs = [
    autoPatchelfHook
    autoAddDriverRunpath
  ];
  buildInputs = [ cudaPackages.cuda_cudart ];
  autoPatchelfIgnoreMissingDeps = [ "libcuda.so.1" ];
  installPhase = ''
    mkdir -p $out
    cp -r lib include $out/
  '';
}
