"""Embedding benchmark: chunks/s of all-MiniLM-L6-v2 on the Obsidian help vault's real chunks, five ways, and how
far each faster variant's vectors and search results drift from plain fp32.

Variants: ``plain`` (``SentenceTransformer.encode``, batch 32), ``botbin`` (its embedder: batches of 32 sorted by
token count), ``onnx_fp32`` (the model exported to ONNX here, from the packaged folder, run by ONNX Runtime with
the same sorted batching), ``onnx_int8`` (that ONNX file after ONNX Runtime's dynamic int8 quantization) and
``torch_int8`` (``torch.ao.quantization.quantize_dynamic`` of the Linear layers). onnxruntime / onnx / onnxscript
are optional (bench/requirements-optional.txt): without them the ONNX variants are skipped with a note.

Run from the repo root with the venv active: ``python bench/bench_embed.py [--reexport]``. The ONNX files are
cached in bench/out/onnx-minilm (git-ignored). Prints one JSON object on stdout; about 3-4 min on an idle 2-core
machine (plus ~1 min for the first ONNX export). botbin's runtime embedder is not changed by this script.
"""

from __future__ import annotations

import argparse
import copy
import functools
import json
import shutil
import tempfile
import warnings
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from botbin.aifbin import AifBinDocument
from botbin.chunking import ChunkerParams
from botbin.embedding import (
    BUNDLED_MODEL_ID,
    ModelSpec,
    SentenceTransformerEmbedder,
    WordPieceCounter,
    bundled_model_path,
    model_info,
)
from botbin.index.hits import IndexQuery
from botbin.index.store import MemoryIndex
from botbin.service import MemoryService
from botbin.sync.documents import prepare_note
from common import HashEmbedder, load_average, log, peak_rss_mb, r, timed_cpu

REPO = Path(__file__).resolve().parents[1]
OBSIDIAN_HELP = (REPO / ".." / "shared" / "data" / "obsidian-help" / "en").resolve()
QUERIES = REPO / "bench" / "data" / "obsidian_queries.jsonl"
ONNX_DIR = REPO / "bench" / "out" / "onnx-minilm"
BATCH = 32
K = 10
SEARCHES = 100
ADOPT_MAX_DROP = 0.005
VAULT = {"vault": True}

Vectors = npt.NDArray[np.float32]
Embed = Callable[[list[str]], Vectors]


def vault_chunks(tmp: Path, max_notes: int | None) -> tuple[list[str], dict[str, AifBinDocument]]:
    """Unique texts the model sees when botbin syncs the vault (each chunk's embed_text, deduplicated by
    text_md5 like the engine), and the synced documents (fake vectors; replaced per variant below).
    ``max_notes``: only the first N notes (sorted paths; a quick smoke test)."""
    ws = tmp / "vault"
    if max_notes is None:
        shutil.copytree(OBSIDIAN_HELP, ws)
    for src in sorted(OBSIDIAN_HELP.rglob("*.md"))[:max_notes] if max_notes is not None else []:
        (ws / src.relative_to(OBSIDIAN_HELP)).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src, ws / src.relative_to(OBSIDIAN_HELP))
    svc = MemoryService(ws, VAULT, embedder=HashEmbedder(BUNDLED_MODEL_ID))
    report = svc.sync(keep_documents=True)
    s = svc.settings
    params = ChunkerParams(min(s.target_tokens, svc.ws.models.meta.max_tokens), s.overlap_tokens, s.min_tokens)
    texts: dict[str, str] = {}
    for rel in sorted(report.documents):
        for chunk in prepare_note(rel, (ws / rel).read_bytes(), svc.ws.models.counter, params).chunks:
            texts.setdefault(chunk.text_md5, chunk.embed_text)
    order = {md5: i for i, md5 in enumerate(texts)}
    if any(c.text_md5 not in order for d in report.documents.values() for c in d.chunks):
        raise RuntimeError("re-chunking did not reproduce the synced chunks")
    return list(texts.values()), dict(report.documents)


