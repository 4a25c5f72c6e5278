"""What a fix is worth in downloads, by the size of NVIDIA's redistributable archives.

The reference set knows the compressed size of each redistributable's linux-x86_64 archive per
CUDA release (NVIDIA's `redistrib_*.json`). The figures here add those sizes up: what the flagged
code makes Nix fetch before a fix and after it. They are archive sizes, not Nix closure sizes
(unpacked store paths are larger, and a closure holds only the outputs something references),
but they compare the two sides on the same scale. Figures are for the newest CUDA release of the
target. The "before" of `cudatoolkit` is what it really joins there (nix/toolkit.nix); where it is
still NVIDIA's runfile installer, whose own size the manifests do not give, it is at least the
archives of the same components the runfile installs (the join's members in that release), and
the figure says "at least".
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from cudalint.knowledge.reference import ReferenceSet, ReleaseFacts, Target
    from cudalint.lint.model import Diagnostic, Fix
    from cudalint.lint.results import FileResult

GB = 1000**3
MB = 1000**2
BASIS = "by NVIDIA archive size"


def format_bytes(size: int) -> str:
    """Decimal units, as NVIDIA's manifests count: 0.94 GB, 81 MB, 0.2 MB."""
    if size >= GB // 10:
        return f"{size / GB:.2f} GB"
    if size >= 10 * MB:
        return f"{size / MB:.0f} MB"
    return f"{size / MB:.1f} MB"


def _names(packages: Iterable[str]) -> str:
    return " + ".join(f"`{p}`" for p in packages)


@dataclass(frozen=True)
class Download:
    """NVIDIA archives a construct pulls in (`before`) and what its fix pulls in instead."""

    release: str
    replaced: str  # what the fix removes, e.g. `cudatoolkit`
    joined: int  # redistributables `replaced` stands for (or the runfile installs)
    before: int | None  # bytes; None when unknown
    written: tuple[tuple[str, int], ...]  # (package, archive bytes) the fix writes
    runfile: bool = False  # `before` is a lower bound: the runfile installer's components

    @property
    def after(self) -> int:
        return sum(size for _, size in self.written)

    def describe(self) -> str:
        """`2.85 GB -> 81 MB to download, by NVIDIA archive size (`cudatoolkit` joins 20
        redistributables for CUDA 12.9)`: short enough for a fix title."""
        if self.before is None:
            return f"downloads the runfile installer -> {format_bytes(self.after)}, {BASIS}"
        if self.runfile:
            installs = f"the runfile installer of CUDA {self.release} holds these {self.joined} components and more"
            return f"at least {format_bytes(self.before)} -> {format_bytes(self.after)} to download, {BASIS} ({installs})"
        joins = f"`{self.replaced}` joins {self.joined} redistributables for CUDA {self.release}"
        return f"{format_bytes(self.before)} -> {format_bytes(self.after)} to download, {BASIS} ({joins})"


def _facts(reference: ReferenceSet, name: str, target: Target, release: str) -> ReleaseFacts | None:
    info = reference.lookup(name, target)
    return None if info is None else next((facts for facts in info.releases if facts.release == release), None)


def archive_size(reference: ReferenceSet, name: str, target: Target, release: str) -> int:
    """The archive bytes of one package in one release of the target (0 when unknown)."""
    facts = _facts(reference, name, target, release)
    return (facts.size or 0) if facts is not None else 0


def newest_release(target: Target) -> str:
    return target.releases[-1]


def toolkit_members(reference: ReferenceSet, target: Target, release: str, runfile: bool = False) -> tuple[str, ...] | None:
    """What `cudaPackages.cudatoolkit` joins in the target's era and `release` (nix/toolkit.nix);
    None where it is the runfile installer, unless `runfile`: then the same components, which
    the runfile installs too (the oldest join's list)."""
    joins = reference.data.get("toolkitJoin", {})
    join = joins.get(target.era.id)
    if join is None:
        if not runfile or not joins:
            return None
        join = next(iter(joins.values()))
    members = list(join["packages"])
    for since, more in join.get("atLeast", {}).items():
        if _release_key(release) >= _release_key(since):
            members += more
    return tuple(m for m in members if _facts(reference, m, target, release) is not None)


def _release_key(release: str) -> tuple[int, ...]:
    return tuple(int(part) for part in release.split("."))


def toolkit_size(reference: ReferenceSet, target: Target, runfile: bool = False) -> tuple[str, tuple[str, ...], int] | None:
    """(release, joined packages, archive bytes) of `cudatoolkit` on the target, or None; with
    `runfile`, where it is the runfile installer: the components it installs (a lower bound)."""
    release = newest_release(target)
    members = toolkit_members(reference, target, release, runfile)
    if not members:
        return None
    return release, members, sum(archive_size(reference, m, target, release) for m in members)


