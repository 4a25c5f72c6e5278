"""The engine: text -> tree -> semantic view -> rules -> diagnostics. One walk over the tree
dispatches every node to the rules registered for its type."""

from __future__ import annotations

import itertools
import time
import traceback
from array import array
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import lru_cache

from ahocorasick_rs import BytesAhoCorasick
from tree_sitter import Node, Tree

from cudalint.lint.context import Context
from cudalint.lint.model import Applicability, Diagnostic, Edit, Fix, Severity
from cudalint.lint.registry import all_rules, known_codes, rule_by_code
from cudalint.lint.rule import Rule
from cudalint.lint.settings import LintSettings
from cudalint.lint.suppressions import Suppression, find_suppressions, is_valid_code
from cudalint.nix.parsing import language, parse_until, syntax_problems
from cudalint.nix.semantic import Semantic
from cudalint.nix.source import SourceFile
from cudalint.nix.syntax import descendants

SYNTAX_ERROR = "CUDA900"
UNUSED_SUPPRESSION = "CUDA901"
# Rules the engine itself implements (their modules hold metadata and docs only).
ENGINE_RULES = frozenset({SYNTAX_ERROR, UNUSED_SUPPRESSION})
# Rules answer questions about a node's ancestors, which costs depth x nodes; real Nix nests a
# few dozen levels. Below this depth rules are not run (syntax checks still cover everything).
MAX_RULE_DEPTH = 256
# How many nodes the dispatch hands over between two looks at the clock (a rule's check of one
# node takes microseconds to milliseconds), and how many the walk visits.
_CLOCK_INTERVAL = 8
_WALK_CLOCK_INTERVAL = 4096
# A tree this large may not be checked whole within the budget: the nodes around what the rules
# look for (their patterns' matches in the text, at most `_HOT_SPOTS` of them) are checked first.
_LARGE_TREE = 200_000
# The parse of a file may take the time budget or this long per byte, whichever is longer (tree-
# sitter parses 1-5 MB a second idle, 200 KB a second on a loaded machine; a pathological file,
# 50,000 selectors in a chain, 6 KB a second).
_PARSE_SECONDS_PER_BYTE = 1e-5
_HOT_SPOTS = 1000


@dataclass
class LintResult:
    source: SourceFile
    tree: Tree | None  # None when the prefilter skipped parsing
    diagnostics: list[Diagnostic]
    syntax_errors: int = 0
    internal_errors: list[str] = field(default_factory=list)
    suppressed: int = 0
    notes: list[str] = field(default_factory=list)  # limits reached: shown, but not errors
    # For `relint`: the findings before suppression, and the span of the node each came from
    # (start, end pairs in the same order, -1 when none; an editor keeps one per open file).
    unsuppressed: list[Diagnostic] = field(default_factory=list)
    origin_spans: array = field(default_factory=lambda: array("q"))

    def origins(self) -> Iterator[tuple[Diagnostic, tuple[int, int] | None]]:
        spans = self.origin_spans
        for index, diagnostic in enumerate(self.unsuppressed):
            start, end = spans[2 * index], spans[2 * index + 1]
            yield diagnostic, (None if start < 0 else (start, end))

    provisional: bool = False  # from `relint`: exact unless the edit changed facts elsewhere
    # Extents a `relint` already knows (by `id` of the finding), so `extents` need not recompute them.
    known_extents: dict[int, tuple[int, int]] = field(default_factory=dict, repr=False)
    _extents: array | None = field(default=None, repr=False)

    def extents(self) -> array:
        """Per unsuppressed finding, the span covering it and every edit of its fixes (start, end
        pairs in the same order): what an edit must touch to concern the finding. Computed on
        the first `relint` (the fast path asks it of every finding at each keystroke)."""
        if self._extents is None:
            known = self.known_extents
            spans = array("q")
            for d in self.unsuppressed:
                extent = known.get(id(d))
                spans.extend(extent if extent is not None else _extent(d))
            self._extents = spans
            self.known_extents = {}
        return self._extents


