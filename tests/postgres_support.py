"""A real PostgreSQL server for the tests: ``scripts/postgres-test-server.sh`` once per session.

``IDED_TEST_POSTGRES_URL`` names a server to use instead (any database the tests may create
databases beside). Without one, the script starts a throw-away cluster on 127.0.0.1 and the session
stops it at the end. Only when no PostgreSQL binaries exist (the script exits 3) do Postgres tests
skip, with the reason; any other failure to start is an error that shows the server's log.
Each test gets a database of its own (``fresh_database``).
"""

from __future__ import annotations

import os
import secrets
import subprocess
import tempfile
from collections.abc import Generator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import psycopg
from psycopg import sql

__all__ = ["PostgresServer", "fresh_database", "postgres_server"]

SCRIPT = Path(__file__).parents[1] / "scripts" / "postgres-test-server.sh"
NO_BINARIES = 3


@dataclass(frozen=True)
class PostgresServer:
    """``url`` names a database on the server; ``skip_reason`` is set when there is no server."""

    url: str | None
    skip_reason: str | None = None


@contextmanager
def postgres_server() -> Generator[PostgresServer]:
    """The server for one test session (started and stopped here unless ``IDED_TEST_POSTGRES_URL`` is set)."""
    given = os.environ.get("IDED_TEST_POSTGRES_URL")
    if given:
        yield PostgresServer(url=given)
        return
    folder = tempfile.mkdtemp(prefix="ided-pg-")  # under /tmp: reachable by the postgres user when we are root
    started = subprocess.run(
        ["bash", str(SCRIPT), "start", folder], capture_output=True, text=True, timeout=180, check=False
    )
    try:
        if started.returncode == NO_BINARIES:
            yield PostgresServer(url=None, skip_reason=f"PostgreSQL cannot start here: {started.stderr.strip()}")
            return
        if started.returncode != 0:
            raise RuntimeError(f"{SCRIPT.name} start failed ({started.returncode}):\n{started.stderr}")
        yield PostgresServer(url=started.stdout.strip().splitlines()[-1])
    finally:
        subprocess.run(["bash", str(SCRIPT), "stop", folder], capture_output=True, timeout=120, check=False)


def _with_database(url: str, name: str) -> str:
    return urlunsplit(urlsplit(url)._replace(path=f"/{name}"))


@contextmanager
def fresh_database(server_url: str) -> Generator[str]:
    """A new, empty database on the server (dropped afterwards); yields its URL."""
    name = f"ided_t_{secrets.token_hex(6)}"
    with psycopg.connect(server_url, autocommit=True) as admin:
        admin.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    try:
        yield _with_database(server_url, name)
    finally:
        with psycopg.connect(server_url, autocommit=True) as admin:
            admin.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))
