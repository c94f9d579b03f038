"""AES-256-GCM sealing of AIF-BIN chunk blocks, with keys derived from a passphrase (pure: no file I/O).

Key hierarchy (one slow derivation per store and process, a cheap one per file):

- **store key** = Argon2id(passphrase, store salt, time_cost, memory_cost, parallelism) -> 32 bytes
  (``argon2-cffi``, RFC 9106). The store salt (16 random bytes) and the parameters are chosen once per
  store, kept in its ``encryption.json`` and repeated in each file's ``kdf`` metadata, so every file is
  self-describing. A :class:`Keyring` caches the store key: the passphrase is stretched once per process,
  not once per file (~0.11 s with the defaults on 2 CPU cores).
- **file key** = HKDF-SHA256(store key, salt = a random 16-byte ``file_salt`` per file, info =
  ``b"botbin aif-bin v2 chunk block"``) (RFC 5869), so no two files share a key, and each write also
  draws a fresh 12-byte GCM nonce.

The AES-256-GCM associated data is the 16-byte header plus the packed metadata (which holds ``kdf`` and
``nonce``), so a change to any byte of the file fails authentication.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import threading
from dataclasses import dataclass
from typing import Any

from argon2.low_level import Type, hash_secret_raw
from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

from botbin.config import DEFAULTS, KDF_MAX_MEMORY_KIB, KDF_MAX_PARALLELISM, KDF_MAX_TIME_COST
from botbin.errors import AifBinFormatError, DecryptionError

KEY_BYTES = 32
"""AES-256 key size."""
SALT_BYTES = 16
"""Argon2id store salt and HKDF file salt size (RFC 9106 recommends 16 bytes)."""
NONCE_BYTES = 12
"""AES-GCM nonce size (NIST SP 800-38D's recommended 96 bits)."""
TAG_BYTES = 16
"""AES-GCM authentication tag appended to the ciphertext."""
ARGON2_VERSION = 19
FILE_INFO = b"botbin aif-bin v2 chunk block"
CHECK_INFO = b"botbin store key check"
#: Largest parameters a file may ask for, so a damaged or hostile file cannot make a reader allocate gigabytes or spin
#: for minutes before authentication fails: the kdf_* settings' bounds (config_model.py).
MAX_MEMORY_KIB = KDF_MAX_MEMORY_KIB
MAX_TIME_COST = KDF_MAX_TIME_COST
MAX_PARALLELISM = KDF_MAX_PARALLELISM


MIN_PASSPHRASE_CHARS = 8
"""Least characters (code points) of a new store's passphrase: NIST SP 800-63B's minimum for a chosen secret."""
MIN_PASSPHRASE_DISTINCT = 4
"""Least different characters in it, so that "aaaaaaaa" or "12121212" is refused."""


def passphrase_problem(passphrase: str) -> str | None:
    """Why ``passphrase`` is too weak for a new store, or None. The rule (no dictionary, no composition rules):
    at least MIN_PASSPHRASE_CHARS characters, of at least MIN_PASSPHRASE_DISTINCT different ones. An existing
    store opens with whatever passphrase made it."""
    if len(passphrase) < MIN_PASSPHRASE_CHARS:
        return f"it has {len(passphrase)} characters; at least {MIN_PASSPHRASE_CHARS} are needed"
    distinct = len(set(passphrase))
    if distinct < MIN_PASSPHRASE_DISTINCT:
        return f"it repeats {distinct} characters; at least {MIN_PASSPHRASE_DISTINCT} different ones are needed"
    return None


@dataclass(frozen=True)
class KdfParams:
    """Argon2id cost parameters. Defaults: RFC 9106 section 4, second recommended option (t=3, 64 MiB,
    p=4), measured at ~0.11 s per derivation on 2 CPU cores."""

    time_cost: int = DEFAULTS.kdf_time_cost
    """Passes over memory."""
    memory_cost: int = DEFAULTS.kdf_memory_kib
    """Memory in KiB (65536 KiB = 64 MiB)."""
    parallelism: int = DEFAULTS.kdf_parallelism
    """Lanes."""

    def check(self) -> str | None:
        """The reason these parameters are out of range, or None."""
        if not 1 <= self.time_cost <= MAX_TIME_COST:
            return f"time_cost {self.time_cost} is outside 1..{MAX_TIME_COST}"
        if not 1 <= self.parallelism <= MAX_PARALLELISM:
            return f"parallelism {self.parallelism} is outside 1..{MAX_PARALLELISM}"
        if not 8 * self.parallelism <= self.memory_cost <= MAX_MEMORY_KIB:
            return f"memory_cost {self.memory_cost} KiB is outside {8 * self.parallelism}..{MAX_MEMORY_KIB}"
        return None


@dataclass(frozen=True)
class StoreKdf:
    """What derives a store key: the store salt and the Argon2id parameters."""

    salt: bytes
    params: KdfParams

    def to_metadata(self, file_salt: bytes) -> dict[str, Any]:
        """The ``kdf`` metadata map of one file."""
        p = self.params
        return {
            "alg": "argon2id",
            "version": ARGON2_VERSION,
            "salt": self.salt,
            "time_cost": p.time_cost,
            "memory_cost": p.memory_cost,
            "parallelism": p.parallelism,
            "subkey": "hkdf-sha256",
            "file_salt": file_salt,
        }

    @staticmethod
    def new(params: KdfParams) -> StoreKdf:
        """A fresh random store salt with ``params``."""
        return StoreKdf(os.urandom(SALT_BYTES), params)


def parse_kdf(meta: Any, name: str) -> tuple[StoreKdf, bytes]:
    """(store kdf, file salt) from a file's ``kdf`` metadata map. Raises AifBinFormatError naming ``name``."""
    if not isinstance(meta, dict) or meta.get("alg") != "argon2id" or meta.get("subkey") != "hkdf-sha256":
        raise AifBinFormatError("metadata 'kdf' is not an argon2id + hkdf-sha256 map", name)
    salt, file_salt = meta.get("salt"), meta.get("file_salt")
    if not (
        isinstance(salt, bytes)
        and len(salt) == SALT_BYTES
        and isinstance(file_salt, bytes)
        and len(file_salt) == SALT_BYTES
    ):
        raise AifBinFormatError(f"metadata 'kdf' salts must be {SALT_BYTES} bytes", name)
    values = [meta.get(k) for k in ("time_cost", "memory_cost", "parallelism")]
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in values) or meta.get("version") != 19:
        raise AifBinFormatError("metadata 'kdf' parameters are not integers (or not Argon2 version 19)", name)
    params = KdfParams(int(values[0] or 0), int(values[1] or 0), int(values[2] or 0))
    problem = params.check()
    if problem:
        raise AifBinFormatError(f"metadata 'kdf' {problem}", name)
    return StoreKdf(salt, params), file_salt


