"""Coverage-guided fuzzing with atheris (libFuzzer), optional: the same promises as tests/fuzz, on raw bytes.

Run from the repo root with the venv active and ``pip install atheris``:
``python bench/fuzz_atheris.py aifbin|markdown [libFuzzer flags, e.g. -max_total_time=60 -runs=100000]``.

Targets: ``aifbin`` feeds the bytes to ``decode`` and ``decode_metadata`` (``aifbin_cases.check_decode``: only
AifBinFormatError, under 1 s, allocation bounded), seeded with the real files the tests start from;
``markdown`` feeds them to ``prepare_note`` and ``lex`` (``markdown_cases.check_prepare`` / ``check_lex``: only
ParseError for a binary file, under 1 s, invariants kept), seeded with the markdown fixtures. A broken promise
is an uncaught exception: libFuzzer prints it with the input and stops. libFuzzer prints the run count and
executions per second on stderr. Seeds and crash inputs go to a temp folder, never into the repo.
"""

from __future__ import annotations

import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

import atheris

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "fuzz"))

with atheris.instrument_imports(include=["botbin"]):
    import aifbin_cases
    import markdown_cases

    from botbin.chunking import ChunkerParams


def fuzz_aifbin(data: bytes) -> None:
    aifbin_cases.check_decode(data)


def fuzz_markdown(data: bytes) -> None:
    markdown_cases.check_prepare("MEMORY.md" if data[:1] == b"M" else "memory/note.md", data, ChunkerParams(32, 8, 4))
    text = markdown_cases.check_decode_note(data)
    if text is not None:
        markdown_cases.check_lex(text)


def seeds(target: str) -> list[bytes]:
    if target == "aifbin":
        return list(aifbin_cases.BASE_FILES)
    return [p.read_bytes() for p in sorted((REPO / "tests" / "fixtures").rglob("*.md"))]


def main() -> None:
    targets: dict[str, Callable[[bytes], None]] = {"aifbin": fuzz_aifbin, "markdown": fuzz_markdown}
    if len(sys.argv) < 2 or sys.argv[1] not in targets:
        sys.exit(f"usage: {sys.argv[0]} {{{'|'.join(targets)}}} [libFuzzer flags]")
    target = sys.argv[1]
    work = Path(tempfile.mkdtemp(prefix=f"botbin-atheris-{target}-"))
    corpus = work / "corpus"
    corpus.mkdir()
    for i, seed in enumerate(seeds(target)):
        (corpus / f"seed{i}").write_bytes(seed)
    markdown_cases.counter()  # load the tokenizer before the first timed input
    flags = [f"-artifact_prefix={work}/", "-timeout=5", "-print_final_stats=1", *sys.argv[2:]]
    print(f"atheris {target}: corpus and crashes in {work}", file=sys.stderr)
    atheris.Setup([sys.argv[0], *flags, str(corpus)], targets[target])
    atheris.Fuzz()


if __name__ == "__main__":
    main()
