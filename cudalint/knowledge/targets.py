"""How users write the nixpkgs a file targets, parsed: a pure parser (the reference set,
reference.py, knows the releases and their dates and answers the era questions).

A target is written as users write nixpkgs branches: a NixOS release from 13.10 on ("23.05"),
its branches ("nixos-23.05", "nixos-23.05-small", "nixpkgs-23.05-darwin", "release-23.05"), the
newest nixpkgs ("unstable", "nixos-unstable", "nixpkgs-unstable", "master"), or a date
("2024-06-30"). `normalize` turns each into the canonical form rules see: "23.05", "unstable" or
the date.
"""

from __future__ import annotations

import datetime as _dt
import re
from collections.abc import Mapping

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


def normalize(nixpkgs: str, releases: Mapping[str, str]) -> str:
    """The canonical form of a target: "YY.MM", "unstable" or an ISO date. `releases` are the
    NixOS releases that exist (with their branch-off dates: the reference set's). Raises TargetError."""
    value = nixpkgs.strip()
    if value.lower() in UNSTABLE_NAMES:
        return "unstable"
    branch = _BRANCH.match(value)
    if branch:
        release = branch.group(1)
        if release not in releases:
            raise TargetError(f"nixpkgs release {release!r} does not exist; accepted: {_release_list(releases)}")
        return release
    if _DATE.match(value):
        try:
            _dt.date.fromisoformat(value)
        except ValueError as error:
            raise TargetError(f"nixpkgs date {value!r} is not a valid date") from error
        return value
    raise TargetError(f"nixpkgs target {value!r} is not understood; accepted: {ACCEPTED}")


def date_of(canonical: str, releases: Mapping[str, str]) -> _dt.date | None:
    """The date a canonical target stands for; None for the newest nixpkgs ("unstable").

    A release YY.MM stands for its branch-off (`releases`): a change merged on 2024-11-17 is in
    24.11, one merged on 2024-11-20 or 2024-06-10 is not in 24.11 or 24.05."""
    if canonical == "unstable":
        return None
    if _RELEASE.match(canonical):
        return _dt.date.fromisoformat(releases[canonical])
    return _dt.date.fromisoformat(canonical)


def _release_list(releases: Mapping[str, str]) -> str:
    names = sorted(releases, key=lambda release: releases[release])
    return f'{names[0]} to {names[-1]} ({", ".join(names)}), their branches, "unstable" or a date'
