# Names nixpkgs deprecated, renamed or removed, with what to write instead.
#
# scope: where the name lives ("cudaPackages": inside a CUDA package set; "top-level": nixpkgs'
#   top level; "attribute": a derivation attribute).
# status: "deprecated" (still evaluates, warns), "renamed" (an alias of the new name),
#   "removed" (no replacement of the same kind).
# since: when the replacement appeared or the deprecation began (YYYY-MM-DD or YYYY-MM).
# throwsFrom: the first nixpkgs revision where using the name throws (null: it still evaluates).
# replacement: what to write instead (null: nothing of the same kind); certain: the name was a plain
#   alias of the replacement (the same package, the same CUDA release), so a fix may write it.
# pattern (families only): a regular expression for names nixpkgs removed without listing each.
# kind (optional): "hook" for setup hooks (CUDA104 reports those, not CUDA006).
# evidence: nixpkgs PRs; the `# Added YYYY-MM-DD` comments of pkgs/top-level/aliases.nix (and
#   python-aliases.nix) give the throw dates.
let
  removedSet = throwsFrom: evidence: {
    scope = "top-level";
    status = "removed";
    since = throwsFrom;
    inherit throwsFrom evidence;
    replacement = "cudaPackages";
    note = "versioned CUDA package sets are periodically removed; use the unversioned `cudaPackages` (or a supported `cudaPackages_12_x`)";
  };
  sets = versions: throwsFrom: evidence:
    builtins.listToAttrs (map (v: { name = "cudaPackages_${v}"; value = removedSet throwsFrom evidence; }) versions);

  # Top-level names (pkgs/top-level/aliases.nix), one record per name; `replace` maps the name to
  # its replacement (or null).
  topLevel =
    { names, throwsFrom, evidence, note, since ? throwsFrom, status ? "removed", replace ? (_: null), certain ? false, scope ? "top-level" }:
    builtins.listToAttrs (
      map (name: {
        inherit name;
        value = { inherit scope status since throwsFrom evidence note certain; replacement = replace name; };
      }) names
    );
  # "cudatoolkit_10_2" -> "10_2"
  versionOf = prefix: name: builtins.substring (builtins.stringLength prefix) (-1) name;
  aliases2021a = "https://github.com/NixOS/nixpkgs/pull/113107";
  aliases2021b = "https://github.com/NixOS/nixpkgs/pull/119783";
  overhaul = "https://github.com/NixOS/nixpkgs/pull/167016";
  family = pattern: throwsFrom: evidence: note: {
    scope = "top-level";
    status = "removed";
    since = throwsFrom;
    inherit pattern throwsFrom evidence note;
    replacement = null;
    certain = false;
  };
