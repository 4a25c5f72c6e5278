"""The reference package set: which CUDA packages and outputs exist for a nixpkgs era and CUDA
release, their roles, sizes and deprecations.

Loaded from `cudalint/knowledge/data/reference.json`, the evaluation of the Nix files in `nix/` (see
nix/README.md; a test keeps the two equal), so running cudalint needs no Nix. Rules, hover and
completion ask their questions through a `Target`: the era of the target nixpkgs and the CUDA
releases it offers.
"""

from __future__ import annotations

import datetime as _dt
import json
import re
from dataclasses import dataclass
from functools import cache, lru_cache
from importlib import resources

from cudalint.knowledge import targets


@dataclass(frozen=True)
class Era:
    id: str
    title: str
    start: str | None
    end: str | None
    nixos: tuple[str, ...]
    summary: str
    evidence: tuple[str, ...]
    releases: tuple[str, ...]  # the CUDA releases nixpkgs of this era offers


@dataclass(frozen=True)
class Deprecation:
    name: str
    scope: str  # "cudaPackages", "top-level" or "attribute"
    status: str  # "deprecated", "renamed" or "removed"
    since: str
    throws_from: str | None
    replacement: str | None
    note: str
    evidence: tuple[str, ...]
    certain: bool = False  # a plain alias of `replacement` (same package, same CUDA release)

    def in_effect_on(self, target: Target) -> bool:
        """Whether the target already warns (or throws) on the name."""
        return target.includes(self.since if len(self.since) == 10 else f"{self.since}-28")

    def throws_on(self, target: Target) -> bool:
        return self.throws_from is not None and target.includes(self.throws_from)


@dataclass(frozen=True)
class Word:
    """A name a fix may write (nix/vocabulary.nix) and the nixpkgs dates it was there."""

    name: str  # as written: `autoAddDriverRunpath`, `cudaPackages.backendStdenv`, `lib.getStatic`
    start: str | None  # first date nixpkgs has it (None: before every modelled release)
    end: str | None  # first date it no longer has it (None: still there)
    evidence: tuple[str, ...]
    note: str

    def on(self, target: Target) -> bool:
        """Whether the target nixpkgs has the name."""
        return (self.start is None or target.includes(self.start)) and (self.end is None or not target.includes(self.end))

    def why_absent(self, target: Target) -> str:
        """Why the target lacks the name, for a message or a fix title (which never name the
        target: the reporters print it once per run)."""
        if self.start is not None and not target.includes(self.start):
            return f"`{self.name}` arrived in nixpkgs on {self.start}"
        return f"`{self.name}` left nixpkgs on {self.end}"


@dataclass(frozen=True)
class ReleaseFacts:
    release: str
    version: str | None
    outputs: tuple[str, ...] | None  # None: the set does not know this package's outputs
    size: int | None  # bytes of NVIDIA's linux-x86_64 archive


@dataclass(frozen=True)
class PackageInfo:
    name: str
    kind: str  # "redist", "non-redist", "toolkit", "hook"
    role: str  # "tool", "library", "headers", "hook", "toolkit", "other"
    description: str | None
    releases: tuple[ReleaseFacts, ...]  # the target's releases that have it
    available_in: tuple[str, ...]  # every CUDA release of the set that has it
    deprecation: Deprecation | None

    @property
    def outputs(self) -> tuple[str, ...] | None:
        """The outputs over the target's releases (None when unknown)."""
        return _union(facts.outputs for facts in self.releases)


@dataclass(frozen=True)
class Target:
    nixpkgs: str | None
    era: Era
    releases: tuple[str, ...]  # the CUDA releases to check against
    configured: bool  # releases given by the user (`cuda`), not the era's default

    def describe(self) -> str:
        cuda = ", ".join(self.releases)
        return f"{self.nixpkgs_name()} ({self.era.id} era), CUDA {cuda}"

    # The era questions rules ask (`ctx.target`): what the target nixpkgs contains.

    def includes(self, change_date: str) -> bool:
        """Whether the target nixpkgs contains a change merged on `change_date` (ISO date)."""
        return includes(self.nixpkgs, change_date)

    def nixpkgs_name(self) -> str:
        """ "the newest nixpkgs" or "nixpkgs 24.05", for messages."""
        return describe_nixpkgs(self.nixpkgs)

    def how_to_change(self, cuda: bool = True) -> str:
        if not cuda:
            return "set `nixpkgs` in cudalint.toml or pass --nixpkgs to change it"
        return "set `nixpkgs`/`cuda` in cudalint.toml or pass --nixpkgs/--cuda to change it"


