"""AIF-BIN v2 codec (DESIGN section 4): bytes <-> AifBinDocument, with a validating reader.

Layout, all integers little-endian: a 16-byte header (magic ``AIFB``, version 2, flags, reserved 0,
uint32 metadata_len, uint32 chunk_count), a MessagePack metadata map, then a MessagePack array of
``chunk_count`` chunk maps (zlib-compressed when flag bit 0 is set). Embeddings are MessagePack bin of
``dim`` float32. The note's exact bytes are kept in the metadata key ``source_text`` (bin) so that
``extract`` is lossless.

Encrypted files (flag bit 1, crypto/cipher.py for the keys): the public metadata keeps only
``PUBLIC_KEYS`` plus ``kdf`` and ``nonce``; every other metadata key (``source_text``, ``frontmatter``,
``note``, ``directives``, ...) moves into the encrypted part as a final record. The plaintext of the
chunk block is then two MessagePack values, the chunk array and that private metadata map, zlib-compressed
first when flag bit 0 is also set, then sealed with AES-256-GCM (the ciphertext ends with the 16-byte
tag; the associated data is the 16-byte header plus the packed metadata). A reader merges the private
map back, so callers see one metadata map either way.
"""

from __future__ import annotations

import os
import struct
import zlib
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import msgpack
import numpy as np
import numpy.typing as npt

from botbin.errors import AifBinFormatError, DecryptionError

if TYPE_CHECKING:  # cryptography and argon2 load only when a file is encrypted
    from botbin.crypto.cipher import Keyring, StoreCipher

MAGIC = b"AIFB"
VERSION = 2
FLAG_COMPRESSED = 0b01
FLAG_ENCRYPTED = 0b10
KNOWN_FLAGS = FLAG_COMPRESSED | FLAG_ENCRYPTED
HEADER = struct.Struct("<4sBBHII")
HEADER_SIZE = HEADER.size  # 16 bytes
KINDS = frozenset({"hard", "soft", "lore"})
MAX_COMPONENT = 1e6
"""Largest magnitude a vector component may have (an embedding's are about 1; more is damage)."""
#: An inflated chunk block may be at most INFLATE_RATIO x the file size + INFLATE_BASE bytes, so a zip bomb
#: cannot exhaust memory. Real blocks are mostly float32 embeddings (incompressible): they inflate ~1-3x.
INFLATE_RATIO = 64
INFLATE_BASE = 256 << 10
#: MessagePack containers may hold at most VALUES_PER_BYTE x the file size + VALUES_BASE values in all, so
#: a small block of one-byte empty arrays (~72 bytes each as Python objects) cannot exhaust memory either.
#: A real file holds ~20 values per chunk of >= 1.5 KB (its embedding), i.e. ~0.01 per byte.
VALUES_PER_BYTE = 1
VALUES_BASE = 16384
#: Metadata keys an encrypted file shows in the clear (DESIGN section 4: paths, hashes, times, model);
#: everything else that could hold note text is moved inside the encrypted block.
PUBLIC_KEYS = frozenset(
    {"source", "source_md5", "source_bytes", "source_lines", "created_at", "synced_at", "model", "chunker", "tool"}
)


@dataclass(frozen=True)
class ChunkRecord:
    """One chunk as stored in an AIF-BIN file."""

    id: int
    """0-based position in the file."""
    text: str
    """The chunk's body text."""
    start_line: int
    """First source line, 0-based."""
    end_line: int
    """Line after the last one, 0-based, exclusive."""
    heading_path: tuple[str, ...]
    """Enclosing headings, outermost first."""
    kind: str
    """'hard', 'soft' or 'lore' (directive class; 'lore' until directives are classified)."""
    tokens: int
    """Model tokens of the embedded text, [CLS]/[SEP] included."""
    text_md5: str
    """MD5 hex of the embedded text (heading prefix + body): the embedding cache key with the model id."""
    embedding: npt.NDArray[np.float32]
    """float32 (dim,), L2-normalized."""
    directives: tuple[dict[str, Any], ...] = ()
    """Directive cues found in the text (modality, character span); empty until classified."""

    def to_wire(self) -> dict[str, Any]:
        """The chunk map as written to the file."""
        return {
            "id": self.id,
            "text": self.text,
            "start_line": self.start_line,
            "end_line": self.end_line,
            "heading_path": list(self.heading_path),
            "kind": self.kind,
            "directives": list(self.directives),
            "tokens": self.tokens,
            "text_md5": self.text_md5,
            "embedding": np.ascontiguousarray(self.embedding, dtype="<f4").tobytes(),
        }