def search_queries() -> tuple[list[dict[str, Any]], list[str]]:
    """The labelled query rows (bench/data/obsidian_queries.jsonl, if present) and the query texts: every
    labelled one, then note titles of the vault up to SEARCHES in all."""
    rows = (
        [json.loads(x) for x in QUERIES.read_text(encoding="utf-8").splitlines() if x.strip()]
        if QUERIES.exists()
        else []
    )
    texts = [row["q"] for row in rows]
    titles = sorted({p.stem for p in OBSIDIAN_HELP.rglob("*.md")})
    texts += titles[:: max(1, len(titles) // SEARCHES)][: max(0, SEARCHES - len(texts))]
    return rows, texts


def sorted_batches(counter: WordPieceCounter, encode: Embed) -> Embed:
    """``encode`` applied to batches of BATCH texts sorted by token count (botbin's batching)."""

    def embed(texts: list[str]) -> Vectors:
        order = np.argsort(counter.count_many(texts), kind="stable")
        out = np.empty((len(texts), 384), dtype=np.float32)
        for s in range(0, len(order), BATCH):
            rows = order[s : s + BATCH]
            out[rows] = encode([texts[i] for i in rows])
        return out

    return embed


def export_onnx(model_dir: Path, reexport: bool) -> tuple[Path, Path, dict[str, Any]]:
    """fp32 and int8 ONNX files of the model's transformer (no pooling), cached in ONNX_DIR."""
    import onnxruntime  # type: ignore[import-untyped,unused-ignore]
    import torch
    from onnxruntime.quantization import QuantType, quantize_dynamic  # type: ignore[import-untyped,unused-ignore]
    from sentence_transformers import SentenceTransformer

    fp32, int8, stamp = ONNX_DIR / "model.onnx", ONNX_DIR / "model-int8.onnx", ONNX_DIR / "source.json"
    source = {
        "recipe": 3,
        "model_dir": str(model_dir),
        "torch": torch.__version__,
        "weights_bytes": (model_dir / "model.safetensors").stat().st_size,
    }
    if not reexport and fp32.exists() and int8.exists() and stamp.exists() and json.loads(stamp.read_text()) == source:
        return fp32, int8, {"cached": str(ONNX_DIR.relative_to(REPO))}
    ONNX_DIR.mkdir(parents=True, exist_ok=True)
    bert: Any = SentenceTransformer(str(model_dir), device="cpu", local_files_only=True)[0].auto_model
    bert.eval()

    class Wrapped(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.bert = bert

        def forward(self, ids: Any, mask: Any, types: Any) -> Any:
            return self.bert(input_ids=ids, attention_mask=mask, token_type_ids=types).last_hidden_state

    # A padded sample: traced with an all-ones mask, the exporter drops the mask (wrong vectors for padded rows).
    ids, mask = tokenized(model_dir, ["a short text", "a longer text, with padding in the other row of the batch"])
    sample = (torch.from_numpy(ids), torch.from_numpy(mask), torch.zeros_like(torch.from_numpy(ids)))
    dims = {"ids": {0: torch.export.Dim("batch"), 1: torch.export.Dim("seq")}}
    dims |= {"mask": dims["ids"], "types": dims["ids"]}
    # dynamo=True: the TorchScript exporter (dynamo=False) gives wrong outputs (max diff ~2) for transformers 5.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        seconds, _, _ = timed_cpu(
            lambda: torch.onnx.export(
                Wrapped(),
                sample,
                str(fp32),
                input_names=["ids", "mask", "types"],
                output_names=["hidden"],
                dynamic_shapes=dims,
                opset_version=18,
                dynamo=True,
                external_data=False,
                verbose=False,
            )
        )
        # Per-channel weight scales: per-tensor ones (the default) give a mean cosine of 0.94 to fp32 here.
        q_s, _, _ = timed_cpu(
            lambda: quantize_dynamic(  # type: ignore[no-untyped-call,unused-ignore]
                str(fp32), str(int8), weight_type=QuantType.QInt8, per_channel=True
            )
        )
    # Check the export on a batch of another shape before trusting it.
    ids, mask = tokenized(model_dir, ["one", "two words", "and a third, longer text than the other two are"])
    with torch.no_grad():
        want = Wrapped()(torch.from_numpy(ids), torch.from_numpy(mask), torch.zeros_like(torch.from_numpy(ids)))
    got = onnxruntime.InferenceSession(str(fp32), providers=["CPUExecutionProvider"]).run(
        None, {"ids": ids, "mask": mask, "types": np.zeros_like(ids)}
    )[0]
    diff = float(np.abs(got - want.numpy())[mask.astype(bool)].max())
    if diff > 1e-3:
        raise RuntimeError(f"the ONNX export differs from torch by {diff} on unpadded tokens")
    stamp.write_text(json.dumps(source))
    return (
        fp32,
        int8,
        {
            "export_s": r(seconds),
            "quantize_s": r(q_s),
            "exporter": "torch.onnx.export(dynamo=True)",
            "max_abs_diff_vs_torch_hidden": diff,
        },
    )


@functools.cache
def padding_tokenizer(model_dir: Path) -> Any:
    """The model's fast tokenizer, truncating at its limit (256 tokens with [CLS]/[SEP]) and padding batches."""
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
    tok.enable_truncation(model_info(ModelSpec(BUNDLED_MODEL_ID, model_dir))[1])
    tok.enable_padding(pad_id=0, pad_token="[PAD]")
    return tok


def tokenized(model_dir: Path, texts: list[str]) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """(input ids, attention mask) of ``texts``, padded to the longest, truncated at the model's limit."""
    enc = padding_tokenizer(model_dir).encode_batch(texts)
    return (np.array([e.ids for e in enc], dtype=np.int64), np.array([e.attention_mask for e in enc], dtype=np.int64))


def onnx_embedder(path: Path, model_dir: Path, counter: WordPieceCounter) -> tuple[Embed, dict[str, Any]]:
    import onnxruntime as ort  # type: ignore[import-untyped,unused-ignore]

    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])

    def encode(texts: list[str]) -> Vectors:
        ids, mask = tokenized(model_dir, texts)
        hidden = session.run(None, {"ids": ids, "mask": mask, "types": np.zeros_like(ids)})[0]
        m = mask[:, :, None].astype(np.float32)
        pooled = (hidden * m).sum(axis=1) / np.maximum(m.sum(axis=1), 1e-9)  # mean pooling, as the model card
        out: Vectors = (pooled / np.linalg.norm(pooled, axis=1, keepdims=True)).astype(np.float32)
        return out

    return sorted_batches(counter, encode), {
        "onnxruntime": ort.__version__,
        "file_bytes": path.stat().st_size,
        "intra_op_threads": session.get_session_options().intra_op_num_threads,
    }


