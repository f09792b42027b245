"""Cross-encoder rerank latency: the top 20 hybrid candidates re-scored, against ``rerank.max_tokens``.

    uv run --frozen python bench/rerank.py                     # MiniLM-L6-shaped cross-encoder
    uv run --frozen python bench/rerank.py --model DIR         # a real ONNX cross-encoder directory

No PyPI package ships an ONNX cross-encoder (FACTS.md), so by default this times one with the shape
of ms-marco-MiniLM-L-6-v2 built from the bundled embedding model (``tests/model_shapes.py``: the same
6-layer, 384-wide int8 encoder reading the pair, a linear head on ``[CLS]``). Its head is untrained:
the figures are latency only, which depends on the architecture and the tokens read, not the weights.

Corpus: ``--files`` source files of the venv's site-packages, indexed and embedded; queries: the
first docstring sentence of indexed functions. Per ``max_tokens`` it prints the rerank time of the
``--top-n`` candidates through ided's reranker (p50/p95), the mean tokens per pair, and the same
batch run straight through onnxruntime (the model's own speed, the bound), then hybrid search
with and without rerank.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import sysconfig
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # for tests.model_shapes

from daemon.config import load_config
from daemon.core.models import Chunk
from daemon.index.model_files import bundled_model_dir
from daemon.index.reranker import FastembedReranker
from daemon.index.workspace_index import WorkspaceIndex
from tests.model_shapes import minilm_shaped_cross_encoder

MAX_TOKENS = (64, 128, 256, 512)


def row(label: str, value: str, bound: str = "") -> None:
    print(f"{label:<44} {value:<30} {bound}")


def pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


def copy_corpus(root: Path, dest: Path, limit: int) -> None:
    n = 0
    for path in sorted(root.rglob("*.py")):
        if n >= limit:
            return
        if "__pycache__" in path.parts or not path.is_file() or path.stat().st_size > 200_000:
            continue
        target = dest / path.relative_to(root)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(path.read_bytes())
        n += 1


def queries_from(chunks: list[Chunk], n: int) -> list[str]:
    out: list[str] = []
    for c in chunks:
        if c.docstring and len(c.docstring.split()) >= 4:
            out.append(c.docstring.strip().split(".")[0][:200])
        if len(out) >= n:
            break
    return out


def onnx_runtime_ms(model_dir: Path, query: str, passages: list[str], max_tokens: int) -> tuple[float, float]:
    """Median ms of the padded batch straight through onnxruntime, and the mean tokens per pair."""
    import numpy as np
    import onnxruntime as ort
    from tokenizers import Tokenizer

    tokenizer: Any = Tokenizer.from_file(str(model_dir / "tokenizer.json"))  # its kwargs are untyped
    tokenizer.enable_truncation(max_length=max_tokens)
    tokenizer.enable_padding()
    encodings = tokenizer.encode_batch([(query, p) for p in passages])
    feed = {
        "input_ids": np.array([e.ids for e in encodings], dtype=np.int64),
        "attention_mask": np.array([e.attention_mask for e in encodings], dtype=np.int64),
        "token_type_ids": np.array([e.type_ids for e in encodings], dtype=np.int64),
    }
    session: Any = ort.InferenceSession(str(model_dir / "model.onnx"), providers=["CPUExecutionProvider"])
    times: list[float] = []
    for _ in range(5):
        started = time.perf_counter()
        session.run(None, feed)
        times.append((time.perf_counter() - started) * 1000)
    tokens = statistics.mean(sum(e.attention_mask) for e in encodings)
    return statistics.median(times), tokens


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", type=Path, help="a real ONNX cross-encoder directory (default: MiniLM-shaped)")
    parser.add_argument("--root", type=Path, default=Path(sysconfig.get_paths()["purelib"]))
    parser.add_argument("--files", type=int, default=300)
    parser.add_argument("--queries", type=int, default=20)
    parser.add_argument("--top-n", type=int, default=20)
    args = parser.parse_args()

    tmp = Path(tempfile.mkdtemp(prefix="ided-rerank-"))
    model_dir = args.model or minilm_shaped_cross_encoder(bundled_model_dir(tmp / "models"), tmp / "cross-encoder")
    label = str(args.model) if args.model else "MiniLM-L6-shaped cross-encoder (untrained head: latency only)"
    workspace = tmp / "ws"
    copy_corpus(args.root, workspace, args.files)
    config = load_config(workspace, env={"HOME": str(tmp / "home")}, overrides={"state_dir": str(tmp / "state")})
    with WorkspaceIndex.open(config) as ws:
        ws.index()
        ws.embed()
        chunks = [h.chunk for h in ws.search("def return self", k=200).hits]
        queries = queries_from(chunks, args.queries)
        candidates = [[h.chunk.text for h in ws.search(q, k=args.top_n).hits] for q in queries]
        hybrid = [ws.search(q, k=10).seconds * 1000 for q in queries]
        chunk_count = ws.status().chunks
    print(f"model: {label}; {len(queries)} queries, top {args.top_n} of {chunk_count:,} chunks; cores: 2 shared")
    print()
    row(f"hybrid query at {chunk_count:,} chunks", f"p50 {pct(hybrid, 50):.1f} ms p95 {pct(hybrid, 95):.1f} ms")
    for max_tokens in MAX_TOKENS:
        reranker = FastembedReranker(model_dir, max_tokens=max_tokens)
        reranker.score(queries[0], candidates[0])  # warm
        times: list[float] = []
        for q, passages in zip(queries, candidates, strict=True):
            started = time.perf_counter()
            reranker.score(q, passages)
            times.append((time.perf_counter() - started) * 1000)
        own_ms, tokens = onnx_runtime_ms(model_dir, queries[0], candidates[0], max_tokens)
        row(
            f"rerank top {args.top_n}, max_tokens {max_tokens}",
            f"p50 {pct(times, 50):.0f} ms p95 {pct(times, 95):.0f} ms",
            f"target <= 150 ms; onnxruntime alone {own_ms:.0f} ms at {tokens:.0f} tokens/pair",
        )


if __name__ == "__main__":
    main()
