"""Fuzzing the AIF-BIN reader on encrypted files (flag bit 1), as a store reads them (a pinned Keyring).

The promise for every damaged input (``encrypted_cases.check_refused``): ``decode`` raises only
AifBinFormatError naming the file (its subclass DecryptionError when authentication fails) — a changed byte
never yields a document; under 1 CPU second; allocation within ``aifbin_cases.ALLOC_RATIO`` x the input size
+ ``ALLOC_BASE_BYTES``. The store's reader pins the Keyring to the store's kdf, so damaged Argon2id parameters
are refused before any derivation.
"""

from __future__ import annotations

from aifbin_cases import BASE_DOCUMENTS, NAME, bit_flipped, truncated
from encrypted_cases import CIPHER, FILES, check_refused, inflated
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from botbin.aifbin import HEADER, HEADER_SIZE, decode

FUZZ = settings(
    max_examples=150, deadline=1000, database=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow]
)


def test_base_files_open_with_the_key() -> None:
    for data, doc in zip(FILES, [d for d in BASE_DOCUMENTS for _ in (0, 1)], strict=True):
        back = decode(data, NAME, CIPHER.keyring)
        assert back.encrypted and [c.text for c in back.chunks] == [c.text for c in doc.chunks]


@FUZZ
@given(data=truncated(FILES))
def test_fuzz_truncated_encrypted(data: bytes) -> None:
    check_refused(data)


@FUZZ
@given(data=bit_flipped(FILES))
def test_fuzz_bit_flips_encrypted(data: bytes) -> None:
    check_refused(data)


@FUZZ
@given(data=inflated())
def test_fuzz_inflated_lengths_encrypted(data: bytes) -> None:
    check_refused(data)


@FUZZ
@given(tail=st.binary(max_size=2000), keep=st.integers(0, 400))
def test_fuzz_random_ciphertext(tail: bytes, keep: int) -> None:
    """A real header and metadata followed by random bytes in place of the sealed block."""
    data = FILES[1]
    meta_len = HEADER.unpack_from(data)[4]
    check_refused(data[: HEADER_SIZE + meta_len + keep] + tail)
