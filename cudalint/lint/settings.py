"""What one lint run is asked to do for one file (picklable: it crosses process boundaries)."""

from __future__ import annotations

from dataclasses import dataclass, field

from cudalint.lint.registry import stable_codes

# Seconds the rules may spend on one file (real files take milliseconds; this bounds hostile or
# machine-generated input). Config key `time-budget`.
DEFAULT_TIME_BUDGET = 10.0


@dataclass(frozen=True)
class LintSettings:
    enabled: frozenset[str] = field(default_factory=stable_codes)
    # Target nixpkgs revision / CUDA releases; consumed by the era-aware rules.
    nixpkgs: str | None = None
    cuda: tuple[str, ...] = ()
    time_budget: float = DEFAULT_TIME_BUDGET
    # The file's pin is a commit nothing dates: the newest nixpkgs stands in for it, so what that
    # nixpkgs removed is a warning, not an error (`Rule.removals`).
    undated_pin: bool = False

    def is_enabled(self, code: str) -> bool:
        return code in self.enabled