def _union(groups) -> tuple[str, ...] | None:
    seen: dict[str, None] = {}
    known = False
    for group in groups:
        if group is None:
            return None
        known = True
        seen.update(dict.fromkeys(group))
    return tuple(seen) if known else None


def _release_key(release: str) -> tuple[int, ...]:
    return tuple(int(part) for part in release.split("."))


class ReferenceSet:
    def __init__(self, data: dict) -> None:
        self.data = data
        self.eras = tuple(
            Era(
                id=e["id"],
                title=e["title"],
                start=e["from"],
                end=e["until"],
                nixos=tuple(e["nixos"]),
                summary=e["summary"],
                evidence=tuple(e["evidence"]),
                releases=tuple(e["releases"]),
            )
            for e in data["eras"]
        )
        self.releases = tuple(sorted(data["releases"], key=_release_key))
        self.members: dict = data["members"]
        self._lookups: dict[tuple[str, Target], PackageInfo | None] = {}
        self.deprecations = {
            name: Deprecation(
                name=name,
                scope=d["scope"],
                status=d["status"],
                since=d["since"],
                throws_from=d["throwsFrom"],
                replacement=d["replacement"],
                note=d["note"],
                evidence=tuple(d["evidence"]),
                certain=d.get("certain", False),
            )
            for name, d in data["deprecations"].items()
        }
        self.scope_attributes = frozenset(data["scope"])
        self.release_branch_offs: dict[str, str] = {release: facts["branchOff"] for release, facts in {**data["olderNixos"], **data["nixos"]}.items()}
        self._patterns = tuple((re.compile(d["pattern"]), name) for name, d in data["deprecations"].items() if "pattern" in d)
        self.libraries: dict[str, str] = data["libraries"]
        self.output_names = frozenset(data["outputNames"])
        redist = {name for release in data["releases"].values() for name in release["packages"]}
        self.package_names = frozenset(redist | set(self.members))
        vocabulary = data["vocabulary"]
        self.words = {name: Word(name, w["from"], w["until"], tuple(w["evidence"]), w["note"]) for name, w in vocabulary["words"].items()}
        self.idioms: dict[str, tuple[str, ...]] = {concept: tuple(names) for concept, names in vocabulary["idioms"].items()}

    # ----- targets -----------------------------------------------------------------------------

    def era_of(self, nixpkgs: str | None) -> Era:
        date = target_date(nixpkgs)
        if date is None:
            return self.eras[-1]
        day = date.isoformat()
        for era in self.eras:
            if (era.start is None or era.start <= day) and (era.end is None or day <= era.end):
                return era
        return self.eras[-1]

    def default_release(self, nixpkgs: str | None) -> str:
        """The release the unversioned `cudaPackages` pointed at: that of the NixOS release branched
        at or after the target date (unstable leads the next release), else unstable's."""
        nixos = self.data["nixos"]
        date = target_date(nixpkgs)
        if date is not None:
            for release in sorted(nixos, key=lambda r: nixos[r]["branchOff"]):
                if _dt.date.fromisoformat(nixos[release]["branchOff"]) >= date:
                    return nixos[release]["defaultCuda"]
        return self.data["unstable"]["defaultCuda"]

    def target(self, nixpkgs: str | None, cuda: tuple[str, ...] = ()) -> Target:
        era = self.era_of(nixpkgs)
        releases = tuple(sorted(dict.fromkeys(cuda), key=_release_key)) if cuda else (self.default_release(nixpkgs),)
        return Target(nixpkgs, era, releases, bool(cuda))

    # ----- packages ----------------------------------------------------------------------------

    def is_known(self, name: str) -> bool:
        """A package in some release (or era) of the set: what CUDA003 checks against."""
        return name in self.package_names

    def _facts(self, name: str, release: str, era: Era) -> ReleaseFacts | None:
        packages = self.data["releases"].get(release, {}).get("packages", {})
        if name in packages:
            package = packages[name]
            outputs = package["outputs"][era.id]
            return ReleaseFacts(release, package["version"], tuple(outputs) if outputs is not None else None, package["size"])
        member = self.members.get(name)
        if member is not None and era.id in member["eras"] and release in self.data["releases"]:
            outputs = member["outputs"][era.id]
            return ReleaseFacts(release, member["version"], tuple(outputs) if outputs is not None else None, member["size"])
        return None

    def available_in(self, name: str) -> tuple[str, ...]:
        if name in self.members:
            return self.releases
        return tuple(r for r in self.releases if name in self.data["releases"][r]["packages"])

    def lookup(self, name: str, target: Target) -> PackageInfo | None:
        if not self.is_known(name):
            return None
        key = (name, target)  # (known names only: the memo stays as small as the set)
        if key not in self._lookups:  # several rules ask of each reference
            self._lookups[key] = self._lookup(name, target)
        return self._lookups[key]

    def _lookup(self, name: str, target: Target) -> PackageInfo:
        facts = tuple(f for f in (self._facts(name, r, target.era) for r in target.releases) if f is not None)
        if name in self.members:
            member = self.members[name]
            kind, role, description = member["kind"], member["role"], member["description"]
        else:
            newest = next(self.data["releases"][r]["packages"][name] for r in reversed(self.releases) if name in self.data["releases"][r]["packages"])
            kind, role, description = "redist", newest["role"], newest["description"]
        deprecation = self.deprecations.get(name)
        if deprecation is not None and deprecation.scope != "cudaPackages":
            deprecation = None
        return PackageInfo(name, kind, role, description, facts, self.available_in(name), deprecation)

    def exists(self, name: str, target: Target) -> bool:
        """Whether every release of the target has the package (what a fix may write)."""
        return all(self._facts(name, r, target.era) is not None for r in target.releases)

    def package_names_in(self, target: Target) -> list[str]:
        return sorted(n for n in self.package_names if any(self._facts(n, r, target.era) is not None for r in target.releases))

    def outputs(self, name: str, target: Target) -> tuple[str, ...]:
        info = self.lookup(name, target)
        return (info.outputs or ()) if info is not None else ()

    def judged_releases(self, target: Target) -> tuple[str, ...]:
        """The releases a finding about outputs must hold for: the configured ones, else every
        release the era's nixpkgs offers (so nothing valid for one of them is reported)."""
        return target.releases if target.configured else target.era.releases

    def deprecation(self, name: str) -> Deprecation | None:
        return self.deprecations.get(name)

    def toplevel_change(self, name: str, scope: str = "top-level") -> Deprecation | None:
        """A removed or renamed name of nixpkgs' top level (or of the Python package sets, with
        `scope="python"`): by name, else by the family patterns. Package sets are CUDA002's."""
        deprecation = self.deprecations.get(name)
        if deprecation is not None:
            owned_elsewhere = name.startswith("cudaPackages_") or self.data["deprecations"][name].get("kind") == "hook"
            return deprecation if deprecation.scope == scope and not owned_elsewhere else None
        if scope == "top-level":
            for pattern, family in self._patterns:
                if pattern.match(name):
                    return self.deprecations[family]
        return None

    # ----- the names fixes write (nix/vocabulary.nix) -------------------------------------------

    def word(self, name: str) -> Word | None:
        return self.words.get(name)

    def has(self, name: str, target: Target) -> bool:
        """Whether the target nixpkgs has `name` as a fix would write it: a dated word of the
        vocabulary, or `cudaPackages.<package>` of a package every target release has. Names the
        set does not date (ordinary nixpkgs attributes) count as present."""
        word = self.words.get(name)
        if word is not None:
            return word.on(target)
        scope, _, package = name.partition(".")
        if scope == "cudaPackages" and self.is_known(package):
            return self.exists(package, target)
        return True

    def idiom(self, concept: str, target: Target) -> str | None:
        """The name the target uses for `concept` (`driverRunpathHook`: `autoAddDriverRunpath`,
        or `cudaPackages.autoAddOpenGLRunpathHook` before 2024-04); None when it has none."""
        return next((name for name in self.idioms[concept] if self.words[name].on(target)), None)

    def why_no_idiom(self, concept: str, target: Target) -> str:
        """Why the target has no name for `concept` (for a fix title or a message)."""
        return self.words[self.idioms[concept][-1]].why_absent(target)

    def removed_set(self, name: str) -> Deprecation | None:
        deprecation = self.deprecations.get(name)
        return deprecation if deprecation is not None and name.startswith("cudaPackages_") else None


