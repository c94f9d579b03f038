"""Optional abstractive distillation through an OpenAI-compatible endpoint (a local LLM server such as
llama.cpp's ``llama-server``, Ollama or vLLM), accepted only when it stays close to its sources.

The check (``closeness``) embeds the candidate and the sources with the same model as the index:

- centroid similarity: cosine of the candidate to the mean of the source embeddings >= ``min_centroid``
  (0.8), so the summary is about what the sources say;
- per-source coverage: cosine to each single source >= ``min_coverage`` (0.5), so no source is dropped.

Otherwise (or when the endpoint fails) the extractive root is kept. Only the standard library speaks HTTP,
with a timeout; the request sends the source texts to the configured URL and nowhere else.
"""

from __future__ import annotations

import json
import logging
import urllib.error
import urllib.request
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

log = logging.getLogger(__name__)

PROMPT = (
    "Merge these notes into ONE short sentence that states the lasting fact or preference they share. "
    "Use only what the notes say. Answer with the sentence alone."
)
TIMEOUT_S = 60.0


@dataclass(frozen=True)
class Closeness:
    """How close a candidate summary is to its sources."""

    centroid: float
    """Cosine of the candidate to the sources' mean embedding."""
    coverage: float
    """Lowest cosine of the candidate to any one source."""
    accepted: bool


def closeness(
    candidate: npt.NDArray[np.float32], sources: npt.NDArray[np.float32], min_centroid: float, min_coverage: float
) -> Closeness:
    """``candidate`` float32 (dim,) and ``sources`` float32 (n, dim), normalized rows."""
    centroid = sources.mean(axis=0)
    norm = float(np.linalg.norm(centroid))
    c = float(candidate @ centroid) / norm if norm > 0 else 0.0
    cover = float((sources @ candidate).min()) if len(sources) else 0.0
    return Closeness(c, cover, c >= min_centroid and cover >= min_coverage)


def complete(
    endpoint: str, model: str, sources: list[str], api_key: str | None = None, timeout_s: float = TIMEOUT_S
) -> str | None:
    """The endpoint's one-sentence merge of ``sources`` (POST ``{endpoint}/chat/completions``), or None
    with a logged warning if it cannot be reached or answers with something unusable."""
    body = json.dumps(
        {
            "model": model,
            "temperature": 0,
            "messages": [
                {"role": "system", "content": PROMPT},
                {"role": "user", "content": "\n".join(f"- {s}" for s in sources)},
            ],
        }
    ).encode()
    headers = {"Content-Type": "application/json"}
    if api_key:
        headers["Authorization"] = f"Bearer {api_key}"
    url = endpoint.rstrip("/") + "/chat/completions"
    try:
        with urllib.request.urlopen(urllib.request.Request(url, body, headers), timeout=timeout_s) as resp:
            answer = json.loads(resp.read().decode("utf-8"))
        text = answer["choices"][0]["message"]["content"]
    except (OSError, urllib.error.URLError, ValueError, KeyError, IndexError, TypeError) as exc:
        log.warning("distill endpoint %s failed (%s); using the extractive summary", url, exc)
        return None
    if not isinstance(text, str) or not text.strip():
        log.warning("distill endpoint %s gave an empty answer; using the extractive summary", url)
        return None
    return " ".join(text.split())
