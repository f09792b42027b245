"""Structured output from any chat model: ask for JSON that matches a pydantic model, parse, validate.

Works the same with every provider (OpenAI-compatible servers without tool calling included): the
prompt carries the JSON Schema, the answer's first JSON object (bare, or in a ``json`` code fence)
is validated by pydantic, and a failure comes back as ``AnswerInvalid`` whose message is short
enough to hand back to the model for a retry.
"""

from __future__ import annotations

import json
import re
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

__all__ = ["AnswerInvalid", "extract_json", "json_instructions", "parse_answer"]


M = TypeVar("M", bound=BaseModel)

_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL | re.IGNORECASE)


class AnswerInvalid(ValueError):
    """A model answer that is not the JSON asked for; the message explains what is wrong."""


def extract_json(text: str) -> Any:
    """The first JSON value in ``text``: a fenced block, the whole text, or the first ``{...}`` span."""
    candidates: list[str] = [m.group(1).strip() for m in _FENCE.finditer(text)]
    candidates.append(text.strip())
    decoder = json.JSONDecoder()
    for candidate in candidates:
        try:
            return json.loads(candidate)
        except ValueError:
            pass
    start = text.find("{")
    while start != -1:
        try:
            value, _ = decoder.raw_decode(text, start)
        except ValueError:
            start = text.find("{", start + 1)
            continue
        return value
    raise AnswerInvalid("the answer contains no JSON object; reply with only the JSON object")


def _describe(exc: ValidationError) -> str:
    parts: list[str] = []
    for err in exc.errors()[:8]:
        where = ".".join(str(p) for p in err["loc"]) or "(root)"
        if err["type"] == "extra_forbidden":
            parts.append(f"'{where}' is not allowed")
        else:
            parts.append(f"'{where}': {err['msg']}")
    return "; ".join(parts)


def parse_answer(text: str, model: type[M]) -> M:
    """Validate the JSON in ``text`` as ``model``; ``AnswerInvalid`` names every problem."""
    value = extract_json(text)
    try:
        return model.model_validate(value)
    except ValidationError as exc:
        raise AnswerInvalid(f"the JSON does not match the schema: {_describe(exc)}") from exc


def json_instructions(model: type[BaseModel]) -> str:
    """The prompt paragraph that asks for a JSON object matching ``model``."""
    schema = json.dumps(model.model_json_schema(), separators=(",", ":"))
    return (
        "Reply with ONLY one JSON object (no prose, no code fence needed) that validates against this "
        f"JSON Schema:\n{schema}"
    )
