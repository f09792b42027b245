"""Search answers cut for tools: each hit's text at most ``max_chars``, with a note saying how many were cut."""

from __future__ import annotations

from daemon.core.models import SearchHit, SearchResult
from daemon.intel.ast_nodes import excerpt

__all__ = ["trim_search_result"]


def trim_search_result(result: SearchResult, max_chars: int) -> SearchResult:
    """Each hit's text cut to ``max_chars`` (tools answer compactly); a note says how many were cut."""
    hits: list[SearchHit] = []
    cut = 0
    for hit in result.hits:
        if len(hit.chunk.text) > max_chars:
            cut += 1
            chunk = hit.chunk.model_copy(update={"text": excerpt(hit.chunk.text, max_chars)})
            hit = hit.model_copy(update={"chunk": chunk})
        hits.append(hit)
    notes = result.notes
    if cut:
        cut_note = f"the text of {cut} of {len(hits)} hits was cut to max_chars={max_chars}"
        notes = (*notes, f"{cut_note} (start_line..end_line span the whole chunk)")
    return result.model_copy(update={"hits": tuple(hits), "notes": notes})
