"""The load cache: every note's index entry (chunk records, vectors, centroid, ANN keys, BM25 token ids) in one
file beside the state file, so that a start reads one file instead of decoding and tokenizing every AIF-BIN file.

The AIF-BIN files stay the source of truth. Each cached note carries the stamp (size, mtime_ns, inode) its
AIF-BIN file had when it was read; on load a note is taken from the cache only when its file has that stamp now,
else it is decoded from the file (edited, added), and cached notes whose file is no longer listed are left out
(removed). A missing, unreadable, corrupt or mismatched cache (format version, model, dimension, tokenizer) is
ignored with a log line and rewritten after the load. Never used for an encrypted store (chunk text and vectors
would leave it in the clear).

Layout: one uncompressed ``.npz`` (zip, CRC-checked on read), written to a temporary file and renamed:
``meta`` (MessagePack bytes: the header, with the note and chunk tables as columns: index/cache_table.py),
``stamps`` int64 (notes, 3), ``counts`` int64 (notes): chunks per note, ``chunk_ints`` int64 (rows, 4): each
chunk's id, lines and model tokens, ``matrix`` float32 (rows, dim), ``centroids`` float32 (notes, dim), ``keys``
int64 (rows), ``tokens`` int32 (all token ids, chunk after chunk), ``token_ends`` int64 (rows): the end of each
chunk's ids in ``tokens``, and the BM25 main segment of those chunks (``bm25_indptr``, ``bm25_slots``,
``bm25_tfs``: index/lexical.py), adopted when every note is a hit.
"""

from __future__ import annotations

import atexit
import hashlib
import logging
import os
import threading
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgpack
import numpy as np
import numpy.typing as npt

from botbin.aifbin import MAX_COMPONENT
from botbin.index.cache_table import Stamp, Table, chunk_columns, note_columns
from botbin.index.entry import NoteEntry
from botbin.index.lexical import MainSegment, flat_main_segment
from botbin.index.tokenize import bm25_terms
from botbin.sync.atomic import open_private, writer_temp
from botbin.sync.confine import Confined

log = logging.getLogger(__name__)

LOAD_CACHE_FILE = "index-cache.npz"
"""The cache's name, in the folder of the state file (the workspace's output folder)."""
FORMAT = 2
"""Bumped whenever what a cached entry holds, how ``note_from`` makes it, or the layout changes (2: columns)."""
_PROBE = "Don't re-index e-mail: snake_case CamelCase x86_64 2026-12-02 v1.2.3 C++ #tag"


@dataclass(frozen=True)
class CacheConfig:
    """Where the load cache lives and what it must match."""

    path: Path
    """The cache file (beside the state file, never in the notes)."""
    model: str
    """Embedding model name: a cache of another model is not used."""


@dataclass(frozen=True)
class Cached:
    """A cache file read back and checked; entries are built on demand."""

    vocab: list[str]
    """BM25 terms in id order: the ids of every cached entry's tokens."""
    stamps: dict[str, Stamp]
    """AIF-BIN file path (as listed at write) -> its stamp then."""
    _rows: dict[str, int]
    """File path -> position of its note in the cache."""
    _table: Table
    _arrays: dict[str, npt.NDArray[Any]]

    @property
    def files(self) -> list[str]:
        """The AIF-BIN files of the cached notes, in the cache's order."""
        return list(self._table.notes["file"])

    @property
    def paths(self) -> list[str]:
        """The cached notes' paths, in the cache's order."""
        return list(self._table.notes["path"])

    def main_segment(self) -> MainSegment:
        """The BM25 main segment of every cached chunk, slot i being row i (the notes in the cache's order)."""
        ends = self._arrays["token_ends"]
        lengths = np.diff(ends, prepend=0).astype(np.int64) if len(ends) else np.zeros(0, dtype=np.int64)
        a = self._arrays
        return MainSegment(a["bm25_indptr"], a["bm25_slots"], a["bm25_tfs"], lengths)

    def entry(self, file: str) -> NoteEntry | None:
        """The cached entry of AIF-BIN ``file`` (a key of ``stamps``); None, with a log line, when its record
        does not parse (the caller reads the file instead)."""
        try:
            pos = self._rows[file]
            start, stop = self._table.starts[pos], self._table.stops[pos]
            ends = self._arrays["token_ends"]
            first = int(ends[start - 1]) if start else 0
            cuts = ends[start:stop].tolist()
            flat = self._arrays["tokens"]
            tokens = tuple(flat[a:b] for a, b in zip([first, *cuts[:-1]], cuts, strict=False))
            return self._table.entry(pos, self._arrays, tokens)
        except (ValueError, TypeError, IndexError, KeyError) as exc:
            log.warning("load cache: the record of %s is damaged (%s); read from the file", file, exc)
            return None


