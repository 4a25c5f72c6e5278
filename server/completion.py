"""Completion from the reference set: after `cudaPackages.` the packages of the target release
(deprecated ones tagged), after a package's `.` its outputs, inside `lib.getOutput "` the output
names. The text before the cursor decides, not the tree: while typing, the tree has errors."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from lsprotocol import types

from cudalint.knowledge import catalog

if TYPE_CHECKING:
    from .state import ServerState

_NAME = r"[A-Za-z_][\w'-]*"
# `getOutput "ou|`: the output names
_GET_OUTPUT = re.compile(r"""getOutput\s+"([\w-]*)$""")
# `cudaPackages_12.cuda_nvcc.d|`, `pkgs.cudaPackages.libcublas.|`: the package's outputs
_OUTPUT = re.compile(rf"(?:^|[^\w'.-])(?:{_NAME}\.)*?(?P<set>cudaPackages(?:_\d+)*)\.(?P<package>{_NAME})\.(?P<prefix>[\w-]*)$")
# `cudaPackages.cu|`: the packages
_PACKAGE = re.compile(r"(?:^|[^\w'-])(?P<set>cudaPackages(?:_\d+)*)\.(?P<prefix>[\w'-]*)$")
# `cuda_nvcc.|` where the name alone (through `with`/`inherit`/a formal) is a CUDA package
_BARE_OUTPUT = re.compile(rf"(?:^|[^\w'.-])(?P<package>{_NAME})\.(?P<prefix>[\w-]*)$")


def completion(server: ServerState, params: types.CompletionParams) -> types.CompletionList | None:
    snapshot = server.documents.get(params.text_document.uri)
    if snapshot is None:
        return None
    from cudalint.knowledge import reference  # the reference set loads on the first completion, not at start-up

    source = snapshot.source
    line = params.position.line
    if line >= source.line_count:
        return None
    offset = source.offset_of_utf16(line, params.position.character)
    before = source.slice(source.line_start(line), offset)
    settings = server.document_settings(snapshot)[0].lint
    target = reference.target(settings.nixpkgs, settings.cuda)

    if match := _GET_OUTPUT.search(before):
        return _items([_output_item(name) for name in sorted(reference.OUTPUT_NAMES)])
    if match := _OUTPUT.search(before):
        return _outputs(reference, match.group("package"), target)
    if match := _PACKAGE.search(before):
        return _packages(reference, target)
    if (match := _BARE_OUTPUT.search(before)) and catalog.is_cuda_package(match.group("package")):
        return _outputs(reference, match.group("package"), target)
    return None


def _items(items: list[types.CompletionItem]) -> types.CompletionList:
    return types.CompletionList(is_incomplete=False, items=items)


def _output_item(name: str) -> types.CompletionItem:
    return types.CompletionItem(label=name, kind=types.CompletionItemKind.Field, detail="output")


def _outputs(reference, package: str, target) -> types.CompletionList | None:
    outputs = reference.outputs(package, target)
    if not outputs:
        return None
    return _items([_output_item(name) for name in outputs])


def _packages(reference, target) -> types.CompletionList:
    deprecated = {d.name: d for d in reference.deprecated_names(target)}
    items = []
    for name in reference.package_names(target):
        info = reference.lookup(name, target)
        detail = info.role if info is not None else None
        if info is not None and info.description:
            detail = f"{info.role}: {info.description}"
        record = deprecated.pop(name, None)
        items.append(_package_item(name, detail, record))
    for name, record in deprecated.items():  # names users still write, gone from the target
        items.append(_package_item(name, None, record))
    return _items(items)


def _package_item(name: str, detail: str | None, deprecation) -> types.CompletionItem:
    if deprecation is None:
        return types.CompletionItem(label=name, kind=types.CompletionItemKind.Module, detail=detail, sort_text=f"0{name}")
    replacement = f"; use {deprecation.replacement}" if deprecation.replacement else ""
    return types.CompletionItem(
        label=name,
        kind=types.CompletionItemKind.Module,
        detail=f"{deprecation.status} since {deprecation.since}{replacement}",
        tags=[types.CompletionItemTag.Deprecated],
        sort_text=f"1{name}",  # after the current names
    )
