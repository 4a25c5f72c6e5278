"""The semantic view rules query instead of re-deriving structure from the raw tree.

Everything here is a question about one node: in which binding it sits, whether it is an element
of an input list (through `++`, `optionals`, `with`, `if`, ...), under which conditions it is
evaluated, which builder call it is an argument of, and what a name resolves to through `let`,
`rec`, formals, `inherit` and `with` (lexical bindings win over `with`, as in Nix).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import lru_cache

from tree_sitter import Node, Tree

from cudalint.knowledge import catalog
from cudalint.nix.places import Place, call_place_of, file_place, place_of
from cudalint.nix.shell import ShellText, is_shell_string
from cudalint.nix.source import SourceFile
from cudalint.nix.syntax import (
    ATTRSET_TYPES,
    attrpath_names,
    binding_value,
    bindings_of,
    dotted_name,
    flatten_apply,
    identifier_name,
    last_name,
    outermost_apply,
    string_literal,
    text,
    unparen,
)

# Functions whose last argument is (conditionally) spliced into the surrounding list/value.
CONDITIONAL_FUNCTIONS = frozenset({"optionals", "optional", "optionalString", "optionalAttrs", "mkIf"})
# Functions through which list elements still end up in the list.
LIST_PASSTHROUGH_FUNCTIONS = frozenset({"flatten", "concatLists", "unique", "filter"})
# Functions that turn a list of packages into a search path: `lib.makeLibraryPath [ ... ]`.
SEARCH_PATH_FUNCTIONS = frozenset({"makeLibraryPath", "makeSearchPath", "makeSearchPathOutput", "makeBinPath"})
# `lib` getter -> the output it selects (rules/_outputs.py maps output -> getter for fixes).
GETTERS = {
    "getDev": "dev",
    "getLib": "lib",
    "getBin": "bin",
    "getOutput": None,  # the output name is the first argument
    "getStatic": "static",
    "getInclude": "include",
    "getExe": "bin",
    "getMan": "man",
}
# `NameBinding` kinds that bind a name lexically, so that a fix may write it bare.
LEXICAL_KINDS = frozenset({"let", "rec", "formal", "inherit-from"})
_MAX_RESOLVE_DEPTH = 8
_UNKNOWN = object()  # not in a cache yet (None is an answer)


@dataclass(frozen=True)
class NameBinding:
    """Where a bare name comes from.

    kind: `let`/`rec` (value known), `formal` (function argument), `inherit-from`
    (`inherit (source) name;`), `with` (no lexical binding; `withs` are the environments, innermost
    first) or `free` (nothing binds it in this file).
    """

    kind: str
    name: str
    node: Node | None = None
    value: Node | None = None
    source: Node | None = None
    withs: tuple[Node, ...] = ()

    @property
    def lexical(self) -> bool:
        """Bound by this file's syntax (`let`, `rec`, a formal, `inherit (x)`), not by `with` or nothing."""
        return self.kind in LEXICAL_KINDS


@dataclass(frozen=True)
class CudaRef:
    """An expression that denotes a CUDA package (or one of its outputs).

    `node` is the whole reference (getter call, output selection included); `name_node` the
    identifier naming the package; `via` how it was reached: `select` (`cudaPackages.x`), `with`,
    `inherit`, `formal`, `let` (a variable bound to such a reference) or `toplevel` (`pkgs.x`,
    a free `cudatoolkit`).
    """

    package: str
    output: str | None
    set_name: str | None
    via: str
    node: Node
    name_node: Node
    getter: str | None = None


@dataclass(frozen=True)
class Guard:
    """A condition under which a node is evaluated: `lib.optionals cond`, `if cond`, `mkIf cond`."""

    condition: Node
    positive: bool  # False in an `else` branch

    @property
    def text(self) -> str:
        return text(self.condition)


@dataclass(frozen=True)
class InputSite:
    """A node that is an element of an input list such as `nativeBuildInputs`."""

    attr: str
    binding: Node
    element: Node  # the list element (or the value itself when no list is involved)
    list_node: Node | None  # the list literal directly holding the element


