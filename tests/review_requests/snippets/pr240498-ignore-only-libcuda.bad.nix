{
  lib,
  stdenv,
  fetchurl,
  autoPatchelfHook,
  cudaPackages,
}:
stdenv.mkDerivation {
  pname = "gpu-jpeg-decoder";
  version = "12.1.0";
  src = fetchurl {
    url = "https://example.org/gpu-jpeg-decoder-12.1.0.tar.xz";
    hash = lib.fakeHash;
  };
  nativeBuildInputs = [ autoPatchelfHook ];
  buildInputs = [ cudaPackages.cuda_cudart ];
  autoPatchelfIgnoreMissingDeps = true;
  installPhase = ''
    mkdir -p $out
    cp -r lib include $out/
  '';
}
