"""A real Qdrant server on loopback for the tests and benchmarks, started from the binary that
``scripts/build-qdrant-server.sh`` builds.

``IDED_TEST_QDRANT_URL`` names a running server to use instead. Otherwise the binary is looked up
(``IDED_QDRANT_BIN``, else where the build script caches it) and started with a fresh storage
folder in a temp dir, on two free loopback ports (HTTP and gRPC), telemetry off; the server is ready
when ``/readyz`` answers 200 (polled, with a deadline; a server that exits early fails with its log).
When there is no binary, :func:`qdrant_server` yields a :class:`QdrantServer` with ``skip_reason``
saying so and naming the build script.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Generator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from daemon.config import Config
from daemon.index.store_factory import collection_name

__all__ = ["BUILD_SCRIPT", "QdrantServer", "drop_collections", "qdrant_binary", "qdrant_server", "running_qdrant"]

BUILD_SCRIPT = Path(__file__).parents[1] / "scripts" / "build-qdrant-server.sh"
_READY_TIMEOUT_S = 120.0
_POLL_S = 0.05


@dataclass(frozen=True)
class QdrantServer:
    """``url`` is the server's HTTP endpoint; ``skip_reason`` is set when there is no server."""

    url: str | None
    skip_reason: str | None = None
    pid: int | None = None
    storage: Path | None = None


def qdrant_binary() -> Path | None:
    """The server binary to run: ``IDED_QDRANT_BIN``, else the build script's cached one, else None."""
    given = os.environ.get("IDED_QDRANT_BIN")
    if given:
        return Path(given) if Path(given).is_file() else None
    found = subprocess.run(["bash", str(BUILD_SCRIPT), "--path"], capture_output=True, text=True, check=False)
    path = Path(found.stdout.strip()) if found.returncode == 0 and found.stdout.strip() else None
    return path if path is not None and path.is_file() and os.access(path, os.X_OK) else None


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _ready(url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/readyz", timeout=2) as response:
            return response.status == 200
    except (urllib.error.URLError, OSError):
        return False


@contextmanager
def running_qdrant(binary: Path, storage: Path) -> Generator[QdrantServer]:
    """Run ``binary`` with its storage in ``storage`` until the block ends (then stop it: SIGTERM, then SIGKILL)."""
    http_port, grpc_port = _free_port(), _free_port()
    while grpc_port == http_port:
        grpc_port = _free_port()
    storage.mkdir(parents=True, exist_ok=True)
    env = {
        **os.environ,
        "QDRANT__SERVICE__HOST": "127.0.0.1",
        "QDRANT__SERVICE__HTTP_PORT": str(http_port),
        "QDRANT__SERVICE__GRPC_PORT": str(grpc_port),
        "QDRANT__STORAGE__STORAGE_PATH": str(storage / "storage"),
        "QDRANT__STORAGE__SNAPSHOTS_PATH": str(storage / "snapshots"),
        "QDRANT__TELEMETRY_DISABLED": "true",
        "QDRANT__CLUSTER__ENABLED": "false",
        "QDRANT__LOG_LEVEL": "WARN",
    }
    log_path = storage / "qdrant.log"
    url = f"http://127.0.0.1:{http_port}"
    with log_path.open("wb") as log:
        process = subprocess.Popen([str(binary)], cwd=storage, env=env, stdout=log, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + _READY_TIMEOUT_S
        while not _ready(url):
            if process.poll() is not None:
                raise RuntimeError(f"qdrant exited with {process.returncode} before it was ready:\n{_tail(log_path)}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"qdrant was not ready after {_READY_TIMEOUT_S:.0f} s:\n{_tail(log_path)}")
            time.sleep(_POLL_S)  # polling the readiness endpoint, not waiting in place of it
        yield QdrantServer(url=url, pid=process.pid, storage=storage)
    finally:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@contextmanager
def qdrant_server() -> Generator[QdrantServer]:
    """The server for one test session (started and stopped here unless ``IDED_TEST_QDRANT_URL`` is set)."""
    given = os.environ.get("IDED_TEST_QDRANT_URL")
    if given:
        yield QdrantServer(url=given.rstrip("/"))
        return
    binary = qdrant_binary()
    if binary is None:
        yield QdrantServer(
            url=None,
            skip_reason=(
                "no Qdrant server binary: build it once with scripts/build-qdrant-server.sh "
                "(or point IDED_QDRANT_BIN at one, or IDED_TEST_QDRANT_URL at a running server)"
            ),
        )
        return
    folder = Path(tempfile.mkdtemp(prefix="ided-qdrant-"))
    try:
        with running_qdrant(binary, folder) as server:
            yield server
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def drop_collections(config: Config) -> None:
    """Delete a test's collection from the shared session server (the server outlives the test)."""
    if config.qdrant.mode != "server" or config.qdrant.url is None:
        return
    from qdrant_client import QdrantClient

    client = QdrantClient(url=config.qdrant.url, check_compatibility=False)
    try:
        client.delete_collection(collection_name(config))
    finally:
        client.close()


def _tail(path: Path, lines: int = 40) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no log)"