@dataclass(frozen=True)
class AifBinDocument:
    """A whole AIF-BIN file: public metadata and chunk records."""

    metadata: dict[str, Any]
    """The metadata map (source, source_md5, model, chunker, frontmatter, tool, ...)."""
    chunks: tuple[ChunkRecord, ...] = field(default=())
    """Chunks in source order."""
    flags: int = 0
    """Header flags the file was read with (bit 0 compressed, bit 1 encrypted)."""

    @property
    def source(self) -> str:
        """Relative POSIX path of the note this file was made from."""
        return str(self.metadata.get("source", ""))

    @property
    def dim(self) -> int:
        """Embedding dimension from ``metadata.model.dim``."""
        return int(self.metadata["model"]["dim"])

    @property
    def encrypted(self) -> bool:
        """True if the file was read from an encrypted chunk block (flag bit 1)."""
        return bool(self.flags & FLAG_ENCRYPTED)

    @property
    def source_text(self) -> bytes | None:
        """The note's exact bytes, or None if the writer did not keep them."""
        value = self.metadata.get("source_text")
        return bytes(value) if isinstance(value, bytes) else None

    def embeddings(self) -> npt.NDArray[np.float32]:
        """float32 (len(chunks), dim): the chunk embeddings stacked."""
        if not self.chunks:
            return np.zeros((0, self.dim), dtype=np.float32)
        return np.stack([c.embedding for c in self.chunks]).astype(np.float32, copy=False)


def encode(doc: AifBinDocument, compress: bool = False, cipher: StoreCipher | None = None) -> bytes:
    """Serialize ``doc``; ``compress`` zlib-compresses the chunk block (flag bit 0), ``cipher`` encrypts it
    (flag bit 1, with a fresh file salt and nonce; see the module docstring for the layout).

    Raises ValueError for a document that ``decode`` would reject: a chunk whose id is not its position,
    whose embedding size is not ``metadata.model.dim``, whose kind is unknown or whose line range is empty.
    """
    dim = doc.dim
    if not isinstance(doc.metadata.get("source"), str) or not all(isinstance(k, str) for k in doc.metadata):
        raise ValueError("metadata needs a 'source' string and string keys only")
    for i, chunk in enumerate(doc.chunks):
        if chunk.id != i:
            raise ValueError(f"chunk at position {i} has id {chunk.id}")
        if chunk.embedding.shape != (dim,):
            raise ValueError(f"chunk {chunk.id} embedding shape {chunk.embedding.shape}, expected ({dim},)")
        if chunk.kind not in KINDS:
            raise ValueError(f"chunk {chunk.id} kind {chunk.kind!r} is not one of {sorted(KINDS)}")
        if not 0 <= chunk.start_line < chunk.end_line:
            raise ValueError(f"chunk {chunk.id} has an empty line range {chunk.start_line}..{chunk.end_line}")
    public = {k: v for k, v in doc.metadata.items() if k not in ("kdf", "nonce")}
    private: dict[str, Any] = {}
    if cipher is not None:
        private = {k: v for k, v in public.items() if k not in PUBLIC_KEYS}
        public = {k: v for k, v in public.items() if k in PUBLIC_KEYS}
        file_salt, nonce = os.urandom(16), os.urandom(12)
        public["kdf"], public["nonce"] = cipher.kdf.to_metadata(file_salt), nonce
    meta: bytes = msgpack.packb(public, use_bin_type=True)
    body: bytes = msgpack.packb([c.to_wire() for c in doc.chunks], use_bin_type=True)
    if cipher is not None:
        body += msgpack.packb(private, use_bin_type=True)
    flags = 0
    if compress:
        body, flags = zlib.compress(body, 6), FLAG_COMPRESSED
    header = HEADER.pack(MAGIC, VERSION, flags | (FLAG_ENCRYPTED if cipher else 0), 0, len(meta), len(doc.chunks))
    if cipher is not None:
        from botbin.crypto.cipher import seal

        key = cipher.keyring.file_key(cipher.kdf, file_salt, doc.source)
        body = seal(key, nonce, body, header + meta)
    return header + meta + body


class _TooManyValues(Exception):
    pass


def _budget_hooks(file_bytes: int) -> dict[str, Any]:
    """msgpack hooks that count the values put into arrays and maps, and stop past the file's budget."""
    left = [VALUES_PER_BYTE * file_bytes + VALUES_BASE]

    def spend(container: Any) -> Any:
        left[0] -= 1 + len(container)
        if left[0] < 0:
            raise _TooManyValues
        return container

    return {"list_hook": spend, "object_hook": spend}


