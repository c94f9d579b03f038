"""Loading an index from its AIF-BIN files: each note from the load cache (index/load_cache.py) while its file is
unchanged since the cache was written, else decoded from the file; a bad file is skipped with a warning."""

from __future__ import annotations

import gc
import logging
import os
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from botbin.aifbin import AifBinDocument, decode
from botbin.errors import AifBinFormatError
from botbin.index.ann_live import AnnConfig
from botbin.index.cache_table import Stamp
from botbin.index.entry import NoteEntry
from botbin.index.load_cache import CacheConfig, Cached, read_cache, stamp_of, write_in_background
from botbin.index.store import MemoryIndex
from botbin.sync.confine import Confined

if TYPE_CHECKING:
    from botbin.crypto.cipher import Keyring

log = logging.getLogger(__name__)


def load_index(
    files: Sequence[str | Path],
    dim: int | None,
    damaged: list[Path] | None = None,
    keyring: Keyring | None = None,
    ann: AnnConfig | None = None,
    cache: CacheConfig | None = None,
    owner: Owner | None = None,
) -> tuple[MemoryIndex, list[str]]:
    """Read AIF-BIN ``files`` (paths or their strings) into a new index (``keyring`` opens encrypted ones, in
    memory only); a bad file is skipped with a warning naming it (and is appended to ``damaged`` when given).
    ``owner``: the output folder every file must stay in and the note each file must be the output of (the
    files are read back, so untrusted: a link out of the folder, or a file naming another note, is a bad file).
    ``ann``: the HNSW settings; past its threshold the HNSW index is loaded or built in the background (exact
    search meanwhile).
    ``cache``: the load cache (index/load_cache.py): notes whose file is unchanged since it was written come from
    it, the others from their files; it is rewritten in the background when it did not hold exactly ``files``.
    The cyclic garbage collector pauses meanwhile: a load makes a few objects per chunk and none of them is
    garbage, yet each collection walked every one made so far (0.3 s of a 1.3 s load at 27k chunks)
    (``_collector_paused``)."""
    with _collector_paused():
        return _load(files, dim, damaged, keyring, ann, cache, owner)


@contextmanager
def _collector_paused() -> Iterator[None]:
    """``gc`` disabled for the block, then enabled again unless it was off before (another load may run: it
    enables it when it ends, which costs this one only speed). In a process that freezes (``gc.freeze``: the
    botbin command's start-up imports, cli/startup.py) what exists after the load is frozen too, so that later
    collections need not walk the index; the previous load's objects are unfrozen first, so that a replaced
    index's cycles, if any, are still collected."""
    was_on, frozen = gc.isenabled(), gc.get_freeze_count() > 0
    if frozen:
        gc.unfreeze()
    gc.disable()
    try:
        yield
    finally:
        if frozen:
            gc.freeze()
        if was_on:
            gc.enable()


def _load(
    files: Sequence[str | Path],
    dim: int | None,
    damaged: list[Path] | None,
    keyring: Keyring | None,
    ann: AnnConfig | None,
    cache: CacheConfig | None,
    owner: Owner | None,
) -> tuple[MemoryIndex, list[str]]:
    index = MemoryIndex(dim, ann)
    warnings: list[str] = []
    cached = read_cache(cache, dim) if cache is not None else None
    if cached is not None:
        index.seed_vocab(cached.vocab)
    loaded: list[tuple[str, Stamp, NoteEntry]] = []
    hits = foreign = 0
    guard = Confined(owner.folder) if owner is not None else None
    for i, path in enumerate(files):
        key = os.fspath(path)  # a string from the caller: 10k Path joins cost 0.1-0.2 s
        stamp = stamp_of(key)
        source = owner.sources[i] if owner is not None else None
        try:
            hit = cached is not None and stamp is not None and cached.stamps.get(key) == stamp
            note = cached.entry(key) if cached is not None and hit else None
            if note is not None and source not in (None, note.path):  # a tampered record: its file decides
                note, foreign = None, foreign + 1
            if note is not None:
                index.put_entry(note)
                hits += 1
            else:
                note = index.upsert(_read_owned(key, keyring, guard, source, owner))
            if stamp is not None:
                loaded.append((key, stamp, note))
        except (OSError, AifBinFormatError, ValueError) as exc:
            reason = str(exc) if isinstance(exc, AifBinFormatError) else f"{key}: {exc}"
            warnings.append(f"{reason}; skipped, the next sync rebuilds it from its note")
            if damaged is not None:
                damaged.append(Path(key))
    if foreign and cache is not None:
        log.warning("%s: %d records name another note than their file's; read from the files", cache.path, foreign)
    adopted = cache is not None and _after_cache(index, cache, cached, [os.fspath(f) for f in files], loaded, hits)
    postings = " with its BM25 postings" if adopted else ""
    log.info("index loaded: %d notes, %d of them from the load cache%s", len(files), hits, postings)
    index.prepare_ann()
    return index, warnings


