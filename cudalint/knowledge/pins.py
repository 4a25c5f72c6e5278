"""The nixpkgs a file is pinned to: where the target comes from when `nixpkgs` is not configured.

In order: the file's own fetch of nixpkgs (`fetchTarball`, `builtins.fetchTarball`,
`fetchFromGitHub`, `fetchGit`, `fetchurl` of a nixpkgs archive or channel), or that of a file it
imports by relative path (`import ../pin/nixpkgs.nix { }`, also through the nix-prefetch-git JSON
that file reads); the nearest
`flake.lock` or `devenv.lock` (its nixpkgs input's `lastModified`); a `flake.nix` without a lock
(`inputs.nixpkgs.url`, following `inputs.nixpkgs.follows` to another input's URL); a
`default.nix`/`shell.nix` next to the file that fetches nixpkgs; niv's `nix/sources.json` and
`npins/sources.json`. Only branches, release tags and dates say which nixpkgs that is: a pinned
commit is dated by what is written beside it (a channel name such as `nixos-23.05` in its URL,
its `ref` or a comment, or a date in a comment or its `name`: `commit_fetch`); with nothing of the sort it is an
undated pin, reported as such (`Pin.undated`) and read as the newest nixpkgs. `import <nixpkgs>`
alone pins nothing (the newest nixpkgs is assumed).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass

from cudalint.knowledge.reference import normalize
from cudalint.knowledge.targets import TargetError
from cudalint.regular_files import read_regular


@dataclass(frozen=True)
class Pin:
    nixpkgs: str | None  # canonical target ("23.05", "unstable", a date); None: the newest
    source: str | None  # where it came from, for the report ("flake.nix inputs.nixpkgs.url")
    explicit: bool = False  # configured (`--nixpkgs`, a config file): a file's own fetch does not override it
    undated: str | None = None  # "FILE:LINE" of a pinned commit nothing dates (`nixpkgs` is then None)


NEWEST = Pin(None, None)

_REF = r"(?:nixos|nixpkgs|release)-\d{2}\.\d{2}(?:-small|-darwin)?|nixos-unstable(?:-small)?|nixpkgs-unstable|master|\d{2}\.\d{2}"
# A nixpkgs location with a branch or tag: flake references, GitHub archives, channels.
_NIXPKGS_URL = re.compile(
    r"(?:github:|https://github\.com/|git\+https://github\.com/)nixos/nixpkgs(?:\.git)?"
    rf"(?:/(?:archive/|tarball/|refs/heads/|refs/tags/)?(?P<path>{_REF})(?:\.tar\.gz)?|\?(?:[^\"'\s]*&)?ref=(?:refs/heads/)?(?P<query>{_REF}))"
    rf"|^nixpkgs/(?P<registry>{_REF})$"
    rf"|channel:(?P<channel>{_REF})"
    rf"|nixos\.org/channels/(?P<channels>{_REF})/"
    r"|releases\.nixos\.org/(?:nixos|nixpkgs)/(?P<releases>\d{2}\.\d{2}|unstable)/",
    re.IGNORECASE,
)
_STRING = re.compile(r'"((?:[^"\\$]|\\.|\$(?!\{))*)"')
# (case-insensitive only where GitHub is: the literal `fetchFromGitHub` is found fast)
_GITHUB_FETCH = re.compile(r"fetchFromGitHub\s*\{(?P<body>[^{}]*\b(?i:owner)\s*=\s*\"(?i:nixos)\"[^{}]*\b(?i:repo)\s*=\s*\"(?i:nixpkgs)\"[^{}]*)\}")
_REV = re.compile(rf"\b(?:rev|ref|tag)\s*=\s*\"(?:refs/(?:heads|tags)/)?(?P<ref>{_REF})\"", re.IGNORECASE)
_FETCHES = re.compile(r"(?:fetch(?:Tarball|FromGitHub|Git|url|zip|Tree)|getFlake)\b")
# `rev = "266dc8c3..."`: a commit, whatever branch it was taken from
_COMMIT = re.compile(r"\brev\s*=\s*\"[0-9a-f]{40}\"")
_INPUT_URL = re.compile(r"(?<![\w'-])(?P<input>[A-Za-z_][\w'-]*)(?:\.url\s*=|\s*=\s*\{[^{}]*?(?<![.\w])url\s*=)\s*\"(?P<url>[^\"]*)\"")
_FOLLOWS = re.compile(r"(?<![\w'-])(?<![\w'-]\.inputs\.)nixpkgs(?:\.follows\s*=|\s*=\s*\{[^{}]*?(?<![.\w])follows\s*=)\s*\"(?P<target>[^\"]*)\"")


# A flake reference without a ref: the default branch (`github:NixOS/nixpkgs`) or the registry's
# nixpkgs (`nixpkgs`), both the newest nixpkgs.
_DEFAULT_BRANCH = re.compile(r"^(?:github:nixos/nixpkgs|https://github\.com/nixos/nixpkgs(?:\.git)?|nixpkgs)/?$", re.IGNORECASE)


def target_of_url(url: str) -> str | None:
    """The canonical target a nixpkgs URL or flake reference names, if it names a branch or tag."""
    if _DEFAULT_BRANCH.match(url.strip()):
        return "unstable"
    match = _NIXPKGS_URL.search(url.strip())
    if match is None:
        return None
    ref = next(group for group in match.groups() if group)
    try:
        return normalize(ref)
    except TargetError:
        return None


def fetched_in(text: str) -> str | None:
    """The target of a nixpkgs fetched in Nix code (`fetchTarball "…/nixos-23.05.tar.gz"`,
    `fetchFromGitHub { owner = "NixOS"; repo = "nixpkgs"; rev = "23.05"; }`, `fetchGit`)."""
    if "fetch" not in text and "getFlake" not in text or not _FETCHES.search(text):  # cheap on files without a fetch
        return None
    lowered = text.lower()
    if "nixpkgs" not in lowered and "channel" not in lowered and "releases.nixos.org" not in lowered:
        return None  # what each search below needs (most packages fetch their own sources only)
    for match in _GITHUB_FETCH.finditer(text):
        ref = _REV.search(match.group("body"))
        if _COMMIT.search(match.group("body")):
            continue  # a pinned commit: its date is not known here
        if ref is not None:
            try:
                return normalize(ref.group("ref"))
            except TargetError:
                continue
    for match in [*_strings_on_lines_with(text, lowered, _URL_WORDS), *_URI_LITERAL.finditer(text)]:
        value = match.group(1)
        if ("nixpkgs" in value.lower() or "channel" in value.lower() or "releases.nixos.org" in value) and not _DEFAULT_BRANCH.match(value.strip()):
            target = target_of_url(value)  # a bare repository URL says nothing: its `ref` may follow
            if target is not None:
                return target
    for match in re.finditer(r"fetchGit\s*\{(?P<body>[^{}]*)\}", text):
        body = match.group("body")
        if re.search(r"github\.com/nixos/nixpkgs", body, re.IGNORECASE) and not _COMMIT.search(body):
            ref = _REV.search(body)
            if ref is not None:
                return normalize(ref.group("ref"))
    return None


# A nixpkgs commit in a fetch: an archive URL or flake reference naming it (after `NixOS/`), or
# `rev = "<commit>"` in a fetch of the nixpkgs repository. (Both start with a literal, which the
# regular expression engine searches for fast: every file checked is searched.)
_COMMIT_URL = re.compile(r"nixpkgs(?:\.git)?(?:/(?:archive/|tarball/)?[0-9a-f]{40}\b|\?(?:[^\"'\s]*&)?rev=[0-9a-f]{40})")
_REPOSITORY_FETCH = re.compile(r"fetch(?:FromGitHub|Git|Tree)\s*\{(?P<body>[^{}]*)\}")
_NIXPKGS_REPOSITORY = re.compile(r"github\.com/nixos/nixpkgs|\bowner\s*=\s*\"nixos\"[^{}]*\brepo\s*=\s*\"nixpkgs\"", re.IGNORECASE | re.DOTALL)
# What dates a commit when written beside it: a channel or release branch, or a date.
_CHANNEL = re.compile(r"(?<![\w.-])(?:(?:nixos|nixpkgs|release)-\d{2}\.\d{2}(?:-small|-darwin)?|nixos-unstable(?:-small)?|nixpkgs-unstable)(?![\w-])", re.IGNORECASE)
# (also at the end of a name: `name = "nixos-unstable-2022-05-06";`)
_DATE = re.compile(r"(?<![\d.])(?P<date>(?:19|20)\d{2}-\d{2}-\d{2})(?![\d.])")
_NEARBY_LINES = 2  # lines above the fetch that may date it


@dataclass(frozen=True)
class CommitFetch:
    """A fetch of nixpkgs pinned to a commit: its 1-based `line`, and the `target` what is written
    beside it names (None: nothing dates it)."""

    line: int
    target: str | None


def commit_fetch(text: str) -> CommitFetch | None:
    """The first fetch of nixpkgs pinned to a bare commit (`fetchTarball
    "https://github.com/NixOS/nixpkgs/archive/<commit>.tar.gz"`, `fetchFromGitHub { owner =
    "NixOS"; repo = "nixpkgs"; rev = "<commit>"; }`, `fetchGit`, `github:NixOS/nixpkgs/<commit>`),
    dated by a channel name or a date written in it or on the lines just above it."""
    if "nixpkgs" not in text:  # cheap on files that fetch no nixpkgs
        return None
    spans = [(m.start(), m.end()) for m in _COMMIT_URL.finditer(text) if text[max(0, m.start() - 6) : m.start()].lower() == "nixos/"]
    spans += [(m.start(), m.end()) for m in _REPOSITORY_FETCH.finditer(text) if _NIXPKGS_REPOSITORY.search(m.group("body")) and _COMMIT.search(m.group("body"))]
    if not spans:
        return None
    start, end = min(spans)
    line = text.count("\n", 0, start) + 1
    lines = text.split("\n")
    last = text.count("\n", 0, end) + 1
    nearby = "\n".join(lines[max(0, line - 1 - _NEARBY_LINES) : last])
    return CommitFetch(line, _date_of(nearby))


def _date_of(nearby: str) -> str | None:
    """A release channel, else a date, else `unstable` (a moving branch says least)."""
    found = {pattern: _first_target(pattern, nearby) for pattern in (_CHANNEL, _DATE)}
    channel, date = found[_CHANNEL], found[_DATE]
    return channel if channel not in (None, "unstable") else date or channel


def _first_target(pattern: re.Pattern[str], text: str) -> str | None:
    for match in pattern.finditer(text):
        try:
            return normalize(match.group("date") if "date" in pattern.groupindex else match.group(0))
        except TargetError:
            continue
    return None


def fetch_pin(text: str, name: str) -> Pin | None:
    """The pin of the nixpkgs a file at `name` (as shown) fetches: a pinned commit dated by what is
    written beside it (what is fetched, whatever branch it came from), its branch, tag or channel,
    or an undated pin at the commit's line."""
    commit = commit_fetch(text)
    target = commit.target if commit is not None and commit.target is not None else fetched_in(text)
    if target is not None:
        return Pin(target, f"{name} fetches nixpkgs")
    return Pin(None, None, undated=f"{name}:{commit.line}") if commit is not None else None