def _unpack(data: bytes, what: str, name: str, file_bytes: int) -> Any:
    try:
        # msgpack caps every declared length at the buffer size; the hooks cap the values created.
        return msgpack.unpackb(data, raw=False, strict_map_key=True, use_list=True, **_budget_hooks(file_bytes))
    except _TooManyValues:
        raise AifBinFormatError(f"{what} holds more values than a {file_bytes}-byte file can", name) from None
    except Exception as exc:
        reason = f"{what} is not one valid MessagePack value ({type(exc).__name__}: {exc})"
        raise AifBinFormatError(reason, name) from exc


def decode_metadata(data: bytes, name: str) -> tuple[int, int, dict[str, Any]]:
    """Validate the header and metadata of ``data``; return (flags, chunk_count, metadata).

    Raises AifBinFormatError naming ``name`` for: a short file, wrong magic, unknown version, unknown
    flag bits, a nonzero reserved field, metadata_len past the end, metadata that is not a map, or a
    missing/invalid ``model.dim``.
    """
    if len(data) < HEADER_SIZE:
        raise AifBinFormatError(f"file is {len(data)} bytes, shorter than the 16-byte header", name)
    magic, version, flags, reserved, meta_len, count = HEADER.unpack_from(data)
    if magic != MAGIC:
        raise AifBinFormatError(f"bad magic {magic!r}, expected {MAGIC!r} (not an AIF-BIN file)", name)
    if version != VERSION:
        raise AifBinFormatError(f"unknown version {version}, this reader knows {VERSION}", name)
    if flags & ~KNOWN_FLAGS:
        raise AifBinFormatError(f"unknown flag bits {flags:#04x}", name)
    if reserved != 0:
        raise AifBinFormatError(f"reserved header field is {reserved}, expected 0", name)
    if HEADER_SIZE + meta_len > len(data):
        raise AifBinFormatError(f"metadata_len {meta_len} runs past the end of the file ({len(data)} bytes)", name)
    meta = _unpack(data[HEADER_SIZE : HEADER_SIZE + meta_len], "metadata", name, len(data))
    if not isinstance(meta, dict):
        raise AifBinFormatError(f"metadata is a {type(meta).__name__}, expected a map", name)
    if not all(isinstance(k, str) for k in meta):
        raise AifBinFormatError("metadata has a key that is not a string", name)
    model = meta.get("model")
    dim = model.get("dim") if isinstance(model, dict) else None
    if not isinstance(dim, int) or isinstance(dim, bool) or not 0 < dim <= 65536:
        raise AifBinFormatError(f"metadata model.dim is {dim!r}, expected a positive int", name)
    if not isinstance(meta.get("source"), str):
        raise AifBinFormatError("metadata lacks a 'source' path", name)
    return flags, count, meta


def _inflate(body: bytes, name: str, file_bytes: int) -> bytes:
    limit = INFLATE_RATIO * file_bytes + INFLATE_BASE
    inflater = zlib.decompressobj()
    try:
        out = inflater.decompress(body, limit)
    except zlib.error as exc:
        raise AifBinFormatError(f"compressed chunk block does not inflate ({exc})", name) from exc
    if inflater.unconsumed_tail:
        raise AifBinFormatError(f"compressed chunk block inflates past {limit} bytes (a zip bomb?)", name)
    if not inflater.eof:
        raise AifBinFormatError("compressed chunk block is truncated (zlib stream incomplete)", name)
    if inflater.unused_data:
        raise AifBinFormatError(f"{len(inflater.unused_data)} stray bytes after the compressed chunk block", name)
    return out