def st_backend_onnx(model_dir: Path) -> dict[str, Any]:
    """Whether sentence-transformers' own ``backend="onnx"`` loads here (it needs optimum-onnx)."""
    try:
        from sentence_transformers import SentenceTransformer

        SentenceTransformer(str(model_dir), device="cpu", local_files_only=True, backend="onnx")
        return {"available": True, "note": "loads, but not timed here: the same ONNX Runtime as onnx_fp32"}
    except Exception as exc:  # report why, whatever it is
        return {
            "available": False,
            "why": f"{type(exc).__name__}: {str(exc)[:300]}",
            "note": "optimum-onnx 0.1 (its provider) pins transformers<4.58; botbin's venv has transformers 5, "
            "so it is not installed: the model is exported with torch.onnx instead",
        }


def variants(model_dir: Path, counter: WordPieceCounter, reexport: bool) -> tuple[dict[str, Embed], dict[str, Any]]:
    import torch
    from sentence_transformers import SentenceTransformer

    notes: dict[str, Any] = {"torch": torch.__version__, "torch_threads": torch.get_num_threads()}
    plain = SentenceTransformer(str(model_dir), device="cpu", local_files_only=True)
    out: dict[str, Embed] = {
        "plain": lambda t: np.asarray(
            plain.encode(
                t, batch_size=BATCH, normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False
            ),
            dtype=np.float32,
        ),
        "botbin": SentenceTransformerEmbedder(ModelSpec(BUNDLED_MODEL_ID, model_dir), BATCH).embed,
    }
    try:
        log("ONNX export (cached after the first run)")
        fp32, int8, notes["onnx_export"] = export_onnx(model_dir, reexport)
        out["onnx_fp32"], notes["onnx_fp32"] = onnx_embedder(fp32, model_dir, counter)
        out["onnx_int8"], notes["onnx_int8"] = onnx_embedder(int8, model_dir, counter)
        notes["onnx_int8"]["quantization"] = "onnxruntime.quantization.quantize_dynamic, QInt8 weights per channel"
    except Exception as exc:  # optional: report why and go on
        notes["onnx_skipped"] = (
            f"{type(exc).__name__}: {str(exc)[:300]}; pip install -r bench/requirements-optional.txt"
        )
    notes["sentence_transformers_backend_onnx"] = st_backend_onnx(model_dir)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            # Per-channel weight scales: per-tensor ones ({nn.Linear}) give a mean cosine of 0.92 to fp32 here.
            spec = {torch.nn.Linear: torch.ao.quantization.per_channel_dynamic_qconfig}
            quant = torch.ao.quantization.quantize_dynamic(  # type: ignore[no-untyped-call,unused-ignore]
                copy.deepcopy(plain), spec, dtype=torch.qint8
            )

        def encode_q(texts: list[str]) -> Vectors:
            return np.asarray(
                quant.encode(
                    texts,
                    batch_size=len(texts),
                    normalize_embeddings=True,
                    convert_to_numpy=True,
                    show_progress_bar=False,
                ),
                dtype=np.float32,
            )

        out["torch_int8"] = sorted_batches(counter, encode_q)
        notes["torch_int8"] = {
            "quantization": "torch.ao.quantization.quantize_dynamic(nn.Linear: per_channel_dynamic_qconfig, qint8)",
            "engine": torch.backends.quantized.engine,
        }
    except Exception as exc:  # optional too
        notes["torch_int8_skipped"] = f"{type(exc).__name__}: {str(exc)[:300]}"
    return out, notes