def _tokenizer_probe() -> str:
    """A digest of how the BM25 tokenizer splits a fixed text: cached token ids of another tokenizer are unusable."""
    return hashlib.md5("\0".join(bm25_terms(_PROBE)).encode()).hexdigest()


def drop_load_cache(folder: Path) -> None:
    """Remove the load cache of output folder ``folder`` (a store being encrypted must not keep its chunks in
    the clear beside it); a log line when there was one."""
    path = folder / LOAD_CACHE_FILE
    try:
        path.unlink()
    except FileNotFoundError:
        return
    except OSError as exc:
        log.warning("%s: could not remove the plaintext load cache of an encrypted store (%s)", path, exc)
        return
    log.info("%s: removed (an encrypted store keeps no load cache)", path)


def stamp_of(path: str | Path) -> Stamp | None:
    """The stamp of ``path`` now, None when it cannot be read."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_size, st.st_mtime_ns, st.st_ino)


def read_cache(config: CacheConfig, dim: int | None) -> Cached | None:
    """The cache at ``config.path`` if it is whole and matches (format, model, ``dim`` when given, tokenizer);
    else None, with a log line saying why (none for a missing file)."""
    if not config.path.exists():
        return None
    try:
        with Confined(config.path.parent).open(config.path) as handle, np.load(handle, allow_pickle=False) as npz:
            size = os.fstat(handle.fileno()).st_size
            if any(i.compress_type != zipfile.ZIP_STORED or i.file_size > size for i in npz.zip.infolist()):
                raise ValueError("a member is compressed or larger than the file (this botbin stores them plain)")
            arrays = {name: npz[name] for name in npz.files}
        head = msgpack.unpackb(arrays.pop("meta").tobytes(), raw=False, strict_map_key=True)
        why = _mismatch(head, config, dim)
        if why:
            log.info("%s: %s; ignored, the index is read from its AIF-BIN files", config.path, why)
            return None
        return _checked(head, arrays)
    except Exception as exc:  # whatever a damaged file raises (EOFError, BadZipFile, ...): a cache never stops a load
        log.warning("%s: unreadable load cache (%s: %s); ignored and rewritten", config.path, type(exc).__name__, exc)
        return None


def _mismatch(head: Any, config: CacheConfig, dim: int | None) -> str | None:
    if not isinstance(head, dict) or head.get("format") != FORMAT:
        return f"format {head.get('format') if isinstance(head, dict) else None!r}, this botbin writes {FORMAT}"
    if head.get("model") != config.model:
        return f"written for model {head.get('model')!r}, not {config.model!r}"
    if dim is not None and head.get("dim") != dim:
        return f"dimension {head.get('dim')}, the model gives {dim}"
    if head.get("tokenizer") != _tokenizer_probe():
        return "written by another BM25 tokenizer"
    return None


_DTYPES = {
    "stamps": np.int64,
    "counts": np.int64,
    "chunk_ints": np.int64,
    "matrix": np.float32,
    "centroids": np.float32,
    "keys": np.int64,
    "tokens": np.int32,
    "token_ends": np.int64,
    "bm25_indptr": np.int64,
    "bm25_slots": np.int32,
    "bm25_tfs": np.float32,
}
"""What ``write_cache`` stores, array by array: a file read back with another type is not this botbin's."""