def describe_reference_set() -> str:
    """What `--version` says of the reference set: what it models and where its facts come from."""
    data = load().data
    nixos = sorted(data["nixos"], key=_release_key)
    releases = load().releases
    source = data["provenance"]
    return (
        f"reference set: NixOS {nixos[0]} to {nixos[-1]} and unstable, CUDA {releases[0]} to {releases[-1]}; "
        f"nixpkgs facts as of {source['nixpkgs']['date']} ({source['nixpkgs']['rev'][:12]}), "
        f"dated names checked {source['reviewed']}"
    )


@cache
def load() -> ReferenceSet:
    text = resources.files("cudalint.knowledge").joinpath("data/reference.json").read_text(encoding="utf-8")
    return ReferenceSet(json.loads(text))


# ----- the target nixpkgs: its canonical form and date (targets.py parses, this set knows the dates) ---


@lru_cache(maxsize=256)
def normalize(nixpkgs: str) -> str:
    """The canonical form of a target ("YY.MM", "unstable" or a date). Raises targets.TargetError."""
    return targets.normalize(nixpkgs, load().release_branch_offs)


@lru_cache(maxsize=256)
def target_date(nixpkgs: str | None) -> _dt.date | None:
    """The date a target stands for (a release: its branch-off); None for the newest nixpkgs."""
    if nixpkgs is None:
        return None
    return targets.date_of(normalize(nixpkgs), load().release_branch_offs)


