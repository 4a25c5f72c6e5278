{
  lib,
  stdenv,
  fetchurl,
  autoPatchelfHook,
  autoAddDriverRunpath,
  ocl-icd,
}:
stdenv.mkDerivation {
  pname = "gpu-bench";
  version = "5.4.6";
  src = fetchurl {
    url = "https://example.org/gpu-bench-5.4.6-Linux.tar.gz";
    hash = lib.fakeHash;
  };
  nativeBuildInputs = [
    autoPatchelfHook
    autoAddDriverRunpath
  ];
  buildInputs = [ ocl-icd ];
  # the CUDA driver is loaded with dlopen from the driver directory at run time
  autoPatchelfIgnoreMissingDeps = [ "libcuda.so.1" ];
  installPhase = ''
    mkdir -p $out/bin
    cp gpu-bench* $out/bin/
  '';
}
