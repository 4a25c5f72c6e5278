# The names fixes write, and when nixpkgs had them: a fix never writes a name its target lacks.
#
# words.<name>: a name as a fix writes it (`cudaPackages.` for the CUDA package set's attributes,
#   `lib.` for nixpkgs' library, `config.` for nixpkgs' configuration, bare for top-level nixpkgs;
#   `x.y` for an attribute of x). A name read with a fallback (`x.y or z`) needs no date.
#   from:  the first nixpkgs date that has it (null: before every release cudalint models, 22.05)
#   until: the first date that no longer has it (null: still there)
#   evidence: the nixpkgs pull requests (and issues) that show it added and removed
#   note: how the dates were established; where the merge day is not known, `from` is a later
#     day by which it was certainly merged (so a fix errs towards the older idiom, never towards
#     a name the target lacks)
#
# idioms.<concept>: the names that express one thing, newest first. The idiom of a target is the
# first of them the target has; a target that has none gets no fix that would write the concept.
let
  pr = number: "https://github.com/NixOS/nixpkgs/pull/${toString number}";

  # cudaPackages.flags as NixOS/nixpkgs#256324 introduced it (pkgs/development/cuda-modules/flags.nix)
  flagsMember = {
    from = "2023-12-07";
    until = null;
    evidence = [ (pr 256324) ];
    note = "a member of `flags` since the set moved to pkgs/development/cuda-modules (merged 2023-12-07)";
  };
