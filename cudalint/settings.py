"""What one lint run is asked to do for one file (picklable: it crosses process boundaries)."""

from __future__ import annotations

from dataclasses import dataclass, field

from cudalint.registry import known_codes


@dataclass(frozen=True)
class LintSettings:
    enabled: frozenset[str] = field(default_factory=known_codes)
    # Target nixpkgs revision / CUDA releases; consumed by the era-aware rules.
    nixpkgs: str | None = None
    cuda: tuple[str, ...] = ()

    def is_enabled(self, code: str) -> bool:
        return code in self.enabled
