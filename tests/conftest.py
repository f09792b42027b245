"""Test-wide settings: offline model loading, isolated user dirs, e2e tests collected last."""

from __future__ import annotations

import contextlib
import json
import os
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest

os.environ["HF_HUB_OFFLINE"] = "1"
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    items.sort(key=lambda item: item.get_closest_marker("e2e") is not None)


@pytest.fixture(autouse=True)
def _stop_daemons_the_test_started(tmp_path: Path) -> Iterator[None]:
    """A daemon a test's command started (``ided run`` attaches to one, starting it) stops with the test.

    Found by its ``daemon.json`` record in a state directory under the test's ``tmp_path``; left
    running, each would hold its memory for its whole idle timeout while the suite goes on.
    """
    yield
    for record in tmp_path.glob("**/daemon.json"):
        try:
            pid = int(json.loads(record.read_text(encoding="utf-8"))["pid"])
        except (OSError, ValueError, KeyError, TypeError):
            continue
        if pid != os.getpid():
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGTERM)


@pytest.fixture
def isolated_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A private HOME/XDG config so the user's own ~/.config/ided never leaks into a test.

    The model cache stays shared (``XDG_CACHE_HOME`` unchanged) so the model is assembled once.
    """
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    for key in [k for k in os.environ if k.startswith("IDED_")]:
        monkeypatch.delenv(key)
    yield home


@pytest.fixture(scope="session")
def postgres_server_url() -> Iterator[str]:
    """A real PostgreSQL server for the session (tests/postgres_support.py); skips only without binaries."""
    from tests.postgres_support import postgres_server

    with postgres_server() as server:
        if server.url is None:
            pytest.skip(server.skip_reason or "PostgreSQL cannot start here")
        yield server.url


@pytest.fixture
def postgres_url(postgres_server_url: str) -> Iterator[str]:
    """A new, empty database of its own for one test."""
    from tests.postgres_support import fresh_database

    with fresh_database(postgres_server_url) as url:
        yield url


@pytest.fixture(scope="session")
def qdrant_server_url() -> Iterator[str]:
    """A real Qdrant server for the session (tests/qdrant_server_support.py); skips, naming the build
    script, only when no server binary was built."""
    from tests.qdrant_server_support import qdrant_server

    with qdrant_server() as server:
        if server.url is None:
            pytest.skip(server.skip_reason or "no Qdrant server")
        yield server.url


def qdrant_settings(request: pytest.FixtureRequest, mode: str) -> dict[str, str]:
    """The ``qdrant`` config section for a store mode; "server" starts (or reuses) the session's server."""
    if mode == "server":
        return {"mode": "server", "url": str(request.getfixturevalue("qdrant_server_url"))}
    return {"mode": mode}


@pytest.fixture(params=["sqlite", "postgres"])
def runs_database_url(request: pytest.FixtureRequest) -> str | None:
    """None (runs and checkpoints in SQLite, the default) or a fresh Postgres database's URL: a test that
    takes this fixture runs once on each run store."""
    return str(request.getfixturevalue("postgres_url")) if request.param == "postgres" else None
