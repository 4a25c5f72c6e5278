"""Nix that does not parse.

The engine reports this rule itself while parsing; every other rule still runs on the parts of
the tree that did parse. Like every rule, it looks only into files that mention something one of
the rules looks for (a CUDA package set or package, a runpath hook, `LD_LIBRARY_PATH`, a
`cudalint:` comment, ...): other files are not parsed at all.

## Why
A file Nix cannot parse cannot be evaluated. The grammar cudalint uses is older than Nix's
parser in one respect, trailing commas in function formals (`{ a, b, }:`, the nixfmt style used
throughout nixpkgs, also with a comment after the last comma): that form is accepted and never
reported. One mistake often confuses the grammar for the rest of its line: the errors of one line
are one finding, at the first. Every context (package, dev shell, module, override) gets the same
error.

## Example
```nix
{ stdenv, cudaPackages }:
stdenv.mkDerivation {
  buildInputs = [ cudaPackages.cuda_cudart;
}
```

## Use instead
```nix
{ stdenv, cudaPackages }:
stdenv.mkDerivation {
  buildInputs = [ cudaPackages.cuda_cudart ];
}
```

## References
- https://nix.dev/manual/nix/stable/language/syntax
"""

from cudalint.lint.model import Applicability, FixAvailability, Severity
from cudalint.lint.rule import Rule

RULE = Rule(
    code="CUDA900",
    name="syntax-error",
    severity=Severity.ERROR,
    fix=Applicability.NONE,
    availability=FixAvailability.NEVER,
    summary="Nix that does not parse",
)