def _extent(d: Diagnostic) -> tuple[int, int]:
    low, high = d.start, d.end
    for fix in d.fixes:
        for edit in fix.edits:
            low = min(low, edit.start)
            high = max(high, edit.end)
    return low, high


@lru_cache(maxsize=1024)
def _dispatch(enabled: frozenset[str]) -> dict[str, tuple[Rule, ...]]:
    table: dict[str, list[Rule]] = {}
    for rule in all_rules():
        if rule.code in enabled and rule.check is not None:
            for node_type in rule.node_types:
                table.setdefault(node_type, []).append(rule)
    return {k: tuple(v) for k, v in table.items()}


@lru_cache(maxsize=64)
def _needles(enabled: frozenset[str]) -> tuple[bytes, ...] | None:
    """Byte strings of which a file must hold one for an enabled rule to fire; None when an
    enabled rule declares none (it could fire anywhere). cudalint looks only at files that
    mention something one of its rules looks for: syntax errors are reported in those."""
    needles: set[bytes] = set()
    for rule in all_rules():
        if rule.code == SYNTAX_ERROR:
            continue
        if rule.code in enabled or SYNTAX_ERROR in enabled:
            if not rule.patterns:
                return None
            needles.update(rule.patterns)
    # a needle that contains another is found whenever it would be
    return tuple(sorted(n for n in needles if not any(other in n for other in needles if other != n)))


@lru_cache(maxsize=64)
def _pattern_owners(enabled: frozenset[str]) -> tuple[BytesAhoCorasick | None, tuple[frozenset[str], ...], frozenset[str]]:
    """A matcher over every enabled rule's patterns, the rules each pattern belongs to, and the
    enabled rules without patterns (dispatched always)."""
    owners: dict[bytes, set[str]] = {}
    always = set()
    for rule in all_rules():
        if rule.code in enabled:
            if not rule.patterns:
                always.add(rule.code)
            for pattern in rule.patterns:
                owners.setdefault(pattern, set()).add(rule.code)
    patterns = sorted(owners)
    matcher = BytesAhoCorasick(patterns) if patterns else None
    return matcher, tuple(frozenset(owners[p]) for p in patterns), frozenset(always)


def _rules_that_may_fire(data: bytes, enabled: frozenset[str]) -> frozenset[str]:
    """The enabled rules whose patterns the file holds (one pass over it): the others are not
    dispatched."""
    matcher, owners, always = _pattern_owners(enabled)
    if matcher is None:
        return always
    found = {index for index, _, _ in matcher.find_matches_as_indexes(data, overlapping=True)}
    return always.union(*(owners[index] for index in found))


@lru_cache(maxsize=64)
def _matcher(needles: tuple[bytes, ...]) -> BytesAhoCorasick:
    return BytesAhoCorasick(list(needles))


def may_find(data: bytes, enabled: frozenset[str]) -> bool:
    """The prefilter: whether a file holding `data` can have findings, so is worth parsing.
    One Aho-Corasick pass finds any of the needles (a scan per needle was 7x slower on a
    nixpkgs-sized tree, where 96% of the files hold none)."""
    needles = _needles(enabled)
    if needles is None:
        return True
    return bool(_matcher(needles).find_matches_as_indexes(data))


def warm_up() -> None:
    """Load what every lint uses (the rules, the grammar, the reference set) now: before a run
    forks its workers, which then share it, and before an editor's first keystroke."""
    from cudalint.knowledge.reference import load

    all_rules()
    language()
    load()


