{
  lib,
  rustPlatform,
  fetchFromGitHub,
  autoAddDriverRunpath,
}:
rustPlatform.buildRustPackage (finalAttrs: {
  pname = "gpu-clock-tool";
  version = "0.1.18";
  src = fetchFromGitHub {
    owner = "example";
    repo = "gpu-clock-tool";
    tag = finalAttrs.version;
    hash = lib.fakeHash;
  };
  cargoHash = lib.fakeHash;
  nativeBuildInputs = [ autoAddDriverRunpath ];
  # the program opens libnvidia-ml.so.1 from the driver at run time
  meta.mainProgram = "gpu-clock-tool";
})