in
sets [ "10" "10_0" "10_1" "10_2" ] "2024-11-20" [ ]
// sets [ "11" "11_0" "11_1" "11_2" "11_3" "11_4" "11_5" "11_6" "11_7" "11_8" ] "2025-08-08" [ "https://github.com/NixOS/nixpkgs/pull/430797" ]
// sets [ "12_0" "12_1" "12_2" "12_3" "12_4" "12_5" ] "2025-08-08" [ ]
# CUDA 6-8 and their cuDNN builds: aliases.nix `throw "... has been removed in favor of newer versions"`.
// topLevel {
  names = [ "cudatoolkit_6" "cudatoolkit_65" "cudatoolkit_7" "cudatoolkit_7_5" "cudatoolkit_8" "cudnn_cudatoolkit_7" "cudnn_cudatoolkit_7_5" "cudnn6_cudatoolkit_8" "cudnn_cudatoolkit_8" ];
  throwsFrom = "2021-02-14";
  evidence = [ aliases2021a ];
  note = "CUDA 6 to 8 are gone: use `cudaPackages`";
}
// topLevel {
  names = [ "cudatoolkit_9" "cudatoolkit_9_0" "cudatoolkit_9_1" "cudatoolkit_9_2" "cudnn_cudatoolkit_9" "cudnn_cudatoolkit_9_0" "cudnn_cudatoolkit_9_1" "cudnn_cudatoolkit_9_2" ];
  throwsFrom = "2021-04-18";
  evidence = [ aliases2021b ];
  note = "CUDA 9 is gone: use `cudaPackages`";
}
# The CUDA package sets (2022-04-04): `cudatoolkit_X_Y = throw "... renamed to cudaPackages_X_Y.cudatoolkit"`.
// topLevel {
  names = [ "cudatoolkit_10" "cudatoolkit_10_0" "cudatoolkit_10_1" "cudatoolkit_10_2" "cudatoolkit_11_0" "cudatoolkit_11_1" "cudatoolkit_11_2" "cudatoolkit_11_3" "cudatoolkit_11_4" "cudatoolkit_11_5" "cudatoolkit_11_6" ];
  throwsFrom = "2022-04-04";
  status = "renamed";
  replace = name: "cudaPackages_${versionOf "cudatoolkit_" name}.cudatoolkit";
  certain = true;
  evidence = [ overhaul ];
  note = "the versioned toolkits moved into the CUDA package sets";
}
// topLevel {
  names = [ "nccl_cudatoolkit_10" "nccl_cudatoolkit_11" ];
  throwsFrom = "2022-04-04";
  status = "renamed";
  replace = name: "cudaPackages_${versionOf "nccl_cudatoolkit_" name}.nccl";
  certain = true;
  evidence = [ overhaul ];
  note = "NCCL moved into the CUDA package sets";
}
// topLevel {
  names = [ "nccl" ];
  throwsFrom = "2022-04-04";
  status = "renamed";
  replace = _: "cudaPackages.nccl";
  certain = true;
  evidence = [ overhaul ];
  note = "NCCL moved into the CUDA package sets";
}
// topLevel {
  names = [ "cudnn" "cutensor" ];
  throwsFrom = "2022-04-04";
  replace = name: "cudaPackages.${name}";
  evidence = [ overhaul ];
  note = "mind its CUDA release";
}
// topLevel {
  names = [
    "cudnn_7_4_cudatoolkit_10_0" "cudnn_7_6_cudatoolkit_10_0" "cudnn_7_6_cudatoolkit_10_1" "cudnn_8_1_cudatoolkit_10_2"
    "cudnn_8_1_cudatoolkit_11_0" "cudnn_8_1_cudatoolkit_11_1" "cudnn_8_1_cudatoolkit_11_2" "cudnn_8_1_cudatoolkit_10"
    "cudnn_8_3_cudatoolkit_10_2" "cudnn_8_3_cudatoolkit_11_0" "cudnn_8_3_cudatoolkit_11_1" "cudnn_8_3_cudatoolkit_11_2"
    "cudnn_8_3_cudatoolkit_11_3" "cudnn_8_3_cudatoolkit_11_4" "cudnn_8_3_cudatoolkit_11_5" "cudnn_8_3_cudatoolkit_10"
    "cudnn_8_3_cudatoolkit_11"
  ];
  throwsFrom = "2022-04-04";
  evidence = [ overhaul ];
  note = "use `cudaPackages.cudnn`";
}
// topLevel {
  names = [
    "cutensor_cudatoolkit_10" "cutensor_cudatoolkit_10_1" "cutensor_cudatoolkit_10_2" "cutensor_cudatoolkit_11"
    "cutensor_cudatoolkit_11_0" "cutensor_cudatoolkit_11_1" "cutensor_cudatoolkit_11_2" "cutensor_cudatoolkit_11_3"
    "cutensor_cudatoolkit_11_4"
  ];
  throwsFrom = "2022-04-04";
  evidence = [ overhaul ];
  note = "use `cudaPackages.cutensor`";
}
// {
  # cuDNN builds renamed or dropped before 2022-04 without an alias of their own (the 2021 names
  # `cudnn_cudatoolkit_10_2`, `cudnn_cudatoolkit_11`, ...): none is defined after the overhaul.
  "cudnn_*cudatoolkit_*" = family "^cudnn[0-9]*(_[0-9]+)*_cudatoolkit(_[0-9]+)*$" "2022-04-04" [ overhaul ]
    "use `cudaPackages.cudnn`";
  "cutensor_cudatoolkit_*" = family "^cutensor_cudatoolkit(_[0-9]+)*$" "2022-04-04" [ overhaul ]
    "use `cudaPackages.cutensor`";
  "nccl_cudatoolkit_*" = family "^nccl_cudatoolkit(_[0-9]+)*$" "2022-04-04" [ overhaul ]
    "use `cudaPackages.nccl`";
}
# `cudatoolkit_11 = cudaPackages_11.cudatoolkit` (all-packages.nix) warned with CUDA 11 from 24.11
# on (release note of PR #342112) and stopped evaluating with it.
// topLevel {
  names = [ "cudatoolkit_11" ];
  since = "2024-11-18";
  throwsFrom = "2025-08-08";
  status = "deprecated";
  evidence = [ "https://github.com/NixOS/nixpkgs/pull/342112" "https://github.com/NixOS/nixpkgs/pull/430797" ];
  note = "use the split packages of `cudaPackages` (`cuda_nvcc`, `cuda_cudart`, ...)";
}
// topLevel {
  names = [ "caffeWithCuda" ];
  throwsFrom = "2024-11-20";
  evidence = [ ];
  note = "`throw \"caffeWithCuda has been removed, as it was broken and required CUDA 10\"`";
}
# python-aliases.nix
// topLevel {
  names = [ "pytorchWithCuda" ];
  scope = "python";
  since = "2022-09-30";
  throwsFrom = null;
  status = "renamed";
  replace = _: "torchWithCuda";
  certain = true;
  evidence = [ "https://github.com/NixOS/nixpkgs/blob/000b58721fef0d1cf693a6f2f4fa442b66fbe2bb/pkgs/top-level/python-aliases.nix" ];
  note = "the Python package is `torch`";
}
// topLevel {
  names = [ "theanoWithCuda" "TheanoWithCuda" ];
  scope = "python";
  throwsFrom = "2024-05-20";
  evidence = [ "https://github.com/NixOS/nixpkgs/blob/000b58721fef0d1cf693a6f2f4fa442b66fbe2bb/pkgs/top-level/python-aliases.nix" ];
  note = "Theano was removed, no longer maintained";
}
// {
  cudaFlags = {
    scope = "cudaPackages";
    status = "renamed";
    since = "2024-07";
    throwsFrom = null;
    replacement = "flags";
    evidence = [ "https://github.com/NixOS/nixpkgs/pull/322070" ];
    note = "the CUDA flags moved to `cudaPackages.flags`";
  };
  # `cudaPackages.cudaVersion` warns from the rework that moved nixpkgs to `cudaMajorMinorVersion`
  # (tree-wide in PR #405664, 2025-05-09); until then it was the scope's own name (torch still
  # compared `cudaPackages.cudaVersion` in PR #331017, 2024-07).
  cudaVersion = {
    scope = "cudaPackages";
    status = "renamed";
    since = "2025-05-09";
    throwsFrom = null;
    replacement = "cudaMajorMinorVersion";
    evidence = [ "https://github.com/NixOS/nixpkgs/pull/405664" ];
    note = "use `cudaMajorMinorVersion`, or `cudaAtLeast`/`cudaOlder` for comparisons";
  };
  cusparselt = {
    scope = "cudaPackages";
    status = "renamed";
    since = "2025-03";
    throwsFrom = null;
    replacement = "libcusparse_lt";
    evidence = [ ];
    note = "cuSPARSELt is packaged under NVIDIA's name for it, `libcusparse_lt`";
  };
  autoAddDriverRunpath = {
    scope = "cudaPackages";
    status = "renamed";
    since = "2024-04";
    throwsFrom = "2024-07-30";
    replacement = "autoAddDriverRunpath";
    evidence = [ "https://github.com/NixOS/nixpkgs/pull/297212" "https://github.com/NixOS/nixpkgs/pull/331017" ];
    note = "the hook lives at the top level of nixpkgs: take `autoAddDriverRunpath` from there";
  };
  autoFixElfFiles = {
    scope = "cudaPackages";
    status = "renamed";
    since = "2024-04";
    throwsFrom = "2024-07-30";
    replacement = "autoFixElfFiles";
    evidence = [ "https://github.com/NixOS/nixpkgs/pull/297212" "https://github.com/NixOS/nixpkgs/pull/331017" ];
    note = "the hook lives at the top level of nixpkgs: take `autoFixElfFiles` from there";
  };
  autoAddOpenGLRunpathHook = {
    scope = "cudaPackages";
    status = "renamed";
    since = "2024-04";
    throwsFrom = "2024-07-30";
    replacement = "autoAddDriverRunpath";
    evidence = [ "https://github.com/NixOS/nixpkgs/pull/297212" "https://github.com/NixOS/nixpkgs/pull/331017" ];
    note = "renamed and moved to the top level of nixpkgs (the scope's alias was added 2024-03-30, removed with the scope's old aliases by PR #331017)";
  };
  autoAddCudaCompatRunpathHook = {
    scope = "cudaPackages";
    status = "renamed";
    since = "2024-03";
    throwsFrom = "2024-03-19";
    replacement = "autoAddCudaCompatRunpath";
    evidence = [ "https://github.com/NixOS/nixpkgs/pull/281576" ];
    note = "the hook lost its `Hook` suffix";
  };
  addOpenGLRunpath = {
    scope = "top-level";
    kind = "hook"; # CUDA104 reports renamed hooks
    status = "renamed";
    since = "2024-03";
    throwsFrom = "2024-11-17";
    replacement = "addDriverRunpath";
    evidence = [ "https://github.com/NixOS/nixpkgs/pull/275241" ];
    note = "the driver is not only OpenGL's";
  };
  dontUseAutoAddOpenGLRunpath = {
    scope = "attribute";
    status = "renamed";
    since = "2024-04";
    throwsFrom = null;
    replacement = "dontUseAutoAddDriverRunpath";
    evidence = [ "https://github.com/NixOS/nixpkgs/pull/297212" ];
    note = "the renamed hook reads the new attribute only";
  };
  cudatoolkit = {
    scope = "cudaPackages";
    status = "deprecated";
    since = "2024-04";
    throwsFrom = null;
    replacement = null;
    evidence = [ "https://github.com/NixOS/nixpkgs/issues/232501" ];
    note = "the monolithic toolkit (since 2024-04 a symlinkJoin of the redistributables that warns on use): list the redistributables you need (`cuda_nvcc` in nativeBuildInputs, `cuda_cudart`, `libcublas`, ... in buildInputs)";
  };
  cudatoolkit-legacy-runfile = {
    scope = "cudaPackages";
    status = "deprecated";
    since = "2025-10";
    throwsFrom = null;
    replacement = null;
    evidence = [ ];
    note = "since the CUDA 13 rework an alias (with a warning) of `cudatoolkit`, itself deprecated: list the redistributables you need";
  };
}
