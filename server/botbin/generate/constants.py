"""Constants of a Python module with their documentation, read from its source: the ``#:`` comment lines above an
assignment, or the string right after it (the two ways botbin documents a constant)."""

from __future__ import annotations

import ast
import inspect
from dataclasses import dataclass
from types import ModuleType


@dataclass(frozen=True)
class Constant:
    """One module-level constant."""

    name: str
    """Its name (upper case)."""
    value: object
    """Its value, as the imported module holds it."""
    doc: str
    """Its documentation, lines joined by newlines ("" when it has none)."""


def constants(module: ModuleType, names: tuple[str, ...] | None = None) -> list[Constant]:
    """The upper-case constants of ``module`` assigned at its top level, in source order (only ``names``, in that
    order, when given). Raises KeyError for a name the module does not assign."""
    source = inspect.getsource(module)
    lines = source.splitlines()
    body = ast.parse(source).body
    found: dict[str, Constant] = {}
    for index, node in enumerate(body):
        target = _target(node)
        if target is None or not target.isupper():
            continue
        after = body[index + 1] if index + 1 < len(body) else None
        doc = _string(after) or _comment_above(lines, node.lineno)
        found[target] = Constant(target, getattr(module, target), doc)
    if names is None:
        return list(found.values())
    return [found[name] for name in names]


def _target(node: ast.stmt) -> str | None:
    if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
        return node.targets[0].id
    if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None:
        return node.target.id
    return None


def _string(node: ast.stmt | None) -> str:
    if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
        return inspect.cleandoc(node.value.value)
    return ""


def _comment_above(lines: list[str], lineno: int) -> str:
    """The ``#:`` lines right above line ``lineno`` (1-based), without their markers."""
    above: list[str] = []
    for line in reversed(lines[: lineno - 1]):
        if not line.startswith("#:"):
            break
        above.append(line[2:].strip())
    return "\n".join(reversed(above))
