"""Encryption benchmark: what AES-256-GCM + Argon2id cost a store (key derivation, sync, index load, size).

Run from the repo root with the venv active: ``python bench/bench_encryption.py [--notes N]``.
Prints one JSON object on stdout; progress goes to stderr. Everything is written under a temp folder.

Syncs use the FAKE HashEmbedder (bench/common.py) so that the figures are botbin's own work (parse, chunk,
encode, encrypt, write); encryption cost does not depend on the vector values. The vault is the synthetic
one of bench_sync.py (``--notes``, default 2,000).
"""

from __future__ import annotations

import argparse
import json
import shutil
import tempfile
from pathlib import Path
from typing import Any

from botbin.crypto.cipher import KdfParams, Keyring, StoreKdf
from botbin.service import MemoryService
from botbin.wire.requests import SyncRequest
from common import HashEmbedder, generate_vault, log, median, r, timed

SECRET = "bench passphrase"


def derivation_ms(params: KdfParams, repeats: int = 5) -> float:
    """Median wall time (ms) of one Argon2id store-key derivation with ``params`` (fresh salt each time)."""
    times = []
    for _ in range(repeats):
        kdf = StoreKdf.new(params)
        keyring = Keyring(SECRET)
        seconds, _ = timed(lambda: keyring.store_key(kdf))  # noqa: B023 - called at once
        times.append(seconds * 1000)
    return median(times)


def store_figures(ws: Path, encrypted: bool) -> dict[str, Any]:
    """Cold sync, index load (median of 3, a new service each time) and store size of one workspace."""
    (ws / "botbin.toml").write_text(f"vault = true\nencryption = {'true' if encrypted else 'false'}\n")
    service = MemoryService(ws, {}, embedder=HashEmbedder(), env={}, passphrase=lambda: SECRET)
    sync_s, report = timed(service.sync)
    loads = []
    for _ in range(3):
        fresh = MemoryService(ws, {}, embedder=HashEmbedder(), env={}, passphrase=lambda: SECRET)
        seconds, _ = timed(fresh.index)
        loads.append(seconds)
    files = list(service.output_dir.rglob("*.aif-bin"))
    chunks = len(fresh.index()[0])
    size = sum(p.stat().st_size for p in files)
    return {
        "cold_sync_s": r(sync_s, 3),
        "notes": len(report.added),
        "chunks": chunks,
        "index_load_s": r(median(loads), 3),
        "store_bytes": size,
        "bytes_per_chunk": r(size / max(chunks, 1), 1),
    }


def convert_figures(ws: Path) -> dict[str, Any]:
    """Time of ``botbin encrypt`` then ``botbin decrypt`` over a synced plaintext store (no re-embedding)."""
    (ws / "botbin.toml").write_text("vault = true\n")
    embedder = HashEmbedder()
    service = MemoryService(ws, {}, embedder=embedder, env={}, passphrase=lambda: SECRET)
    service.sync()
    texts = embedder.texts
    enc_s, _ = timed(lambda: service.sync(SyncRequest(encryption="encrypt")))
    dec_s, _ = timed(lambda: service.sync(SyncRequest(encryption="decrypt")))
    return {"encrypt_s": r(enc_s, 3), "decrypt_s": r(dec_s, 3), "re_embedded_chunks": embedder.texts - texts}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--notes", type=int, default=2000, help="notes in the synthetic vault (default 2,000)")
    args = parser.parse_args()
    result: dict[str, Any] = {"embedder": "HashEmbedder (fake; measures botbin's own work)"}
    log("Argon2id key derivation")
    result["kdf_default_ms"] = r(derivation_ms(KdfParams()), 1)
    result["kdf_default_params"] = vars(KdfParams())
    with tempfile.TemporaryDirectory(prefix="botbin-bench-enc-") as tmp:
        base = Path(tmp) / "vault"
        notes, total = generate_vault(base, args.notes)
        result["vault"] = {"notes": notes, "bytes": total}
        for name, encrypted in (("plain", False), ("encrypted", True)):
            ws = Path(tmp) / name
            shutil.copytree(base, ws)
            log(f"{name} store")
            result[name] = store_figures(ws, encrypted)
        ws = Path(tmp) / "convert"
        shutil.copytree(base, ws)
        log("encrypt / decrypt in place")
        result["convert"] = convert_figures(ws)
    plain, enc = result["plain"], result["encrypted"]
    result["ratios"] = {
        "cold_sync": r(enc["cold_sync_s"] / plain["cold_sync_s"], 3),
        "index_load": r(enc["index_load_s"] / plain["index_load_s"], 3),
        "store_bytes": r(enc["store_bytes"] / plain["store_bytes"], 4),
    }
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
