{
  lib,
  stdenv,
  fetchurl,
  makeWrapper,
  ocl-icd,
  linuxPackages,
}:
stdenv.mkDerivation {
  pname = "gpu-bench";
  version = "5.4.6";
  src = fetchurl {
    url = "https://example.org/gpu-bench-5.4.6-Linux.tar.gz";
    hash = lib.fakeHash;
  };
  nativeBuildInputs = [ makeWrapper ];
  installPhase = ''
    mkdir -p $out/bin
    cp gpu-bench* $out/bin/
    for f in $out/bin/gpu-bench*; do
      patchelf --set-interpreter "$(cat $NIX_CC/nix-support/dynamic-linker)" "$f"
      wrapProgram "$f" --prefix LD_LIBRARY_PATH : ${
        lib.makeLibraryPath [
          ocl-icd
          linuxPackages.nvidia_x11
        ]
      }
    done
  '';
}
