"""The nixpkgs a file is pinned to: where the target comes from when `nixpkgs` is not configured.

In order: the file's own fetch of nixpkgs (`fetchTarball`, `builtins.fetchTarball`,
`fetchFromGitHub`, `fetchGit`, `fetchurl` of a nixpkgs archive or channel); the nearest
`flake.lock` (its nixpkgs input's `lastModified`); a `flake.nix` without a lock
(`inputs.nixpkgs.url`, following `inputs.nixpkgs.follows` to another input's URL); a
`default.nix`/`shell.nix` next to the file that fetches nixpkgs; niv's `nix/sources.json` and
`npins/sources.json`. Only branches, release tags and dates say which nixpkgs that is: a pinned
commit without a lock has no date here, so it is skipped. `import <nixpkgs>` alone pins nothing
(the newest nixpkgs is assumed).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from cudalint.targets import TargetError, normalize


@dataclass(frozen=True)
class Pin:
    nixpkgs: str | None  # canonical target ("23.05", "unstable", a date); None: the newest
    source: str | None  # where it came from, for the report ("flake.nix inputs.nixpkgs.url")
    explicit: bool = False  # configured (`--nixpkgs`, a config file): a file's own fetch does not override it


NEWEST = Pin(None, None)

_REF = r"(?:nixos|nixpkgs|release)-\d{2}\.\d{2}(?:-small|-darwin)?|nixos-unstable(?:-small)?|nixpkgs-unstable|master|\d{2}\.\d{2}"
# A nixpkgs location with a branch or tag: flake references, GitHub archives, channels.
_NIXPKGS_URL = re.compile(
    r"(?:github:|https://github\.com/|git\+https://github\.com/)nixos/nixpkgs(?:\.git)?"
    rf"(?:/(?:archive/|tarball/|refs/heads/|refs/tags/)?(?P<path>{_REF})(?:\.tar\.gz)?|\?(?:[^\"'\s]*&)?ref=(?:refs/heads/)?(?P<query>{_REF}))"
    rf"|^nixpkgs/(?P<registry>{_REF})$"
    rf"|channel:(?P<channel>{_REF})"
    rf"|nixos\.org/channels/(?P<channels>{_REF})/",
    re.IGNORECASE,
)
_STRING = re.compile(r'"((?:[^"\\$]|\\.|\$(?!\{))*)"')
_GITHUB_FETCH = re.compile(
    r"fetchFromGitHub\s*\{(?P<body>[^{}]*\bowner\s*=\s*\"nixos\"[^{}]*\brepo\s*=\s*\"nixpkgs\"[^{}]*)\}", re.IGNORECASE | re.DOTALL
)
_REV = re.compile(rf"\b(?:rev|ref|tag)\s*=\s*\"(?:refs/(?:heads|tags)/)?(?P<ref>{_REF})\"", re.IGNORECASE)
_INPUT_URL = re.compile(r"(?<![\w'-])(?P<input>[A-Za-z_][\w'-]*)(?:\.url\s*=|\s*=\s*\{[^{}]*?(?<![.\w])url\s*=)\s*\"(?P<url>[^\"]*)\"")
_FOLLOWS = re.compile(r"(?<![\w'-])(?<![\w'-]\.inputs\.)nixpkgs(?:\.follows\s*=|\s*=\s*\{[^{}]*?(?<![.\w])follows\s*=)\s*\"(?P<target>[^\"]*)\"")


def target_of_url(url: str) -> str | None:
    """The canonical target a nixpkgs URL or flake reference names, if it names a branch or tag."""
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
    if "nixpkgs" not in text and "channel" not in text:  # every form names one (cheap on files without)
        return None
    for match in _GITHUB_FETCH.finditer(text):
        ref = _REV.search(match.group("body"))
        if ref is not None:
            try:
                return normalize(ref.group("ref"))
            except TargetError:
                continue
    for match in _STRING.finditer(text):
        value = match.group(1)
        if "nixpkgs" in value.lower() or "channel" in value.lower():
            target = target_of_url(value)
            if target is not None:
                return target
    for match in re.finditer(r"fetchGit\s*\{(?P<body>[^{}]*)\}", text):
        body = match.group("body")
        if re.search(r"github\.com/nixos/nixpkgs", body, re.IGNORECASE):
            ref = _REV.search(body)
            if ref is not None:
                return normalize(ref.group("ref"))
    return None


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
