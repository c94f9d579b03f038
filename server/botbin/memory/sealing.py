"""The memo sidecar in step with the store's encryption: in an encrypted store memo ids are keyed (HMAC), archived
texts sealed (AES-256-GCM) and tags not kept; decrypted, all of it is back in the clear. ``follow`` converts a
sidecar made under other keys, so that ``botbin encrypt`` leaves no note text in ``memos.sqlite`` and
``botbin decrypt`` gives back the archived texts, tags and every count (pure: the store does the writing).

Keys come from the store key (HKDF with fixed salts, as each AIF-BIN file's key does), so a sidecar needs no
key of its own. The sidecar records the tag of the keys its ids were made with (``MemoKeys.tag``), which
names them without revealing them: a process that finds another tag converts it first.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import logging
import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from botbin.crypto.cipher import NONCE_BYTES, open_sealed, seal
from botbin.errors import BotbinError
from botbin.memory.memos import Memo, MemoStore, memo_id

if TYPE_CHECKING:
    from botbin.index.entry import NoteEntry
    from botbin.sync.encryption import StoreKeys

#: () -> every indexed chunk as (note path, chunk text MD5, the note's tags): what maps memo ids across keys.
Chunks = Callable[[], Iterable[tuple[str, str, tuple[str, ...]]]]

ID_SALT = b"botbin-memo-ids!"
"""HKDF salt of the memo id key (16 bytes; unchanged since encrypted sidecars first keyed their ids)."""
TEXT_SALT = b"botbin-memo-text"
"""HKDF salt of the archived-text key (16 bytes)."""
SEALED_PREFIX = "sealed:v1:"
"""An archived text in an encrypted store: this, then base64 of the 12-byte nonce and the AES-GCM ciphertext."""
PLAIN_TAG = "plain"
log = logging.getLogger(__name__)
_AAD = b"botbin memo archived text"


@dataclass(frozen=True)
class MemoKeys:
    """The keys memo ids and archived texts are made with."""

    ids: bytes | None
    """HMAC-SHA256 key of memo ids; None in a plaintext store (SHA-256 ids)."""
    text: bytes | None
    """AES-256-GCM key of archived texts; None in a plaintext store (texts in the clear)."""
    tag: str
    """Names these keys without revealing them: "plain", or "hmac:" and 16 hex digits of an HMAC of a label."""


PLAIN = MemoKeys(None, None, PLAIN_TAG)


def memo_keys(keys: StoreKeys | None) -> MemoKeys:
    """The memo keys of a store with ``keys`` (None: a plaintext store)."""
    if keys is None:
        return PLAIN
    kdf = keys.marker.kdf
    ids = keys.keyring.file_key(kdf, ID_SALT, "memo ids")
    text = keys.keyring.file_key(kdf, TEXT_SALT, "memo texts")
    return MemoKeys(ids, text, "hmac:" + hmac.new(ids, b"botbin memo ids tag", hashlib.sha256).hexdigest()[:16])


def is_sealed(value: str | None) -> bool:
    """True for an archived text sealed by ``seal_text``."""
    return value is not None and value.startswith(SEALED_PREFIX)


def seal_text(key: bytes, text: str) -> str:
    """``text`` sealed with ``key`` (a fresh nonce each time)."""
    nonce = os.urandom(NONCE_BYTES)
    return SEALED_PREFIX + base64.b64encode(nonce + seal(key, nonce, text.encode("utf-8"), _AAD)).decode("ascii")


def open_text(key: bytes, value: str) -> str | None:
    """The text ``value`` seals, None when ``key`` does not open it (another store's key, or a changed byte)."""
    try:
        raw = base64.b64decode(value[len(SEALED_PREFIX) :], validate=True)
        return open_sealed(key, raw[:NONCE_BYTES], raw[NONCE_BYTES:], _AAD, "memo text").decode("utf-8")
    except (ValueError, BotbinError):
        return None


def _convert_text(value: str | None, old: MemoKeys | None, new: MemoKeys) -> str | None:
    """An archived text as ``new`` keeps it: opened with ``old``'s key, then sealed with ``new``'s (or plain)."""
    if value is None:
        return None
    if is_sealed(value):
        if old is None or old.text is None or (opened := open_text(old.text, value)) is None:
            return value  # sealed with keys this process lacks: kept as it is (the archive note leaves it out)
        value = opened
    return seal_text(new.text, value) if new.text is not None else value


def index_chunks(notes: Iterable[NoteEntry]) -> list[tuple[str, str, tuple[str, ...]]]:
    """Every chunk of the index's ``notes`` as ``Chunks`` gives them."""
    return [(n.path, c.text_md5, n.tags) for n in notes for c in n.chunks]


def follow(
    memos: Iterable[Memo], chunks: Iterable[tuple[str, str, tuple[str, ...]]], old: MemoKeys | None, new: MemoKeys
) -> list[tuple[str, str, str, str | None]]:
    """What converts memos made under ``old`` keys (None: keys this process does not have) to ``new`` ones,
    given the indexed ``chunks`` (see ``Chunks``): one (old id, new id, tags as JSON, archived text) per memo.
    A memo whose chunk is no longer indexed, or whose old keys are unknown, keeps its id (the next reconcile
    carries the counts of the live ones over by place); tags are dropped in an encrypted store and taken from
    the note otherwise."""
    ids: dict[str, tuple[str, tuple[str, ...]]] = {}  # old id -> (new id, the note's tags)
    if old is not None:
        for path, md5, tags in chunks:
            ids[memo_id(path, md5, old.ids)] = (memo_id(path, md5, new.ids), tags)
    changes = []
    for m in memos:
        new_id, tags = ids.get(m.id, (m.id, m.tags))
        kept = () if new.ids is not None else tags
        changes.append((m.id, new_id, json.dumps(list(kept)), _convert_text(m.archived_text, old, new)))
    return changes


class SidecarKeys:
    """Which keys a process's memo sidecar is made with, and every set of keys the process has had (what
    converts a sidecar made under them). Not thread-safe: the lifecycle's lock guards it."""

    def __init__(self) -> None:
        self.known: dict[str, MemoKeys] = {PLAIN_TAG: PLAIN}
        self.keyed: str | None = None
        """The tag the sidecar is known to carry (None: not read yet)."""

    def current(self, keys: StoreKeys | None) -> MemoKeys:
        """The memo keys of a store with ``keys``, remembered."""
        found = memo_keys(keys)
        self.known[found.tag] = found
        return found

    def follow(self, store: MemoStore, chunks: Chunks, target: MemoKeys) -> bool:
        """Convert ``store`` to ``target`` keys if it was made under others; True when it was. Raises
        StorageError."""
        if self.keyed == target.tag:
            return False
        have = store.keyed_for() or PLAIN_TAG  # a sidecar from before tags: plain ids, or none to match
        converted = have != target.tag
        if converted:
            convert(store, chunks, self.known.get(have), target)
        self.keyed = target.tag
        return converted


def convert(store: MemoStore, chunks: Chunks, old: MemoKeys | None, new: MemoKeys) -> None:
    """Re-key ``store`` from ``old`` keys (None: unknown) to ``new`` ones (``follow``) in one transaction; into
    an encrypted store, then rewrite the file so that no free page keeps a text in the clear, and remove a
    damaged store set aside earlier (it holds its texts in the clear). Raises StorageError."""
    memos = store.all()
    store.rekey(follow(memos, chunks() if memos else (), old, new), new.tag)
    if old is None and memos:
        log.warning(
            "%s: made with other keys than this store's (another passphrase, or a conversion another process "
            "began); archived memos keep their ids and sealed texts, the counts of live ones follow their chunks",
            store.path,
        )
    if new.text is not None:
        store.compact()
        aside = store.path.with_name(store.path.name + ".damaged")
        if aside.exists():
            aside.unlink()
            log.warning("%s: removed; a damaged memo store set aside earlier holds texts in the clear", aside)