def toolkit_download(reference: ReferenceSet, target: Target, packages: Iterable[str]) -> Download:
    """The figure of replacing `cudatoolkit` with `packages`."""
    release = newest_release(target)
    written = tuple((p, archive_size(reference, p, target, release)) for p in packages)
    joined = toolkit_size(reference, target)
    if joined is not None:
        return Download(release, "cudatoolkit", len(joined[1]), joined[2], written)
    installs = toolkit_size(reference, target, runfile=True)
    if installs is None or not installs[2]:
        return Download(release, "cudatoolkit", 0, None, written)
    return Download(release, "cudatoolkit", len(installs[1]), installs[2], written, runfile=True)


def with_download(fix: Fix, download: Download) -> Fix:
    """The fix with its figure: in the title (what editors and reports show) and as data (totals)."""
    return dataclasses.replace(fix, title=f"{fix.title}: {download.describe()}", download=download)


def static_note(reference: ReferenceSet, target: Target, package: str) -> str:
    """For a fix that keeps a static output out of runtime closures: how large the archive it
    comes from is (the static part of it is not known separately)."""
    release = newest_release(target)
    size = archive_size(reference, package, target, release)
    if not size:
        return ""
    return f" (its static libraries come from the {format_bytes(size)} `{package}` archive for CUDA {release}, {BASIS})"


def archives_note(reference: ReferenceSet, target: Target, packages: Iterable[str]) -> str:
    """` (1.41 GB of NVIDIA archives)`: what a whole-package join downloads, for the target's
    newest CUDA release (a message never names the target: the reporters state it once)."""
    release = newest_release(target)
    size = sum(archive_size(reference, p, target, release) for p in packages)
    return f" ({format_bytes(size)} of NVIDIA archives)" if size else ""


# ----- totals over the findings a report shows --------------------------------------------------


@dataclass(frozen=True)
class Total:
    findings: int  # findings whose fix has a known "before"
    before: int
    after: int
    unknown: int  # findings whose "before" is unknown (the runfile toolkit)
    lower_bound: bool = False  # some "before" counts only the runfile installer's known components

    def describe(self) -> str:
        """`fixes cut NVIDIA archive downloads from 2.85 GB to 84 MB`"""
        at_least = "at least " if self.lower_bound else ""
        text = f"fixes cut NVIDIA archive downloads from {at_least}{format_bytes(self.before)} to {format_bytes(self.after)}" if self.findings else ""
        if self.unknown:
            runfile = f"{self.unknown} runfile toolkit{'s' if self.unknown != 1 else ''} of unknown size"
            text = f"{text} ({runfile} not counted)" if text else f"fixes replace {runfile}"
        return text


def report_total(results: Iterable[FileResult]) -> Total | None:
    """The total of a report's findings."""
    return total(r.diagnostics for r in results if r.source is not None)


def total(files: Iterable[Iterable[Diagnostic]]) -> Total | None:
    """The figures of the findings' primary fixes added up, per file then over the files, or
    None when no finding has one. Within a file, a toolkit referenced twice is downloaded once
    and a package two fixes write is counted once."""
    known = before = after = unknown = 0
    lower_bound = False
    for diagnostics in files:
        replaced: dict[tuple[str, str], int] = {}
        written: dict[tuple[str, str], int] = {}
        for diagnostic in diagnostics:
            fix = diagnostic.fix
            download = fix.download if fix is not None else None
            if download is None:
                continue
            if download.before is None:
                unknown += 1
                continue
            known += 1
            lower_bound = lower_bound or download.runfile
            replaced[(download.replaced, download.release)] = download.before
            written.update(((name, download.release), size) for name, size in download.written)
        before += sum(replaced.values())
        after += sum(written.values())
    if not known and not unknown:
        return None
    return Total(known, before, after, unknown, lower_bound)


def hover_lines(reference: ReferenceSet, name: str, target: Target) -> list[str]:
    """Markdown for hovering `cudatoolkit`: what it joins and how large that is."""
    if name != "cudatoolkit":
        return []
    joined = toolkit_size(reference, target)
    if joined is None:
        installs = toolkit_size(reference, target, runfile=True)
        if installs is None or not installs[2]:
            return ["", "On this target it is NVIDIA's runfile installer (its size is not in the reference set)."]
        release, members, size = installs
        return ["", f"On this target it is NVIDIA's runfile installer of CUDA {release}: at least {format_bytes(size)}, the archives of the {len(members)} components it installs ({_names(members)})."]
    release, members, size = joined
    return ["", f"Joins {len(members)} redistributables for CUDA {release}: {format_bytes(size)} of NVIDIA archives ({_names(members)}); compressed archive sizes, not a Nix closure size."]
