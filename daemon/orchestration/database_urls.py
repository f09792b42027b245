"""What the run store and the checkpoints share about a Postgres ``runs.database_url``: the URL as it may be
shown (without its password) and the error when the driver is not installed."""

from __future__ import annotations

from urllib.parse import urlsplit, urlunsplit

from daemon.errors import ErrorCode, PipelineError

__all__ = ["POSTGRES_PACKAGES", "driver_missing", "redact_url"]

POSTGRES_PACKAGES = "psycopg[binary] langgraph-checkpoint-postgres"
"""What ``runs.database_url`` needs beside ided (the ``postgres`` extra)."""


def driver_missing(what: str, exc: ImportError) -> PipelineError:
    return PipelineError(
        f"{what} needs the Postgres driver, which is not installed (missing module '{exc.name}'): install the "
        f"`postgres` extra (`uv pip install 'ided[postgres]'`, or `pip install {POSTGRES_PACKAGES}`)",
        code=ErrorCode.DRIVER_MISSING,
        cause=exc,
    )


def redact_url(url: str) -> str:
    """``url`` without its password, for messages and logs."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    netloc = f"{parts.username or ''}:***@{parts.hostname or ''}" + (f":{parts.port}" if parts.port else "")
    return urlunsplit(parts._replace(netloc=netloc))
