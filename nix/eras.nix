# The eras of CUDA redistributable outputs in nixpkgs (../shared/docs/rules.md, "Eras").
# The same expression is right or wrong depending on the era of the nixpkgs it is built with.
# `from`/`until` are inclusive dates of nixpkgs revisions. A NixOS release stands for its
# branch-off (`branchOff`): what was merged before it is in the release. `defaultCuda` is the
# release the unversioned `cudaPackages` pointed at (the target when no `cuda` is configured).
{
  eras = [
    {
      id = "single-output";
      title = "single output";
      from = null;
      until = "2023-06-30";
      evidence = [ ];
      summary = "Redistributable packages have one output, `out`; `cudaPackages.cudatoolkit` is the runfile toolkit (outputs out, lib, doc).";
    }
    {
      id = "symlink-farm";
      title = "symlink farm";
      from = "2023-07-01";
      until = "2024-06-30";
      evidence = [ "https://github.com/NixOS/nixpkgs/pull/240498" ];
      summary = "Split outputs exist, but `out` is a symlink farm of all outputs: a plain reference drags every output, `static` included, into the runtime closure, and `lib.getDev`/`getLib`/`getOutput` do nothing on redistributables. Name the outputs (`libcublas.dev libcublas.lib`).";
    }
    {
      id = "multi-output";
      title = "multiple outputs";
      from = "2024-07-01";
      until = "2025-09-30";
      evidence = [ "https://github.com/NixOS/nixpkgs/pull/323056" ];
      summary = "Normal multiple outputs: a plain name in buildInputs selects `dev`, which propagates the rest into the build closure only; plain names in buildInputs are the recommended form. `out` is nearly empty, so `\"\${libcublas}/lib\"` points at nothing.";
    }
    {
      id = "split-redist";
      title = "split redistributables";
      from = "2025-10-01";
      until = null;
      evidence = [ "https://github.com/NixOS/nixpkgs/pull/437723" ];
      summary = "The CUDA 13 rework (`buildRedist`): outputs declared per package, with `include` and `stubs`; `dev` propagates only bin/include/lib; `cuda_nvcc` and `cuda_cccl` have only `out`; `cuda_cudart` propagates `static` and `stubs`; `lib.getStatic`/`getInclude` exist.";
    }
  ];

  nixos = {
    "22.05" = { defaultCuda = "11.6"; branchOff = "2022-05-22"; };
    "22.11" = { defaultCuda = "11.7"; branchOff = "2022-11-22"; };
    "23.05" = { defaultCuda = "11.7"; branchOff = "2023-05-22"; };
    "23.11" = { defaultCuda = "12.2"; branchOff = "2023-11-22"; };
    "24.05" = { defaultCuda = "12.2"; branchOff = "2024-05-22"; };
    # addOpenGLRunpath's throw (2024-11-17) is in 24.11, the removal of cudaPackages_10 (2024-11-20)
    # is not; the other branch-offs are taken as the 22nd of the month.
    "24.11" = { defaultCuda = "12.4"; branchOff = "2024-11-18"; };
    "25.05" = { defaultCuda = "12.8"; branchOff = "2025-05-22"; };
    "25.11" = { defaultCuda = "12.8"; branchOff = "2025-11-22"; };
  };
  # Older NixOS releases (one `nixos/doc/manual/release-notes/rl-YYMM` file each; 14.10/14.11 and
  # 21.03 were planned names, released as 14.12 and 21.05). cudalint models no CUDA package set
  # before 22.05: a target among these is judged by the oldest era and 22.05's CUDA release. Their
  # branch-offs are taken as the 22nd of the month, like the newer ones above: no CUDA change
  # this set records lies within a month of one.
  olderNixos = {
    "13.10" = { branchOff = "2013-10-22"; };
    "14.04" = { branchOff = "2014-04-22"; };
    "14.12" = { branchOff = "2014-12-22"; };
    "15.09" = { branchOff = "2015-09-22"; };
    "16.03" = { branchOff = "2016-03-22"; };
    "16.09" = { branchOff = "2016-09-22"; };
    "17.03" = { branchOff = "2017-03-22"; };
    "17.09" = { branchOff = "2017-09-22"; };
    "18.03" = { branchOff = "2018-03-22"; };
    "18.09" = { branchOff = "2018-09-22"; };
    "19.03" = { branchOff = "2019-03-22"; };
    "19.09" = { branchOff = "2019-09-22"; };
    "20.03" = { branchOff = "2020-03-22"; };
    "20.09" = { branchOff = "2020-09-22"; };
    "21.05" = { branchOff = "2021-05-22"; };
    "21.11" = { branchOff = "2021-11-22"; };
  };
  # nixpkgs after the newest release above (nixos-unstable in 2026).
  unstable = { defaultCuda = "12.9"; };
}
