"""An encrypted store on disk: its ``encryption.json`` marker, the keys a sync needs, and the conversion
of every output in place (``botbin encrypt`` / ``botbin decrypt``).

``encryption.json`` (in the output folder, 0600) holds what derives the store key and a check value that
tells a wrong passphrase before any file is read or written; never the passphrase or a key::

    {"version": 1, "mode": "encrypted" | "decrypting", "kdf": {"alg": "argon2id", "salt": hex,
     "time_cost": 3, "memory_cost": 65536, "parallelism": 4}, "check": hex}

The marker says what the store should be; the state file's ``encrypted`` says what every output is.
A conversion that a kill interrupts is finished by the next sync: encrypting writes the marker first and
sets ``encrypted`` last; decrypting sets ``mode`` to "decrypting" first and removes the marker last.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from botbin.aifbin import FLAG_COMPRESSED, decode, encode
from botbin.config import Settings
from botbin.crypto.cipher import KdfParams, Keyring, StoreCipher, StoreKdf, passphrase_problem
from botbin.errors import AifBinFormatError, PassphraseError, WrongPassphraseError
from botbin.sync.atomic import atomic_write
from botbin.sync.confine import Confined, remove_output
from botbin.sync.state import SyncState

log = logging.getLogger(__name__)

MARKER_FILE = "encryption.json"
#: passphrase() -> the passphrase, or None when none can be had (asked only when a store needs one).
PassphraseFn = Callable[[], "str | None"]
NEEDS_PASSPHRASE = (
    "give its passphrase in BOTBIN_PASSPHRASE, at the terminal prompt, or in the editor "
    "(VS Code: 'botbin: Set Passphrase for Encrypted Memory'; Obsidian: 'Unlock encrypted memory')"
)


@dataclass(frozen=True)
class Marker:
    """The parsed ``encryption.json``."""

    kdf: StoreKdf
    check: bytes
    """Keyring.check_value of the store key."""
    mode: str
    """'encrypted', or 'decrypting' while ``botbin decrypt`` converts the outputs back."""

    def to_json(self) -> bytes:
        p = self.kdf.params
        return json.dumps(
            {
                "version": 1,
                "mode": self.mode,
                "kdf": {
                    "alg": "argon2id",
                    "salt": self.kdf.salt.hex(),
                    "time_cost": p.time_cost,
                    "memory_cost": p.memory_cost,
                    "parallelism": p.parallelism,
                },
                "check": self.check.hex(),
            },
            indent=1,
        ).encode()


def read_marker(output_dir: Path) -> Marker | None:
    """The store's marker, or None for a plaintext store. Raises PassphraseError naming the file when it
    is unreadable or damaged (encrypted outputs cannot then be checked; nothing is changed)."""
    path = output_dir / MARKER_FILE
    try:
        raw = json.loads(path.read_bytes())
        kdf = raw["kdf"]
        params = KdfParams(int(kdf["time_cost"]), int(kdf["memory_cost"]), int(kdf["parallelism"]))
        marker = Marker(StoreKdf(bytes.fromhex(kdf["salt"]), params), bytes.fromhex(raw["check"]), str(raw["mode"]))
    except FileNotFoundError:
        return None
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise PassphraseError(
            f"encryption marker is unreadable or damaged ({type(exc).__name__}: {exc}); "
            "restore it from a backup, or remove it and the encrypted outputs to rebuild",
            path,
        ) from exc
    if marker.mode not in ("encrypted", "decrypting") or params.check() or len(marker.kdf.salt) != 16:
        raise PassphraseError("encryption marker has an unknown mode or bad key parameters", path)
    return marker


@dataclass(frozen=True)
class StoreKeys:
    """The keys of an encrypted store, checked against its marker."""

    keyring: Keyring
    marker: Marker

    @property
    def cipher(self) -> StoreCipher | None:
        """What new outputs are encrypted with; None while the store is being decrypted."""
        return StoreCipher(self.keyring, self.marker.kdf) if self.marker.mode == "encrypted" else None


def _keyring(output_dir: Path, marker: Marker, passphrase: PassphraseFn) -> Keyring:
    secret = passphrase()
    if not secret:
        raise PassphraseError(f"this store is encrypted; {NEEDS_PASSPHRASE}", output_dir / MARKER_FILE)
    keyring = Keyring(secret, only=marker.kdf)
    if not keyring.verify(marker.kdf, marker.check):
        raise WrongPassphraseError(
            "wrong passphrase for this encrypted store; nothing was read or changed", output_dir / MARKER_FILE
        )
    return keyring


def open_keys(output_dir: Path, passphrase: PassphraseFn) -> StoreKeys | None:
    """Keys to read the store (None for a plaintext one). Raises PassphraseError for a missing or wrong
    passphrase or a damaged marker."""
    marker = read_marker(output_dir)
    return None if marker is None else StoreKeys(_keyring(output_dir, marker, passphrase), marker)


def writer_keys(
    output_dir: Path, settings: Settings, passphrase: PassphraseFn, request: str | None = None
) -> StoreKeys | None:
    """Keys for a sync, under the workspace lock: creates the marker when ``settings.encryption`` (or
    ``request == "encrypt"``) asks for an encrypted store that has none; ``request == "decrypt"`` marks
    the store for decryption. Raises PassphraseError as open_keys does, also when a new store needs one."""
    marker = read_marker(output_dir)
    if marker is None:
        if request == "decrypt" or not (settings.encryption or request == "encrypt"):
            return None
        secret = passphrase()
        if not secret:
            raise PassphraseError(f"encryption is on for this store; {NEEDS_PASSPHRASE}", output_dir / MARKER_FILE)
        weak = passphrase_problem(secret)
        if weak is not None:
            raise PassphraseError(
                f"the passphrase is too weak for a new encrypted store ({weak}; a few words make a good one); "
                "nothing was encrypted",
                output_dir / MARKER_FILE,
            )
        params = KdfParams(settings.kdf_time_cost, settings.kdf_memory_kib, settings.kdf_parallelism)
        kdf = StoreKdf.new(params)
        keyring = Keyring(secret, only=kdf)
        marker = Marker(kdf, keyring.check_value(kdf), "encrypted")
        atomic_write(output_dir / MARKER_FILE, marker.to_json())
        log.info(
            "%s: new encrypted store (Argon2id t=%d, %d KiB, p=%d)",
            output_dir,
            params.time_cost,
            params.memory_cost,
            params.parallelism,
        )
        return StoreKeys(keyring, marker)
    keys = StoreKeys(_keyring(output_dir, marker, passphrase), marker)
    wanted = {"encrypt": "encrypted", "decrypt": "decrypting"}.get(request or "", marker.mode)
    if wanted != marker.mode:
        marker = Marker(marker.kdf, marker.check, wanted)
        atomic_write(output_dir / MARKER_FILE, marker.to_json())
        keys = StoreKeys(keys.keyring, marker)
    return keys


def convert_outputs(
    root: Path, output_dir: Path, state: SyncState, keys: StoreKeys | None, compress: bool
) -> list[str]:
    """Rewrite every output of ``state`` encrypted (``keys.cipher`` set) or plain, each atomically, then
    set ``state.encrypted``; the caller saves the state, and after a decryption removes the marker with
    finish_decryption. An output that cannot be read is removed when it is one botbin wrote (inside
    ``output_dir``, with the AIF-BIN magic: sync/confine.py), so the sync rebuilds it from its note.
    Returns warnings naming the files."""
    cipher = keys.cipher if keys is not None else None
    keyring = keys.keyring if keys is not None else None
    guard = Confined(output_dir)
    warnings: list[str] = []
    for rel, entry in state.files.items():
        path = root / entry.output
        try:
            with guard.open(path) as handle:
                doc = decode(handle.read(), str(path), keyring)
        except FileNotFoundError:
            continue
        except (OSError, AifBinFormatError) as exc:
            entry.output_bytes = -1
            left = remove_output(guard, path)
            warnings.append(f"{exc}; {left or 'removed'}, the sync rebuilds it from {rel}")
            continue
        if doc.encrypted == (cipher is not None):
            continue
        blob = encode(doc, compress=compress or bool(doc.flags & FLAG_COMPRESSED), cipher=cipher)
        target = Path(guard.real_path(path, follow=False) or path)  # open() above checked it stays inside
        atomic_write(target, blob)
        entry.output_bytes, entry.output_ctime_ns = len(blob), os.lstat(target).st_ctime_ns
    state.encrypted = cipher is not None
    return warnings


def finish_decryption(output_dir: Path, keys: StoreKeys | None) -> None:
    """Remove the marker once a decryption has rewritten every output and the state file says so."""
    if keys is not None and keys.marker.mode == "decrypting":
        (output_dir / MARKER_FILE).unlink(missing_ok=True)


def encryption_mode(output_dir: Path, state: SyncState) -> str:
    """'off', 'on', or 'converting' (the marker and the state disagree while a sync converts the store).

    Raises BotbinError for an unreadable marker (``read_marker``)."""
    marker = read_marker(output_dir)
    if marker is None and not state.encrypted:
        return "off"
    converting = marker is None or marker.mode != "encrypted" or not state.encrypted
    return "converting" if converting and state.files else "on"


def check_writable(output_dir: Path, settings: Settings, passphrase: PassphraseFn) -> None:
    """Raise PassphraseError when a sync could not index a note botbin is about to write (``remember``, a soul
    file): the store is encrypted, or ``encryption`` asks for it, and the passphrase is missing or wrong. Asked
    before the note is written, so a refused call leaves nothing behind."""
    try:
        keys = open_keys(output_dir, passphrase)
    except PassphraseError as exc:
        done = "" if "nothing was" in exc.reason else "; nothing was written"
        raise type(exc)(exc.reason + done, exc.path) from None
    if keys is None and settings.encryption and not passphrase():
        raise PassphraseError(
            f"encryption is on for this store; {NEEDS_PASSPHRASE}; nothing was written", output_dir / MARKER_FILE
        )