def lint(source: SourceFile, settings: LintSettings, tree: Tree | None = None, prefilter: bool = True, legacy_walk: bool = False) -> LintResult:
    """Lint one file. With `prefilter`, a file that mentions nothing any enabled rule looks
    for is not parsed (its result has no tree unless one was given) and has no findings.
    `legacy_walk` dispatches with the previous engine (a generator walk per purpose): kept only
    so a test can show both give the same findings."""
    if prefilter and not may_find(source.data, settings.enabled):
        return LintResult(source, tree, [])
    # The budget covers every phase: the parse, the walk, the rules. No rule can look at a file
    # without its tree: the parse of a large file may take longer, in proportion to its size.
    start = time.monotonic()
    deadline = start + settings.time_budget
    if tree is None:
        tree = parse_until(source, max(deadline, start + len(source.data) * _PARSE_SECONDS_PER_BYTE))
        if tree is None:
            return LintResult(source, None, [], notes=[_parse_out_of_time(settings)])
    diagnostics: list[Diagnostic] = []
    internal_errors: list[str] = []
    notes: list[str] = []
    dispatch = _dispatch(_rules_that_may_fire(source.data, settings.enabled) if prefilter else settings.enabled)
    first = _hot_spots(tree.root_node, source.data, dispatch, settings.enabled) if dispatch and tree.root_node.descendant_count > _LARGE_TREE else []
    walked = None if legacy_walk else _walk(tree.root_node, dispatch, MAX_RULE_DEPTH, source.data, deadline)
    try:
        problems = syntax_problems(tree, source, None if walked is None else walked.definitions)
    except RecursionError:
        problems = []
        internal_errors.append("internal error in CUDA900: nesting too deep to check for duplicate definitions")
    if settings.is_enabled(SYNTAX_ERROR):
        diagnostics.extend(Diagnostic(SYNTAX_ERROR, p.message, p.start, p.end, Severity.ERROR) for p in problems)

    context = Context(source, tree, Semantic(tree, source, None if walked is None else walked.scopes), settings)
    if walked is None:
        _run_rules_legacy(tree.root_node, context, dispatch, notes, internal_errors)
    elif dispatch:
        _dispatch_walked(walked, context, notes, internal_errors, deadline, first)
    diagnostics.extend(context.diagnostics)
    return _finish(source, tree, _deduplicate(diagnostics), context.origins, settings, len(problems), internal_errors, notes)


@dataclass
class _Walked:
    """What one walk of a tree found: the nodes to dispatch (pre-order, with their rules), the
    functions, formals and binding sets the duplicate-definition check reads and the `let` and `rec`
    scopes the semantic view resolves names in (at any depth), and the first node whose
    children are below the rules' depth limit."""

    root: Node
    dispatch: dict[str, tuple[Rule, ...]]
    dispatched: list[Node]  # (nodes only: a generated file has hundreds of thousands)
    definitions: list[Node]
    scopes: list[Node]
    too_deep: Node | None
    out_of_time: Node | None = None  # where the walk stopped when the time budget ran out


_DEFINITION_TYPES = frozenset({"function_expression", "formals", "binding_set"})
_SCOPE_TYPES = frozenset({"let_expression", "rec_attrset_expression"})
_BINDING_TYPE = frozenset({"binding"})


@lru_cache(maxsize=1024)
def _kind_ids(types: frozenset[str]) -> frozenset[int]:
    """The grammar's ids of the node kinds named `types`."""
    grammar = language()
    return frozenset(kind for kind in range(grammar.node_kind_count) if grammar.node_kind_for_id(kind) in types)


def _walk(root: Node, dispatch: dict[str, tuple[Rule, ...]], max_depth: int, data: bytes, deadline: float | None = None) -> _Walked:
    """One TreeCursor walk (no recursion, no generator, no call per node) serving the rules and
    the duplicate-definition check. Measured on the benchmark's parsed files, this is faster
    than tree-sitter queries (`QueryCursor.captures` over the dispatched types, sorted back
    into pre-order, took twice as long: the query engine's per-node cost exceeds the walk's)."""
    dispatched: list[Node] = []
    definitions: list[Node] = []
    scopes: list[Node] = []
    too_deep = None
    cursor = root.walk()
    depth = 0
    # (node kinds as grammar ids: reading `type` builds a string per node)
    wanted, definition_kinds, scope_kinds = _kind_ids(frozenset(dispatch)), _kind_ids(_DEFINITION_TYPES), _kind_ids(_SCOPE_TYPES)
    # A binding no rule takes (by its attribute path, in the file's bytes `data`) is not kept: a
    # generated package set has a hundred thousand bindings, and the list of their nodes alone
    # took 9 MB. (The dispatch asks again for the few kept: answers are remembered per spelling.)
    select = _binding_selector(dispatch.get("binding", ()))
    binding_kinds = _kind_ids(_BINDING_TYPE)
    visited = 0
    while True:
        node = cursor.node
        assert node is not None  # a cursor always stands on a node
        visited += 1
        if deadline is not None and visited % _WALK_CLOCK_INTERVAL == 0 and time.monotonic() > deadline:
            return _Walked(root, dispatch, dispatched, definitions, scopes, too_deep, node)
        kind = node.kind_id
        if kind in wanted and depth <= max_depth and (select is None or kind not in binding_kinds or select.rules_for(node, data)):
            dispatched.append(node)
        if kind in definition_kinds:
            definitions.append(node)
        elif kind in scope_kinds:
            scopes.append(node)
        if cursor.goto_first_child():
            if depth == max_depth and too_deep is None:
                too_deep = node
            depth += 1
            continue
        while depth > 0 and not cursor.goto_next_sibling():
            cursor.goto_parent()
            depth -= 1
        if depth == 0:
            return _Walked(root, dispatch, dispatched, definitions, scopes, too_deep)


