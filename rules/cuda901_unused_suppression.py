"""A suppression comment that matched nothing, or names an unknown code.

The engine reports this rule itself after applying suppressions. Write suppressions as
`# cudalint: ignore[CUDA101] -- reason` at the end of the line, or on the line before it; inside
shell text (`postFixup`, `shellHook`) a shell comment works the same way.
`# cudalint: ignore-file[CUDA101]` in the file's leading comments covers the whole file.

Every context gets the same warning.

## Why
A stale suppression hides the next real finding on that line and documents an exception that no
longer exists. Codes are checked so that a typo (`CUDA11`) does not silently suppress nothing.

## Example
```nix
{ cudaPackages }:
# cudalint: ignore[CUDA101] -- nothing here sets LD_LIBRARY_PATH any more
[ cudaPackages.cuda_cudart ]
```

## Use instead
```nix
{ cudaPackages }:
[ cudaPackages.cuda_cudart ]
```

## References
- https://docs.astral.sh/ruff/rules/unused-noqa/
"""

from cudalint.lint.model import Applicability, FixAvailability, Severity
from cudalint.lint.rule import Rule

RULE = Rule(
    code="CUDA901",
    name="unused-suppression",
    severity=Severity.WARNING,
    fix=Applicability.SAFE,
    availability=FixAvailability.ALWAYS,
    summary="Suppression comment that matched nothing or names an unknown code",
    patterns=(b"cudalint:",),
)
