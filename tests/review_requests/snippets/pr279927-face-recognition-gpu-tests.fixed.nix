{
  lib,
  buildPythonPackage,
  fetchPypi,
  dlib,
  numpy,
  pytestCheckHook,
}:
buildPythonPackage rec {
  pname = "face-match";
  version = "1.3.0";
  format = "setuptools";
  src = fetchPypi {
    inherit pname version;
    hash = lib.fakeHash;
  };
  dependencies = [
    dlib
    numpy
  ];
  nativeCheckInputs = [ pytestCheckHook ];
  # with a CUDA dlib the tests want a GPU the sandbox does not have
  doCheck = !dlib.cudaSupport;
  pythonImportsCheck = [ "face_match" ];
}