def _hot_spots(root: Node, data: bytes, dispatch: dict[str, tuple[Rule, ...]], enabled: frozenset[str]) -> list[Node]:
    """The nodes to dispatch that hold a match of a rule's pattern, in pre-order: where findings
    are, checked first in a tree too large to be sure of checking whole (a 10 MB list ending in
    `cudatoolkit`)."""
    matcher = _pattern_owners(enabled)[0]
    if matcher is None:
        return []
    wanted = _kind_ids(frozenset(dispatch))
    found: dict[tuple[int, int, int], Node] = {}
    for count, (_, start, end) in enumerate(matcher.find_matches_as_indexes(data, overlapping=True)):
        if count == _HOT_SPOTS:
            break
        cursor = root.walk()  # down from the root: a node's `parent` costs the siblings of each ancestor
        while True:
            node = cursor.node
            assert node is not None
            if node.kind_id in wanted:
                found.setdefault((node.start_byte, node.end_byte, node.kind_id), node)
            if cursor.goto_first_child_for_byte(start) is None or cursor.node is None or cursor.node.start_byte > start or cursor.node.end_byte < end:
                break
    return sorted(found.values(), key=lambda n: (n.start_byte, -n.end_byte))


def _dispatch_walked(walked: _Walked, context: Context, notes: list[str], internal_errors: list[str], deadline: float | None = None, first: list[Node] | None = None) -> None:
    """Hand each walked node to its rules, in pre-order, within the time budget (until
    `deadline`, else the budget from now); the nodes `first` before all others, even when the
    walk used up the budget (they are few: `_hot_spots`)."""
    source, settings = context.source, context.settings
    failed: set[str] = set()
    if deadline is None:
        deadline = time.monotonic() + settings.time_budget
    if not first and time.monotonic() > deadline:
        notes.append(_out_of_time(walked.root, context))
        return
    dispatch = walked.dispatch
    select = _binding_selector(dispatch.get("binding", ()))
    # the variable rules that look at any variable, not only at those starting a CUDA reference
    variables = dispatch.get("variable_expression", ())
    any_variable = tuple(r for r in variables if not r.cuda_references_only)
    gated = len(any_variable) < len(variables)
    data = source.data
    done = {(n.start_byte, n.end_byte, n.kind_id) for n in first} if first else None
    nodes = itertools.chain(first, walked.dispatched) if first else walked.dispatched
    stopped = None
    for count, node in enumerate(nodes):
        if done is not None and count >= len(done):
            if (node.start_byte, node.end_byte, node.kind_id) in done:
                continue  # (checked first)
            if time.monotonic() > deadline:
                stopped = node
                break
        elif count % _CLOCK_INTERVAL == 0 and count and done is None and time.monotonic() > deadline:
            stopped = node
            break
        kind = node.type
        rules = dispatch[kind]
        if kind == "binding" and select is not None:
            rules = select.rules_for(node, data)
        elif kind == "variable_expression" and gated:
            semantic = context.semantic
            if semantic.cuda_ref(semantic.reference_root(node)) is None:
                rules = any_variable
        if rules:
            _apply(node, rules, context, failed, internal_errors)
    context.node = None
    stopped = stopped or walked.out_of_time
    if stopped is not None:
        notes.append(_out_of_time(stopped, context))
    if walked.too_deep is not None:
        notes.append(_too_deep(walked.too_deep, source))


