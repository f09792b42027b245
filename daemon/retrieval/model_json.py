"""Asking a chat model for one JSON object that a pydantic model validates (query writing, answers)."""

from __future__ import annotations

import json
from typing import TypeVar

from langchain_core.messages import HumanMessage, SystemMessage
from pydantic import BaseModel, ValidationError

from daemon.retrieval.ports import QueryModel

__all__ = ["ask_json", "json_object"]

M = TypeVar("M", bound=BaseModel)


def json_object(text: str) -> str:
    """The outermost JSON object of a model answer (fenced or bare)."""
    start, end = text.find("{"), text.rfind("}")
    if start < 0 or end <= start:
        raise ValueError("the answer holds no JSON object")
    return text[start : end + 1]


async def ask_json(model: QueryModel, *, system: str, prompt: str, schema: type[M], invalid: str) -> M:
    """``model``'s answer to ``prompt`` (with ``schema``'s JSON Schema appended), validated by ``schema``.

    Raises:
        ValueError: ``"{invalid}: {why}"`` when the answer holds no JSON object or it does not validate.
    """
    messages = [
        SystemMessage(content=system),
        HumanMessage(
            content=f"{prompt}\nAnswer with one JSON object matching this JSON Schema:\n"
            f"{json.dumps(schema.model_json_schema())}"
        ),
    ]
    answer = await model.complete(messages)
    try:
        return schema.model_validate_json(json_object(answer))
    except (ValidationError, ValueError) as exc:
        raise ValueError(f"{invalid}: {exc}") from exc