_URL_WORDS = re.compile(r"nixpkgs|channel|releases\.nixos\.org")
# An unquoted URI (Nix still reads `fetchTarball https://...tar.gz` as a string)
_URI_LITERAL = re.compile(r"(?<![\"'\w])(https?://(?i:github\.com/nixos/nixpkgs|nixos\.org/channels|releases\.nixos\.org)[^\s\"';)]*)")


def _strings_on_lines_with(text: str, lowered: str, words: re.Pattern[str]) -> Iterator[re.Match[str]]:
    """The string literals (`_STRING`) on the lines whose lowercase text holds one of `words`, in
    file order: a file's thousands of other strings are not looked at."""
    end = 0
    for word in words.finditer(lowered):
        if word.start() < end:
            continue  # a line already searched
        start = text.rfind("\n", 0, word.start()) + 1
        end = text.find("\n", word.end())
        end = len(text) if end < 0 else end
        yield from _STRING.finditer(text, start, end)


_IMPORTED = re.compile(r"\bimport\s+\(?\s*(?P<path>\.{1,2}/[\w./+-]*\.nix)\b")
_READ_JSON = re.compile(r"\breadFile\s+(?P<path>\.{1,2}/[\w./+-]*\.json)\b")


def imported_pin(text: str, directory: str) -> Pin | None:
    """`import ../pin/nixpkgs.nix { }`: the pin of the nixpkgs the imported file fetches (one level
    deep; `fetch_pin`), also through a nix-prefetch-git JSON it reads (`"url"` of nixpkgs,
    `"date"`), named by its path relative to `directory`."""
    for match in _IMPORTED.finditer(text):
        relative = match.group("path")
        imported = read_small(os.path.join(directory, relative))
        if not imported:
            continue
        shown = os.path.normpath(relative)
        pin = fetch_pin(imported, shown)
        target = pin.nixpkgs if pin is not None else None
        for json_match in _READ_JSON.finditer(imported) if target is None else ():
            target = prefetch_json(read_small(os.path.join(directory, os.path.dirname(relative), json_match.group("path"))))
            if target is not None:
                break
        if target is not None:
            return Pin(target, f"{shown} (imported) fetches nixpkgs")
        if pin is not None:
            return pin  # undated
    return None