# Attribute paths whose rules a selector remembers (a bound for editors that stay open for days).
_SPELLINGS_KEPT = 4096


class _BindingSelector:
    """Which rules a binding goes to: those without `attrpath_patterns`, and those whose patterns
    its attribute path's text holds. A file that mentions CUDA hands every binding to the
    dispatch; most have names no rule looks at, and one matcher pass here replaces a call of
    each rule that would have looked and returned."""

    def __init__(self, rules: tuple[Rule, ...]) -> None:
        owners: dict[bytes, set[str]] = {}
        for rule in rules:
            for pattern in rule.attrpath_patterns:
                owners.setdefault(pattern, set()).add(rule.code)
        patterns = sorted(owners)
        self._matcher = BytesAhoCorasick(patterns)
        self._owners = tuple(frozenset(owners[p]) for p in patterns)
        self._rules = rules
        self._unfiltered = tuple(r for r in rules if not r.attrpath_patterns)
        self._by_text: dict[bytes, tuple[Rule, ...]] = {}

    def rules_for(self, binding: Node, data: bytes) -> tuple[Rule, ...]:
        attrpath = binding.child_by_field_name("attrpath")
        if attrpath is None:
            return self._unfiltered
        spelled = data[attrpath.start_byte : attrpath.end_byte]
        chosen = self._by_text.get(spelled)  # (a few names, `src`, `buildInputs`, make most bindings)
        if chosen is None:
            if len(self._by_text) >= _SPELLINGS_KEPT:
                self._by_text.clear()
            chosen = self._by_text[spelled] = self._choose(spelled)
        return chosen

    def _choose(self, spelled: bytes) -> tuple[Rule, ...]:
        found = frozenset(index for index, _, _ in self._matcher.find_matches_as_indexes(spelled, overlapping=True))
        if not found:
            return self._unfiltered
        codes = frozenset().union(*(self._owners[index] for index in found))
        return tuple(r for r in self._rules if not r.attrpath_patterns or r.code in codes)


@lru_cache(maxsize=256)
def _selector_for(codes: tuple[str, ...]) -> _BindingSelector:
    return _BindingSelector(tuple(rule_by_code(code) for code in codes))


def _binding_selector(rules: tuple[Rule, ...]) -> _BindingSelector | None:
    """None when no binding rule filters by attribute path (every binding goes to all)."""
    if not any(r.attrpath_patterns for r in rules):
        return None
    return _selector_for(tuple(r.code for r in rules))


def _out_of_time(node: Node, context: Context) -> str:
    budget = context.settings.time_budget
    return (
        f"not fully checked: the time budget of {budget:g} s ran out at line {context.source.location(node.start_byte)[0]}: "
        "the CUDA rules did not look further (raise `time-budget` in the configuration to check the whole file)"
    )


def _parse_out_of_time(settings: LintSettings) -> str:
    return (
        f"not checked: parsing took longer than the time budget of {settings.time_budget:g} s (or its share for a large file), so no rule ran "
        "(raise `time-budget` in the configuration to check the whole file)"
    )


def _too_deep(node: Node, source: SourceFile) -> str:
    line = source.location(node.start_byte)[0]
    return f"nesting deeper than {MAX_RULE_DEPTH} syntax levels from line {line} on: the CUDA rules did not look inside it"


def _run_rules(root, context: Context, dispatch: dict[str, tuple[Rule, ...]], notes: list[str], internal_errors: list[str]) -> None:
    """The rules below `root` (an editor's re-lint of one attribute)."""
    if dispatch:
        _dispatch_walked(_walk(root, dispatch, MAX_RULE_DEPTH, context.source.data), context, notes, internal_errors)


