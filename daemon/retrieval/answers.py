"""Answers over a fused context, with every claim mapped to the pieces it cites.

Two answerers, one contract (``Answerer``): the extractive one (no model: one claim per top piece,
quoting its first line) and the model one (a chat model writes the answer as JSON claims, each
citing context piece ids and quoting the text that supports it). Either way a claim is *grounded*
only when every piece it cites is in the context and its quote is in the workspace file at a cited
piece's lines now (re-read, whitespace-insensitive), so a model that invents a citation or a quote
is caught, not trusted. The golden harness (``daemon.retrieval.harness``) counts the rest as
ungrounded.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from daemon.core.frozen_model import FrozenModel
from daemon.core.regular_files import read_regular_text
from daemon.retrieval.fusion import render_piece
from daemon.retrieval.model_json import ask_json
from daemon.retrieval.models import ContextPiece
from daemon.retrieval.ports import QueryModel

__all__ = ["Answerer", "Claim", "extractive_answer", "model_answerer", "quote_grounded"]

Answerer = Callable[[str, Path, Sequence[ContextPiece]], Coroutine[Any, Any, tuple[str, list["Claim"]]]]
"""(task, workspace root, context) -> (the answer's text, its claims)."""


class Claim(FrozenModel):
    text: str
    citations: tuple[str, ...] = Field(description="Ids of the context pieces the claim rests on.")
    quote: str | None = Field(default=None, description="The cited text that supports the claim.")
    grounded: bool


class _DraftClaim(BaseModel):
    model_config = ConfigDict(extra="ignore")

    text: str = Field(min_length=1, description="One statement of the answer.")
    citations: list[str] = Field(min_length=1, description="Ids of the context pieces that support it.")
    quote: str = Field(min_length=1, description="Text copied verbatim from a cited piece that supports it.")


class _Draft(BaseModel):
    model_config = ConfigDict(extra="ignore")

    answer: str = Field(description="The answer in a few sentences.")
    claims: list[_DraftClaim] = Field(min_length=1, max_length=12)


def _normalized(text: str) -> str:
    return " ".join(text.split())


def quote_grounded(quote: str, root: Path, piece: ContextPiece) -> bool:
    """``quote`` is in ``piece``'s file at the piece's lines now (pieces without lines: in its text)."""
    wanted = _normalized(quote)
    if not wanted:
        return False
    a = piece.attribution
    if a.path is None or a.start_line is None or a.end_line is None:
        return wanted in _normalized(piece.text)
    try:
        lines = read_regular_text(root / a.path).splitlines()
    except OSError:
        return False
    return wanted in _normalized("\n".join(lines[a.start_line - 1 : a.end_line]))


async def extractive_answer(task: str, root: Path, context: Sequence[ContextPiece]) -> tuple[str, list[Claim]]:
    """The answer without a model: one claim per top piece (three at most), quoting its first line."""
    made: list[Claim] = []
    for piece in context[:3]:
        first = next((line.strip() for line in piece.text.splitlines() if line.strip()), "")
        a = piece.attribution
        made.append(
            Claim(
                text=f"{a.symbol or a.section_path or a.path} ({a.cite()}): {first}",
                citations=(piece.id,),
                quote=first,
                grounded=quote_grounded(first, root, piece),
            )
        )
    return "\n".join(f"- {c.text} [{c.citations[0]}]" for c in made), made


def model_answerer(model: QueryModel) -> Answerer:
    """An answerer that has ``model`` write the answer as JSON claims (see the module doc).

    An answer that is not valid JSON against the schema raises ``ValueError``: an eval run reports it
    rather than scoring a guess.
    """

    async def answer(task: str, root: Path, context: Sequence[ContextPiece]) -> tuple[str, list[Claim]]:
        pieces = "\n\n".join(f"[{p.id}]\n{render_piece(p.text, p.attribution)}" for p in context)
        draft = await ask_json(
            model,
            system="You answer questions about a workspace from the context pieces given, and nothing else. "
            "Every claim cites the ids of the pieces it rests on and quotes, verbatim, the text that supports it.",
            prompt=f"Task: {task}\n\nContext pieces (id in brackets):\n\n{pieces or '(none)'}\n",
            schema=_Draft,
            invalid=f"{model.label}: the answer is not valid JSON claims",
        )
        by_id = {p.id: p for p in context}
        claims = [
            Claim(
                text=c.text,
                citations=tuple(c.citations),
                quote=c.quote,
                grounded=all(i in by_id for i in c.citations)
                and any(quote_grounded(c.quote, root, by_id[i]) for i in c.citations if i in by_id),
            )
            for c in draft.claims
        ]
        return draft.answer, claims

    return answer
