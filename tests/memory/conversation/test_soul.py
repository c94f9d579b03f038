"""soul.py: slugs, reading blocks back, appends that keep the old bytes."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from botbin.errors import BotbinError
from botbin.memory.conversation.soul import append_blocks, last_turn, parse_soul, read_soul, soul_rel, user_slug

BLOCK = "## [Turns 1-2] session 1\n\n- Ana: I moved.\n- user (rule, verbatim): Never call.\n  Really.\n"


def test_slugs() -> None:
    assert user_slug("Caroline K.") == "caroline-k"
    assert user_slug("José") == "jose"
    assert user_slug("../../etc/passwd") == "etc-passwd"
    assert user_slug("日本") == "user"
    assert len(user_slug("x" * 500)) == 64
    assert soul_rel("memory/soul/", "Ana") == "memory/soul/ana.md"


def test_append_creates_then_keeps_old_bytes(tmp_path: Path) -> None:
    rel = "memory/soul/ana.md"
    assert read_soul(tmp_path, rel) is None
    assert append_blocks(tmp_path, rel, "Ana", BLOCK) == 4
    first = (tmp_path / rel).read_bytes()
    assert first.startswith(b"# Soul file: Ana\n") and first.endswith(BLOCK.encode())
    assert stat.S_IMODE((tmp_path / rel).stat().st_mode) == 0o600
    # a person's edit without a final newline, CRLF included, stays byte for byte
    edited = first + b"My own note\r\nno newline"
    (tmp_path / rel).write_bytes(edited)
    os.chmod(tmp_path / rel, 0o644)
    inode = (tmp_path / rel).stat().st_ino
    assert append_blocks(tmp_path, rel, "Ana", BLOCK.replace("1-2", "3-4")) == 12
    assert (tmp_path / rel).stat().st_ino == inode  # appended in place: the old bytes are never rewritten
    data = (tmp_path / rel).read_bytes()
    assert data.startswith(edited + b"\n\n## [Turns 3-4]")
    assert stat.S_IMODE((tmp_path / rel).stat().st_mode) == 0o644
    blocks = parse_soul(read_soul(tmp_path, rel) or "")
    assert [(b.first_turn, b.last_turn) for b in blocks] == [(1, 2), (3, 4)]
    assert blocks[0].bullets == ("- Ana: I moved.", "- user (rule, verbatim): Never call.\n  Really.")
    assert last_turn(blocks) == 4 and last_turn([]) == 0


def test_an_empty_file_gets_the_title_and_keeps_its_mode(tmp_path: Path) -> None:
    path = tmp_path / "memory" / "soul" / "ana.md"
    path.parent.mkdir(parents=True)
    path.write_bytes(b"")
    os.chmod(path, 0o640)
    assert append_blocks(tmp_path, "memory/soul/ana.md", "Ana", BLOCK) == 4
    assert path.read_bytes().startswith(b"# Soul file: Ana\n") and path.read_bytes().endswith(BLOCK.encode())
    assert stat.S_IMODE(path.stat().st_mode) == 0o640


def test_a_failed_append_leaves_the_old_bytes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    rel = "memory/soul/ana.md"
    append_blocks(tmp_path, rel, "Ana", BLOCK)
    before = (tmp_path / rel).read_bytes()
    real_write = os.write

    def short_then_full_disk(fd: int, data: bytes | memoryview) -> int:
        monkeypatch.setattr(os, "write", full_disk)
        return real_write(fd, bytes(data[:15]))  # a partial write, then the disk is full

    def full_disk(fd: int, data: bytes | memoryview) -> int:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "write", short_then_full_disk)
    with pytest.raises(BotbinError, match="No space left"):
        append_blocks(tmp_path, rel, "Ana", BLOCK.replace("1-2", "3-4"))
    assert (tmp_path / rel).read_bytes() == before


def test_parse_ignores_a_persons_own_sections() -> None:
    text = "# Soul\n\n## [Turns 5-9] x\n\n- a: b\n\n## My notes\n\n- not a fact\n\n## [Turns 10-10]\n- c: d\n"
    blocks = parse_soul(text)
    assert [(b.first_turn, b.last_turn, b.bullets) for b in blocks] == [(5, 9, ("- a: b",)), (10, 10, ("- c: d",))]


def test_refuses_links_outside_and_read_only_files(tmp_path: Path) -> None:
    root, outside = tmp_path / "ws", tmp_path / "outside.md"
    (root / "memory" / "soul").mkdir(parents=True)
    outside.write_text("# theirs\n")
    (root / "memory" / "soul" / "ana.md").symlink_to(outside)
    with pytest.raises(BotbinError, match="links outside"):
        append_blocks(root, "memory/soul/ana.md", "Ana", BLOCK)
    with pytest.raises(BotbinError):
        read_soul(root, "memory/soul/ana.md")
    assert outside.read_text() == "# theirs\n"
    (root / "memory" / "soul" / "bob.md").write_text("# Bob\n")
    os.chmod(root / "memory" / "soul" / "bob.md", 0o444)
    with pytest.raises(BotbinError, match="read-only"):
        append_blocks(root, "memory/soul/bob.md", "Bob", BLOCK)
