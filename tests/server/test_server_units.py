"""The server's pieces without a client: incremental re-parse, the ignore-line edit, settings."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from lsprotocol import types

from cudalint.lint.engine import lint
from cudalint.lint.fixing import apply_edits
from cudalint.lint.settings import LintSettings
from cudalint.lint.suppression_edits import suppression_edit
from cudalint.nix.parsing import parse
from cudalint.nix.source import SourceFile
from cudalint.server.code_actions import changed_span
from cudalint.server.configuration import Settings, parse_editor_settings
from cudalint.server.documents import apply_changes

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "rules"
FIRE = sorted(FIXTURES.glob("*/fire_*.nix"))
BASE = '{ stdenv, cudatoolkit }:\n# ünï 𝔘\nstdenv.mkDerivation {\n  buildInputs = [ cudatoolkit ];\n  postInstall = "é";\n}\n'


def _change(source: SourceFile, start: int, end: int, text: str) -> types.TextDocumentContentChangePartial:
    (l1, c1), (l2, c2) = source.utf16_position(start), source.utf16_position(end)
    return types.TextDocumentContentChangePartial(range=types.Range(start=types.Position(line=l1, character=c1), end=types.Position(line=l2, character=c2)), text=text)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 400), st.integers(0, 6), st.sampled_from(["", "x", "é", "𝔘", "\n", "{", "''", "cudaPackages.", " ; "])), max_size=8))
def test_incremental_reparse_equals_a_fresh_parse(edits):
    source, tree = SourceFile("a.nix", BASE), parse(SourceFile("a.nix", BASE))
    for position, length, text in edits:
        characters = source.text
        start = min(position, len(characters))
        end = min(start + length, len(characters))
        byte_start, byte_end = len(characters[:start].encode()), len(characters[:end].encode())
        expected = characters[:start] + text + characters[end:]
        source, tree, _ = apply_changes(source, tree, [_change(source, byte_start, byte_end, text)])
        assert source.text == expected
        assert str(tree.root_node) == str(parse(SourceFile("a.nix", expected)).root_node)


@pytest.mark.parametrize("path", FIRE, ids=[f"{p.parent.name}/{p.name}" for p in FIRE])
def test_ignore_on_this_line_removes_exactly_that_finding(path):
    source = SourceFile(str(path), path.read_text())
    result = lint(source, LintSettings())
    for diagnostic in result.diagnostics:
        if diagnostic.code in ("CUDA900", "CUDA901"):
            continue
        edit = suppression_edit(source, result.tree, diagnostic)
        assert edit is not None, diagnostic
        after = lint(SourceFile(str(path), apply_edits(source.data, [edit]).decode()), LintSettings())
        line = source.line_of(diagnostic.start) + edit.content.count("\n")
        assert not any(d.code == diagnostic.code and after.source.line_of(d.start) == line for d in after.diagnostics)
        assert after.syntax_errors == result.syntax_errors
        assert "CUDA901" not in {d.code for d in after.diagnostics}


def test_changed_span_is_minimal_and_reproduces_the_text():
    source = SourceFile("a.nix", "aé𝔘 b c")
    for new in ["aé𝔘 X c", "aè𝔘 b c", "", "aé𝔘 b c!", "!aé𝔘 b c"]:
        edit = changed_span(source, new)
        assert apply_edits(source.data, [edit]).decode() == new
        assert edit.end - edit.start <= len(source.data)


def test_editor_settings_validate_each_key_and_keep_the_good_ones(tmp_path):
    parsed = parse_editor_settings({"ignore": ["CUDA001"], "extendSelect": ["CUDA9999"], "nixpkgs": "24.05", "colour": 1}, str(tmp_path))
    assert parsed.values == {"ignore": ("CUDA001",), "nixpkgs": "24.05"}
    assert len(parsed.problems) == 2 and any("CUDA9999" in p for p in parsed.problems) and any("colour" in p for p in parsed.problems)


def test_editor_settings_layer_over_the_config_file(tmp_path):
    (tmp_path / "cudalint.toml").write_text('select = ["CUDA0", "CUDA1"]\ncuda = ["12.4"]\n')
    path = str(tmp_path / "a.nix")
    file_only = Settings(str(tmp_path)).for_path(path).lint
    assert "CUDA001" in file_only.enabled and "CUDA301" not in file_only.enabled and file_only.cuda == ("12.4",)
    merged = Settings(str(tmp_path), parse_editor_settings({"ignore": ["CUDA001"], "cuda": ["12.8"], "timeBudget": 2.5}, str(tmp_path))).for_path(path).lint
    assert merged.enabled == file_only.enabled - {"CUDA001"} and merged.cuda == ("12.8",)
    assert merged.time_budget == 2.5  # every config-file key works from the editor


def test_a_broken_config_file_is_reported_and_the_editor_settings_still_apply(tmp_path):
    (tmp_path / "cudalint.toml").write_text("selekt = 1\n")
    settings = Settings(str(tmp_path), parse_editor_settings({"ignore": ["CUDA001"]}, str(tmp_path)))
    resolved = settings.for_path(str(tmp_path / "a.nix")).lint
    assert "CUDA001" not in resolved.enabled and "CUDA101" in resolved.enabled
    assert settings.config_errors and "selekt" in settings.config_errors[0]


@given(st.text(alphabet="ab\n", max_size=30), st.lists(st.tuples(st.integers(0, 40), st.integers(0, 40), st.text(alphabet="xyz", max_size=4)), min_size=1, max_size=5))
def test_regions_of_successive_edits_combine_into_one(text, edits):
    # Outside the combined region the text before and after all the edits is the same.
    from cudalint.server.documents import Region

    data = text.encode()
    original, combined = data, None
    for start, end, inserted in edits:
        start, end = sorted((min(start, len(data)), min(end, len(data))))
        data = data[:start] + inserted.encode() + data[end:]
        step = Region(start, end, start + len(inserted))
        combined = step if combined is None else combined.then(step)
    assert original[: combined.start] == data[: combined.start]
    assert original[combined.old_end :] == data[combined.new_end :]


def test_the_server_offers_everything_the_handlers_may_ask_of_it():
    """The handlers see the server through `ServerState` (server/state.py), so they do not import
    app.py; the server class must still provide each member, taking the parameters declared there."""
    import inspect

    from cudalint.server.app import CudalintServer, create_server
    from cudalint.server.state import ServerState

    server = create_server()
    members = [name for name in vars(ServerState) if not name.startswith("_")] + list(ServerState.__annotations__)
    assert {"documents", "lint_async", "document_settings", "client_capabilities"} <= set(members)
    for name in members:
        assert hasattr(server, name) or hasattr(CudalintServer, name), name
        declared = vars(ServerState).get(name)
        if inspect.isfunction(declared):
            declared_parameters = list(inspect.signature(declared).parameters)
            actual = list(inspect.signature(getattr(CudalintServer, name)).parameters)
            assert actual[: len(declared_parameters)] == declared_parameters, name  # pygls' own may take more


def test_a_target_from_the_editor_settings_is_named_as_such(tmp_path) -> None:
    """The hover's "Judged against ..." names where the target came from: the editor's setting,
    not the command line's --nixpkgs."""
    path = str(tmp_path / "a.nix")
    pin = Settings(str(tmp_path), parse_editor_settings({"nixpkgs": "24.05"}, str(tmp_path))).for_path(path).pin
    assert pin.nixpkgs == "24.05" and pin.source == "the editor's cudalint.nixpkgs setting"


