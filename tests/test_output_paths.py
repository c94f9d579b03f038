"""Tests for botbin.sync.output_paths: every note its own output path, none of them a folder another needs, and
every path without a folder named like an output exactly as it always was."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from botbin.sync.output_paths import mirrored, note_of, output_moved, unescaped_output_rel

#: Folder and file names close to the edge: outputs' suffix, the escape's own suffix, other cases.
_PART = st.sampled_from(["a", "x.aif-bin", "x.aif-bin.d", "x.aif-bin.d.d", "X.AIF-BIN", "x.AIF-bin.D", "x", "x.d"])
_NOTE = st.builds(
    lambda folders, name: "/".join([*folders, f"{name}.md"]),
    st.lists(_PART, max_size=3),
    st.sampled_from(["a", "x", "x.aif-bin", "X"]),
)


def test_plain_paths_are_unchanged() -> None:
    assert mirrored("memory/2026-11-03.md") == "memory/2026-11-03.aif-bin"
    assert mirrored("MEMORY.md") == "MEMORY.aif-bin"
    assert mirrored("notes/x.aif-bin.md") == "notes/x.aif-bin.aif-bin"  # a note's own name is never escaped


def test_folders_named_like_outputs_are_escaped() -> None:
    assert mirrored("memory/x.aif-bin/y.md") == "memory/x.aif-bin.d/y.aif-bin"
    assert mirrored("memory/x.aif-bin.d/y.md") == "memory/x.aif-bin.d.d/y.aif-bin"
    assert mirrored("X.AIF-BIN/y.md") == "X.AIF-BIN.d/y.aif-bin"
    assert mirrored("x.d/y.md") == "x.d/y.aif-bin"


@given(st.sets(_NOTE, min_size=1, max_size=12))
def test_no_two_notes_collide_and_no_output_is_a_folder_another_needs(notes: set[str]) -> None:
    outputs = {mirrored(n) for n in notes}
    assert len(outputs) == len(notes)
    folded = {o.casefold() for o in outputs}  # on a case-insensitive disk too
    assert len(folded) == len({n.casefold() for n in notes})
    folders = {"/".join(o.split("/")[:i]).casefold() for o in outputs for i in range(1, o.count("/") + 1)}
    assert not folded & folders


@given(_NOTE)
def test_note_of_inverts_mirrored(note: str) -> None:
    assert note_of(mirrored(note)) == note


def test_only_an_unescaped_output_has_moved() -> None:
    assert output_moved("memory/x.aif-bin/y.md", unescaped_output_rel("memory/x.aif-bin/y.md", "memory/aifbin"))
    assert not output_moved("memory/x.aif-bin/y.md", "memory/aifbin/memory/x.aif-bin.d/y.aif-bin")
    assert not output_moved("memory/y.md", "memory/aifbin/memory/y.aif-bin")
