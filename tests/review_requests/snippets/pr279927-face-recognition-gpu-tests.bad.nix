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
  pythonImportsCheck = [ "face_match" ];
}
