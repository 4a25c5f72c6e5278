{
  lib,
  config,
  buildPythonPackage,
  fetchPypi,
  torch,
  cudatoolkit,
  cudaSupport ? config.cudaSupport,
}:
buildPythonPackage rec {
  pname = "vision-ops";
  version = "1.7.1";
  format = "setuptools";
  src = fetchPypi {
    inherit pname version;
    hash = lib.fakeHash;
  };
  nativeBuildInputs = lib.optionals cudaSupport [ cudatoolkit ];
  dependencies = [ torch ];
  env = lib.optionalAttrs cudaSupport { VISION_OPS_WITH_CUDA = "1"; };
}
