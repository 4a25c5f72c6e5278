"""The front ends: the command line, configuration, file discovery, the parallel runner, baselines,
new-code scoping, the reporters and the generated rule documentation."""