def _checked(head: dict[str, Any], arrays: dict[str, npt.NDArray[Any]]) -> Cached:
    """Raises ValueError when the arrays do not fit the notes listed (a torn, tampered or foreign file)."""
    for name, dtype in _DTYPES.items():
        if arrays[name].dtype != dtype:
            raise ValueError(f"{name} is {arrays[name].dtype}, expected {np.dtype(dtype)}")
    counts, stamps = arrays["counts"], arrays["stamps"]
    table = Table.read(head["notes"], head["chunks"], counts, arrays["chunk_ints"])
    files: list[str] = table.notes["file"]
    rows, dim = len(table.chunks["text"]), int(head["dim"])
    ends = arrays["token_ends"]
    if rows and (ends.shape != (rows,) or int(ends[0]) < 0 or bool((np.diff(ends) < 0).any())):
        raise ValueError("token_ends go backwards")
    shapes = {
        "stamps": (len(files), 3),
        "matrix": (rows, dim),
        "centroids": (len(files), dim),
        "keys": (rows,),
        "token_ends": (rows,),
        "tokens": (int(ends[-1]) if rows else 0,),
    }
    for name, shape in shapes.items():
        if arrays[name].shape != shape:
            raise ValueError(f"{name} has shape {arrays[name].shape}, expected {shape}")
    vocab: list[str] = head["vocab"]
    if not isinstance(vocab, list) or not all(isinstance(term, str) for term in vocab):
        raise ValueError("the vocabulary is not a list of strings")
    _check_values(arrays, rows, len(vocab))
    stamp_list: list[Stamp] = list(map(tuple, stamps.tolist()))
    return Cached(vocab, dict(zip(files, stamp_list, strict=True)), {f: i for i, f in enumerate(files)}, table, arrays)


def _check_values(arrays: dict[str, npt.NDArray[Any]], rows: int, terms: int) -> None:
    """Raises ValueError for a value out of range: a NaN vector, a token id or posting outside its table."""
    for name in ("matrix", "centroids"):  # a NaN would rank nowhere and poison every sum it joins
        values = arrays[name]
        if not np.isfinite(values).all() or (values.size and float(np.abs(values).max()) > MAX_COMPONENT):
            raise ValueError(f"{name} holds NaN, infinite or out-of-range values")
    tokens = arrays["tokens"]
    if tokens.size and (int(tokens.max()) >= terms or int(tokens.min()) < 0):
        raise ValueError("a token id lies outside the vocabulary")
    indptr, slots, tfs = arrays["bm25_indptr"], arrays["bm25_slots"], arrays["bm25_tfs"]
    postings = len(slots)
    if indptr.shape != (terms + 1,) or int(indptr[0]) != 0 or int(indptr[-1]) != postings or tfs.shape != (postings,):
        raise ValueError("the BM25 postings do not fit the vocabulary")
    if len(indptr) > 1 and bool((np.diff(indptr) < 0).any()):
        raise ValueError("the BM25 posting offsets go backwards")
    if postings and (int(slots.max()) >= rows or int(slots.min()) < 0):
        raise ValueError("a BM25 posting names a chunk outside the table")
    if postings and not (np.isfinite(tfs).all() and float(tfs.min()) >= 0):
        raise ValueError("a BM25 term count is negative or not finite")


