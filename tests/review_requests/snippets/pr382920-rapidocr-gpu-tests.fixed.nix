{
  lib,
  buildPythonPackage,
  fetchFromGitHub,
  setuptools,
  onnxruntime,
  pytestCheckHook,
}:
buildPythonPackage {
  pname = "ocr-onnx";
  version = "1.4.4";
  pyproject = true;
  src = fetchFromGitHub {
    owner = "example";
    repo = "ocr-onnx";
    rev = "v1.4.4";
    hash = lib.fakeHash;
  };
  build-system = [ setuptools ];
  dependencies = [ onnxruntime ];
  nativeCheckInputs = [ pytestCheckHook ];
  disabledTests = [
    "test_long_text"
  ]
  ++ lib.optionals onnxruntime.cudaSupport [
    # these run on the CUDA provider and crash without a GPU in the sandbox
    "test_cuda_provider"
    "test_cuda_session"
  ];
}