@dataclass(frozen=True)
class Owner:
    """What the files of a load must belong to."""

    folder: Path
    """The output folder: a file must stay in it (symbolic links resolved)."""
    sources: Sequence[str]
    """The note each file is the output of, in the order of the files."""
    model: str = ""
    """The model the state file says the files were embedded with ("": not checked): a file of another model is
    one a model migration's switch has just put in place (sync/tree_switch.py), and is read from ``elsewhere``."""
    elsewhere: Path | None = None
    """Where this model's files are kept while a switch replaces the live ones (the model's tree under the output
    folder, sync/model_trees.py): the file at the same place below it is read instead."""


def _read_owned(
    key: str, keyring: Keyring | None, guard: Confined | None, source: str | None, owner: Owner | None
) -> AifBinDocument:
    """``_read``, and when the file is of another model than ``owner.model`` (a switch is under way), the same
    note's file in ``owner.elsewhere``. Raises OSError or AifBinFormatError naming the file."""
    doc = _read(key, keyring, guard, source)
    if owner is None or not owner.model or _model_of(doc) == owner.model:
        return doc
    where = f"its metadata names the model {_model_of(doc)[:200]!r}, not the index's {owner.model[:200]!r}"
    if owner.elsewhere is None:
        raise AifBinFormatError(where, key)
    kept = os.path.join(owner.elsewhere, os.path.relpath(key, owner.folder))
    doc = _read(kept, keyring, guard, source)
    if _model_of(doc) != owner.model:
        raise AifBinFormatError(where, key)
    return doc


def _model_of(doc: AifBinDocument) -> str:
    model = doc.metadata.get("model")
    name = model.get("name") if isinstance(model, dict) else None
    return name if isinstance(name, str) else ""


def _read(key: str, keyring: Keyring | None, guard: Confined | None, source: str | None) -> AifBinDocument:
    """The document of AIF-BIN file ``key``, which must stay in ``guard``'s folder and be the output of note
    ``source`` (when given). Raises OSError or AifBinFormatError naming the file."""
    if guard is None:
        return decode(Path(key).read_bytes(), key, keyring)
    with guard.open(key) as handle:
        doc = decode(handle.read(), key, keyring)
    if source is not None and doc.source != source:
        raise AifBinFormatError(f"its metadata names the note {doc.source[:200]!r}, not {source!r}", key)
    return doc


def _after_cache(
    index: MemoryIndex,
    cache: CacheConfig,
    cached: Cached | None,
    files: list[str],
    loaded: list[tuple[str, Stamp, NoteEntry]],
    hits: int,
) -> bool:
    """Every note a hit, in the cache's order: adopt its BM25 postings (no rebuild at the first search; True).
    Else rewrite the cache in the background."""
    if cached is not None and hits == len(files) == len(cached.stamps) and cached.files == files:
        return index.adopt_lexical(cached.paths, cached.main_segment())
    if index.dim is not None:
        write_in_background(cache, index.dim, loaded, index.vocab_terms())
    return False
