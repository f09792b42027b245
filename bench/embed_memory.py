"""Peak memory and throughput of the documents session, settings against settings, in one run.

Chunks every source file under ``--source`` with ided's chunker and embeds their document texts
with ``OnnxEmbedder`` (the bundled model, the documents session, as the embedding worker does), each
setting in a fresh child process per round (rounds interleaved, so machine noise hits all alike).
A child reports its peak RSS (``ru_maxrss``) after loading the session and after embedding, and
chunks/s. Prints per setting the median chunks/s, the highest peak, and the ratios to the first.

Settings: ``--setting LABEL=JSON`` (keyword arguments of ``OnnxEmbedder``, plus ``model_dir`` for
another model directory); by default ``no-arena`` (onnxruntime's memory arena off) against
``default`` (the embedder's defaults).

Usage: ``python bench/embed_memory.py --source DIR [--rounds 2] [--limit N] [--setting LABEL=JSON ...]``
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

DEFAULT_SETTINGS = {
    "no-arena": {"memory_arena": False},
    "default": {},
}


def child(source: Path, kwargs: dict[str, Any], limit: int | None) -> None:
    from daemon.config import EmbeddingConfig, default_cache_root
    from daemon.core.languages import language_for_path
    from daemon.index.embed_text import document_text
    from daemon.index.embedder import OnnxEmbedder
    from daemon.index.model_files import resolve_model_dir
    from daemon.intel.chunking import chunk_source

    texts: list[str] = []
    for path in sorted(source.rglob("*")):
        rel = path.relative_to(source).as_posix()
        language = language_for_path(rel)
        if path.is_file() and language is not None:
            texts += [document_text(c) for c in chunk_source(rel, path.read_bytes(), language)]
    texts = texts[:limit] if limit else texts
    config = EmbeddingConfig()
    model_dir = kwargs.pop("model_dir", None)
    model = OnnxEmbedder(
        Path(model_dir) if model_dir else resolve_model_dir(config.model_dir, default_cache_root()),
        max_tokens=config.max_tokens,
        batch_size=config.batch_size,
        load="documents",
        **kwargs,
    )
    loaded = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    started = time.perf_counter()
    model.embed_texts(texts)
    seconds = time.perf_counter() - started
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"chunks": len(texts), "cps": len(texts) / seconds, "loaded_mb": loaded, "peak_mb": peak}))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--source", type=Path, required=True)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--setting", action="append", default=[], help="LABEL=JSON keyword arguments")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child is not None:
        child(args.source, json.loads(args.child), args.limit)
        return
    settings = {label: json.loads(text) for label, _, text in (s.partition("=") for s in args.setting)}
    settings = settings or DEFAULT_SETTINGS
    runs: dict[str, list[dict[str, float]]] = {label: [] for label in settings}
    for _ in range(args.rounds):
        for label, kwargs in settings.items():
            command = [sys.executable, __file__, "--source", str(args.source), "--child", json.dumps(kwargs)]
            if args.limit:
                command += ["--limit", str(args.limit)]
            out = subprocess.run(command, capture_output=True, text=True, check=True)
            runs[label].append(json.loads(out.stdout.strip().splitlines()[-1]))
    chunks = runs[next(iter(runs))][0]["chunks"]
    print(f"load average {os.getloadavg()[0]:.1f}; {chunks:.0f} chunks, {args.rounds} round(s)")
    first = next(iter(settings))
    base_cps = statistics.median(r["cps"] for r in runs[first])
    base_peak = max(r["peak_mb"] for r in runs[first])
    for label, results in runs.items():
        cps = statistics.median(r["cps"] for r in results)
        peak = max(r["peak_mb"] for r in results)
        loaded = max(r["loaded_mb"] for r in results)
        print(
            f"{label:12s} {cps:6.1f} chunks/s (x{cps / base_cps:.2f})  "
            f"peak RSS {peak:6.0f} MiB (x{peak / base_peak:.2f}), {loaded:.0f} MiB once loaded"
        )


if __name__ == "__main__":
    main()
