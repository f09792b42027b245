"""Outlines in the stage budget: unsure or oversized pieces become their signatures plus where the rest is."""

from __future__ import annotations

from dataclasses import replace

from daemon.config import EmbeddingConfig
from daemon.core.models import Chunk, ChunkKind, SymbolKind
from daemon.retrieval.fusion import FusedPiece, fit_budget, outline_wanted, render_piece
from daemon.retrieval.models import Attribution, Candidate, SourceName
from daemon.retrieval.outline import outline_text
from daemon.retrieval.tokens import load_token_counter

COUNTER = load_token_counter(EmbeddingConfig())

BODY = "\n".join(f"    total = total + step_{i} * weight_{i}  # accumulate component {i}" for i in range(30))


def _chunk(path: str, text: str, first: int, **fields: object) -> tuple[Chunk, Attribution]:
    """A chunk of ``text`` starting at line ``first`` (a Python function unless ``fields`` say otherwise)."""
    values: dict[str, object] = {"kind": ChunkKind.CODE, "symbol_kind": SymbolKind.FUNCTION, "language": "python"}
    values.update(fields)
    chunk = Chunk.model_validate(
        {"path": path, "text": text, "start_line": first, "end_line": first + text.count("\n"), **values}
    )
    symbol = chunk.qualified_name if chunk.kind is ChunkKind.CODE else None
    section = chunk.qualified_name if chunk.kind is ChunkKind.DOCS else None
    attribution = Attribution(
        path=path, start_line=first, end_line=chunk.end_line, symbol=symbol or chunk.name, section_path=section
    )
    return chunk, attribution


def _function(name: str, first: int, *, score: float, docstring: str | None = None) -> FusedPiece:
    signature = f"def {name}(items: list[int], weight: float = 1.0) -> float:"
    text = f"{signature}\n    total = 0.0\n{BODY}\n    return total"
    chunk, attribution = _chunk(
        "pkg/mod.py", text, first, name=name, qualified_name=name, signature=signature, docstring=docstring
    )
    head = Candidate(id=name, source=SourceName.CODE, text=text, attribution=attribution, score=score, chunk=chunk)
    return FusedPiece(
        head=head, text=text, attribution=attribution, fused=score, queries=("q",), chunks=(chunk,), score=score
    )


def test_a_piece_under_the_outline_threshold_is_given_as_its_signature_and_line_range() -> None:
    sure = _function("weighted_total", 10, score=1.0)
    unsure = _function("weighted_mean", 60, score=0.75, docstring="Mean of the items, weighted.\n\nMore text.")
    kept, cuts, used = fit_budget([sure, unsure], 10_000, COUNTER, outline_below=0.8)
    assert not cuts
    assert [p.outline for p in kept] == [False, True]
    assert kept[0].text == sure.text
    outline = kept[1].text
    assert outline.splitlines()[0] == "def weighted_mean(items: list[int], weight: float = 1.0) -> float:"
    assert outline.splitlines()[1].strip() == "Mean of the items, weighted."
    assert outline.endswith("... (outline of 33 lines)") and "step_3" not in outline
    assert "pkg/mod.py:60-92" in render_piece(outline, unsure.attribution)
    assert kept[1].tokens == COUNTER.count(render_piece(outline, unsure.attribution))
    assert kept[1].tokens * 5 < kept[0].tokens
    assert used == kept[0].tokens + kept[1].tokens


def test_outlines_are_off_at_threshold_zero() -> None:
    pieces = [_function("a", 1, score=1.0), _function("b", 40, score=0.1)]
    kept, _, _ = fit_budget(pieces, 10_000, COUNTER)
    assert not any(p.outline for p in kept)


def test_a_sure_piece_that_no_longer_fits_whole_is_outlined_rather_than_dropped() -> None:
    first, second = _function("first", 1, score=1.0), _function("second", 40, score=0.95)
    whole = COUNTER.count(render_piece(first.text, first.attribution))
    outline = outline_text(second.text, second.attribution, second.chunks)
    assert outline is not None
    small = COUNTER.count(render_piece(outline, second.attribution))
    kept, cuts, used = fit_budget([first, second], whole + small, COUNTER, outline_below=0.8)
    assert [(p.id, p.outline) for p in kept] == [("first", False), ("second", True)]
    assert not cuts and used == whole + small
    kept, cuts, _ = fit_budget([first, second], whole + small - 1, COUNTER, outline_below=0.8)
    assert [p.id for p in kept] == ["first"]
    assert [c.id for c in cuts] == ["second"] and cuts[0].step == "budget"


