"""The memo sidecar following the store's encryption (memory/sealing.py): sealed archived texts, re-keyed ids,
tags dropped and restored, and the SQLite file rewritten so that no free page keeps a replaced text."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from botbin.memory.memos import MemoSeed, MemoStore, memo_id
from botbin.memory.sealing import PLAIN, MemoKeys, convert, is_sealed, open_text, seal_text

NOW = datetime(2026, 11, 29, 12, 0).astimezone()
KEYS = MemoKeys(b"i" * 32, b"t" * 32, "hmac:0123456789abcdef")
OTHER = MemoKeys(b"j" * 32, b"u" * 32, "hmac:fedcba9876543210")


def test_a_sealed_text_opens_with_its_key_only() -> None:
    sealed = seal_text(KEYS.text or b"", "The zebracorn codename is Bluefin.")
    assert is_sealed(sealed) and "Bluefin" not in sealed and sealed != seal_text(KEYS.text or b"", "x")
    assert open_text(KEYS.text or b"", sealed) == "The zebracorn codename is Bluefin."
    assert open_text(OTHER.text or b"", sealed) is None
    assert open_text(KEYS.text or b"", sealed[:-4] + "AAAA") is None  # a changed byte


def test_convert_there_and_back_keeps_ids_counts_texts_and_tags(tmp_path: Path) -> None:
    store = MemoStore(tmp_path / "memos.sqlite")
    plain_id = memo_id("memory/a.md", "a" * 32)
    store.seed([MemoSeed(plain_id, "memory/a.md", 2, 3, NOW, ("privatetag",)), MemoSeed("gone", "b.md", 0, 1, NOW, ())])
    store.reinforce([plain_id], NOW)
    store.archive({plain_id: "Ana's phone is 555-0199.", "gone": "A chunk no note holds any more."}, NOW)
    chunks = [("memory/a.md", "a" * 32, ("privatetag",))]  # the index: a.md's chunk; b.md's is gone
    convert(store, lambda: chunks, PLAIN, KEYS)
    sealed = {m.id: m for m in store.all()}
    keyed = memo_id("memory/a.md", "a" * 32, KEYS.ids)
    assert set(sealed) == {keyed, "gone"} and store.keyed_for() == KEYS.tag
    assert sealed[keyed].reinforcement_count == 1 and sealed[keyed].tags == ()
    assert all(is_sealed(m.archived_text) for m in sealed.values())
    store.close()
    raw = b"".join(p.read_bytes() for p in tmp_path.iterdir())
    assert b"555-0199" not in raw and b"privatetag" not in raw and b"no note holds" not in raw
    store = MemoStore(tmp_path / "memos.sqlite")
    convert(store, lambda: chunks, KEYS, PLAIN)
    back = {m.id: m for m in store.all()}
    assert back[plain_id].archived_text == "Ana's phone is 555-0199." and back[plain_id].tags == ("privatetag",)
    assert back["gone"].archived_text == "A chunk no note holds any more." and back[plain_id].reinforcement_count == 1


def test_a_sidecar_of_unknown_keys_keeps_what_it_cannot_open(tmp_path: Path) -> None:
    store = MemoStore(tmp_path / "memos.sqlite")
    store.seed([MemoSeed("m", "memory/a.md", 0, 1, NOW, ())])
    store.archive({"m": seal_text(OTHER.text or b"", "sealed elsewhere")}, NOW)
    convert(store, lambda: [], None, PLAIN)  # made with keys this process never had
    kept = store.all()[0]
    assert kept.id == "m" and open_text(OTHER.text or b"", kept.archived_text or "") == "sealed elsewhere"
    assert kept.tags == ()