def with_vectors(docs: dict[str, AifBinDocument], vectors: Vectors, row: dict[str, int]) -> MemoryIndex:
    """A MemoryIndex of the synced documents carrying ``vectors`` (row of each chunk by text_md5)."""
    index = MemoryIndex(384)
    for doc in docs.values():
        index.upsert(
            AifBinDocument(doc.metadata, tuple(replace(c, embedding=vectors[row[c.text_md5]]) for c in doc.chunks))
        )
    return index


def quality(rows: list[dict[str, Any]], ranked: list[list[str]]) -> dict[str, float]:
    """hit@10 / MRR@10 of each row's target note among the paths of the k chunks returned."""
    ranks = [
        next((i + 1 for i, p in enumerate(paths[:K]) if p == row["target"]), None)
        for row, paths in zip(rows, ranked, strict=False)
    ]
    n = max(1, len(ranks))
    return {
        "queries": len(ranks),
        "hit_at_10": r(sum(1 for x in ranks if x) / n),
        "mrr_at_10": r(sum(1 / x for x in ranks if x) / n),
    }


def agreement(a: list[list[Any]], b: list[list[Any]]) -> float:
    """Mean share of b's top K found in a's top K (recall@K of a against b)."""
    return r(float(np.mean([len(set(x) & set(y)) / K for x, y in zip(a, b, strict=True)])))


