"""Shared knowledge of the driver-runpath setup hooks for CUDA104-CUDA108 (not a rule module).

Names old and new, finding hook elements in input lists, finding shell calls of the
`addDriverRunpath` function, and spelling/replacing hook references in fixes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from tree_sitter import Node

from cudalint.lint import edits
from cudalint.lint.context import Context
from cudalint.lint.model import Edit
from cudalint.nix.semantic import InputSite
from cudalint.nix.shell import ShellText
from cudalint.nix.syntax import STRING_TYPES, binding_value, descendants, last_name, node_key, text, unparen

# old name -> new name
RENAMED = {
    "addOpenGLRunpath": "addDriverRunpath",
    "autoAddOpenGLRunpathHook": "autoAddDriverRunpath",
    "autoAddCudaCompatRunpathHook": "autoAddCudaCompatRunpath",
}
# names that lived in `cudaPackages` and whose replacement is top-level nixpkgs
MOVED_TO_TOPLEVEL = frozenset({"autoAddOpenGLRunpathHook"})
ADD_FUNCTIONS = frozenset({"addDriverRunpath", "addOpenGLRunpath"})
DRIVER_HOOKS = frozenset({"autoAddDriverRunpath", "autoAddOpenGLRunpathHook"})
COMPAT_HOOKS = frozenset({"autoAddCudaCompatRunpath", "autoAddCudaCompatRunpathHook"})
DISABLE_FLAGS = frozenset({"dontUseAutoAddDriverRunpath", "dontUseAutoAddOpenGLRunpath"})

# a shell word naming the function (not part of a longer word, a path or a variable)
CALL_WORD = re.compile(rb"(?<![\w$./@-])(addDriverRunpath|addOpenGLRunpath)(?![\w-])")


@dataclass(frozen=True)
class HookElement:
    node: Node  # the element expression (`autoAddDriverRunpath`, `pkgs.addDriverRunpath`)
    name: str  # its last name
    site: InputSite


def _cache(ctx: Context) -> dict:
    return ctx.semantic.memo(__name__)


def reference_roots(root: Node):
    """Variables and selects that are whole references (not the base of a longer select)."""
    for node in descendants(root):
        if node.type not in {"variable_expression", "select_expression"}:
            continue
        parent = node.parent
        if parent is not None and parent.type == "select_expression" and parent.child_by_field_name("expression") == node:
            continue
        yield node


def hook_elements(ctx: Context, binding: Node, names: frozenset[str]) -> list[HookElement]:
    """Elements of the input binding `binding` (through `++`, `optionals`, `with`, ...) named
    like one of `names`, in text order."""
    key = ("hook elements", node_key(binding), names)
    cache = _cache(ctx)
    if key not in cache:  # (asked once per element of a list: a walk of the list each time was quadratic)
        cache[key] = _hook_elements(ctx, binding, names)
    return cache[key]


def _hook_elements(ctx: Context, binding: Node, names: frozenset[str]) -> list[HookElement]:
    value = binding_value(binding)
    if value is None:
        return []
    found = []
    for node in reference_roots(value):
        name = last_name(node)
        if name not in names:
            continue
        site = ctx.semantic.input_site(node)
        if site is None or node_key(site.binding) != node_key(binding) or unparen(site.element) != node:
            continue
        found.append(HookElement(node, name, site))
    return found


def input_binding(attrset: Node, attr: str) -> Node | None:
    return edits.find_binding(attrset, attr)


def elements_of(ctx: Context, attrset: Node, attr: str, names: frozenset[str]) -> list[HookElement]:
    binding = input_binding(attrset, attr)
    return hook_elements(ctx, binding, names) if binding is not None else []


def owner_attrset(binding: Node) -> Node | None:
    owner = binding.parent.parent if binding.parent is not None else None
    return owner if edits.is_attrset(owner) else None


def shell_view(ctx: Context, string: Node) -> ShellText:
    """The shell view of a string, also for strings not recognised as shell (masked the same)."""
    return ctx.semantic.shell_text(string) or ShellText(string, ctx.source)


def function_calls(ctx: Context) -> list[tuple[int, int, str, Node]]:
    """Every `addDriverRunpath`/`addOpenGLRunpath` word in the code of the file's strings
    (comments and `${...}` interpolations excluded): (start, end, name, string), absolute offsets."""
    cache = _cache(ctx)
    if "calls" not in cache:
        calls = []
        for node in ctx.semantic.nodes_of_type(*sorted(STRING_TYPES)):
            for line, match in shell_view(ctx, node).code_matches(CALL_WORD):
                calls.append((line.start + match.start(1), line.start + match.end(1), match.group(1).decode(), node))
        cache["calls"] = calls
    return cache["calls"]


def renamed_formal_binds(ctx: Context, name: str) -> bool:
    """Whether the file's function has a formal with an old name that CUDA104 renames to `name`
    (so `name` will be bound there once that fix is applied)."""
    function = ctx.semantic.top_function()
    formals = function.child_by_field_name("formals") if function is not None else None
    if formals is None:
        return False
    olds = {old for old, new in RENAMED.items() if new == name}
    return any(n in olds for n in edits.formal_names(formals))


def driver_hook(ctx: Context) -> str | None:
    """The target's driver-runpath hook (the reference set's vocabulary): `autoAddDriverRunpath`,
    `cudaPackages.autoAddOpenGLRunpathHook` before 2024-04, None before 2022-04."""
    return ctx.reference.idiom("driverRunpathHook", ctx.target)


def no_hook_reason(ctx: Context) -> str:
    return ctx.reference.why_no_idiom("driverRunpathHook", ctx.target)


def hook_reference(ctx: Context, at: Node, name: str, like: Node | None = None) -> tuple[str, list[Edit]] | None:
    """`edits.toplevel_reference` that also counts on a formal CUDA104 is renaming to `name`.
    A name of the CUDA package set (`cudaPackages.autoAddOpenGLRunpathHook`, the hook of older
    targets) is written through the file's `cudaPackages`."""
    scope, dot, attr = name.partition(".")
    if dot:
        spelled = edits.toplevel_reference(ctx.source, ctx.semantic, at, scope, like)
        return (f"{spelled[0]}.{attr}", spelled[1]) if spelled is not None else None
    spelled = edits.toplevel_reference(ctx.source, ctx.semantic, at, name, like)
    if spelled is not None and spelled[1] and renamed_formal_binds(ctx, name):
        return spelled[0], []
    return spelled


