"""A daemon SIGKILLed mid-pass: no process of its own is left behind, and the index it leaves scores exactly.

Real ``ided daemon`` subprocesses on a generated workspace large enough for a first pass with parsing
workers (a forkserver, its workers and multiprocessing's resource tracker). Each kill is checked by
walking ``/proc`` for every descendant of the daemon just before the kill and waiting (pidfd, bounded)
for each to exit. After two kills and a restart, lexical scores must equal those of an index built in
one clean pass: BM25's IDF counts must not keep the points a killed pass left and the repair deleted.
"""

from __future__ import annotations

import asyncio
import os
import random
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from daemon.config import Config, load_config
from daemon.core.models import SearchMode
from daemon.service.wire.api import DaemonStatus, Methods, SearchParams
from daemon.service.wire.client import DaemonClient

pytestmark = [pytest.mark.e2e, pytest.mark.skipif(sys.platform != "linux", reason="walks /proc (Linux only)")]

FILES = 2400
QUERIES = ("alphafetch betaparse", "gammastore", "omegamerge sigmasplit", "kappajoin thetascan", "deltaindex")
_WORDS = [
    f"{a}{b}"
    for a in ("alpha", "beta", "gamma", "delta", "omega", "sigma", "kappa", "theta")
    for b in ("fetch", "parse", "store", "load", "write", "merge", "split", "join", "scan", "index")
]


def _make_workspace(root: Path) -> Path:
    rnd = random.Random(7)
    for i in range(FILES):
        folder = root / f"pkg{i % 40}"
        folder.mkdir(parents=True, exist_ok=True)
        functions: list[str] = []
        for f in range(3):
            w = rnd.sample(_WORDS, 6)
            functions.append(
                f'def {w[0]}_{i}_{f}(x):\n    """{w[1]} {w[2]} {w[3]}."""\n    return {w[4]}(x) + {w[5]}(x)\n'
            )
        (folder / f"mod{i}.py").write_text("\n".join(functions))
    return root


def _overrides(state: Path) -> dict[str, Any]:
    return {"state_dir": str(state), "embedding": {"enabled": False}, "daemon": {"idle_shutdown_seconds": 0}}


def _daemon_argv(workspace: Path, state: Path) -> list[str]:
    settings = [f"state_dir={state}", "embedding.enabled=false", "daemon.idle_shutdown_seconds=0"]
    return [
        sys.executable,
        "-m",
        "daemon",
        *(x for s in settings for x in ("--set", s)),
        "daemon",
        "-w",
        str(workspace),
    ]


def _descendants(pid: int) -> dict[int, str]:
    """Every live process under ``pid`` (by parent links in /proc), with its command line."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        children.setdefault(ppid, []).append(int(entry))
    found: dict[int, str] = {}
    todo = list(children.get(pid, []))
    while todo:
        child = todo.pop()
        try:
            found[child] = Path(f"/proc/{child}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        todo += children.get(child, [])
    return found


async def _exits(pid: int, wait_s: float) -> bool:
    """True once ``pid`` (not necessarily our child) has exited; False if it still runs after ``wait_s``."""
    try:
        fd = os.pidfd_open(pid)
    except ProcessLookupError:
        return True
    exited = asyncio.Event()
    loop = asyncio.get_running_loop()
    loop.add_reader(fd, exited.set)
    try:
        await asyncio.wait_for(exited.wait(), wait_s)
        return True
    except TimeoutError:
        return False
    finally:
        loop.remove_reader(fd)
        os.close(fd)


class _Daemon:
    """One foreground ``ided daemon`` subprocess and a subscribed client."""

    def __init__(self, workspace: Path, state: Path) -> None:
        self.config: Config = load_config(workspace, overrides=_overrides(state))
        with (state.parent / f"{state.name}.log").open("a") as log:
            self.proc = subprocess.Popen(
                _daemon_argv(workspace, state), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=log
            )
        self.progress: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self.client: DaemonClient | None = None

    async def attach(self) -> DaemonClient:
        async def on_note(method: str, params: dict[str, Any]) -> None:
            if method == Methods.INDEX_PROGRESS:
                await self.progress.put(params)

        async def connect() -> DaemonClient:
            while True:
                assert self.proc.poll() is None, f"the daemon exited with {self.proc.returncode}"
                try:
                    return await DaemonClient.attach(
                        self.config, client="other", start=False, subscribe=True, on_notification=on_note
                    )
                except Exception:  # not listening yet
                    await asyncio.sleep(0.05)

        self.client = await asyncio.wait_for(connect(), 60)
        return self.client

    async def parsed_a_third(self) -> None:
        async def wait() -> None:
            while True:
                event = await self.progress.get()
                if event["phase"] == "parse" and event["total"] and event["done"] * 3 >= event["total"]:
                    return

        await asyncio.wait_for(wait(), 120)

    async def pass_done(self) -> None:
        assert self.client is not None

        async def poll() -> None:
            assert self.client is not None
            while True:
                status = await self.client.call_model(Methods.DAEMON_STATUS, None, DaemonStatus)
                if status.index.last_update is not None and status.busy is None:
                    return
                await asyncio.sleep(0.05)

        await asyncio.wait_for(poll(), 180)

    async def scores(self) -> dict[str, list[tuple[str, float]]]:
        assert self.client is not None
        out: dict[str, list[tuple[str, float]]] = {}
        for query in QUERIES:
            result = await self.client.call(
                Methods.INDEX_SEARCH, SearchParams(query=query, k=20, mode=SearchMode.LEXICAL)
            )
            out[query] = [(hit["chunk"]["path"], round(hit["score"], 6)) for hit in result["hits"]]
        return out

    async def stop(self) -> None:
        assert self.client is not None
        await self.client.call(Methods.SHUTDOWN, None)
        await self.client.close()
        assert await asyncio.to_thread(self.proc.wait, 60) == 0

    async def kill(self) -> dict[int, str]:
        """SIGKILL the daemon mid-pass; returns its descendants that outlived it by 20 s."""
        before = _descendants(self.proc.pid)
        assert any("forkserver" in cmd for cmd in before.values()), f"no parsing workers to orphan: {before}"
        self.proc.send_signal(signal.SIGKILL)
        assert await asyncio.to_thread(self.proc.wait, 60) == -signal.SIGKILL
        if self.client is not None:
            await self.client.close()
        survivors = {pid: cmd for pid, cmd in before.items() if not await _exits(pid, 20)}
        for pid in survivors:  # do not leak them into the rest of the test run
            os.kill(pid, signal.SIGKILL)
        return survivors


def _start_quietly(argv: list[str]) -> subprocess.Popen[bytes]:
    return subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def _by_score(scores: dict[str, list[tuple[str, float]]]) -> dict[str, list[float]]:
    """Each query's scores, highest first (paths with equal scores may come in any order)."""
    return {q: sorted((s for _, s in hits), reverse=True) for q, hits in scores.items()}


@pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="a first pass starts parsing workers only with 2+ cores")
async def test_a_daemon_killed_mid_pass_leaves_no_process_and_its_index_scores_like_a_clean_one(
    tmp_path: Path, isolated_home: Path
) -> None:
    workspace = _make_workspace(tmp_path / "ws")

    clean = _Daemon(workspace, tmp_path / "clean")
    await clean.attach()
    await clean.pass_done()
    expected = await clean.scores()
    await clean.stop()

    state = tmp_path / "killed"
    orphans: dict[int, str] = {}
    for _ in range(2):
        victim = _Daemon(workspace, state)
        await victim.attach()
        await victim.parsed_a_third()
        orphans |= await victim.kill()
    assert orphans == {}

    restarted = _Daemon(workspace, state)
    await restarted.attach()
    await restarted.pass_done()
    after = await restarted.scores()
    await restarted.stop()

    assert _by_score(after) == _by_score(expected)
    for query in QUERIES:  # a path found by both is scored the same
        want = dict(expected[query])
        assert {p: s for p, s in after[query] if p in want} == {p: want[p] for p, _ in after[query] if p in want}


async def test_a_daemon_stopped_cleanly_leaves_no_process(tmp_path: Path, isolated_home: Path) -> None:
    workspace = _make_workspace(tmp_path / "ws")
    daemon = _Daemon(workspace, tmp_path / "state")
    await daemon.attach()
    await daemon.pass_done()
    before = _descendants(daemon.proc.pid)
    await daemon.stop()
    assert [pid for pid in before if not await _exits(pid, 20)] == []


@pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="a first pass starts parsing workers only with 2+ cores")
async def test_an_index_command_killed_mid_pass_leaves_no_process(tmp_path: Path, isolated_home: Path) -> None:
    workspace = _make_workspace(tmp_path / "ws")
    settings = [f"state_dir={tmp_path / 'state'}", "embedding.enabled=false"]
    argv = [sys.executable, "-m", "daemon", *(x for s in settings for x in ("--set", s)), "index", str(workspace)]
    proc = _start_quietly(argv)

    async def workers_up() -> dict[int, str]:
        while True:
            found = _descendants(proc.pid)
            if sum("forkserver" in cmd for cmd in found.values()) >= 3:  # the forkserver and two workers
                return found
            assert proc.poll() is None, "the pass ended before its workers were seen"
            await asyncio.sleep(0.02)

    before = await asyncio.wait_for(workers_up(), 120)
    proc.send_signal(signal.SIGKILL)
    assert await asyncio.to_thread(proc.wait, 60) == -signal.SIGKILL
    survivors = [pid for pid in before if not await _exits(pid, 20)]
    for pid in survivors:
        os.kill(pid, signal.SIGKILL)
    assert survivors == []
