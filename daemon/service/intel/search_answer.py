"""What the search tools answer (MCP ``search_code``/``search_docs``, the agents' tools, LSP ``ided/intel/*``).

Lean by default: each hit is where it is (``path``, ``line``, ``end_line``), what it is (``symbol``, the
qualified name), one line that shows it (``snippet``: the signature, or the first line of the text)
and its ``score``; the answer says how sure it is (``matches``), which rankers ran (``mode``) and how
complete the dense vectors are (``vectors``, the share of chunks embedded; while they fill, the
search ranks lexically and a note says so). An agent pays for every character it reads: on requests'
sources a five-hit answer is about a tenth of the whole chunks' JSON (``bench/peers.py``, "search
answer chars"). ``detail`` adds each hit's text (cut to ``max_chars``), kind, language and rankers, and
the answer's query, rerank flag and time. ``group_by_file`` lists each file's hits together (files in
the order of their best hit); otherwise hits come in score order.
"""

from __future__ import annotations

from pydantic import Field

from daemon.core.frozen_model import FrozenModel
from daemon.core.models import MatchConfidence, SearchHit, SearchMode, SearchResult
from daemon.intel.ast_nodes import excerpt

__all__ = ["SNIPPET_CHARS", "SearchAnswer", "SearchAnswerHit", "search_answer"]

SNIPPET_CHARS = 100
"""The most characters of a hit's one-line snippet."""


class SearchAnswerHit(FrozenModel):
    path: str = Field(description="Workspace-relative path.")
    line: int = Field(description="First line of the hit (1-based).")
    end_line: int = Field(description="Last line of the hit (1-based, inclusive).")
    symbol: str | None = Field(default=None, description="Qualified name (Class.method), or a docs heading path.")
    snippet: str = Field(description="One line: the signature, or the hit's first line.")
    score: float = Field(description="The ranking's score; hits come in its order unless grouped by file.")
    kind: str | None = Field(default=None, description="detail: function, method, class, section, ...")
    language: str | None = Field(default=None, description="detail: the language.")
    text: str | None = Field(default=None, description="detail: the hit's text, cut to max_chars.")
    sources: tuple[str, ...] | None = Field(default=None, description="detail: rankers that found it.")


class SearchAnswer(FrozenModel):
    hits: tuple[SearchAnswerHit, ...]
    matches: MatchConfidence = Field(
        description="strong: the best hits carry the query's terms or names; weak: little of it; "
        "none: nothing in the index matches the query (the hits, if any, are unrelated)."
    )
    mode: SearchMode = Field(description="The rankers used: hybrid, or lexical while the vectors fill.")
    vectors: float = Field(description="Share of the index's chunks with a dense vector (1.0: complete).")
    notes: tuple[str, ...] = ()
    query: str | None = Field(default=None, description="detail: the query.")
    reranked: bool | None = Field(default=None, description="detail: whether a cross-encoder reordered the hits.")
    seconds: float | None = Field(default=None, description="detail: the search's time.")


def _snippet(hit: SearchHit) -> str:
    """The hit in one line: its signature (whitespace folded), else its first non-blank line."""
    chunk = hit.chunk
    line = " ".join(chunk.signature.split()) if chunk.signature else ""
    if not line:
        line = next((stripped for raw in chunk.text.splitlines() if (stripped := raw.strip())), "")
    return excerpt(line, SNIPPET_CHARS)


def _hit(hit: SearchHit, *, detail: bool, max_chars: int) -> SearchAnswerHit:
    chunk = hit.chunk
    lean = SearchAnswerHit(
        path=chunk.path,
        line=chunk.start_line,
        end_line=chunk.end_line,
        symbol=chunk.qualified_name or chunk.name,
        snippet=_snippet(hit),
        score=round(hit.score, 3),
    )
    if not detail:
        return lean
    return lean.model_copy(
        update={
            "kind": chunk.symbol_kind.value,
            "language": chunk.language,
            "text": excerpt(chunk.text, max_chars),
            "sources": hit.sources,
        }
    )


def search_answer(result: SearchResult, *, detail: bool, max_chars: int, group_by_file: bool) -> SearchAnswer:
    """``result`` as the search tools answer it (see the module doc)."""
    shown = result.grouped_by_file() if group_by_file else result
    notes = result.notes
    if detail:
        cut = sum(1 for h in shown.hits if len(h.chunk.text) > max_chars)
        if cut:
            notes = (*notes, f"the text of {cut} of {len(shown.hits)} hits was cut to max_chars={max_chars}")
    return SearchAnswer(
        hits=tuple(_hit(h, detail=detail, max_chars=max_chars) for h in shown.hits),
        matches=result.matches,
        mode=result.mode,
        vectors=round(result.embedded_fraction, 3),
        notes=notes,
        query=result.query if detail else None,
        reranked=result.reranked if detail else None,
        seconds=round(result.seconds, 4) if detail else None,
    )
