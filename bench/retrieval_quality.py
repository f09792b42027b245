"""Retrieval quality on real code nobody here wrote: documented functions from the venv's site-packages.

Each function is written to its own file with its docstring removed and indexed with the real
index (Tree-sitter chunks, BM25, the bundled MiniLM int8 model, Qdrant Edge). The query is the
docstring's first sentence; the relevant chunk is that function. Printed: MRR@10 and
recall@1/5/10 for lexical only, dense only, hybrid (RRF), hybrid + rerank and the full retrieval
agent; then the agent's fused-context tokens against the raw top-k's tokens at equal recall.

No cross-encoder ships on PyPI (FACTS.md), so "hybrid + rerank" is the fusion fallback rerank
(fused rank + lexical overlap + code weights) over the hybrid top 20; a configured
``rerank.model_dir`` would be used instead. JS/TS is not measured (see the printed note).

    uv run --frozen python bench/retrieval_quality.py [--samples 200] [--seed 7]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import sysconfig
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from embedding import extract_samples

from daemon.config import load_config
from daemon.core.models import SearchHit, SearchMode
from daemon.orchestration.workflow_schema import RetrievalStrategyConfig
from daemon.retrieval.fusion import Fusion, render_piece
from daemon.retrieval.models import (
    Attribution,
    RetrievalRequest,
    SourceName,
    StageHints,
    WorkflowKind,
)
from daemon.retrieval.sources import candidate_from_hit
from daemon.retrieval.tokens import load_token_counter
from daemon.service.retrieval_sources import build_retrieval_agent
from daemon.service.workspace_index import WorkspaceIndex


def metrics(ranks: Sequence[int | None]) -> dict[str, float]:
    """MRR@10 and recall@1/5/10 from the 1-based rank of the relevant item (None: not in the top 10)."""
    n = len(ranks) or 1
    return {
        "MRR@10": sum(1 / r for r in ranks if r is not None and r <= 10) / n,
        "R@1": sum(1 for r in ranks if r is not None and r <= 1) / n,
        "R@5": sum(1 for r in ranks if r is not None and r <= 5) / n,
        "R@10": sum(1 for r in ranks if r is not None and r <= 10) / n,
    }


def rank_of(paths: Sequence[str], target: str) -> int | None:
    return next((i + 1 for i, p in enumerate(paths[:10]) if p == target), None)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--samples", type=int, default=200)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args(argv)
    site = Path(sysconfig.get_paths()["purelib"])
    samples = extract_samples(site, args.samples, args.seed)
    print(f"{len(samples)} documented Python functions from {site} (seed {args.seed}); JS/TS: not measured")
    with tempfile.TemporaryDirectory(prefix="ided-rq-") as tmp:
        root = Path(tmp) / "ws"
        root.mkdir()
        targets: list[str] = []
        for i, sample in enumerate(samples):
            rel = f"m{i:04d}.py"
            (root / rel).write_text(sample.document.text, encoding="utf-8")
            targets.append(rel)
        config = load_config(root, env={"HOME": tmp}, overrides={"state_dir": str(Path(tmp) / "state")})
        with WorkspaceIndex.open(config) as index:
            started = time.perf_counter()
            index.index()
            embedded = index.embed()
            print(f"indexed and embedded {embedded} chunks in {time.perf_counter() - started:.1f} s")
            counter = load_token_counter(config.embedding)
            rows: dict[str, list[int | None]] = {}
            for mode in (SearchMode.LEXICAL, SearchMode.DENSE, SearchMode.HYBRID):
                rows[mode.value] = [
                    rank_of([h.chunk.path for h in index.search(s.query, k=10, mode=mode).hits], t)
                    for s, t in zip(samples, targets, strict=True)
                ]
            fusion = Fusion(workflow=WorkflowKind.CODE)
            reranked: list[int | None] = []
            raw_tokens: list[int] = []
            hybrid_hits: list[tuple[SearchHit, ...]] = []
            for s, t in zip(samples, targets, strict=True):
                hits = index.search(s.query, k=20).hits
                hybrid_hits.append(hits)
                cands = [candidate_from_hit(SourceName.CODE, h, rank=i + 1, query=s.query) for i, h in enumerate(hits)]
                pieces, _ = fusion.rank(cands)
                reranked.append(rank_of([p.attribution.path or "" for p in pieces], t))
                raw_tokens.append(sum(counter.count(render_piece(h.chunk.text, _attr(h))) for h in hits[:10]))
            rows["hybrid + rerank (fallback)"] = reranked
            agent = build_retrieval_agent(config, index=index)
            agent_ranks: list[int | None] = []
            agent_tokens: list[int] = []
            seconds: list[float] = []

            async def run_agent() -> None:
                for s, t in zip(samples, targets, strict=True):
                    request = RetrievalRequest(
                        task=s.query,
                        workflow_kind=WorkflowKind.CODE,
                        stage=StageHints(stage_id="bench", token_budget=4000),
                    )
                    began = time.perf_counter()
                    result = await agent.retrieve(request, RetrievalStrategyConfig())
                    seconds.append(time.perf_counter() - began)
                    agent_ranks.append(rank_of([p.attribution.path or "" for p in result.context], t))
                    agent_tokens.append(result.tokens)

            asyncio.run(run_agent())
            rows["full agent (thresholds on)"] = agent_ranks
    print(f"\n{'ranker':<28} {'MRR@10':>7} {'R@1':>6} {'R@5':>6} {'R@10':>6}")
    for label, ranks in rows.items():
        m = metrics(ranks)
        print(f"{label:<28} {m['MRR@10']:>7.3f} {m['R@1']:>6.3f} {m['R@5']:>6.3f} {m['R@10']:>6.3f}")
    agent_recall = metrics(agent_ranks)["R@10"]
    hybrid_ranks = rows[SearchMode.HYBRID.value]
    # the smallest raw top-k whose recall reaches the agent's recall, and its tokens
    k_equal = next(
        (
            k
            for k in range(1, 11)
            if sum(1 for r in hybrid_ranks if r is not None and r <= k) / len(samples) >= agent_recall
        ),
        10,
    )
    raw_at_k = [
        sum(counter.count(render_piece(h.chunk.text, _attr(h))) for h in hits[:k_equal]) for hits in hybrid_hits
    ]
    print(f"\nagent: {statistics.mean(seconds) * 1000:.0f} ms per retrieval (mean), context recall {agent_recall:.3f}")
    print(
        f"raw hybrid top-10: {statistics.mean(raw_tokens):.0f} tokens per query "
        f"(recall@10 {metrics(hybrid_ranks)['R@10']:.3f})"
    )
    print(
        f"raw hybrid top-{k_equal} (first k with recall >= the agent's): "
        f"{statistics.mean(raw_at_k):.0f} tokens per query"
    )
    saved = 1 - statistics.mean(agent_tokens) / statistics.mean(raw_at_k)
    print(
        f"fused context: {statistics.mean(agent_tokens):.0f} tokens per query -> "
        f"{saved:.0%} fewer than raw top-{k_equal}"
    )
    return 0


def _attr(hit: SearchHit) -> Attribution:
    return candidate_from_hit(SourceName.CODE, hit, rank=1, query="").attribution


if __name__ == "__main__":
    raise SystemExit(main())
