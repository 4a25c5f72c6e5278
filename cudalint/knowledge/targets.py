"""The nixpkgs revision a file targets, as a date, so rules can tell what the target throws on.

A target is written as users write nixpkgs branches: a NixOS release from 13.10 on ("23.05"),
its branches ("nixos-23.05", "nixos-23.05-small", "nixpkgs-23.05-darwin", "release-23.05"), the
newest nixpkgs ("unstable", "nixos-unstable", "nixpkgs-unstable", "master"), or a date
("2024-06-30"). `normalize` turns each into the canonical form rules see: "23.05", "unstable" or
the date. The era model (which output layout applies) builds on this.
"""

from __future__ import annotations

import datetime as _dt
import re
from functools import lru_cache

_RELEASE = re.compile(r"^(\d{2})\.(\d{2})$")
_BRANCH = re.compile(r"^(?:nixos-|nixpkgs-|release-)?(\d{2}\.\d{2})(?:-small|-darwin|-aarch64)?$")
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
UNSTABLE_NAMES = frozenset({"unstable", "latest", "master", "nixos-unstable", "nixos-unstable-small", "nixpkgs-unstable", "nixpkgs-master"})
ACCEPTED = (
    'a NixOS release from 13.10 on ("23.05") or its branch ("nixos-23.05", "nixpkgs-23.05-darwin", "release-23.05"), '
    '"unstable" ("nixos-unstable", "nixpkgs-unstable", "master") or a date ("2024-06-30")'
)


class TargetError(ValueError):
    pass


@lru_cache(maxsize=256)
def normalize(nixpkgs: str) -> str:
    """The canonical form of a target: "YY.MM", "unstable" or an ISO date. Raises TargetError."""
    value = nixpkgs.strip()
    if value.lower() in UNSTABLE_NAMES:
        return "unstable"
    branch = _BRANCH.match(value)
    if branch:
        release = branch.group(1)
        if release not in releases():
            raise TargetError(f"nixpkgs release {release!r} does not exist; accepted: {_release_list()}")
        return release
    if _DATE.match(value):
        try:
            _dt.date.fromisoformat(value)
        except ValueError as error:
            raise TargetError(f"nixpkgs date {value!r} is not a valid date") from error
        return value
    raise TargetError(f"nixpkgs target {value!r} is not understood; accepted: {ACCEPTED}")


@lru_cache(maxsize=256)
def target_date(nixpkgs: str | None) -> _dt.date | None:
    """The date a target stands for; None for the newest nixpkgs ("unstable" or unset).

    A release YY.MM stands for its branch-off, as the reference set records it (nix/eras.nix):
    a change merged on 2024-11-17 is in 24.11, one merged on 2024-11-20 or 2024-06-10 is not in
    24.11 or 24.05."""
    if nixpkgs is None:
        return None
    value = normalize(nixpkgs)
    if value == "unstable":
        return None
    if _RELEASE.match(value):
        return _dt.date.fromisoformat(releases()[value])
    return _dt.date.fromisoformat(value)


def includes(nixpkgs: str | None, change_date: str) -> bool:
    """Whether the target nixpkgs contains a change merged on `change_date` (ISO date)."""
    date = target_date(nixpkgs)
    return date is None or date >= _dt.date.fromisoformat(change_date)


def describe(nixpkgs: str | None) -> str:
    return "the newest nixpkgs" if target_date(nixpkgs) is None else f"nixpkgs {nixpkgs}"


def before_modelled(nixpkgs: str | None) -> str | None:
    """The note for a target older than the oldest release the reference set models (rules
    judge it by the oldest era), else None."""
    date = target_date(nixpkgs)
    if date is None:
        return None
    from cudalint.knowledge.reference import load

    modelled = load().data["nixos"]
    oldest = min(modelled, key=lambda release: modelled[release]["branchOff"])
    if date.isoformat() >= modelled[oldest]["branchOff"]:
        return None
    return f"nixpkgs {nixpkgs} is older than {oldest}, the oldest release cudalint models: rules judge it by {oldest}'s era and CUDA release"


def releases() -> dict[str, str]:
    """Every NixOS release the reference set knows, with its branch-off date."""
    from cudalint.knowledge.reference import load  # the reference set knows the releases' branch-off dates

    return load().release_branch_offs


def _release_list() -> str:
    names = sorted(releases(), key=lambda release: releases()[release])
    return f"{names[0]} to {names[-1]} ({', '.join(names)}), their branches, \"unstable\" or a date"
