{
  lib,
  stdenv,
  makeWrapper,
  addDriverRunpath,
  jdk17,
  libGL,
  launcher-unwrapped,
}:
stdenv.mkDerivation {
  pname = "game-launcher";
  inherit (launcher-unwrapped) version;
  dontUnpack = true;
  nativeBuildInputs = [ makeWrapper ];
  installPhase = ''
    makeWrapper ${launcher-unwrapped}/bin/game-launcher $out/bin/game-launcher \
      --set JAVA_HOME ${jdk17} \
      --prefix LD_LIBRARY_PATH : ${addDriverRunpath.driverLink}/lib:${lib.makeLibraryPath [ libGL ]}
  '';
}
