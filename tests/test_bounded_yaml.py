"""Issue 36, failure 4: YAML alias bombs in frontmatter are refused before they expand, in bounded time and memory;
frontmatter within the bounds (anchors, merge keys, a self-referencing alias) loads as before."""

from __future__ import annotations

import time
import tracemalloc

import msgpack
import pytest

from botbin.parsing.bounded_yaml import MAX_CHARS, MAX_NESTING, MAX_NODES, MAX_YAML_CHARS, YamlBoundsError, bounded_load
from botbin.parsing.frontmatter import parse_frontmatter
from test_sync_hostile_input import laughs

BOMBS = {
    "billion laughs, 339 bytes, 43 million strings": laughs(7),
    "billion laughs, 374 bytes, 387 million strings": laughs(8),
    "self-reference twice, 14 bytes, 2**33 lists": "a: &x [*x, *x]\n",
    "a merge key merging its own mapping": "a: &a {<<: *a, x: 1}\n",
    "merge chain": "m0: &m0 {k0: 0}\n" + "".join(f"m{i}: &m{i} {{<<: *m{i - 1}, k{i}: {i}}}\n" for i in range(1, 600)),
    "one long string repeated": "s: &s " + "x" * 50_000 + "\nl: [" + ", ".join(["*s"] * 30) + "]\n",
    "nesting": "a: " + "[" * 5000 + "]" * 5000 + "\n",
    "too much text": "t: " + "y" * (MAX_YAML_CHARS + 1) + "\n",
}


@pytest.mark.parametrize("text", BOMBS.values(), ids=BOMBS.keys())
def test_a_bomb_is_refused_fast_and_small(text: str) -> None:
    tracemalloc.start()
    started = time.perf_counter()
    try:
        fm = parse_frontmatter("title: kept?\n" + text, "memory/bomb.md", first_line=0)
        elapsed = time.perf_counter() - started
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert fm.data == {} and fm.title is None
    assert len(fm.warnings) == 1
    assert fm.warnings[0].startswith("memory/bomb.md:1: YAML frontmatter not loaded (")
    assert fm.warnings[0].endswith("); metadata ignored, body indexed")
    # Before the bound, the 374-byte bomb ran out of memory after two minutes; the 14-byte one never ended.
    assert elapsed < 5 and peak < 64 * 2**20, (elapsed, peak)


def test_the_reasons_name_the_bound() -> None:
    with pytest.raises(YamlBoundsError, match=f"over {MAX_NODES:,} values once its aliases are expanded"):
        bounded_load(laughs(7))
    with pytest.raises(YamlBoundsError, match=f"over {MAX_CHARS:,} characters once its aliases are expanded"):
        bounded_load(BOMBS["one long string repeated"])
    with pytest.raises(YamlBoundsError, match=f"nested over {MAX_NESTING} levels deep"):
        bounded_load(BOMBS["nesting"])
    with pytest.raises(YamlBoundsError, match=f"over {MAX_YAML_CHARS:,}"):
        bounded_load(BOMBS["too much text"])
    with pytest.raises(YamlBoundsError, match="merges the mapping it is in"):
        bounded_load(BOMBS["a merge key merging its own mapping"])


def test_anchors_and_merge_keys_within_the_bounds_still_load() -> None:
    text = "base: &base {owner: ana, tags: [x, y]}\nprod: {<<: *base, env: prod}\ncopies: [*base, *base]\n" + laughs(3)
    fm = parse_frontmatter(text, "n.md")
    assert fm.warnings == () and len(fm.data["d"]) == 9 and fm.data["d"][0][0][0] == ["lol"] * 9
    assert fm.data["prod"] == {"owner": "ana", "tags": ["x", "y"], "env": "prod"}
    assert fm.data["copies"] == [fm.data["base"], fm.data["base"]]


def test_just_under_the_node_bound_loads() -> None:
    width = 300  # 300 lists of 300: 90,000 strings plus the lists, under MAX_NODES
    text = "a: &a [" + ", ".join(["w"] * width) + "]\nb: [" + ", ".join(["*a"] * (width - 2)) + "]\n"
    data = bounded_load(text)
    assert len(data["b"]) == width - 2 and data["b"][0] == ["w"] * width


def test_a_self_referencing_alias_is_still_cut_off_not_refused() -> None:
    fm = parse_frontmatter("a: &x [*x]\nb: 1\n", "memory/a.md")
    assert fm.warnings == () and fm.data["b"] == 1
    assert msgpack.unpackb(msgpack.packb(fm.data)) == fm.data


def test_a_bomb_under_tags_is_refused_too() -> None:
    fm = parse_frontmatter(laughs(7) + "tags: *h\n", "memory/t.md")
    assert fm.tags == () and fm.data == {} and "not loaded" in fm.warnings[0]
