"""The architecture of docs/architecture.md, checked: no import cycle, no layer imports a layer above it, the
domain never reaches the service (each of these counting the imports made only for the type checker, under
``if TYPE_CHECKING:``, and those inside functions), and the adapters (cli, lsp, mcp) go through the service at run
time (they may name the domain's result types for the type checker)."""

from __future__ import annotations

import pytest

from architecture.imports import Edge, cycles, edges, modules

#: Lowest first. A module may import modules of its own layer and of the layers below it, never above.
LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    (
        "base",
        (
            "botbin",
            "botbin.errors",
            "botbin.config",
            "botbin.config_rules",
            "botbin.config_model",
            "botbin.config_experimental",
        ),
    ),
    ("contract", ("botbin.wire.model", "botbin.wire.requests")),
    (
        "leaves",
        (
            "botbin.parsing",
            "botbin.chunking",
            "botbin.directives",
            "botbin.aifbin",
            "botbin.crypto",
            "botbin.embedding",
        ),
    ),
    ("stores", ("botbin.index", "botbin.sync", "botbin.notes_io")),
    ("workspace", ("botbin.workspace",)),
    ("memory", ("botbin.memory",)),
    ("search", ("botbin.search",)),
    ("agent", ("botbin.agent",)),
    ("service", ("botbin.service", "botbin.facade")),
    (
        "adapters",
        (
            "botbin.cli",
            "botbin.lsp",
            "botbin.mcp",
            "botbin.mcp_stdio",
            "botbin.studio",
            "botbin.wire",
            "botbin.__main__",
        ),
    ),
    ("tools", ("botbin.generate",)),
)
#: What an adapter may import at run time besides its own package: the composition root, the errors, the
#: version, another adapter (``botbin mcp`` starts the MCP server, ``botbin studio`` Recall Studio), the wire contract
#: the adapters answer with, the turn reader of ``botbin ingest``, and the settings model (its keys, bounds and
#: descriptions make the CLI's help and the editors' ``ServerSettings``; a workspace's settings still come from the
#: service).
ADAPTER_MAY_IMPORT = (
    "botbin.service",
    "botbin.facade",
    "botbin.config",
    "botbin.errors",
    "botbin.cli",
    "botbin.lsp",
    "botbin.mcp",
    "botbin.mcp_stdio",
    "botbin.studio",
    "botbin.wire",
    "botbin.memory.conversation.turns",
)


def _within(name: str, prefix: str) -> bool:
    return name == prefix or name.startswith(prefix + ".")


def layer_of(name: str) -> int:
    """Index in LAYERS of module ``name`` (the longest matching prefix wins)."""
    best = (-1, -1)
    for number, (_, prefixes) in enumerate(LAYERS):
        for prefix in prefixes:
            if _within(name, prefix) and len(prefix) > best[1]:
                best = (number, len(prefix))
    if best[0] < 0:
        raise AssertionError(f"{name} is in no layer: add it to LAYERS and to docs/architecture.md")
    return best[0]


@pytest.fixture(scope="module")
def graph() -> list[Edge]:
    return edges()


def test_every_module_has_a_layer() -> None:
    for name in modules():
        layer_of(name)


def test_no_import_cycle(graph: list[Edge]) -> None:
    adjacency: dict[str, set[str]] = {}
    for edge in graph:
        adjacency.setdefault(edge.source, set()).add(edge.target)
    assert cycles(adjacency) == []


def test_the_graph_holds_type_checking_and_function_level_imports(graph: list[Edge]) -> None:
    """The checks see what hides behind ``TYPE_CHECKING`` and inside functions (issue 35: two cycles did)."""
    assert any(e.typing_only and (e.source, e.target) == ("botbin.search.pipeline", "botbin.workspace") for e in graph)
    assert any(not e.typing_only and (e.source, e.target) == ("botbin.service", "botbin.sync.watch") for e in graph)
    assert cycles({"a": {"b"}, "b": {"a"}}) == [["a", "b"]]


def test_no_layer_imports_a_layer_above_it(graph: list[Edge]) -> None:
    upward = [
        f"{e.source}:{e.line} imports {e.target} ({LAYERS[layer_of(e.source)][0]} -> {LAYERS[layer_of(e.target)][0]})"
        for e in graph
        if layer_of(e.target) > layer_of(e.source)
    ]
    assert upward == []


def test_the_domain_never_imports_the_service(graph: list[Edge]) -> None:
    service = layer_of("botbin.service")
    assert [e for e in graph if e.target == "botbin.service" and layer_of(e.source) < service] == []


def test_adapters_go_through_the_service(graph: list[Edge]) -> None:
    adapters = layer_of("botbin.cli")
    around = [
        f"{e.source}:{e.line} imports {e.target}"
        for e in graph
        if layer_of(e.source) == adapters
        and not e.typing_only
        and e.target != "botbin"
        and not any(_within(e.target, allowed) for allowed in ADAPTER_MAY_IMPORT)
    ]
    assert around == []


def test_a_layer_violation_is_caught() -> None:
    """The check itself: an edge from the index up to the service is reported."""
    edge = Edge("botbin.index.store", "botbin.service", 1)
    assert layer_of(edge.target) > layer_of(edge.source)
