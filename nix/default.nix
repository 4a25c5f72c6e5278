# cudalint's reference package set: what exists in each CUDA package set of each nixpkgs era.
#
#   nix-instantiate --store dummy:// --eval --strict --json nix/
#
# Plain Nix (builtins only, no nixpkgs). cudalint ships this evaluation as
# cudalint/knowledge/data/reference.json (`python3 nix/generate.py --export`); a test keeps them equal.
let
  inherit (builtins)
    attrNames
    concatLists
    elem
    filter
    foldl'
    listToAttrs
    map
    mapAttrs
    match
    readDir
    sort
    ;

  eraFile = import ./eras.nix;
  roles = import ./roles.nix;
  members = import ./members.nix;
  deprecations = import ./deprecations.nix;
  scope = import ./scope.nix;
  splitRedist = import ./split-redist.nix;
  toolkitJoin = import ./toolkit.nix;
  vocabulary = import ./vocabulary.nix;

  eraIds = map (era: era.id) eraFile.eras;
  genericBuilderEras = [ "symlink-farm" "multi-output" ];

  # Every `<name>.nix` in a directory, imported, by name.
  importDir =
    dir:
    let
      files = filter (name: match ".*\\.nix" name != null) (attrNames (readDir dir));
    in
    listToAttrs (map (file: { name = builtins.substring 0 (builtins.stringLength file - 4) file; value = import (dir + "/${file}"); }) files);

  releaseOlder = a: b: builtins.compareVersions a b < 0;

  # Dates compare as strings (YYYY-MM-DD); null bounds are open.
  onOrBefore = a: b: a == null || b == null || a <= b;

  role =
    name:
    if elem name roles.tools then "tool"
    else if elem name roles.headers then "headers"
    else if elem name roles.hooks then "hook"
    else if elem name roles.other then "other"
    else if elem name roles.toolkit then "toolkit"
    else "library";

  # Outputs of an NVIDIA package in each era.
  eraOutputs = name: package: {
    single-output = [ "out" ];
    symlink-farm = package.outputs or null;
    multi-output = package.outputs or null;
    split-redist = splitRedist.${name} or package.splitOutputs or null;
  };

  releaseFiles = importDir ./releases;

  # A package set named cudaPackages_X_Y throws from this date on (null: it still evaluates).
  throwsFrom = release:
    let
      name = "cudaPackages_" + builtins.replaceStrings [ "." ] [ "_" ] release;
    in
    deprecations.${name}.throwsFrom or null;

  releases = mapAttrs (
    release: file: {
      inherit (file) manifest date;
      throwsFrom = throwsFrom release;
      packages = mapAttrs (name: package: {
        inherit (package) description version size;
        role = role name;
        outputs = eraOutputs name package;
      }) file.packages;
    }
  ) releaseFiles;

  # The releases a nixpkgs revision of an era offers: published by NVIDIA before the era ended,
  # not yet removed when it began.
  releasesOf =
    era:
    sort releaseOlder (
      filter (
        release:
        onOrBefore releases.${release}.date era.until
        && (releases.${release}.throwsFrom == null || era.from == null || era.from < releases.${release}.throwsFrom)
      ) (attrNames releases)
    );

  eras = map (
    era:
    era
    // {
      releases = releasesOf era;
      nixos = filter (release: (eraOfNixos release) == era.id) (attrNames eraFile.nixos);
    }
  ) eraFile.eras;

  eraOfNixos =
    release:
    let
      date = eraFile.nixos.${release}.branchOff;
      matching = filter (era: onOrBefore era.from date && onOrBefore date era.until) eraFile.eras;
    in
    (builtins.head matching).id;

  products = foldl' (all: file: all // file.packages) { } (builtins.attrValues (importDir ./products));

  memberOutputs =
    name: member:
    let
      product = if member ? product then products.${member.product} else { };
      generic = member.outputs or product.outputs or null;
    in
    {
      single-output = if member ? product then [ "out" ] else generic;
      symlink-farm = generic;
      multi-output = generic;
      split-redist = splitRedist.${name} or product.splitOutputs or generic;
    }
    // (member.eraOutputs or { });

  scopeMembers = mapAttrs (
    name: member:
    let
      product = if member ? product then products.${member.product} else { };
    in
    {
      kind =
        if role name == "hook" then "hook"
        else if role name == "toolkit" then "toolkit"
        else "non-redist";
      role = role name;
      description = member.description or product.description or null;
      version = product.version or null;
      size = product.size or null;
      eras = member.eras or eraIds;
      outputs = memberOutputs name member;
    }
  ) members;

  # Every output name some package has in some era (the known lists only).
  allOutputNames =
    let
      records = concatLists (map (release: builtins.attrValues release.packages) (builtins.attrValues releases)) ++ builtins.attrValues scopeMembers;
      known = record: filter (outputs: outputs != null) (map (era: record.outputs.${era}) eraIds);
    in
    attrNames (listToAttrs (map (name: { inherit name; value = null; }) (concatLists (concatLists (map known records)))));
in
{
  schema = 1;
  inherit eras releases deprecations scope;
  nixos = mapAttrs (release: facts: facts // { era = eraOfNixos release; }) eraFile.nixos;
  inherit (eraFile) unstable olderNixos;
  members = scopeMembers;
  libraries = roles.libraries;
  outputNames = allOutputNames;
  inherit toolkitJoin vocabulary;
  provenance = import ./provenance.nix;
}
