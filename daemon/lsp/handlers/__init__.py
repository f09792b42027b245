"""LSP handlers: thin translations between LSP messages and the daemon's API, one module per area."""

from __future__ import annotations

from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError
from pygls.exceptions import JsonRpcInvalidParams

from daemon.lsp.protocol import camel_case

__all__ = ["daemon_params"]

P = TypeVar("P", bound=BaseModel)


def daemon_params(model: type[P], method: str, **values: Any) -> P:
    """Build the daemon's params model; what it refuses becomes -32602 naming the camelCase field."""
    try:
        return model.model_validate(values)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(camel_case(str(part)) for part in err['loc'])}: {err['msg']}" for err in exc.errors()
        )
        raise JsonRpcInvalidParams(f"invalid params for {method}: {problems}") from None