def write_cache(config: CacheConfig, dim: int, notes: list[tuple[str, Stamp, NoteEntry]], vocab: list[str]) -> None:
    """Write the cache of ``notes`` ((AIF-BIN file, its stamp when read, entry), entries made against ``vocab``)
    atomically; the vocabulary is compacted to the terms in use. A failure is logged, never raised."""
    tokens = [t for _, _, n in notes for t in n.tokens]
    lengths = np.fromiter((len(t) for t in tokens), dtype=np.int64, count=len(tokens))
    flat = np.concatenate(tokens).astype(np.int64) if tokens else np.zeros(0, dtype=np.int64)
    present = np.zeros(len(vocab), dtype=bool)
    present[flat] = True
    used = np.flatnonzero(present)  # O(tokens), where np.unique's sort took 0.5 s at 27k chunks
    compact = (np.cumsum(present) - 1)[flat]
    head = {
        "format": FORMAT,
        "model": config.model,
        "dim": dim,
        "tokenizer": _tokenizer_probe(),
        "vocab": [vocab[i] for i in used.tolist()],
    }
    entries = [n for _, _, n in notes]
    head["notes"], note_arrays = note_columns(notes)
    head["chunks"], chunk_ints = chunk_columns(entries)
    arrays = note_arrays | {
        "meta": np.frombuffer(msgpack.packb(head, use_bin_type=True), dtype=np.uint8),
        "chunk_ints": chunk_ints,
        "matrix": _stack([n.matrix for n in entries if len(n.chunks)], (0, dim), np.float32),
        "centroids": np.stack([n.centroid if n.centroid is not None else np.zeros(dim, np.float32) for n in entries])
        if entries
        else np.zeros((0, dim), dtype=np.float32),
        "keys": _stack([n.keys for n in entries], (0,), np.int64),
        "tokens": compact.astype(np.int32).reshape(-1),
        "token_ends": np.cumsum(lengths).astype(np.int64),
    }
    main = flat_main_segment(compact.astype(np.int64), lengths, len(used))
    arrays |= {"bm25_indptr": main.indptr, "bm25_slots": main.slots, "bm25_tfs": main.tfs}
    tmp = writer_temp(config.path)  # a full sync removes it once this process is gone (sync/atomic.py)
    if _encrypted(config.path):
        return
    try:
        savez: Any = np.savez  # numpy's stub takes the first keyword for allow_pickle
        with open_private(tmp) as out:  # 0600 under any umask: it holds the notes' words
            savez(out, **arrays)
        os.replace(tmp, config.path)
        if _encrypted(config.path):  # encrypted while this was written: its chunks must not stay in the clear
            drop_load_cache(config.path.parent)
    except OSError as exc:
        log.warning("%s: could not write the load cache (%s); the next start reads the AIF-BIN files", config.path, exc)
        tmp.unlink(missing_ok=True)


def _encrypted(path: Path) -> bool:
    """True when the store of the cache at ``path`` was encrypted (maybe since its index was read, by this
    process or another): a write that waited for the first search must not put its chunks in the clear."""
    from botbin.sync.encryption import MARKER_FILE

    return (path.parent / MARKER_FILE).exists()


def _stack(parts: list[npt.NDArray[Any]], empty: tuple[int, ...], dtype: type) -> npt.NDArray[Any]:
    return np.concatenate(parts).astype(dtype, copy=False) if parts else np.zeros(empty, dtype=dtype)


WRITE_WAIT_S = 30.0
"""Longest wait of a background write for the process's first search (then it writes anyway)."""
_writers: list[threading.Thread] = []
_searched = threading.Event()
"""Set by the first search of the process: a write that competes with the first answer would delay it."""


def searched() -> None:
    """A search ended (MemoryIndex.search calls this): background writes may go."""
    _searched.set()


def write_in_background(
    config: CacheConfig, dim: int, notes: list[tuple[str, Stamp, NoteEntry]], vocab: list[str]
) -> None:
    """``write_cache`` on a daemon thread, after the process's first search (or WRITE_WAIT_S); a process that
    exits first writes it at exit (the entries are not changed afterwards: a patch replaces an entry)."""

    def write() -> None:
        _searched.wait(WRITE_WAIT_S)
        write_cache(config, dim, notes, vocab)

    thread = threading.Thread(target=write, name="botbin-load-cache", daemon=True)
    if not _writers:
        atexit.register(wait_writes)
    _writers.append(thread)
    thread.start()


def wait_writes() -> None:
    """Let the background writes go now and block until they have ended (at exit; tests, benchmarks)."""
    _searched.set()
    while _writers:
        _writers.pop().join()
