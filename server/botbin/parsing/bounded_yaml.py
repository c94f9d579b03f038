"""YAML loading with bounds, so that a few hundred bytes of frontmatter can never become gigabytes.

YAML aliases (``*a``) repeat what an anchor (``&a``) names without copying it: PyYAML's composer gives every
alias the same node, so composing stays linear in the text, but plain data (``frontmatter.to_plain``, then
MessagePack, then the index) copies each repetition. Nine lists of nine aliases to the list before are
43 million strings from 339 bytes ("billion laughs"), and ``&x [*x, *x]`` is 2^33 from 14. So the node graph
is measured first, as ``to_plain`` will expand it (cut off below ``MAX_DEPTH``, merge keys ``<<`` counted where
they land), and only a document within the bounds is constructed. The measure visits each (node, depth) pair
once and stops as soon as a bound is passed: its cost is bounded by the bounds, never by the expansion.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

MAX_YAML_CHARS = 256 * 1024
"""Most characters of YAML text parsed at all (PyYAML reads about 0.2 MB per second in pure Python)."""
MAX_NODES = 100_000
"""Most values (keys, scalars, lists and mappings) the data may hold once aliases are expanded."""
MAX_CHARS = 1_000_000
"""Most characters of scalar text the data may hold once aliases are expanded."""
MAX_DEPTH = 32
"""Nesting kept; deeper values become one "…" (``frontmatter.to_plain``), and are measured as that."""
MAX_NESTING = 100
"""Most nesting written in the text: PyYAML composes recursively, and a few kilobytes of ``[[[[`` would
otherwise take seconds to end in a RecursionError."""

_MERGE = "tag:yaml.org,2002:merge"


class YamlBoundsError(ValueError):
    """The YAML is over a bound; ``reason`` says which, in words for the user."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class _Measure:
    """The expanded size of one node graph: (values, characters) per (node, depth), memoized."""

    def __init__(self) -> None:
        self.sizes: dict[tuple[int, int], tuple[int, int]] = {}
        self.open: set[tuple[int, int]] = set()
        """States being measured: meeting one again is a merge key that merges its own mapping."""
        self.steps = 0
        """Children visited; each is a distinct place in the expanded data, so this too is bounded."""

    def size(self, node: Node, depth: int) -> tuple[int, int]:
        if depth > MAX_DEPTH:
            return 1, 1
        if isinstance(node, ScalarNode):
            return 1, len(str(node.value)) + 1
        key = (id(node), depth)
        known = self.sizes.get(key)
        if known is not None:
            return known
        if key in self.open:
            raise YamlBoundsError("a merge key (<<) merges the mapping it is in")
        self.open.add(key)
        nodes, chars = 1, 0
        for child, at in _children(node, depth):
            self.steps += 1
            n, c = self.size(child, at)
            nodes, chars = nodes + n - (at == depth), chars + c  # a merged mapping adds its pairs, not itself
            if nodes > MAX_NODES or self.steps > MAX_NODES:
                raise YamlBoundsError(f"over {MAX_NODES:,} values once its aliases are expanded")
            if chars > MAX_CHARS:
                raise YamlBoundsError(f"over {MAX_CHARS:,} characters once its aliases are expanded")
        self.open.discard(key)
        self.sizes[key] = nodes, chars
        return nodes, chars


def _children(node: Node, depth: int) -> Iterator[tuple[Node, int]]:
    """The children of ``node`` with the depth at which ``to_plain`` meets them: one deeper, except the
    mappings a merge key (``<<: *a`` or ``<<: [*a, *b]``) brings in, whose pairs land beside the others."""
    if isinstance(node, SequenceNode):
        for item in node.value:
            yield item, depth + 1
    elif isinstance(node, MappingNode):
        for key, value in node.value:
            if key.tag == _MERGE:
                for merged in value.value if isinstance(value, SequenceNode) else [value]:
                    yield merged, depth
            else:
                yield key, depth + 1
                yield value, depth + 1


class _Nesting:
    """Composes no deeper than MAX_NESTING (a mixin before a PyYAML loader)."""

    _nesting = 0

    def compose_node(self, parent: Node | None, index: object) -> Node | None:
        self._nesting += 1
        try:
            if self._nesting > MAX_NESTING:
                raise YamlBoundsError(f"nested over {MAX_NESTING} levels deep")
            node: Node | None = super().compose_node(parent, index)  # type: ignore[misc]
            return node
        finally:
            self._nesting -= 1


class SafeLoader(_Nesting, yaml.SafeLoader):
    """PyYAML's safe loader (YAML 1.1 types), nesting bounded."""


class BaseLoader(_Nesting, yaml.BaseLoader):
    """PyYAML's base loader (every scalar its text), nesting bounded."""


def bounded_load(text: str, loader: type[SafeLoader] | type[BaseLoader] = SafeLoader) -> Any:
    """``text`` loaded as YAML by ``loader``, after checking that its data stays within the bounds above.

    Raises YamlBoundsError for text over MAX_YAML_CHARS (before parsing) or data over MAX_NODES or MAX_CHARS once
    expanded (before constructing it); any PyYAML error for malformed YAML, RecursionError for absurd nesting.
    """
    if len(text) > MAX_YAML_CHARS:
        raise YamlBoundsError(f"{len(text):,} characters of YAML, over {MAX_YAML_CHARS:,}")
    reader = loader(text)
    try:
        node = reader.get_single_node()
        if node is None:
            return None
        _Measure().size(node, 0)
        return reader.construct_document(node)
    finally:
        reader.dispose()