@dataclass(frozen=True)
class LookupTable:
    """An attrset keyed by versions whose entries are chosen by selection."""

    attrset: Node
    entries: tuple[Node, ...]  # the entries' values, in order

    def first(self, flagged: Callable[[Node], bool]) -> Node | None:
        """The first entry value for which `flagged` holds: the one that carries the finding."""
        return next((entry for entry in self.entries if flagged(entry)), None)

    def count(self, flagged: Callable[[Node], bool]) -> int:
        return sum(1 for entry in self.entries if flagged(entry))


@dataclass(frozen=True)
class Call:
    """A builder call whose attrset argument holds a node: `stdenv.mkDerivation { ... }`."""

    name: str  # last component: mkDerivation, mkShell, symlinkJoin, buildEnv, ...
    dotted: str | None
    node: Node
    attrset: Node


class Semantic:
    def __init__(self, tree: Tree, source: SourceFile, scopes: list[Node] | None = None) -> None:
        """`scopes`: every `let` and `rec` attrset of the tree, when a walk already found them;
        then names no scope binds are resolved without climbing the tree (`_may_be_bound`)."""
        self.tree = tree
        self.source = source
        self._scopes = scopes
        self._bound_names: frozenset[str] | None = None
        # The caches are keyed by nodes: a node hashes and compares by its place in this tree,
        # ten times cheaper than building a `node_key` (the engine asks for every variable).
        self._scope_cache: dict[Node, dict[str, Node]] = {}
        self._shell_cache: dict[Node, ShellText | None] = {}
        self._variables: dict[str, list[Node]] = {}
        # name -> binding -> the variables of that name bound there
        self._uses_cache: dict[str, dict[Node, list[Node]]] = {}
        # every rule that looks at a variable asks these again: answer each once per file
        self._resolve_cache: dict[tuple[str, Node], NameBinding] = {}
        self._ref_cache: dict[Node, CudaRef | None] = {}
        self._root_cache: dict[Node, Node] = {}
        self._package_names: dict[bytes, bool] = {}
        self._places: dict[Node, Place] = {}
        self._typed_nodes: dict[tuple[str, ...], list[Node]] = {}
        self._file_place: tuple[Place | None] | None = None  # (what the whole file is,), once asked
        self._memos: dict[str, dict] = {}

    def memo(self, owner: str) -> dict:
        """A dict that lives as long as this file's semantic view (one lint), for a rule or helper
        that answers one question many times per file; `owner` is its module's `__name__`. The
        one per-file cache: no attributes set on this object, no module-level weak maps."""
        return self._memos.setdefault(owner, {})

    def nodes_of_type(self, *types: str) -> list[Node]:
        """Every node of these types in the file, in pre-order (found by a tree-sitter query,
        once per file and types): for rules that look at all the `assert`s or calls of a file."""
        found = self._typed_nodes.get(types)
        if found is None:
            from cudalint.nix.parsing import nodes_of_type

            found = self._typed_nodes[types] = nodes_of_type(self.tree.root_node, types)
        return found

    def file_place(self) -> Place | None:
        """What the whole file is (a dev shell, a module), None for a package file (cudalint.nix.places)."""
        if self._file_place is None:
            root = self.tree.root_node
            self._file_place = (file_place(root.child_by_field_name("expression") or (root.named_children[0] if root.named_children else None), self.source.path),)
        return self._file_place[0]

    def is_module_file(self) -> bool:
        """Whether the whole file is a NixOS/home-manager module (its arguments are not packages)."""
        found = self.file_place()
        return found is not None and found.is_module

    def place(self, node: Node) -> Place:
        """Where `node` stands: a package, a dev shell, a module or an override (cudalint.nix.places)."""
        found = self._places.get(node)
        if found is None:  # (several rules ask for the same node's place)
            found = self._places[node] = place_of(node, self.file_place(), self._call_place)
        return found

    def _call_place(self, apply: Node) -> Place | None:
        # every node inside a builder's argument climbs to the same call, which looks at its attrset
        memo = self.memo(call_place_of.__module__)
        if apply not in memo:
            memo[apply] = call_place_of(apply)
        return memo[apply]

    def variables_named(self, name: str, within: Node | None = None) -> list[Node]:
        """`variable_expression`s spelling `name`, in file order. Found from the name's places in
        the text (a byte search and a tree lookup each) rather than a walk of the whole tree:
        an editor re-lints one attribute after a keystroke and asks for a few names."""
        found = self._variables.get(name)
        if found is None:
            found = self._variables[name] = []
            root = self.tree.root_node
            for match in _identifier_pattern(name).finditer(self.source.data):
                node = root.descendant_for_byte_range(match.start(), match.end())
                if node is not None and node.type == "identifier" and (node.start_byte, node.end_byte) == match.span() and (parent := node.parent) is not None and parent.type == "variable_expression":
                    found.append(parent)
        if within is None:
            return found
        return [v for v in found if within.start_byte <= v.start_byte and v.end_byte <= within.end_byte]

    def shell_text(self, string: Node) -> ShellText | None:
        """The shell view of a string node, or None when the string is not shell code."""
        if string in self._shell_cache:
            return self._shell_cache[string]
        direct_call = None
        parent = string.parent
        while parent is not None and parent.type == "parenthesized_expression":
            parent = parent.parent
        if parent is not None and parent.type == "apply_expression":
            function, _ = flatten_apply(outermost_apply(parent))
            direct_call = last_name(function)
        shell = ShellText(string, self.source) if is_shell_string(string, self.binding_path(string), direct_call) else None
        self._shell_cache[string] = shell
        return shell

    # ----- bindings and input lists -------------------------------------------------------

    def binding_path(self, node: Node) -> tuple[str, ...]:
        """Attribute path of the innermost attrset binding whose value contains `node`,
        continued through directly nested attrsets: `env = { X = ...; }` -> ("env", "X")."""
        binding = self.enclosing_binding(node)
        if binding is None:
            return ()
        path: list[str] = []
        while binding is not None:
            names = attrpath_names(binding.child_by_field_name("attrpath"))
            path[:0] = [n or "${...}" for n in names]
            attrset = binding.parent.parent if binding.parent is not None else None
            if attrset is None or attrset.type not in ATTRSET_TYPES:
                break
            parent = attrset.parent
            binding = parent if parent is not None and parent.type == "binding" else None
        return tuple(path)

    def enclosing_binding(self, node: Node) -> Node | None:
        """The nearest `binding` of an attrset (not of a let) whose value contains `node`."""
        child, parent = node, node.parent
        while parent is not None:
            if parent.type == "binding" and binding_value(parent) == child:
                owner = parent.parent.parent if parent.parent is not None else None
                if owner is not None and owner.type in ATTRSET_TYPES:
                    return parent
                return None  # a let binding: its value is not the derivation's attribute
            child, parent = parent, parent.parent
        return None

    def lookup_table(self, node: Node) -> LookupTable | None:
        """The version-keyed attrset `node` stands in an entry of (`{ "11.8" = cudaPackages_11_8;
        "12.1" = ...; }`, also `cuda11 = ...`, `v12_1 = ...`), through at most a few nested
        bindings. Its entries are evaluated only when selected, so a rule reports one finding
        for the table, not one per entry."""
        child, parent = node, node.parent
        depth = 0
        while parent is not None and depth < _MAX_TABLE_DEPTH:
            if parent.type == "binding" and binding_value(parent) == child:
                depth += 1
                attrset = parent.parent.parent if parent.parent is not None else None
                if attrset is None or attrset.type not in ATTRSET_TYPES:
                    return None  # a `let` binding
                entries = [b for b in bindings_of(attrset) if b.type == "binding"]
                if len(entries) >= 2 and all(_is_version_key(b) for b in entries):
                    return LookupTable(attrset, tuple(v for b in entries if (v := binding_value(b)) is not None))
            child, parent = parent, parent.parent
        return None

    def input_site(self, node: Node) -> InputSite | None:
        """The input attribute `node` is an element of, following only list-building syntax."""
        element: Node | None = None  # the list element (or `lib.optional`'s item) holding `node`
        list_node: Node | None = None
        child, parent = node, node.parent
        while parent is not None:
            kind = parent.type
            if kind == "list_expression":
                if list_node is None and element is None:
                    list_node, element = parent, child
            elif kind == "binding":
                if binding_value(parent) != child:
                    return None
                owner = parent.parent.parent if parent.parent is not None else None
                if owner is None or owner.type not in ATTRSET_TYPES:
                    return None
                names = attrpath_names(parent.child_by_field_name("attrpath"))
                if not names or names[-1] is None:
                    return None
                return InputSite(names[-1], parent, element if element is not None else child, list_node)
            elif kind in {"parenthesized_expression", "with_expression", "let_expression", "assert_expression"}:
                if parent.child_by_field_name("body") != child and kind != "parenthesized_expression":
                    return None
            elif kind == "binary_expression":
                operator = parent.child_by_field_name("operator")
                if operator is None or operator.type != "++":
                    return None
            elif kind == "if_expression":
                if parent.child_by_field_name("condition") == child:
                    return None
            elif kind == "apply_expression":
                outer = outermost_apply(parent)
                function, arguments = flatten_apply(outer)
                name = last_name(function)
                if not arguments or not _contains(arguments[-1], child) or name not in (CONDITIONAL_FUNCTIONS | LIST_PASSTHROUGH_FUNCTIONS):
                    return None
                if name == "optional" and element is None:
                    element = child  # `lib.optional c x`: `x` is the element
                child, parent = outer, outer.parent
                continue
            else:
                return None
            child, parent = parent, parent.parent
        return None

    def input_attrs(self, node: Node, depth: int = 0) -> frozenset[str]:
        """Input attributes `node` flows into, directly or through let-bound variables."""
        site = self.input_site(node)
        if site is not None:
            return frozenset({site.attr})
        if depth >= 3:
            return frozenset()
        binding = self.let_binding_holding(node)
        if binding is None:
            return frozenset()
        name = attrpath_names(binding.child_by_field_name("attrpath"))[0]
        let_node = binding.parent.parent if binding.parent is not None else None
        assert name is not None and let_node is not None
        found: set[str] = set()
        body = let_node.child_by_field_name("body")
        search = [body] + [binding_value(b) for b in bindings_of(let_node) if b.type == "binding"]
        for root in search:
            if root is None:
                continue
            for use in self.variables_named(name, within=root):
                found |= self.input_attrs(use, depth + 1)
        return frozenset(found)

    def let_binding_holding(self, node: Node) -> Node | None:
        """The `let` binding `name = ...;` (one plain name) whose value holds `node` through
        list-building syntax (lists, `++`, `with`, `if`, calls such as `lib.optionals c`)."""
        child, parent = node, node.parent
        while parent is not None:
            if parent.type == "binding":
                owner = parent.parent.parent if parent.parent is not None else None
                names = attrpath_names(parent.child_by_field_name("attrpath"))
                if owner is not None and owner.type == "let_expression" and len(names) == 1 and names[0] is not None and binding_value(parent) == child:
                    return parent
                return None
            if parent.type not in {"list_expression", "parenthesized_expression", "with_expression", "binary_expression", "if_expression", "apply_expression"}:
                return None
            child, parent = parent, parent.parent
        return None

    def search_path_call(self, node: Node, through_if: bool = True) -> Node | None:
        """The `lib.makeLibraryPath [ ... ]` call (or another of `SEARCH_PATH_FUNCTIONS`) whose list
        argument holds `node`, through lists, parentheses, `++`, `lib.optionals c` and (unless
        `through_if` is false) the branches of an `if`."""
        child, parent = node, node.parent
        while parent is not None:
            kind = parent.type
            if kind == "apply_expression":
                call = outermost_apply(parent)
                function, arguments = flatten_apply(call)
                if not arguments or not _contains(arguments[-1], child):
                    return None
                name = last_name(function)
                if name in SEARCH_PATH_FUNCTIONS:
                    return call
                if name not in CONDITIONAL_FUNCTIONS:
                    return None
                child, parent = call, call.parent
                continue
            if kind == "binary_expression":
                if parent.child_by_field_name("operator").type != "++":
                    return None
            elif kind == "if_expression":
                if not through_if or parent.child_by_field_name("condition") == child:
                    return None
            elif kind not in {"list_expression", "parenthesized_expression"}:
                return None
            child, parent = parent, parent.parent
        return None

    # ----- conditions and calls -----------------------------------------------------------

    def guards(self, node: Node) -> list[Guard]:
        """Conditions under which `node` is evaluated, innermost first."""
        result: list[Guard] = []
        child, parent = node, node.parent
        while parent is not None:
            if parent.type == "if_expression":
                condition = parent.child_by_field_name("condition")
                if parent.child_by_field_name("consequence") == child and condition is not None:
                    result.append(_guard(condition, True))
                elif parent.child_by_field_name("alternative") == child and condition is not None:
                    result.append(_guard(condition, False))
            elif parent.type == "apply_expression" and parent.child_by_field_name("argument") == child:
                function, arguments = flatten_apply(outermost_apply(parent))
                if last_name(function) in CONDITIONAL_FUNCTIONS and len(arguments) >= 2 and _contains(arguments[-1], child):
                    result.append(_guard(arguments[0], True))
            child, parent = parent, parent.parent
        return result

    def enclosing_call(self, node: Node) -> Call | None:
        """The nearest call that takes an attrset containing `node` as its argument
        (also `f (finalAttrs: { ... })` and `f rec { ... }`)."""
        for attrset in self.enclosing_attrsets(node):
            holder = attrset
            parent = holder.parent
            while parent is not None and parent.type == "parenthesized_expression":
                holder, parent = parent, parent.parent
            if parent is not None and parent.type == "function_expression" and parent.child_by_field_name("body") == holder:
                holder, parent = parent, parent.parent
                while parent is not None and parent.type == "parenthesized_expression":
                    holder, parent = parent, parent.parent
            if parent is not None and parent.type == "apply_expression" and parent.child_by_field_name("argument") == holder:
                call = outermost_apply(parent)
                function, _ = flatten_apply(call)
                name = last_name(function)
                if name is not None:
                    return Call(name, dotted_name(function), call, attrset)
        return None

    def enclosing_attrsets(self, node: Node) -> Iterator[Node]:
        parent = node.parent
        while parent is not None:
            if parent.type in ATTRSET_TYPES:
                yield parent
            parent = parent.parent

    def enclosing_function(self, node: Node) -> Node | None:
        parent = node.parent
        while parent is not None:
            if parent.type == "function_expression":
                return parent
            parent = parent.parent
        return None

    def top_function(self) -> Node | None:
        """The file's outer function (`{ lib, stdenv, ... }: ...`), if it is one."""
        root = self.tree.root_node
        expression = unparen(root.child_by_field_name("expression") or (root.named_children[0] if root.named_children else None))
        return expression if expression is not None and expression.type == "function_expression" else None

    # ----- names ----------------------------------------------------------------------------

    def resolve(self, variable: Node) -> NameBinding:
        """Resolve a `variable_expression` (or bare identifier) to where its name comes from."""
        identifier = variable.child_by_field_name("name") if variable.type == "variable_expression" else variable
        return self.resolve_name(text(identifier) if identifier is not None else "", variable)

    def resolve_name(self, name: str, start: Node) -> NameBinding:
        """Resolve `name` as seen at `start`, looking only at scopes enclosing it."""
        key = (name, start)
        found = self._resolve_cache.get(key)
        if found is None:
            found = self._resolve_cache[key] = self._resolve_name(name, start)
        return found

    def _resolve_name(self, name: str, start: Node) -> NameBinding:
        withs: list[Node] = []
        child, parent = start, start.parent
        while parent is not None:
            kind = parent.type
            if kind == "let_expression" or (kind == "rec_attrset_expression"):
                found = self._scope(parent).get(name)
                if found is not None:
                    return self._binding_for(found, name, parent)
            elif kind == "function_expression":
                if parent.child_by_field_name("universal") is not None and text(parent.child_by_field_name("universal")) == name:
                    return NameBinding("formal", name, parent.child_by_field_name("universal"))
                formals = parent.child_by_field_name("formals")
                if formals is not None:
                    for formal in formals.children_by_field_name("formal"):
                        formal_name = formal.child_by_field_name("name")
                        if formal_name is not None and text(formal_name) == name:
                            return NameBinding("formal", name, formal)
            elif kind == "with_expression" and parent.child_by_field_name("body") == child:
                environment = parent.child_by_field_name("environment")
                if environment is not None:
                    withs.append(environment)
            child, parent = parent, parent.parent
        if withs:
            return NameBinding("with", name, withs=tuple(withs))
        return NameBinding("free", name)

    def uses(self, name: str, binding: Node) -> list[Node]:
        """Variables named `name` in the file that resolve to `binding` (a formal, a let binding)."""
        by_binding = self._uses_cache.get(name)
        if by_binding is None:
            # every variable of the name resolved once: asking per binding re-resolved them all
            # for each of a file's bindings of the name (quadratic in generated files)
            by_binding = self._uses_cache[name] = {}
            for variable in self.variables_named(name):
                found = self.resolve(variable)
                if found.node is not None:
                    by_binding.setdefault(found.node, []).append(variable)
        return list(by_binding.get(binding, ()))

    def first_use(self, name: str, binding: Node, where: Callable[[Node], bool] = lambda _: True) -> Node | None:
        """The first variable named `name` that resolves to `binding` and satisfies `where`;
        resolves only as many variables as it must (an editor re-lint asks once per keystroke)."""
        if name in self._uses_cache:
            return next((v for v in self.uses(name, binding) if where(v)), None)
        for variable in self.variables_named(name):
            found = self.resolve(variable)
            if found.node is not None and found.node == binding and where(variable):
                return variable
        return None

    def _may_be_bound(self, name: str) -> bool:
        """Whether a `let` or `rec` scope of the file may bind `name` (True when the scopes are
        not known). A variable whose name none binds resolves to a formal, a `with` or nothing,
        where only its name can make it a CUDA package or package set: the engine asks this for
        every variable of every parsed file, and the climb to the root dominated in large ones."""
        if self._scopes is None:
            return True
        if self._bound_names is None:
            self._bound_names = frozenset(name for scope in self._scopes for name in self._scope(scope))
        return name in self._bound_names

    def _may_name_package(self, spelled: bytes) -> bool:
        """Whether a variable of this name may denote a CUDA package (answered once per name)."""
        found = self._package_names.get(spelled)
        if found is None:
            name = spelled.decode("utf-8", "replace")
            found = self._package_names[spelled] = self._may_be_bound(name) or catalog.is_cuda_package(name) or catalog.is_runfile_toolkit(name)
        return found

    def _scope(self, scope: Node) -> dict[str, Node]:
        cached = self._scope_cache.get(scope)
        if cached is not None:
            return cached
        names: dict[str, Node] = {}
        for binding in bindings_of(scope):
            if binding.type == "binding":
                path = attrpath_names(binding.child_by_field_name("attrpath"))
                if path and path[0] is not None:
                    names.setdefault(path[0], binding)
            else:
                attrs = binding.child_by_field_name("attrs")
                for attr in attrs.children_by_field_name("attr") if attrs is not None else ():
                    attr_name = identifier_name(attr)
                    if attr_name is not None:
                        names.setdefault(attr_name, binding)
        self._scope_cache[scope] = names
        return names

    def _binding_for(self, binding: Node, name: str, scope: Node) -> NameBinding:
        kind = "let" if scope.type == "let_expression" else "rec"
        if binding.type == "binding":
            path = attrpath_names(binding.child_by_field_name("attrpath"))
            value = binding_value(binding) if len(path) == 1 else None
            return NameBinding(kind, name, binding, value=value)
        if binding.type == "inherit_from":
            return NameBinding("inherit-from", name, binding, source=binding.child_by_field_name("expression"))
        # plain `inherit name;` re-binds the name from the scopes around this one
        return self.resolve_name(name, scope)

    # ----- CUDA package sets and packages ---------------------------------------------------

    def package_set_name(self, node: Node | None, depth: int = 0) -> str | None:
        """If `node` denotes a CUDA package set, its name (`cudaPackages`, `cudaPackages_12_4`)."""
        node = unparen(node)
        if node is None or depth > _MAX_RESOLVE_DEPTH:
            return None
        if node.type == "variable_expression":
            name = text(node.child_by_field_name("name"))
            if catalog.is_package_set_name(name):
                return name
            if not self._may_be_bound(name):
                return None
            binding = self.resolve(node)
            if binding.kind in {"let", "rec"} and binding.value is not None:
                return self.package_set_name(binding.value, depth + 1)
            return None
        if node.type == "select_expression" and node.child_by_field_name("default") is None:
            names = attrpath_names(node.child_by_field_name("attrpath"))
            if names and catalog.is_package_set_name(names[-1]):
                return names[-1]
        return None

    def cuda_ref(self, node: Node | None, depth: int = 0) -> CudaRef | None:
        """If `node` denotes a CUDA package or one of its outputs, how."""
        if depth == 0 and node is not None:  # deeper answers may be cut short by the depth limit
            found = self._ref_cache.get(node, _UNKNOWN)
            if found is _UNKNOWN:
                found = self._ref_cache[node] = self._cuda_ref(node, 0)
            return found
        return self._cuda_ref(node, depth)

    def _cuda_ref(self, node: Node | None, depth: int) -> CudaRef | None:
        if node is None or depth > _MAX_RESOLVE_DEPTH:
            return None
        inner, kind = node, node.type
        if kind == "parenthesized_expression":
            unwrapped = unparen(node)
            if unwrapped is None:
                return None
            inner, kind = unwrapped, unwrapped.type
        if kind == "apply_expression":
            return self._getter_ref(node, inner, depth)
        if kind == "select_expression":
            return self._select_ref(node, inner, depth)
        if kind == "variable_expression":
            return self._variable_ref(node, inner, depth)
        return None

    def _getter_ref(self, whole: Node, call: Node, depth: int) -> CudaRef | None:
        function, arguments = flatten_apply(call)
        getter = last_name(function)
        if getter not in GETTERS or not arguments:
            return None
        output = GETTERS[getter]
        if getter == "getOutput":
            if len(arguments) != 2:
                return None
            output = string_literal(arguments[0])
        inner = self.cuda_ref(arguments[-1], depth + 1)
        if inner is None:
            return None
        return CudaRef(inner.package, output, inner.set_name, inner.via, whole, inner.name_node, getter)

    def _select_ref(self, whole: Node, select: Node, depth: int) -> CudaRef | None:
        if select.child_by_field_name("default") is not None:
            return None
        base = select.child_by_field_name("expression")
        attrpath = select.child_by_field_name("attrpath")
        components = attrpath.children_by_field_name("attr") if attrpath is not None else []
        names = [identifier_name(c) for c in components]
        set_name = self.package_set_name(base, depth + 1)
        if set_name is not None and names and names[0] is not None:
            return CudaRef(names[0], names[1] if len(names) > 1 else None, set_name, "select", whole, components[0])
        # pkgs.cudaPackages.x, final.cudaPackages_12.x.dev
        for index, name in enumerate(names[:-1]):
            if catalog.is_package_set_name(name) and names[index + 1] is not None:
                output = names[index + 2] if len(names) > index + 2 else None
                return CudaRef(names[index + 1], output, name, "select", whole, components[index + 1])
        # pkgs.cudatoolkit, pkgs.cudatoolkit.lib
        if names and catalog.is_runfile_toolkit(names[0]) and unparen(base) is not None and unparen(base).type == "variable_expression":
            return CudaRef(names[0], names[1] if len(names) > 1 else None, None, "toplevel", whole, components[0])
        # cuda_nvcc.dev where cuda_nvcc itself is a package
        package = self.cuda_ref(base, depth + 1)
        if package is not None and package.output is None and names and names[0] is not None:
            return CudaRef(package.package, names[0], package.set_name, package.via, whole, package.name_node)
        return None

    def _variable_ref(self, whole: Node, variable: Node, depth: int) -> CudaRef | None:
        if not self._may_name_package(variable.text or b""):  # (a variable's text is its name)
            return None
        identifier = variable.child_by_field_name("name")
        name = text(identifier)
        binding = self.resolve(variable)
        if binding.kind in {"let", "rec"}:
            if binding.value is None:
                return None
            inner = self.cuda_ref(binding.value, depth + 1)
            if inner is None:
                return None
            return CudaRef(inner.package, inner.output, inner.set_name, "let", whole, identifier, inner.getter)
        if binding.kind == "inherit-from":
            set_name = self.package_set_name(binding.source, depth + 1)
            if set_name is not None:
                return CudaRef(name, None, set_name, "inherit", whole, identifier)
            return None
        if binding.kind == "formal":
            if catalog.is_cuda_package(name) and binding.node is not None and binding.node.type == "formal":
                return CudaRef(name, None, None, "formal", whole, identifier)
            return None
        if binding.kind == "with":
            for environment in binding.withs:
                set_name = self.package_set_name(environment, depth + 1)
                if set_name is not None and catalog.is_cuda_package(name):
                    return CudaRef(name, None, set_name, "with", whole, identifier)
            if catalog.is_runfile_toolkit(name):
                return CudaRef(name, None, None, "toplevel", whole, identifier)
            return None
        if catalog.is_runfile_toolkit(name):
            return CudaRef(name, None, None, "toplevel", whole, identifier)
        return None

    def reference_root(self, node: Node) -> Node:
        """Climb from an identifier to the whole expression that references a package:
        `cudaPackages.libcublas.dev`, `(lib.getDev libcublas)`, `lib.getOutput "static" x`."""
        root = self._root_cache.get(node)
        if root is None:
            # several rules ask for every variable; each climb asks tree-sitter for parents,
            # which costs the siblings before each ancestor (thousands in generated files)
            root = self._root_cache[node] = self._reference_root(node)
        return root

    def _reference_root(self, node: Node) -> Node:
        current = node
        parent = current.parent
        if current.type == "identifier" and parent is not None and parent.type == "variable_expression":
            current, parent = parent, parent.parent
        while parent is not None:
            kind = parent.type
            if kind == "select_expression" and parent.child_by_field_name("expression") == current or kind == "parenthesized_expression":
                current = parent
            elif kind == "apply_expression" and parent.child_by_field_name("argument") == current:
                call = outermost_apply(parent)
                function, arguments = flatten_apply(call)
                if last_name(function) in GETTERS and arguments and arguments[-1] == current:
                    current = call
                else:
                    break
            else:
                break
            parent = current.parent
        return current

    def cuda_refs(self) -> Iterator[CudaRef]:
        """Every outermost CUDA package reference in the file, once each."""
        seen: set[Node] = set()
        for node in self.nodes_of_type("variable_expression"):
            root = self.reference_root(node)
            if root in seen:
                continue
            ref = self.cuda_ref(root)
            if ref is not None:
                seen.add(root)
                yield ref


