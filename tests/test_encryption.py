"""Encrypted AIF-BIN files (DESIGN section 4): AES-256-GCM chunk blocks, Argon2id keys.

Promises checked: a round trip keeps every chunk, embedding and the note's bytes; the file passes the
independent checker; no note text is left in the clear (chunk text, source, frontmatter, directives);
a wrong passphrase, a missing one or any changed byte gives a clear error naming the file, never a
document; every write draws a new file salt and nonce; the passphrase is stretched once per process.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import msgpack
import numpy as np
import pytest

from botbin import aifbin
from botbin.aifbin import AifBinDocument, ChunkRecord, decode, encode
from botbin.crypto import cipher as cipher_mod
from botbin.crypto.cipher import KdfParams, Keyring, StoreCipher, StoreKdf, parse_kdf
from botbin.errors import AifBinFormatError, DecryptionError
from conftest import CHECKER, skip_without_checker

FAST = KdfParams(time_cost=1, memory_cost=8192, parallelism=1)
SECRET_WORDS = ("zebracorn", "pancakes-with-durian", "launchcode-1234", "private-tag", "never-push-on-friday")


def _doc() -> AifBinDocument:
    rng = np.random.default_rng(7)
    vectors = rng.normal(size=(2, 8)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    source = b"---\ntags: [private-tag]\n---\n# Notes\n\nThe zebracorn eats pancakes-with-durian.\n\nlaunchcode-1234\n"
    meta: dict[str, Any] = {
        "source": "memory/secret.md",
        "source_md5": "0" * 32,
        "source_bytes": len(source),
        "source_lines": 9,
        "created_at": "2026-11-29T00:00:00Z",
        "synced_at": "2026-11-29T00:00:00Z",
        "model": {"name": "test", "dim": 8, "normalized": True, "max_tokens": 256},
        "chunker": {"target_tokens": 256},
        "frontmatter": {"tags": ["private-tag"]},
        "note": {"title": "Notes", "tags": ["private-tag"]},
        "tool": {"name": "botbin", "version": "0"},
        "instruction": False,
        "directives": [{"text": "never-push-on-friday"}],
        "source_text": source,
    }
    chunks = (
        ChunkRecord(0, "The zebracorn eats pancakes-with-durian.", 4, 6, ("Notes",), "lore", 9, "a" * 32, vectors[0]),
        ChunkRecord(
            1,
            "launchcode-1234",
            7,
            8,
            ("Notes",),
            "soft",
            5,
            "b" * 32,
            vectors[1],
            ({"modality": "must", "span": [0, 4]},),
        ),
    )
    return AifBinDocument(meta, chunks)


@pytest.fixture(scope="module")
def store() -> StoreCipher:
    kdf = StoreKdf.new(FAST)
    return StoreCipher(Keyring("correct horse", only=kdf), kdf)


@pytest.mark.parametrize("compress", [False, True])
def test_round_trip_keeps_everything(store: StoreCipher, compress: bool, tmp_path: Path) -> None:
    doc = _doc()
    blob = encode(doc, compress=compress, cipher=store)
    assert blob[5] == aifbin.FLAG_ENCRYPTED | (aifbin.FLAG_COMPRESSED if compress else 0)
    back = decode(blob, "x.aif-bin", store.keyring)
    assert back.encrypted
    assert back.source_text == doc.metadata["source_text"]
    for key, value in doc.metadata.items():
        assert back.metadata[key] == value, key
    for a, b in zip(doc.chunks, back.chunks, strict=True):
        assert (a.text, a.start_line, a.end_line, a.kind, a.directives) == (
            b.text,
            b.start_line,
            b.end_line,
            b.kind,
            b.directives,
        )
        np.testing.assert_array_equal(a.embedding, b.embedding)
    path = tmp_path / "x.aif-bin"
    path.write_bytes(blob)
    skip_without_checker()
    checked = subprocess.run([sys.executable, str(CHECKER), str(path)], capture_output=True, text=True)
    assert checked.returncode == 0, checked.stdout + checked.stderr


def test_no_note_text_in_the_clear(store: StoreCipher) -> None:
    blob = encode(_doc(), cipher=store)
    for word in SECRET_WORDS:
        assert word.encode() not in blob
    meta_len = aifbin.HEADER.unpack_from(blob)[4]
    public = msgpack.unpackb(blob[16 : 16 + meta_len], raw=False)
    assert set(public) <= aifbin.PUBLIC_KEYS | {"kdf", "nonce"}
    assert public["kdf"]["alg"] == "argon2id" and len(public["nonce"]) == 12


def test_each_write_has_its_own_file_salt_and_nonce(store: StoreCipher) -> None:
    blobs = [encode(_doc(), cipher=store) for _ in range(3)]
    metas = [decode_public(b) for b in blobs]
    assert len({m["nonce"] for m in metas}) == 3
    assert len({m["kdf"]["file_salt"] for m in metas}) == 3
    assert len({m["kdf"]["salt"] for m in metas}) == 1  # one store salt


def decode_public(blob: bytes) -> dict[str, Any]:
    _, _, meta = aifbin.decode_metadata(blob, "x")
    return meta


def test_wrong_or_missing_passphrase_is_a_clear_error(store: StoreCipher) -> None:
    blob = encode(_doc(), cipher=store)
    with pytest.raises(DecryptionError, match=r"x\.aif-bin: authentication failed: wrong passphrase"):
        decode(blob, "x.aif-bin", Keyring("wrong horse"))
    with pytest.raises(DecryptionError, match=r"x\.aif-bin: chunk block is encrypted and no passphrase"):
        decode(blob, "x.aif-bin")


def test_a_file_of_another_store_is_refused_without_a_derivation(store: StoreCipher) -> None:
    other = StoreKdf.new(FAST)
    blob = encode(_doc(), cipher=StoreCipher(Keyring("correct horse", only=other), other))
    with pytest.raises(DecryptionError, match="another store"):
        decode(blob, "x.aif-bin", store.keyring)


def test_every_flipped_byte_fails(store: StoreCipher) -> None:
    """Each byte of a whole file, flipped in turn: the reader refuses it (tag, header or metadata check)."""
    blob = encode(_doc(), compress=True, cipher=store)
    reader = Keyring("correct horse")  # no store pinning: a flipped salt really derives another key
    for pos in range(len(blob)):
        damaged = bytearray(blob)
        damaged[pos] ^= 0x01
        with pytest.raises(AifBinFormatError):
            decode(bytes(damaged), "x.aif-bin", reader)


def test_truncated_encrypted_file_fails(store: StoreCipher) -> None:
    blob = encode(_doc(), cipher=store)
    for cut in (len(blob) - 1, len(blob) - 16, len(blob) - 17, 17, 16):
        with pytest.raises(AifBinFormatError):
            decode(blob[:cut], "x.aif-bin", store.keyring)


def test_hostile_kdf_parameters_are_refused_before_deriving() -> None:
    meta = StoreKdf.new(FAST).to_metadata(b"\0" * 16)
    for key, value in (("memory_cost", 1 << 40), ("time_cost", 10_000), ("parallelism", 0), ("salt", b"short")):
        with pytest.raises(AifBinFormatError, match="kdf"):
            parse_kdf({**meta, key: value}, "x.aif-bin")


def test_passphrase_is_stretched_once_per_process(monkeypatch: pytest.MonkeyPatch, store: StoreCipher) -> None:
    calls: list[int] = []
    real = cipher_mod.hash_secret_raw

    def counting(*args: Any, **kwargs: Any) -> bytes:
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(cipher_mod, "hash_secret_raw", counting)
    monkeypatch.setattr(cipher_mod, "_DERIVED", {})
    kdf = StoreKdf.new(FAST)
    writer = StoreCipher(Keyring("pw", only=kdf), kdf)
    blobs = [encode(_doc(), cipher=writer) for _ in range(20)]
    for blob in blobs:
        decode(blob, "x", Keyring("pw", only=kdf))  # a new Keyring object: still no new derivation
    assert len(calls) == 1


def test_default_parameters_follow_rfc_9106() -> None:
    assert KdfParams() == KdfParams(time_cost=3, memory_cost=64 * 1024, parallelism=4)
    assert KdfParams().check() is None


@pytest.mark.parametrize(
    ("passphrase", "problem"),
    [
        ("x", "it has 1 characters; at least 8"),
        ("hunter2", "it has 7 characters"),
        ("aaaaaaaaaaaa", "it repeats 1 characters; at least 4 different"),
        ("12121212", "it repeats 2 characters"),
        ("        ", "it repeats 1 characters"),
        ("correct horse", None),
        ("otter-lantern-97", None),
        ("ñandú über", None),  # characters, not bytes
    ],
)
def test_the_passphrase_rule_of_a_new_store(passphrase: str, problem: str | None) -> None:
    found = cipher_mod.passphrase_problem(passphrase)
    assert found == problem if problem is None else found is not None and found.startswith(problem)