def prefetch_json(text: str) -> str | None:
    """The date of a nixpkgs commit recorded by nix-prefetch-git (`{"url": ".../nixpkgs", "rev":
    ..., "date": "2019-06-27T22:37:20+02:00"}`), or its branch."""
    try:
        data = json.loads(text)
    except ValueError:
        return None
    if not isinstance(data, dict) or "nixpkgs" not in str(data.get("url", "")).lower():
        return None
    date = data.get("date")
    if isinstance(date, str) and re.match(r"^\d{4}-\d{2}-\d{2}", date):
        return date[:10]
    branch = data.get("branch") or data.get("ref")
    if isinstance(branch, str):
        try:
            return normalize(branch)
        except TargetError:
            return None
    return None


def read_small(path: str, limit: int = 1 << 20) -> str:
    """A pin file's text ("" when it cannot be read, is not a regular file (a FIFO would block)
    or is larger than `limit`)."""
    try:
        return read_regular(path, limit).decode("utf-8", "replace")
    except OSError:
        return ""


def flake_input(text: str) -> str | None:
    """The target of a flake's `inputs.nixpkgs.url`, following `nixpkgs.follows = "other"` to
    `other`'s URL when that is a nixpkgs URL."""
    urls = {match.group("input"): match.group("url") for match in _INPUT_URL.finditer(text)}
    name = "nixpkgs"
    if name not in urls:
        follows = _FOLLOWS.search(text)
        if follows is not None:
            name = follows.group("target").split("/")[0]
    url = urls.get(name)
    return target_of_url(url) if url is not None else None


def sources_json(text: str) -> str | None:
    """The target of niv's `sources.json` (`"nixpkgs": {"branch": …}`) or npins'
    (`"pins": {"nixpkgs": {"name": …} or {"branch": …}}`)."""
    try:
        data = json.loads(text)
    except ValueError:
        return None
    if not isinstance(data, dict):
        return None
    pins = data.get("pins", data)
    entry = pins.get("nixpkgs") if isinstance(pins, dict) else None
    if not isinstance(entry, dict):
        return None
    for key in ("branch", "name", "ref"):
        value = entry.get(key)
        if isinstance(value, str):
            try:
                return normalize(value)
            except TargetError:
                continue
    for key in ("url", "url_template"):
        value = entry.get(key)
        if isinstance(value, str) and target_of_url(value) is not None:
            return target_of_url(value)
    return None