in
{
  words = {
    addOpenGLRunpath = {
      from = null;
      until = "2024-11-17";
      evidence = [ (pr 60985) (pr 275241) ];
      note = "the setup hook and function of 2019; deprecated for `addDriverRunpath` (PR #275241), an alias that throws from 2024-11-17";
    };
    "addOpenGLRunpath.driverLink" = {
      from = null;
      until = "2024-11-17";
      evidence = [ (pr 60985) ];
      note = "the driver directory, an attribute of `addOpenGLRunpath` for as long as it existed";
    };
    addDriverRunpath = {
      from = "2023-12-18";
      until = null;
      evidence = [ (pr 269475) (pr 275241) ];
      note = "introduced by PR #269475 (reviewed 2023-11-25, after the 23.11 branch-off); PR #275241 of 2023-12-18 says it is merged";
    };
    "addDriverRunpath.driverLink" = {
      from = "2023-12-18";
      until = null;
      evidence = [ (pr 269475) (pr 275921) ];
      note = "with `addDriverRunpath`; used in the CUDA set by PR #275921 (2023-12-25)";
    };
    autoAddDriverRunpath = {
      from = "2024-04-01";
      until = null;
      evidence = [ (pr 297212) (pr 300287) ];
      note = "the top-level hook (PR #297212, opened 2024-03-19, merged late March: first used tree-wide by PR #300287 on 2024-03-30)";
    };
    "cudaPackages.autoAddOpenGLRunpathHook" = {
      from = "2022-04-09";
      until = "2024-07-30";
      evidence = [ (pr 167016) (pr 331017) ];
      note = "defined in pkgs/top-level/cuda-packages.nix by the overhaul of PR #167016; a warning alias of `autoAddDriverRunpath` from 2024-03-30, removed with the scope's old aliases by PR #331017";
    };
    "cudaPackages.autoAddDriverRunpath" = {
      from = "2024-03-19";
      until = "2024-07-30";
      evidence = [ (pr 281576) (pr 331017) ];
      note = "the scope's own copy of the hook (PR #281576), a warning alias of the top-level one from 2024-03-30, removed by PR #331017";
    };
    "cudaPackages.autoAddCudaCompatRunpathHook" = {
      from = "2023-12-12";
      until = "2024-03-19";
      evidence = [ (pr 267247) (pr 281576) ];
      note = "added for cuda_compat on Jetson (PR #267247), renamed without `Hook` by PR #281576";
    };
    "cudaPackages.autoAddCudaCompatRunpath" = {
      from = "2024-03-19";
      until = null;
      evidence = [ (pr 281576) ];
      note = "the renamed compat hook (PR #281576, merged 2024-03-19)";
    };
    "cudaPackages.backendStdenv" = {
      from = "2023-03-09";
      until = null;
      evidence = [ (pr 218265) "https://github.com/NixOS/nixpkgs/issues/220340" ];
      note = "the stdenv whose compiler nvcc accepts (PR #218265, opened 2023-02-25; issue #220340 of 2023-03-09 follows up on it as merged); not in 22.11";
    };
    "cudaPackages.cudaFlags" = {
      from = "2023-02-09";
      until = null;
      evidence = [ (pr 205351) "https://github.com/NixOS/nixpkgs/issues/215436" (pr 406545) ];
      note = "the capability flags (PR #205351, opened 2022-12-09; issue #215436 of 2023-02-09 evaluates it on master); an alias of `flags` from 2023-12-07, deprecated by PR #406545";
    };
    "cudaPackages.cudaFlags.cudaCapabilities" = {
      from = "2023-02-09";
      until = null;
      evidence = [ (pr 205351) ];
      note = "the capability list, in `cudaFlags` from its start";
    };
    "cudaPackages.flags" = flagsMember // {
      note = "introduced when the set moved to pkgs/development/cuda-modules (PR #256324, merged 2023-12-07), `cudaFlags` kept as its alias; PR #322070 moved packages over";
    };
    "cudaPackages.flags.cudaCapabilities" = flagsMember;
    "cudaPackages.flags.archNames" = flagsMember;
    "cudaPackages.flags.realArches" = flagsMember;
    "cudaPackages.flags.virtualArches" = flagsMember;
    "cudaPackages.flags.arches" = flagsMember;
    "cudaPackages.flags.gencode" = flagsMember;
    "cudaPackages.flags.gencodeString" = flagsMember;
    "cudaPackages.flags.cmakeCudaArchitecturesString" = {
      from = "2024-04-18";
      until = null;
      evidence = [ (pr 301416) ];
      note = "added to `flags` with `cmakeCudaArchitectures` by PR #301416 (merged 2024-04-18)";
    };
    "cudaPackages.cudaMajorMinorVersion" = {
      from = "2022-04-09";
      until = null;
      evidence = [ (pr 167016) ];
      note = "an attribute of every CUDA package set since the overhaul of PR #167016";
    };
    "cudaPackages.cudaMajorVersion" = {
      from = "2022-04-09";
      until = null;
      evidence = [ (pr 167016) ];
      note = "as `cudaMajorMinorVersion`";
    };
    "config.cudaSupport" = {
      from = "2023-04-30";
      until = null;
      evidence = [ (pr 224068) ];
      note = "a declared option of nixpkgs' config (default false) from PR #224068; before, reading it needs `or false`";
    };
    "torch.cudaCapabilities" = {
      from = "2023-03-31";
      until = null;
      evidence = [ (pr 218035) (pr 220609) "https://github.com/NixOS/nixpkgs/issues/220377" ];
      note = "the capabilities torch was built for, in its passthru: asked for in issue #220377 (2023-03-09) from the review of PR #218035, exposed only with cudaSupport by PR #220609 (opened 2023-03-11); the end of that month is a day by which it certainly exists";
    };
    "lib.getOutput" = {
      from = null;
      until = null;
      evidence = [ ];
      note = "in nixpkgs' lib long before 22.05, as `getDev`, `getLib`, `getBin`";
    };
    "lib.getDev" = { from = null; until = null; evidence = [ ]; note = "as `lib.getOutput`"; };
    "lib.getLib" = { from = null; until = null; evidence = [ ]; note = "as `lib.getOutput`"; };
    "lib.getBin" = { from = null; until = null; evidence = [ ]; note = "as `lib.getOutput`"; };
    "lib.getInclude" = {
      from = "2025-03-18";
      until = null;
      evidence = [ (pr 327114) ];
      note = "added with `getFirstOutput` (falls back to `dev`, then `out`) by PR #327114, opened 2024-07-14; 2025-03-18 is its first use in the CUDA set, a day by which it certainly exists";
    };
    "lib.getStatic" = {
      from = "2025-03-18";
      until = null;
      evidence = [ (pr 327114) ];
      note = "as `lib.getInclude` (falls back to `lib`, then `out`); first used in the CUDA set on 2025-03-18";
    };
  };

  idioms = {
    # the setup hook that adds the driver directory to the runpath of every ELF file
    driverRunpathHook = [ "autoAddDriverRunpath" "cudaPackages.autoAddOpenGLRunpathHook" ];
    # the package whose `driverLink` is the driver directory, and whose shell function patches one file
    driverRunpath = [ "addDriverRunpath" "addOpenGLRunpath" ];
    # the Jetson compat hook
    compatRunpathHook = [ "cudaPackages.autoAddCudaCompatRunpath" "cudaPackages.autoAddCudaCompatRunpathHook" ];
    # the stdenv whose compiler nvcc accepts
    backendStdenv = [ "cudaPackages.backendStdenv" ];
    # the user's capabilities, formatted for build systems
    capabilityFlags = [ "cudaPackages.flags" "cudaPackages.cudaFlags" ];
  };
}