def _record(raw: Any, i: int, dim: int, name: str) -> ChunkRecord:
    where = f"chunk {i}"
    if not isinstance(raw, dict):
        raise AifBinFormatError(f"{where} is a {type(raw).__name__}, expected a map", name)
    emb = raw.get("embedding")
    if not isinstance(emb, bytes) or len(emb) != dim * 4:
        size = len(emb) if isinstance(emb, bytes) else type(emb).__name__
        raise AifBinFormatError(f"{where} embedding is {size} bytes, expected dim x 4 = {dim * 4}", name)
    vector = np.frombuffer(emb, dtype="<f4").astype(np.float32, copy=False)
    # a NaN would rank nowhere and poison every sum it joins; a value past MAX_COMPONENT (a flipped exponent
    # bit) is no embedding, and its square overflows the norms of ranking
    if not np.isfinite(vector).all() or (vector.size and float(np.abs(vector).max()) > MAX_COMPONENT):
        raise AifBinFormatError(f"{where} embedding holds NaN, infinite or out-of-range values", name)
    start, end = raw.get("start_line"), raw.get("end_line")
    if not (
        isinstance(start, int)
        and isinstance(end, int)
        and not isinstance(start, bool)
        and not isinstance(end, bool)
        and 0 <= start < end
    ):
        raise AifBinFormatError(f"{where} has a bad line range {start!r}..{end!r}", name)
    text, kind, path = raw.get("text"), raw.get("kind"), raw.get("heading_path", [])
    if not isinstance(text, str):
        raise AifBinFormatError(f"{where} text is not a string", name)
    if not isinstance(kind, str) or kind not in KINDS:
        raise AifBinFormatError(f"{where} kind {kind!r} is not one of {sorted(KINDS)}", name)
    if not isinstance(path, list) or not all(isinstance(h, str) for h in path):
        raise AifBinFormatError(f"{where} heading_path is not a list of strings", name)
    directives = raw.get("directives", [])
    tokens = raw.get("tokens", 0)
    if not isinstance(tokens, int) or isinstance(tokens, bool) or tokens < 0:
        raise AifBinFormatError(f"{where} tokens is {tokens!r}, expected a non-negative int", name)
    return ChunkRecord(
        id=i,
        text=text,
        start_line=start,
        end_line=end,
        heading_path=tuple(path),
        kind=kind,
        tokens=tokens,
        text_md5=str(raw.get("text_md5", "")),
        embedding=vector,
        directives=tuple(d for d in directives if isinstance(d, dict)) if isinstance(directives, list) else (),
    )


def _decrypt(data: bytes, aad_end: int, meta: dict[str, Any], keyring: Keyring | None, name: str) -> bytes:
    """The plaintext of the sealed block ``data[aad_end:]``; the header and metadata before it are the AAD."""
    if keyring is None:
        raise DecryptionError(
            "chunk block is encrypted and no passphrase was given (set BOTBIN_PASSPHRASE, or give it in the editor)",
            name,
        )
    from botbin.crypto.cipher import open_sealed, parse_kdf

    kdf, file_salt = parse_kdf(meta.get("kdf"), name)
    return open_sealed(keyring.file_key(kdf, file_salt, name), meta.get("nonce"), data[aad_end:], data[:aad_end], name)


def _split_private(body: bytes, name: str, file_bytes: int) -> tuple[Any, dict[str, Any]]:
    """(chunk array, private metadata map) from a decrypted chunk block."""
    unpacker = msgpack.Unpacker(
        raw=False, strict_map_key=True, use_list=True, max_buffer_size=max(len(body), 1), **_budget_hooks(file_bytes)
    )
    unpacker.feed(body)
    try:
        values = list(unpacker)
    except _TooManyValues:
        raise AifBinFormatError(f"chunk block holds more values than a {file_bytes}-byte file can", name) from None
    except Exception as exc:
        raise AifBinFormatError(f"decrypted chunk block is not valid MessagePack ({type(exc).__name__})", name) from exc
    if len(values) != 2 or not isinstance(values[1], dict) or not all(isinstance(k, str) for k in values[1]):
        raise AifBinFormatError("decrypted chunk block is not a chunk array followed by a metadata map", name)
    return values[0], values[1]


def decode(data: bytes, name: str, keyring: Keyring | None = None) -> AifBinDocument:
    """Parse and validate a whole AIF-BIN v2 file (``name`` is used in error messages); ``keyring``
    opens an encrypted one.

    Raises AifBinFormatError for any malformed part (see decode_metadata), a chunk block that is not an
    array of ``chunk_count`` maps, or an embedding whose size is not dim x 4 or that holds NaN or infinity;
    DecryptionError (a subclass) for an encrypted file without a keyring, with a wrong passphrase, or with any
    byte changed.
    """
    flags, count, meta = decode_metadata(data, name)
    body_start = HEADER_SIZE + int(HEADER.unpack_from(data)[4])
    body = data[body_start:]
    if flags & FLAG_ENCRYPTED:
        body = _decrypt(data, body_start, meta, keyring, name)
    if flags & FLAG_COMPRESSED:
        body = _inflate(body, name, len(data))
    if flags & FLAG_ENCRYPTED:
        raw, private = _split_private(body, name, len(data))
        meta = {**meta, **{k: v for k, v in private.items() if k not in PUBLIC_KEYS}}
    else:
        raw = _unpack(body, "chunk block", name, len(data))
    if not isinstance(raw, list):
        raise AifBinFormatError(f"chunk block is a {type(raw).__name__}, expected an array", name)
    if len(raw) != count:
        raise AifBinFormatError(f"header says {count} chunks but the array holds {len(raw)}", name)
    dim = int(meta["model"]["dim"])
    return AifBinDocument(meta, tuple(_record(c, i, dim, name) for i, c in enumerate(raw)), flags)
