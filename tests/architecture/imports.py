"""The import graph of the ``botbin`` package, read from the source with ``ast`` (nothing is imported)."""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "server" / "botbin"


@dataclass(frozen=True)
class Edge:
    """``source`` imports ``target`` at ``line``: at run time (module or function level), or for the type checker
    only (under ``if TYPE_CHECKING:``, ``typing_only``)."""

    source: str
    target: str
    line: int
    typing_only: bool = False


def module_name(path: Path) -> str:
    parts = ["botbin", *path.relative_to(PACKAGE).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules() -> dict[str, Path]:
    return {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(tree: ast.AST) -> list[tuple[str, int, bool]]:
    """(module, line, typing_only) of every import: function-level ones and those under ``if TYPE_CHECKING:``
    (``typing_only``) included."""
    found: list[tuple[str, int, bool]] = []

    def visit(node: ast.AST, typing_only: bool) -> None:
        if isinstance(node, ast.If) and _is_type_checking(node):
            for child in node.body:
                visit(child, True)
            for child in node.orelse:
                visit(child, typing_only)
            return
        if isinstance(node, ast.Import):
            found.extend((alias.name, node.lineno, typing_only) for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append((node.module, node.lineno, typing_only))
            found.extend((f"{node.module}.{alias.name}", node.lineno, typing_only) for alias in node.names)
        for inner in ast.iter_child_nodes(node):
            visit(inner, typing_only)

    visit(tree, False)
    return found


def edges() -> list[Edge]:
    """Every import of one botbin module by another, ``TYPE_CHECKING`` ones included (``from a import b`` counts as
    a.b when b is a module, else as a)."""
    known = modules()
    out: list[Edge] = []
    for name, path in known.items():
        for target, line, typing_only in _imports(ast.parse(path.read_text(encoding="utf-8"))):
            if target in known and target != name:
                out.append(Edge(name, target, line, typing_only))
    return sorted(set(out), key=lambda e: (e.source, e.target, e.line))


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def strongconnect(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                strongconnect(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            strongconnect(v)
    return found
