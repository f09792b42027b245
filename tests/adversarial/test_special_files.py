"""A hostile workspace of special files: nothing hangs, nothing whose contents may live outside is served.

Planted as a repository or a local attacker would: a FIFO behind an ordinary name
(``mkfifo inner.fifo; ln -s inner.fifo fifolink.txt``, the link is committable), a bare FIFO named
like source, a Unix socket, a link to ``/dev/zero``, a hard link to a secret outside the workspace
(``ln ../outside/secrets/outside.env hardout.txt``) and, where user namespaces allow a mount, a file
on another file system mounted inside the workspace. Tried through ``ided index``/``search``/
``status`` (each bounded: a hang fails the test), a watching daemon that sees them arrive after its
first pass, the code-intel path check and the agents' file tools. Each test prints an
``[adversarial]`` line (``-s``): special files tried / hung, hard links tried / served.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import socket
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from daemon.config import load_config
from daemon.core.models import SearchMode, SkipReason
from daemon.errors import InvalidToolInput, PathOutsideWorkspace
from daemon.intel.workspace_paths import WorkspacePaths
from daemon.orchestration.agents.workspace_files import RunFiles
from daemon.service.wire.api import DaemonStatus, Methods, SearchParams
from daemon.service.wire.client import DaemonClient

pytestmark = pytest.mark.e2e

CALL_TIMEOUT = 120.0
OUTSIDE_MARKER = "zqhardoutside"


@dataclass
class SpecialTally:
    front: str
    tried: int = 0
    hung: int = 0
    links_tried: int = 0
    links_served: int = 0
    problems: list[str] = field(default_factory=list[str])

    def line(self) -> str:
        return (
            f"[adversarial] {self.front}: special files tried {self.tried}, hung {self.hung}; "
            f"hard links / other file systems tried {self.links_tried}, served {self.links_served}"
        )


@dataclass(frozen=True)
class SpecialWorkspace:
    root: Path
    special: tuple[str, ...]
    """Paths of FIFOs, sockets and links to them or to a device."""
    hard: tuple[str, ...]
    """Hard links whose other name lies outside (holding ``OUTSIDE_MARKER``)."""
    socket: socket.socket


def build(base: Path) -> SpecialWorkspace:
    root = base / "ws"
    secrets = base / "outside" / "secrets"
    secrets.mkdir(parents=True)
    (secrets / "outside.env").write_text(f"DB_PASSWORD=Hq7Lm2Xp9Rt4Vw8Zb3Nc # {OUTSIDE_MARKER}\n")
    (root / "src").mkdir(parents=True)
    (root / "src" / "app.py").write_text("def zqordinary():\n    return 1\n")
    os.mkfifo(root / "inner.fifo")
    (root / "fifolink.txt").symlink_to("inner.fifo")
    os.mkfifo(root / "src" / "pipe.py")
    (root / "zero.txt").symlink_to("/dev/zero")
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.bind(str(root / "src" / "listen.py"))
    os.link(secrets / "outside.env", root / "hardout.txt")
    return SpecialWorkspace(
        root=root,
        special=("inner.fifo", "fifolink.txt", "src/pipe.py", "src/listen.py", "zero.txt"),
        hard=("hardout.txt",),
        socket=sock,
    )


@pytest.fixture
def special(tmp_path: Path, isolated_home: Path) -> Any:
    ws = build(tmp_path)
    yield ws
    ws.socket.close()


def _env(tmp_path: Path) -> dict[str, str]:
    return {
        **{k: v for k, v in os.environ.items() if not k.startswith("IDED_")},
        "IDED_STATE_DIR": str(tmp_path / "state"),
        "IDED_EMBEDDING__ENABLED": "false",
        "IDED_INTEL__PRESTART": "false",
        "XDG_CONFIG_HOME": str(tmp_path / "home" / ".config"),
        "HF_HUB_OFFLINE": "1",
    }


def _cli(tmp_path: Path, root: Path, tally: SpecialTally, *args: str, prefix: tuple[str, ...] = ()) -> Any:
    try:
        done = subprocess.run(
            [*prefix, sys.executable, "-P", "-m", "daemon", *args, "--json"],
            cwd=root,
            env=_env(tmp_path),
            capture_output=True,
            text=True,
            timeout=CALL_TIMEOUT,
            check=False,
        )
    except subprocess.TimeoutExpired:
        tally.hung += 1
        pytest.fail(f"ided {' '.join(args)} did not answer in {CALL_TIMEOUT:.0f} s")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_index_search_and_status_answer_and_serve_no_special_file_and_no_hard_link(
    special: SpecialWorkspace, tmp_path: Path
) -> None:
    tally = SpecialTally("cli")
    tally.tried = len(special.special)
    tally.links_tried = len(special.hard)
    _cli(tmp_path, special.root, tally, "index")
    hits = _cli(tmp_path, special.root, tally, "search", f"{OUTSIDE_MARKER} DB_PASSWORD zqordinary", "-k", "50")["hits"]
    paths = {h["chunk"]["path"] for h in hits}
    tally.links_served = sum(1 for h in hits if OUTSIDE_MARKER in h["chunk"]["text"])
    assert "src/app.py" in paths
    status = _cli(tmp_path, special.root, tally, "status")
    skipped = status["last_report"]["skipped"]
    print(tally.line())
    assert tally.links_served == 0 and not paths & {*special.hard, *special.special}
    # inner.fifo, fifolink.txt, src/pipe.py and src/listen.py as special files; zero.txt leads outside
    assert skipped[SkipReason.SPECIAL_FILE.value] == 4
    assert skipped[SkipReason.SYMLINK_OUTSIDE.value] == 1
    assert skipped[SkipReason.HARD_LINK.value] == 1


async def _first_pass_done(client: DaemonClient) -> None:
    while True:
        status = await client.call_model(Methods.DAEMON_STATUS, None, DaemonStatus)
        if status.index.last_update is not None and status.busy is None:
            return
        await asyncio.sleep(0.05)


async def test_a_watching_daemon_keeps_answering_when_a_fifo_link_and_a_hard_link_arrive(
    special: SpecialWorkspace, tmp_path: Path
) -> None:
    tally = SpecialTally("daemon watcher")
    overrides: dict[str, Any] = {
        "state_dir": str(tmp_path / "state"),
        "embedding": {"enabled": False},
        "intel": {"prestart": False},
        "daemon": {"idle_shutdown_seconds": 0, "debounce_ms": 20},
    }
    config = load_config(special.root, overrides=overrides)
    changed: set[str] = set()
    arrived = asyncio.Event()
    late = {"late/fifolink.txt", "late/pipe.py", "late/hardout.txt", "late/after.py"}

    async def on_note(method: str, params: dict[str, Any]) -> None:
        if method == Methods.INDEX_CHANGED:
            changed.update(params["paths"])
            if "late/after.py" in changed:
                arrived.set()

    client = await DaemonClient.attach(
        config, client="other", overrides=overrides, subscribe=True, on_notification=on_note
    )
    try:
        await asyncio.wait_for(_first_pass_done(client), CALL_TIMEOUT)
        (special.root / "late").mkdir()
        os.mkfifo(special.root / "late" / "inner.fifo")
        (special.root / "late" / "fifolink.txt").symlink_to("inner.fifo")
        os.mkfifo(special.root / "late" / "pipe.py")
        os.link(tmp_path / "outside" / "secrets" / "outside.env", special.root / "late" / "hardout.txt")
        (special.root / "late" / "after.py").write_text("def zqlateafter():\n    return 2\n")
        tally.tried, tally.links_tried = len(special.special) + 3, len(special.hard) + 1
        try:
            await asyncio.wait_for(arrived.wait(), CALL_TIMEOUT)
            query = SearchParams(query=f"{OUTSIDE_MARKER} zqlateafter zqordinary", k=50, mode=SearchMode.LEXICAL)
            result = await asyncio.wait_for(client.call(Methods.INDEX_SEARCH, query), CALL_TIMEOUT)
            status = await asyncio.wait_for(client.call_model(Methods.DAEMON_STATUS, None, DaemonStatus), CALL_TIMEOUT)
        except TimeoutError:
            tally.hung += 1
            raise
        hits: list[dict[str, Any]] = result["hits"]
        paths = {h["chunk"]["path"] for h in hits}
        tally.links_served = sum(1 for h in hits if OUTSIDE_MARKER in h["chunk"]["text"])
        assert "late/after.py" in paths and status.index is not None
        assert not paths & late - {"late/after.py"}
    finally:
        await client.call(Methods.SHUTDOWN, None)
        await client.close()
    print(tally.line())
    assert tally.hung == 0 and tally.links_served == 0


async def test_the_tools_path_check_and_the_agents_file_tools_refuse_them(special: SpecialWorkspace) -> None:
    tally = SpecialTally("tools and agents")
    paths = WorkspacePaths(special.root)
    files = RunFiles(special.root, editable=True)
    for rel in [p for p in special.special if p != "zero.txt"]:
        tally.tried += 2
        with pytest.raises(InvalidToolInput, match="not a file"):
            await asyncio.wait_for(asyncio.to_thread(paths.resolve, rel), CALL_TIMEOUT)
        with pytest.raises(InvalidToolInput, match="never opened"):
            await asyncio.wait_for(files.read(rel), CALL_TIMEOUT)
    with pytest.raises(InvalidToolInput, match="never opened"):  # writing into a FIFO would block too
        await asyncio.wait_for(files.write("fifolink.txt", "x"), CALL_TIMEOUT)
    for rel in special.hard:
        tally.links_tried += 3
        with pytest.raises(PathOutsideWorkspace, match="hard link"):
            paths.resolve(rel)
        with pytest.raises(PathOutsideWorkspace, match="hard link"):
            await files.read(rel)
        with pytest.raises(PathOutsideWorkspace, match="hard link"):  # a write would change the outside file
            await files.write(rel, "overwritten")
    assert OUTSIDE_MARKER in (special.root.parent / "outside" / "secrets" / "outside.env").read_text()
    print(tally.line())


def test_a_file_on_another_file_system_mounted_inside_is_not_indexed(tmp_path: Path, isolated_home: Path) -> None:
    unshare = shutil.which("unshare")
    root = tmp_path / "ws"
    (root / "mnt").mkdir(parents=True)
    (root / "app.py").write_text("def zqordinary():\n    return 1\n")
    probe = (
        subprocess.run([unshare or "unshare", "-Urm", "true"], capture_output=True, timeout=30, check=False)
        if unshare
        else None
    )
    if probe is None or probe.returncode != 0:
        pytest.skip("no user namespaces here to mount a file system inside the workspace (unshare -Urm)")
    tally = SpecialTally("cli, another file system")
    tally.links_tried = 1
    script = (
        f"mount -t tmpfs none {root / 'mnt'} && "
        f"printf 'def zqmounted():\\n    return 3\\n' > {root / 'mnt' / 'mounted.py'} && "
        f'exec "$@"'
    )
    prefix = ("unshare", "-Urm", "sh", "-c", script, "sh")
    _cli(tmp_path, root, tally, "index", prefix=prefix)
    report = _cli(tmp_path, root, tally, "status", prefix=prefix)["last_report"]
    assert report["skipped"][SkipReason.OTHER_FILESYSTEM.value] == 1
    hits = _cli(tmp_path, root, tally, "search", "zqmounted zqordinary", prefix=prefix)["hits"]
    tally.links_served = sum(1 for h in hits if "zqmounted" in h["chunk"]["text"])
    print(tally.line())
    assert tally.links_served == 0 and "app.py" in {h["chunk"]["path"] for h in hits}