def _run_rules_legacy(root, context: Context, dispatch: dict[str, tuple[Rule, ...]], notes: list[str], internal_errors: list[str]) -> None:
    """The previous dispatch: one generator walk below `root`, each node to `_check_node`."""
    if not dispatch:
        return
    source, settings = context.source, context.settings
    failed: set[str] = set()
    too_deep: list = []
    deadline = time.monotonic() + settings.time_budget
    for count, node in enumerate(descendants(root, MAX_RULE_DEPTH, too_deep)):
        if count % _CLOCK_INTERVAL == 0 and time.monotonic() > deadline:
            notes.append(_out_of_time(node, context))
            break
        _check_node(node, context, dispatch, failed, internal_errors)
    context.node = None
    if too_deep:
        notes.append(_too_deep(too_deep[0], source))


def _check_node(node, context: Context, dispatch: dict[str, tuple[Rule, ...]], failed: set[str], internal_errors: list[str]) -> None:
    rules = dispatch.get(node.type)
    if rules:
        _apply(node, rules, context, failed, internal_errors)


def _apply(node: Node, rules: tuple[Rule, ...], context: Context, failed: set[str], internal_errors: list[str]) -> None:
    """Run the rules' checks on one node; a rule that raised is not run again."""
    context.node = node
    for rule in rules:
        if rule.code in failed:
            continue
        context.rule = rule
        try:
            rule.check(node, context)  # type: ignore[misc]
        except Exception:  # a rule bug must not lose the other findings
            failed.add(rule.code)
            internal_errors.append(f"internal error in {rule.code}: {traceback.format_exc(limit=-3).strip()}")


def _finish(
    source: SourceFile,
    tree: Tree,
    unsuppressed: list[Diagnostic],
    origins: dict[int, tuple[int, int]],
    settings: LintSettings,
    syntax_errors: int,
    internal_errors: list[str],
    notes: list[str],
    provisional: bool = False,
) -> LintResult:
    spans = array("q")
    for d in unsuppressed:
        spans.extend(origins.get(id(d), (-1, -1)))
    diagnostics, suppressed = _apply_suppressions(unsuppressed, tree, source, settings)
    diagnostics = sorted(diagnostics, key=lambda d: (d.start, d.end, d.code))  # a new list: `spans` follow `unsuppressed`
    return LintResult(source, tree, diagnostics, syntax_errors, internal_errors, suppressed, notes, unsuppressed, spans, provisional)


# Where an edit's effects are confined enough to re-check only there: one attribute, one inherit.
_UNIT_TYPES = frozenset({"binding", "inherit", "inherit_from"})


