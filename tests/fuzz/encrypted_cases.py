"""Encrypted AIF-BIN fuzz inputs and the promise for them, shared by tests/fuzz and bench/fuzz_run.py.

The promise for every damaged encrypted input (``check_refused``): ``decode`` with the store's pinned Keyring
raises only AifBinFormatError naming the file (DecryptionError when authentication fails), so a changed byte
never yields a document; under 1 CPU second; within the allocation bound of aifbin_cases.
"""

from __future__ import annotations

import struct

from aifbin_cases import (
    ALLOC_BASE_BYTES,
    ALLOC_RATIO,
    BASE_DOCUMENTS,
    NAME,
    TIME_LIMIT_S,
    length_fields,
    measure,
)
from hypothesis import strategies as st

from botbin.aifbin import HEADER, HEADER_SIZE, decode, encode
from botbin.crypto.cipher import KdfParams, Keyring, StoreCipher, StoreKdf
from botbin.errors import AifBinFormatError

KDF = StoreKdf(b"fuzz-store-salt!", KdfParams(time_cost=1, memory_cost=8192, parallelism=1))
CIPHER = StoreCipher(Keyring("fuzz passphrase", only=KDF), KDF)
FILES = tuple(encode(doc, compress=c, cipher=CIPHER) for doc in BASE_DOCUMENTS for c in (False, True))


def check_refused(data: bytes) -> None:
    """The promise for a damaged encrypted file: refused with AifBinFormatError, in time, in bounded memory."""
    if data in FILES:
        return
    run = measure(decode, data, NAME, CIPHER.keyring)
    assert isinstance(run.result, AifBinFormatError), f"{type(run.result).__name__}: {run.result}"
    assert run.result.path == NAME
    assert run.cpu_s < TIME_LIMIT_S, f"took {run.cpu_s:.2f} CPU s"
    assert run.peak_bytes <= ALLOC_RATIO * len(data) + ALLOC_BASE_BYTES


@st.composite
def inflated(draw: st.DrawFn) -> bytes:
    """metadata_len, chunk_count or one MessagePack length prefix of the public metadata set huge."""
    data = draw(st.sampled_from(FILES))
    magic, version, flags, reserved, meta_len, count = HEADER.unpack_from(data)
    meta, body = data[HEADER_SIZE : HEADER_SIZE + meta_len], data[HEADER_SIZE + meta_len :]
    value = draw(st.one_of(st.sampled_from([2**32 - 1, 2**31, 2**16 - 1]), st.integers(0, 2**32 - 1)))
    where = draw(st.sampled_from(["metadata_len", "chunk_count", "metadata"]))
    if where == "metadata_len":
        meta_len = value
    elif where == "chunk_count":
        count = value
    else:
        pos, width = draw(st.sampled_from([f for f in length_fields(meta) if f[1]]))
        meta = meta[:pos] + min(value, 256**width - 1).to_bytes(width, "big") + meta[pos + width :]
    return struct.pack("<4sBBHII", magic, version, flags, reserved, meta_len, count) + meta + body
