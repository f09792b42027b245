"""The base of every immutable boundary model: frozen, and unknown fields refused.

A value that crosses a boundary (a wire message, a stored record, a plan) is built once and never
changed, and a field the model does not know is an error, not silently dropped.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

__all__ = ["FrozenModel"]


class FrozenModel(BaseModel):
    """Frozen, ``extra="forbid"``: subclass it instead of repeating the configuration."""

    model_config = ConfigDict(frozen=True, extra="forbid")
