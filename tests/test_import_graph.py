"""No import cycles between the project's modules (issue 15): imports inside functions count, only
those under `if TYPE_CHECKING:` do not. A cycle means two modules cannot be understood, tested or
moved apart; break it by moving the shared piece to a leaf module or handing over a protocol."""

from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
# The package-dir mapping of pyproject.toml: rules/ and server/ are installed inside `cudalint`.
ROOTS = {"cudalint": REPO / "cudalint", "cudalint.rules": REPO / "rules", "cudalint.server": REPO / "server"}


def project_modules() -> dict[str, Path]:
    modules = {}
    for package, root in ROOTS.items():
        for path in root.rglob("*.py"):
            parts = path.relative_to(root).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            modules[".".join((package, *parts))] = path
    return modules


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def imported_names(tree: ast.AST, module: str, is_package: bool) -> set[str]:
    """Every dotted module name an import statement anywhere in `tree` may load (outside TYPE_CHECKING)."""
    found: set[str] = set()

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = module.split(".") if is_package else module.split(".")[:-1]
                base = base[: len(base) - (node.level - 1)]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module or ""
            found.add(source)
            found.update(f"{source}.{alias.name}" for alias in node.names)  # `from package import module`
        for inner in ast.iter_child_nodes(node):
            visit(inner)

    visit(tree)
    return found


def import_graph() -> dict[str, set[str]]:
    modules = project_modules()
    graph = {}
    for name, path in modules.items():
        names = imported_names(ast.parse(path.read_text(encoding="utf-8")), name, path.name == "__init__.py")
        graph[name] = {n for n in names if n in modules and n != name}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def connect(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph[node]):
            if target not in index:
                connect(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            connect(node)
    return found


def test_the_graph_sees_the_project() -> None:
    graph = import_graph()
    assert "cudalint.lint.engine" in graph and "cudalint.server.app" in graph and "cudalint.rules._driver" in graph
    assert "cudalint.nix.semantic" in graph["cudalint.lint.engine"] or any("cudalint.nix" in target for target in graph["cudalint.lint.engine"])
    # a relative import resolves, and an import inside a function counts
    assert "cudalint.server.diagnostics" in graph["cudalint.server.code_actions"]
    assert "cudalint.frontend.ruledocs" in graph["cudalint.frontend.cli"]


def test_cycle_finder_finds_a_cycle_through_a_function_body() -> None:
    tree = ast.parse("import a.b\ndef f():\n    from a import c\nif TYPE_CHECKING:\n    import a.d\n")
    assert imported_names(tree, "a.x", False) == {"a.b", "a", "a.c"}
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_no_import_cycles() -> None:
    found = cycles(import_graph())
    assert not found, "import cycles between project modules:\n" + "\n".join(" <-> ".join(c) for c in found)
