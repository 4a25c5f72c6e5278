{
  lib,
  stdenv,
  fetchFromGitHub,
  cmake,
  libraw,
  opencv4,
}:
stdenv.mkDerivation {
  pname = "image-viewer";
  version = "3.17.2287";
  src = fetchFromGitHub {
    owner = "example";
    repo = "image-viewer";
    rev = "3.17.2287";
    hash = lib.fakeHash;
  };
  nativeBuildInputs = [ cmake ];
  buildInputs = [
    libraw
    # the CUDA headers and libraries OpenCV's CMake config asks for come with this output
    (lib.getOutput "cxxdev" opencv4)
  ];
}