def test_a_products_version_is_not_claimed_for_older_targets() -> None:
    """cuDNN and the other products are modelled from one nixpkgs snapshot: the hover says whose
    version it shows where the target is older."""
    from cudalint.server.hover import SNAPSHOT, package_markdown

    old = package_markdown("cudnn", LintSettings(nixpkgs="24.05"))
    new = package_markdown("cudnn", LintSettings(nixpkgs="25.11"))
    assert old is not None and new is not None
    assert f"(in {SNAPSHOT}; this target's is older)" in old and SNAPSHOT not in new


def test_the_document_store_parses_only_when_a_tree_is_asked_for(monkeypatch: pytest.MonkeyPatch) -> None:
    """Opening and editing a document parses nothing on the protocol thread (a 5 MB document
    took seconds per parse); the first lint parses once, and the edit after it re-parses from
    that tree, like a fresh parse of the text."""
    from cudalint.server import documents

    parses = []
    real_parse = documents.parse

    def counting(source, old_tree=None):
        parses.append(old_tree is not None)
        return real_parse(source, old_tree)

    monkeypatch.setattr(documents, "parse", counting)
    text = "{ stdenv, cudatoolkit }:\nstdenv.mkDerivation {\n  nativeBuildInputs = [ cudatoolkit ];\n}\n"
    store = documents.DocumentStore()
    opened = store.open("file:///a.nix", "/a.nix", 1, text)
    edited = store.change("file:///a.nix", 2, [_change(opened.source, 0, 0, "# a\n")])
    assert parses == [] and edited is not None
    assert edited.tree is not None and parses == [False]  # (the version before was never parsed)
    again = store.change("file:///a.nix", 3, [_change(edited.source, 0, 0, "# b\n")])
    assert again is not None and again.tree is not None and parses == [False, True]
    assert str(again.tree.root_node) == str(parse(again.source).root_node)