def relint(previous: LintResult, source: SourceFile, tree: Tree, start: int, old_end: int, new_end: int, settings: LintSettings) -> LintResult | None:
    """The editor's fast path after one edit of `previous`'s text (bytes `start:old_end` became
    `start:new_end` of `source`): the rules re-check only the smallest attribute or inherit that
    holds the edit, and the previous findings elsewhere are kept, shifted (those of the checks of
    enclosing nodes too, such as a builder call's). Exact unless a finding outside that attribute
    depends on what changed (a formal's uses, a file-wide switch, the call around it), or the edit
    made a duplicate attribute: the result is `provisional`, and a full `lint` follows it.
    Whitespace typed between tokens outside any attribute changes no finding: nothing is re-run.
    None when the fast path does not apply (syntax errors, no enclosing attribute)."""
    if previous.tree is None or previous.syntax_errors or previous.internal_errors:
        return None
    if tree.root_node.has_error and not previous.tree.root_node.has_error:
        return None  # (error nodes that were there before are the tolerated trailing-comma gap)
    node = tree.root_node.descendant_for_byte_range(start, max(start, new_end))
    while node is not None and node.type not in _UNIT_TYPES:
        node = node.parent
    if node is not None and node.has_error:
        return None
    delta = new_end - old_end
    if node is not None:
        old_unit = (node.start_byte, node.end_byte - delta)
    elif _between_tokens(previous, source, tree, start, old_end, new_end):
        old_unit = (start, old_end)
    else:
        return None

    def shifted(offset: int) -> int:
        return offset + delta if offset >= old_end else offset

    unit_start, unit_end = old_unit
    unsuppressed, spans, extents = previous.unsuppressed, previous.origin_spans, previous.extents()

    def touches_unit(d: Diagnostic, index: int) -> bool:
        """Whether the finding or an edit of its fixes overlaps the unit."""
        low, high = extents[2 * index], extents[2 * index + 1]
        if high <= unit_start or low >= unit_end:
            return False  # (most findings: the test below asks every edit)
        return not (d.end <= unit_start or d.start >= unit_end) or any(not (e.end <= unit_start or e.start >= unit_end) for f in d.fixes for e in f.edits)

    # Checks of other nodes (a builder call around the unit, a `let` binding whose uses are in
    # it) that reported into the unit are run again at those nodes; their old findings go.
    rerun = set()
    for index, d in enumerate(unsuppressed):
        origin_start, origin_end = spans[2 * index], spans[2 * index + 1]
        if origin_start >= 0 and not (unit_start <= origin_start and origin_end <= unit_end) and touches_unit(d, index):
            rerun.add((origin_start, origin_end))
    kept: list[Diagnostic] = []
    origins: dict[int, tuple[int, int]] = {}
    known_extents: dict[int, tuple[int, int]] = {}
    for index, d in enumerate(unsuppressed):
        origin_start, origin_end = spans[2 * index], spans[2 * index + 1]
        origin = (origin_start, origin_end)
        if origin_start < 0 or origin in rerun or (unit_start <= origin_start and origin_end <= unit_end) or not (d.end <= unit_start or d.start >= unit_end):
            continue  # syntax findings, findings in the unit and those of its checks are found again
        low, high = extents[2 * index], extents[2 * index + 1]
        fixes = d.fixes
        if touches_unit(d, index):
            # A fix that edits the unit was computed from its old text: dropped, the full lint has it.
            fixes = tuple(f for f in d.fixes if all(e.end <= unit_start or e.start >= unit_end for e in f.edits))
        if fixes == d.fixes and origin_end <= start and high <= start:
            kept.append(d)  # wholly before the edit: nothing moves
            origins[id(d)] = origin
            known_extents[id(d)] = (low, high)
            continue
        moved = Diagnostic(
            d.code,
            d.message,
            shifted(d.start),
            shifted(d.end),
            d.severity,
            tuple(Fix(f.title, f.applicability, tuple(Edit(shifted(e.start), shifted(e.end), e.content) for e in f.edits), f.isolation) for f in fixes),
            d.context,
        )
        kept.append(moved)
        origins[id(moved)] = (shifted(origin_start), shifted(origin_end))
        known_extents[id(moved)] = (shifted(low), shifted(high)) if fixes == d.fixes else _extent(moved)
    context = Context(source, tree, Semantic(tree, source), settings)
    notes: list[str] = []
    internal_errors: list[str] = []
    if node is not None:
        dispatch = _dispatch(settings.enabled)
        _run_rules(node, context, dispatch, notes, internal_errors)
        failed: set[str] = set()
        for span in sorted({(shifted(a), shifted(b)) for a, b in rerun}):
            for origin_node in _nodes_spanning(tree, *span):
                _check_node(origin_node, context, dispatch, failed, internal_errors)
        context.node = None
    origins.update(context.origins)
    merged = _deduplicate(kept + context.diagnostics)
    result = _finish(source, tree, merged, origins, settings, 0, internal_errors, notes, provisional=True)
    result.known_extents = known_extents
    return result


def _nodes_spanning(tree: Tree, start: int, end: int) -> list:
    """The nodes whose span is exactly `start:end` (a node and a parent may share one)."""
    node = tree.root_node.descendant_for_byte_range(start, end)
    found = []
    while node is not None and node.start_byte == start and node.end_byte == end:
        found.append(node)
        node = node.parent
    return found


def _between_tokens(previous: LintResult, source: SourceFile, tree: Tree, start: int, old_end: int, new_end: int) -> bool:
    """Whether the edit only added or removed whitespace between tokens (not inside a string or
    comment, where it is text)."""
    if previous.source.data[start:old_end].strip() or source.data[start:new_end].strip():
        return False
    for offset in {start, max(start, new_end - 1)}:
        node = tree.root_node.descendant_for_byte_range(offset, offset)
        while node is not None:
            if node.type in {"comment", "string_expression", "indented_string_expression"}:
                return False
            node = node.parent
    return True