def replace_element_with(ctx: Context, element: HookElement, new: str, keep_formal: bool) -> list[Edit] | None:
    """Edits replacing a hook element (e.g. `addDriverRunpath`) by the hook `new`
    (`autoAddDriverRunpath`, or `cudaPackages.autoAddOpenGLRunpathHook`), written like the
    element. A formal that only this element uses is renamed to a top-level `new` (unless
    `keep_formal` or `new` is bound already) instead of adding a formal."""
    node = element.node
    if node.type == "variable_expression":
        binding = ctx.semantic.resolve(node)
        if (
            not keep_formal
            and "." not in new
            and binding.kind == "formal"
            and binding.node is not None
            and binding.node.type == "formal"
            and len(ctx.semantic.uses(element.name, binding.node)) == 1
            and ctx.semantic.resolve_name(new, node).kind in {"free", "with"}
            and not renamed_formal_binds(ctx, new)
        ):
            name_node = binding.node.child_by_field_name("name")
            if name_node is not None and new not in edits.formal_names(binding.node.parent):
                return [edits.replace(node, new), edits.replace(name_node, new)]
    spelled = hook_reference(ctx, node, new, like=node)
    if spelled is None:
        return None
    written, extra = spelled
    return edits.merge_edits([edits.replace(node, written), *extra])


_NO_FIXUP_BUILDERS = frozenset({"runCommand", "runCommandLocal", "runCommandCC", "runCommandNoCC", "runCommandWith", "symlinkJoin", "buildEnv"})


def fixup_runs(ctx: Context, attrset: Node) -> bool:
    """Whether the derivation of `attrset` runs its fixup phase (where the auto hooks act)."""
    call = ctx.semantic.enclosing_call(attrset.children[0]) if attrset.children else None
    if call is not None and call.name in _NO_FIXUP_BUILDERS:
        return False
    if edits.find_binding(attrset, "buildCommand") is not None:
        return False
    dont = edits.find_binding(attrset, "dontFixup")
    if dont is not None and text(binding_value(dont) or dont).strip() != "false":
        return False
    phases = edits.find_binding(attrset, "phases")
    if phases is not None and "fixupPhase" not in text(phases):
        return False
    custom = edits.find_binding(attrset, "fixupPhase")
    if custom is not None and "runHook postFixup" not in text(custom):
        return False  # a fixupPhase of its own never runs the postFixup hooks
    return True


FORMALS_ISOLATION = "driver-runpath-hooks:formals"


def formals_isolation(ctx: Context, changes: list[Edit] | tuple[Edit, ...]) -> str | None:
    """An isolation key for fixes that edit the file function's formals: one such fix per pass,
    so that a rename and an addition of the same formal never land together."""
    function = ctx.semantic.top_function()
    formals = function.child_by_field_name("formals") if function is not None else None
    if formals is None:
        return None
    if any(e.start <= formals.end_byte and formals.start_byte <= e.end for e in changes):
        return FORMALS_ISOLATION
    return None


def hook_isolation(ctx: Context, attrset: Node, changes: list[Edit] | tuple[Edit, ...]) -> str:
    """The isolation key of a fix that puts the driver-runpath hook into `attrset`'s inputs: one
    such fix per derivation and pass, so that two of them (CUDA101's addition, CUDA108's
    replacement) never both add it; `formals_isolation`'s key when it edits the formals."""
    return formals_isolation(ctx, changes) or f"driver-runpath-hooks:{attrset.start_byte}"