def test_pieces_without_an_outline_stay_whole() -> None:
    short = _function("short", 1, score=0.5)
    tiny = replace(short, text="def short(): return 1")  # an outline would not be shorter
    fact_attr = Attribution(path="pkg/mod.py", start_line=3, end_line=3, ref="definition")
    fact_head = Candidate(id="fact", source=SourceName.LSP, text=BODY, attribution=fact_attr, score=0.5)
    fact = FusedPiece(head=fact_head, text=BODY, attribution=fact_attr, fused=0.5, queries=(), score=0.5)
    kept, _, _ = fit_budget([tiny, fact], 10_000, COUNTER, outline_below=0.8)
    assert [(p.id, p.outline, p.text) for p in kept] == [("short", False, tiny.text), ("fact", False, BODY)]


def test_a_document_section_outline_is_its_heading_and_first_sentence() -> None:
    text = "## Install on Linux\n\nUse the package manager of your distribution.\n\n" + "\n".join(
        f"Step {i}: run the command number {i} and check its output carefully." for i in range(20)
    )
    chunk, attribution = _chunk(
        "docs/guide.md",
        text,
        5,
        kind=ChunkKind.DOCS,
        symbol_kind=SymbolKind.SECTION,
        language="markdown",
        qualified_name="Guide > Install on Linux",
    )
    outline = outline_text(text, attribution, [chunk])
    assert outline is not None
    assert outline.splitlines()[:2] == ["## Install on Linux", "Use the package manager of your distribution."]
    assert outline.endswith(f"... (outline of {chunk.end_line - 4} lines)")


def test_a_signature_over_several_lines_is_kept_verbatim_without_its_decorators() -> None:
    text = "@cache\n@log_calls(level=2)\ndef fetch(\n    url: str,\n    timeout: float = 5.0,\n) -> bytes:\n" + BODY
    chunk, attribution = _chunk(
        "net.py", text, 1, name="fetch", signature="def fetch(url: str, timeout: float = 5.0) -> bytes"
    )
    outline = outline_text(text, attribution, [chunk])
    assert outline is not None
    assert outline.splitlines()[:4] == ["def fetch(", "url: str,", "timeout: float = 5.0,", ") -> bytes:"]


def _sized(name: str, first: int, lines: int, *, score: float) -> FusedPiece:
    """A function of ``lines`` body lines (about 20 tokens each) scored ``score``."""
    piece = _function(name, first, score=score)
    text = "\n".join(piece.text.splitlines()[: lines + 2])
    chunk = piece.chunks[0].model_copy(update={"text": text, "end_line": first + text.count("\n")})
    attribution = piece.attribution.model_copy(update={"end_line": chunk.end_line})
    return replace(piece, text=text, attribution=attribution, chunks=(chunk,))


def _saving(piece: FusedPiece) -> int:
    outline = outline_text(piece.text, piece.attribution, piece.chunks)
    assert outline is not None
    whole = COUNTER.count(render_piece(piece.text, piece.attribution))
    return whole - COUNTER.count(render_piece(outline, piece.attribution))


def test_a_short_unsure_piece_comes_whole_and_a_long_fairly_sure_one_as_its_outline() -> None:
    best = _function("best", 1, score=1.0)
    short_unsure = _sized("short_unsure", 40, 4, score=0.75)  # doubt 0.25: whole while its outline saves <= 160
    long_sure = _function("long_sure", 60, score=0.85)  # doubt 0.15: whole only while it saves <= 266
    assert _saving(short_unsure) <= 160 < 266 < _saving(long_sure)
    kept, cuts, _ = fit_budget([best, long_sure, short_unsure], 10_000, COUNTER, outline_below=0.8)
    assert not cuts
    assert [(p.id, p.outline) for p in kept] == [("best", False), ("long_sure", True), ("short_unsure", False)]


def test_the_doubt_a_piece_may_cost_whole_is_set_by_the_outline_threshold() -> None:
    assert not outline_wanted(1.0, 5_000, 40, 1.0)  # the best piece is always whole
    assert not outline_wanted(0.1, 5_000, 40, 0.0)  # 0: only what does not fit is outlined
    assert outline_wanted(0.99, 200, 40, 1.0)  # 1: every piece but the best
    assert not outline_wanted(0.8, 240, 40, 0.8) and outline_wanted(0.8, 241, 40, 0.8)  # 200 tokens at 0.8
    assert not outline_wanted(0.9, 440, 40, 0.8) and outline_wanted(0.9, 441, 40, 0.8)  # 400 at 0.9