def includes(nixpkgs: str | None, change_date: str) -> bool:
    """Whether the target nixpkgs contains a change merged on `change_date` (ISO date)."""
    date = target_date(nixpkgs)
    return date is None or date >= _dt.date.fromisoformat(change_date)


def describe_nixpkgs(nixpkgs: str | None) -> str:
    return "the newest nixpkgs" if target_date(nixpkgs) is None else f"nixpkgs {nixpkgs}"


def before_modelled(nixpkgs: str | None) -> str | None:
    """The note for a target older than the oldest release the reference set models (rules
    judge it by the oldest era), else None."""
    date = target_date(nixpkgs)
    if date is None:
        return None
    modelled = load().data["nixos"]
    oldest = min(modelled, key=lambda release: modelled[release]["branchOff"])
    if date.isoformat() >= modelled[oldest]["branchOff"]:
        return None
    return f"nixpkgs {nixpkgs} is older than {oldest}, the oldest release cudalint models: rules judge it by {oldest}'s era and CUDA release"


def releases() -> dict[str, str]:
    """Every NixOS release the reference set knows, with its branch-off date."""
    return load().release_branch_offs


# ----- the module-level API the server and rules use --------------------------------------------


def era_of(nixpkgs: str | None) -> Era:
    return load().era_of(nixpkgs)


@lru_cache(maxsize=64)
def target(nixpkgs: str | None, cuda: tuple[str, ...] = ()) -> Target:
    return load().target(nixpkgs, cuda)


def lookup(name: str, target: Target) -> PackageInfo | None:
    return load().lookup(name, target)


def package_names(target: Target) -> list[str]:
    return load().package_names_in(target)


def deprecated_names(target: Target) -> list[Deprecation]:
    """Names in a CUDA package set that users still write, deprecated or removed."""
    return sorted((d for d in load().deprecations.values() if d.scope == "cudaPackages"), key=lambda d: d.name)


def outputs(name: str, target: Target) -> tuple[str, ...]:
    return load().outputs(name, target)


def __getattr__(name: str):
    if name == "OUTPUT_NAMES":
        return load().output_names
    raise AttributeError(name)