def _hkdf(key: bytes, salt: bytes, info: bytes) -> bytes:
    return HKDF(algorithm=hashes.SHA256(), length=KEY_BYTES, salt=salt, info=info).derive(key)


_DERIVED: dict[tuple[bytes, StoreKdf], bytes] = {}
"""Store keys of this process by (SHA-256 of the passphrase, kdf): Argon2id runs once per store."""
_DERIVED_LOCK = threading.Lock()


class Keyring:
    """A passphrase and the store keys derived from it (cached for the process per passphrase, salt and
    parameters); thread-safe.

    ``only``: when set, files whose kdf differs from this store's are refused before any derivation
    (a store has one salt; this also keeps a damaged file from triggering a slow derivation).
    """

    def __init__(self, passphrase: str, only: StoreKdf | None = None) -> None:
        if not passphrase:
            raise ValueError("the passphrase is empty")
        self._secret = passphrase.encode("utf-8")
        self._id = hashlib.sha256(self._secret).digest()
        self.only = only

    def store_key(self, kdf: StoreKdf) -> bytes:
        """The 32-byte Argon2id store key (derived on first use, ~0.11 s with the default parameters)."""
        with _DERIVED_LOCK:
            key = _DERIVED.get((self._id, kdf))
            if key is None:
                p = kdf.params
                key = hash_secret_raw(
                    self._secret,
                    kdf.salt,
                    time_cost=p.time_cost,
                    memory_cost=p.memory_cost,
                    parallelism=p.parallelism,
                    hash_len=KEY_BYTES,
                    type=Type.ID,
                    version=ARGON2_VERSION,
                )
                _DERIVED[(self._id, kdf)] = key
            return key

    def file_key(self, kdf: StoreKdf, file_salt: bytes, name: str) -> bytes:
        """The 32-byte key of one file. Raises DecryptionError if the file belongs to another store."""
        if self.only is not None and kdf != self.only:
            raise DecryptionError(
                "encrypted with another store's salt or parameters than this store's "
                "encryption.json; it cannot be read with this store's key",
                name,
            )
        return _hkdf(self.store_key(kdf), file_salt, FILE_INFO)

    def check_value(self, kdf: StoreKdf) -> bytes:
        """A 32-byte value that proves knowledge of the store key (HKDF, info ``CHECK_INFO``); it reveals
        nothing about the key, and comparing it tells a wrong passphrase before any file is touched."""
        return _hkdf(self.store_key(kdf), kdf.salt, CHECK_INFO)

    def verify(self, kdf: StoreKdf, expected: bytes) -> bool:
        """True if the passphrase gives the store's check value (constant-time comparison)."""
        return hmac.compare_digest(self.check_value(kdf), expected)


def seal(key: bytes, nonce: bytes, plaintext: bytes, aad: bytes) -> bytes:
    """AES-256-GCM ciphertext of ``plaintext`` with its 16-byte tag appended."""
    return AESGCM(key).encrypt(nonce, plaintext, aad)


def open_sealed(key: bytes, nonce: Any, ciphertext: bytes, aad: bytes, name: str) -> bytes:
    """Decrypt and authenticate. Raises DecryptionError (wrong key or any changed byte) or
    AifBinFormatError (a nonce of the wrong size)."""
    if not isinstance(nonce, bytes) or len(nonce) != NONCE_BYTES:
        raise AifBinFormatError(f"metadata 'nonce' must be {NONCE_BYTES} bytes", name)
    try:
        return AESGCM(key).decrypt(nonce, ciphertext, aad)
    except InvalidTag:
        raise DecryptionError(
            "authentication failed: wrong passphrase, or the file was changed after it was written", name
        ) from None


@dataclass(frozen=True)
class StoreCipher:
    """What a writer needs to encrypt files of one store: the keyring and the store's kdf."""

    keyring: Keyring
    kdf: StoreKdf
