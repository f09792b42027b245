"""The embedding worker process: the model's own vectors, at low priority, gone when closed or orphaned."""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from daemon.config import EmbeddingConfig, default_cache_root
from daemon.core.models import Chunk
from daemon.errors import EmbeddingUnavailable
from daemon.index.embed_process import EmbeddingProcess
from daemon.index.embed_worker import EMBED_NICENESS, WorkerSettings
from daemon.index.embedder import OnnxEmbedder
from tests.unit.index.chunk_support import python_function

pytestmark = pytest.mark.slow

CONFIG = EmbeddingConfig(max_tokens=64, batch_size=4, threads=1)


def _chunk(i: int) -> Chunk:
    text = f"def total_{i}(values):\n    return sum(values) * {i}\n" + "    # padding words\n" * (i % 5)
    return python_function(text, f"total_{i}", qualified_name=f"m{i}.total_{i}")


def _exits(pid: int, wait_s: float) -> bool:
    """True once ``pid`` has exited (waited on its pidfd), False if it still runs after ``wait_s``."""
    try:
        fd = os.pidfd_open(pid)
    except ProcessLookupError:
        return True
    try:
        readable, _, _ = select.select([fd], [], [], wait_s)
        return bool(readable)
    finally:
        os.close(fd)


def test_the_worker_embeds_as_the_model_does_at_low_priority_and_exits_when_closed() -> None:
    chunks = [_chunk(i) for i in range(9)]
    expected = OnnxEmbedder.from_config(CONFIG, default_cache_root(), load="documents").embed_documents(chunks)
    worker = EmbeddingProcess(CONFIG, default_cache_root())
    try:
        got = worker.embed_documents(chunks)
        pid = worker.pid
        assert pid is not None and pid != os.getpid()
        assert os.getpriority(os.PRIO_PROCESS, pid) >= os.getpriority(os.PRIO_PROCESS, 0) + EMBED_NICENESS
        assert worker.embed_documents(chunks[:2]) == got[:2]  # the same worker answers again
        assert worker.pid == pid
        mapped = Path(f"/proc/{pid}/maps").read_text()
        assert "onnxruntime" in mapped and "pydantic_core" not in mapped  # the model, without pydantic
    finally:
        worker.close()
    assert got == expected  # the same float32 values, through the pipe
    assert _exits(pid, 10)
    assert worker.pid is None


def test_a_model_that_cannot_load_is_refused_with_the_workers_reason(tmp_path: Path) -> None:
    broken = EmbeddingConfig(model_dir=str(tmp_path))  # no model.onnx there
    (tmp_path / "model.onnx").write_bytes(b"not an onnx model")
    for name in ("tokenizer.json", "tokenizer_config.json"):
        (tmp_path / name).write_bytes((default_cache_root() / "models" / "all-MiniLM-L6-v2-qint8" / name).read_bytes())
    worker = EmbeddingProcess(broken, default_cache_root())
    with pytest.raises(EmbeddingUnavailable, match="cannot load dense model"):
        worker.embed_documents([_chunk(1)])
    assert worker.pid is None


def test_the_worker_reads_the_daemons_embedding_config_and_names_a_bad_field() -> None:
    settings = WorkerSettings.from_json(CONFIG.model_dump_json().encode())
    assert (settings.max_tokens, settings.batch_size, settings.threads, settings.model_dir) == (64, 4, 1, None)
    assert settings.model_name == CONFIG.model_name and settings.memory_arena is True
    with pytest.raises(ValueError, match="'threads' is missing or not int or NoneType"):
        WorkerSettings.from_json(json.dumps({**CONFIG.model_dump(), "threads": True}).encode())
    with pytest.raises(ValueError, match="'model_dir' is missing"):
        WorkerSettings.from_json(b'{"enabled": true}')
    with pytest.raises(ValueError, match="not a JSON object"):
        WorkerSettings.from_json(b"[1, 2]")


OWNER = """
import sys
from daemon.config import EmbeddingConfig, default_cache_root
from daemon.index.embed_process import EmbeddingProcess
worker = EmbeddingProcess(EmbeddingConfig(threads=1), default_cache_root())
worker.start()
print(worker.pid, flush=True)
sys.stdin.read()
"""


def test_the_worker_dies_with_its_owner_whatever_kills_it() -> None:
    with subprocess.Popen([sys.executable, "-c", OWNER], stdin=subprocess.PIPE, stdout=subprocess.PIPE) as owner:
        assert owner.stdout is not None
        worker_pid = int(owner.stdout.readline())
        assert not _exits(worker_pid, 0)  # running while its owner lives
        owner.send_signal(signal.SIGKILL)
        assert owner.wait(30) == -signal.SIGKILL
    exited = _exits(worker_pid, 20)
    if not exited:
        os.kill(worker_pid, signal.SIGKILL)
    assert exited, "the embedding worker outlived its SIGKILLed owner"