def run(reexport: bool, max_notes: int | None = None) -> dict[str, Any]:
    load_start = load_average()
    model_dir = bundled_model_path()
    counter = WordPieceCounter(model_dir)
    with tempfile.TemporaryDirectory(prefix="botbin-embed-") as name:
        log(f"chunking {OBSIDIAN_HELP} with botbin")
        texts, docs = vault_chunks(Path(name), max_notes)
    rows, queries = search_queries()
    row = {md5: i for i, md5 in enumerate(dict.fromkeys(c.text_md5 for d in sorted(docs) for c in docs[d].chunks))}
    embedders, notes = variants(model_dir, counter, reexport)
    results: dict[str, Any] = {}
    ref_vecs: Vectors | None = None
    ref_hits: list[list[tuple[str, int]]] = []
    ref_vec_top: list[list[int]] = []
    for name, embed in embedders.items():
        log(f"{name}: warm-up, then {len(texts)} chunks")
        embed(texts[:BATCH])
        seconds, cpu, vecs = timed_cpu(lambda e=embed: e(texts))  # type: ignore[misc]
        qvecs = embed(queries)
        index = with_vectors(docs, vecs, row)
        hits = [index.search(IndexQuery(q, qvecs[i], K)) for i, q in enumerate(queries)]
        keys = [[(h.path, h.start_line) for h in hs] for hs in hits]
        vec_top = [np.argsort(-(vecs @ qvecs[i]), kind="stable")[:K].tolist() for i in range(len(queries))]
        res: dict[str, Any] = {
            "seconds": r(seconds),
            "cpu_seconds": r(cpu),
            "chunks_per_s": r(len(texts) / seconds, 1),
            "quality_hybrid": quality(rows, [[h.path for h in hs] for hs in hits]),
        }
        if ref_vecs is None:
            ref_vecs, ref_hits, ref_vec_top = vecs, keys, vec_top
        else:
            cos = np.sum(vecs * ref_vecs, axis=1)
            res |= {
                "max_abs_diff_vs_plain": float(np.abs(vecs - ref_vecs).max()),
                "mean_cosine_vs_plain": r(cos.mean(), 6),
                "min_cosine_vs_plain": r(cos.min(), 6),
                "top10_agreement_hybrid": agreement(keys, ref_hits),
                "top10_agreement_vector_only": agreement(vec_top, ref_vec_top),
            }
        results[name] = res
    base, ref_q = results["botbin"], results["plain"]["quality_hybrid"]
    for name, res in results.items():
        res["speedup_vs_botbin"] = r(base["seconds"] / res["seconds"], 2)
        q = res["quality_hybrid"]
        drop = max(ref_q["hit_at_10"] - q["hit_at_10"], ref_q["mrr_at_10"] - q["mrr_at_10"])
        res["quality_drop_vs_plain"] = r(drop)
        if name not in ("plain", "botbin"):
            res["adoptable"] = bool(rows) and drop < ADOPT_MAX_DROP and res["speedup_vs_botbin"] > 1.0
    return {
        "vault": str(OBSIDIAN_HELP),
        "max_notes": max_notes,
        "chunks": len(texts),
        "batch_size": BATCH,
        "searches": len(queries),
        "labelled_queries": len(rows),
        "k": K,
        "adoption_rule": f"quality drop < {ADOPT_MAX_DROP} and faster than botbin",
        **notes,
        "variants": results,
        "peak_rss_mb": r(peak_rss_mb(), 1),
        "load_average_1_5_15": {"start": load_start, "end": load_average()},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--reexport", action="store_true", help="export and quantize the ONNX model again")
    parser.add_argument("--max-notes", type=int, help="embed only the first N notes (smoke test)")
    args = parser.parse_args()
    print(json.dumps(run(args.reexport, args.max_notes), indent=2))


if __name__ == "__main__":
    main()