def _deduplicate(diagnostics: list[Diagnostic]) -> list[Diagnostic]:
    seen: set[tuple[str, int, int, str]] = set()
    unique = []
    for d in diagnostics:
        key = (d.code, d.start, d.end, d.message)
        if key not in seen:
            seen.add(key)
            unique.append(d)
    return unique


def _apply_suppressions(diagnostics: list[Diagnostic], tree: Tree, source: SourceFile, settings: LintSettings) -> tuple[list[Diagnostic], int]:
    suppressions = find_suppressions(tree.root_node, source)
    if not suppressions:
        return diagnostics, 0
    file_wide = [s for s in suppressions if s.kind == "ignore-file"]
    by_line: dict[int, list[Suppression]] = {}
    for s in suppressions:
        if s.kind == "ignore":
            by_line.setdefault(s.target_line, []).append(s)
    kept: list[Diagnostic] = []
    suppressed = 0
    for d in diagnostics:
        first, last = source.line_of(d.start), source.line_of(max(d.start, d.end - 1))
        candidates = list(file_wide)
        for line in range(first, min(last, first + 200) + 1):
            candidates.extend(by_line.get(line, ()))
        hit = next((s for s in candidates if d.code in s.codes), None)
        if hit is None:
            kept.append(d)
        else:
            hit.used.add(d.code)
            suppressed += 1
    if settings.is_enabled(UNUSED_SUPPRESSION):
        kept.extend(_unused_suppression_diagnostics(suppressions, source, settings))
    return kept, suppressed


def _unused_suppression_diagnostics(suppressions: list[Suppression], source: SourceFile, settings: LintSettings) -> list[Diagnostic]:
    codes = known_codes()
    result = []
    for s in suppressions:
        unknown = [c for c in s.codes if not is_valid_code(c) or c not in codes]
        unused = [c for c in s.codes if c in codes and c not in s.used and settings.is_enabled(c)]
        if not s.codes:
            problem = "names no rule code: write `cudalint: ignore[CUDAxxx]`"
        elif unknown:
            problem = f"names unknown code{'s' if len(unknown) > 1 else ''} {', '.join(unknown)}"
        elif unused:
            problem = f"matched no finding of {', '.join(unused)}"
        else:
            continue
        stale = set(unknown) | set(unused)
        remaining = [c for c in s.codes if c not in stale]
        result.append(
            Diagnostic(
                UNUSED_SUPPRESSION,
                f"suppression comment {problem}; remove it" + (" or the stale codes" if remaining else ""),
                s.start,
                s.end,
                Severity.WARNING,
                (_removal_fix(s, remaining, source),),
            )
        )
    return result


def _removal_fix(s: Suppression, remaining: list[str], source: SourceFile) -> Fix:
    if remaining and s.raw_codes is not None:
        directive = source.data[s.start : s.end].decode("utf-8", "replace")
        rewritten = directive.replace(f"[{s.raw_codes}]", f"[{', '.join(remaining)}]", 1)
        return Fix("Remove the unused codes from the suppression", Applicability.SAFE, (Edit(s.start, s.end, rewritten),))
    line = source.line_of(s.start)
    line_start, line_end = source.line_start(line), source.line_end(line)
    before = source.data[line_start : s.start]
    after = source.data[s.end : line_end]
    if not before.strip() and not after.strip():
        # the directive is the whole line: delete the line with its newline
        end = source.line_start(line + 1) if line + 1 < source.line_count else line_end
        start = line_start if end != line_end or line == 0 else source.line_end(line - 1)
        return Fix("Remove the unused suppression comment", Applicability.SAFE, (Edit(start, end, ""),))
    start = s.start
    while start > line_start and source.data[start - 1 : start] in (b" ", b"\t"):
        start -= 1
    end = s.end if after.strip() else line_end
    return Fix("Remove the unused suppression comment", Applicability.SAFE, (Edit(start, end, ""),))
