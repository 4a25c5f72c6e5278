{
  lib,
  buildPythonPackage,
  fetchFromGitHub,
  setuptools,
  numpy,
  cudaPackages,
  pytestCheckHook,
}:
buildPythonPackage (finalAttrs: {
  pname = "gpu-primitives";
  version = "1.2.0";
  pyproject = true;
  src = fetchFromGitHub {
    owner = "example";
    repo = "gpu-primitives";
    tag = "v${finalAttrs.version}";
    hash = lib.fakeHash;
  };
  build-system = [ setuptools ];
  buildInputs = [ cudaPackages.cuda_cudart ];
  dependencies = [ numpy ];
  nativeCheckInputs = [ pytestCheckHook ];
  # the tests need a GPU
  doCheck = false;
  # buildPythonPackage runs its tests in the install check, which is what overrideAttrs sees
  passthru.gpuCheck = finalAttrs.finalPackage.overrideAttrs {
    requiredSystemFeatures = [ "cuda" ];
    doInstallCheck = true;
  };
})