_VERSION_KEY = re.compile(r"^(?:cuda|cu|v)?[-_]?\d+(?:[._]\d+)*$", re.I)
_MAX_TABLE_DEPTH = 3


def _is_version_key(binding: Node) -> bool:
    names = attrpath_names(binding.child_by_field_name("attrpath"))
    return len(names) == 1 and names[0] is not None and _VERSION_KEY.match(names[0]) is not None


def _guard(condition: Node, positive: bool) -> Guard:
    """The guard on `condition` without parentheses; `!c` guards like `c` with the polarity
    flipped (`optionals (!(cudaOlder "11.4"))`)."""
    while True:
        inner = unparen(condition)
        if inner is None:
            return Guard(condition, positive)
        if inner.type != "unary_expression" or text(inner).lstrip()[:1] != "!":
            return Guard(inner, positive)
        argument = inner.child_by_field_name("argument")
        if argument is None:
            return Guard(condition, positive)
        condition, positive = argument, not positive


def _contains(outer: Node | None, inner: Node) -> bool:
    return outer is not None and outer.start_byte <= inner.start_byte and inner.end_byte <= outer.end_byte


@lru_cache(maxsize=4096)
def _identifier_pattern(name: str) -> re.Pattern[bytes]:
    # Only narrows the places to look up: the tree decides what is an identifier. A Nix identifier
    # is [A-Za-z_][A-Za-z0-9_'-]*, so none continues into a letter, digit, `_` or `'`.
    return re.compile(rb"(?<![A-Za-z0-9_'])" + re.escape(name.encode("utf-8")) + rb"(?![A-Za-z0-9_'-])")
