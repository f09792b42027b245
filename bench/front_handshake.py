"""How long each front keeps its client waiting: ``ided mcp``, ``ided lsp`` and ``ided acp`` from a cold process.

For every checkout given (``--checkout LABEL=DIR``: the same virtual environment runs each one's
sources through ``PYTHONPATH``, so two commits compare in one run) and every round, interleaved:
the state directory is fresh and no daemon runs, the front is spawned on a copy of the workspace,
and a plain JSON-RPC client over stdio (no SDK) times

- ``mcp``: spawn -> ``initialize`` answered, -> ``tools/list`` answered, -> the first
  ``find_definition`` by name answered (``--symbol``; the answer's first line is printed once);
- ``lsp``: spawn -> ``initialize`` answered, -> ``shutdown`` answered right after ``initialized`` (the
  server has loaded pygls and its handlers and serves requests; then ``exit``);
- ``acp``: spawn -> ``initialize`` answered, -> ``session/new`` answered.

Each front's daemon is stopped after its round. Prints the median and the spread per front and
checkout, and the ratio of each checkout to the first.

Usage: ``python bench/front_handshake.py --workspace DIR [--checkout before=/path --checkout after=.] [--rounds 3]``
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
STEP_TIMEOUT_S = 300.0
TOOLS = ROOT / ".tools"
SEARCH_PATH = [str(TOOLS / "lsp-venv" / "bin"), str(TOOLS / "node" / "node_modules" / ".bin")]
"""Where the language servers are installed for this checkout (as ``bench/peers.py`` sets them)."""


class Framed:
    """One JSON-RPC peer over a child's stdio: newline-delimited (MCP, ACP) or Content-Length (LSP)."""

    def __init__(self, proc: asyncio.subprocess.Process, *, lsp: bool) -> None:
        self.proc = proc
        self.lsp = lsp
        self.next_id = 0

    def send(self, method: str, params: Any, *, notify: bool = False) -> int:
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        if not notify:
            self.next_id += 1
            message["id"] = self.next_id
        body = json.dumps(message).encode()
        assert self.proc.stdin is not None
        if self.lsp:
            self.proc.stdin.write(f"Content-Length: {len(body)}\r\n\r\n".encode() + body)
        else:
            self.proc.stdin.write(body + b"\n")
        return self.next_id

    async def read(self) -> dict[str, Any]:
        assert self.proc.stdout is not None
        if not self.lsp:
            line = await self.proc.stdout.readline()
            if not line:
                raise EOFError("the front closed its stdout")
            return json.loads(line)
        length = 0
        while True:
            header = await self.proc.stdout.readline()
            if not header:
                raise EOFError("the front closed its stdout")
            if header in (b"\r\n", b"\n"):
                break
            name, _, value = header.decode().partition(":")
            if name.lower() == "content-length":
                length = int(value)
        return json.loads(await self.proc.stdout.readexactly(length))

    async def request(self, method: str, params: Any) -> dict[str, Any]:
        """Send and wait for the answer (requests from the front get a null result; notifications are skipped)."""
        wanted = self.send(method, params)
        while True:
            message = await asyncio.wait_for(self.read(), STEP_TIMEOUT_S)
            if message.get("id") == wanted and "method" not in message:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                return message["result"]
            if "method" in message and "id" in message:  # a request from the front: answer it plainly
                reply = {"jsonrpc": "2.0", "id": message["id"], "result": None}
                body = json.dumps(reply).encode()
                assert self.proc.stdin is not None
                self.proc.stdin.write(
                    (f"Content-Length: {len(body)}\r\n\r\n".encode() + body) if self.lsp else body + b"\n"
                )


def checkout_env(checkout: Path, state: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("IDED_")}
    env |= {
        "PYTHONPATH": str(checkout),
        "IDED_STATE_DIR": str(state),
        "XDG_CONFIG_HOME": str(state / "config"),
        "HF_HUB_OFFLINE": "1",
        "IDED_INTEL__SEARCH_PATH": json.dumps(SEARCH_PATH),
    }
    return env


async def _spawn(args: list[str], env: dict[str, str], cwd: Path) -> asyncio.subprocess.Process:
    return await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "daemon",
        *args,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
        env=env,
        cwd=cwd,
        limit=1 << 24,
    )


async def _finish(proc: asyncio.subprocess.Process) -> None:
    if proc.stdin is not None:
        proc.stdin.close()
    try:
        await asyncio.wait_for(proc.wait(), 30)
    except TimeoutError:
        proc.kill()
        await proc.wait()


async def mcp(checkout: Path, workspace: Path, state: Path, symbol: str) -> tuple[dict[str, float], str]:
    start = time.perf_counter()
    proc = await _spawn(["mcp", "--workspace", str(workspace)], checkout_env(checkout, state), workspace)
    peer = Framed(proc, lsp=False)
    times: dict[str, float] = {}
    await peer.request(
        "initialize",
        {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "0"}},
    )
    times["initialize"] = time.perf_counter() - start
    peer.send("notifications/initialized", None, notify=True)
    await peer.request("tools/list", {})
    times["tools/list"] = time.perf_counter() - start
    answer = await peer.request("tools/call", {"name": "find_definition", "arguments": {"symbol": symbol}})
    times["find_definition"] = time.perf_counter() - start
    text = str(answer.get("content", [{}])[0].get("text", ""))[:160].replace("\n", " ")
    await _finish(proc)
    return times, text


async def lsp(checkout: Path, workspace: Path, state: Path) -> dict[str, float]:
    start = time.perf_counter()
    proc = await _spawn(["lsp", "--workspace", str(workspace)], checkout_env(checkout, state), workspace)
    peer = Framed(proc, lsp=True)
    await peer.request("initialize", {"processId": os.getpid(), "rootUri": workspace.as_uri(), "capabilities": {}})
    times = {"initialize": time.perf_counter() - start}
    peer.send("initialized", {}, notify=True)
    await peer.request("shutdown", None)
    times["shutdown"] = time.perf_counter() - start  # the server has loaded and serves requests
    peer.send("exit", None, notify=True)
    await _finish(proc)
    return times


async def acp(checkout: Path, workspace: Path, state: Path) -> dict[str, float]:
    start = time.perf_counter()
    proc = await _spawn(["acp", "--workspace", str(workspace)], checkout_env(checkout, state), workspace)
    peer = Framed(proc, lsp=False)
    await peer.request("initialize", {"protocolVersion": 1, "clientCapabilities": {}})
    times = {"initialize": time.perf_counter() - start}
    await peer.request("session/new", {"cwd": str(workspace), "mcpServers": []})
    times["session/new"] = time.perf_counter() - start
    await _finish(proc)
    return times


def _stop_daemon(checkout: Path, workspace: Path, state: Path) -> None:
    subprocess.run(
        [sys.executable, "-m", "daemon", "stop", "--workspace", str(workspace)],
        env=checkout_env(checkout, state),
        capture_output=True,
        timeout=120,
        check=False,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--workspace", type=Path, required=True, help="a folder copied for each round")
    parser.add_argument("--checkout", action="append", default=[], metavar="LABEL=DIR")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--symbol", default="Session.request")
    parser.add_argument("--fronts", default="mcp,lsp,acp")
    args = parser.parse_args()
    checkouts = [(label, Path(path).resolve()) for label, _, path in (c.partition("=") for c in args.checkout)]
    checkouts = checkouts or [("this", ROOT)]
    fronts = args.fronts.split(",")
    print("load average (1, 5, 15 min) at the start: " + ", ".join(f"{x:.2f}" for x in os.getloadavg()), flush=True)
    figures: dict[tuple[str, str, str], list[float]] = defaultdict(list)
    answers: dict[str, str] = {}
    for round_no in range(args.rounds):
        for front in fronts:
            for label, checkout in checkouts:
                with tempfile.TemporaryDirectory(prefix="ided-handshake-", ignore_cleanup_errors=True) as tmp:
                    base = Path(tmp)
                    workspace, state = base / "ws", base / "state"
                    shutil.copytree(args.workspace, workspace)
                    subprocess.run(["git", "init", "-q", str(workspace)], check=True)
                    try:
                        if front == "mcp":
                            times, text = asyncio.run(mcp(checkout, workspace, state, args.symbol))
                            answers.setdefault(label, text)
                        elif front == "lsp":
                            times = asyncio.run(lsp(checkout, workspace, state))
                        else:
                            times = asyncio.run(acp(checkout, workspace, state))
                    finally:
                        _stop_daemon(checkout, workspace, state)
                    for step, seconds in times.items():
                        figures[(front, step, label)].append(seconds)
                    shown = ", ".join(f"{step} {seconds:.2f} s" for step, seconds in times.items())
                    print(f"round {round_no + 1} {front} {label}: {shown}", flush=True)
    print()
    print("load average (1, 5, 15 min) at the end: " + ", ".join(f"{x:.2f}" for x in os.getloadavg()))
    print(f"{'front':<5} {'step (from spawn)':<18} {'checkout':<10} {'median':>8} {'min':>7} {'max':>7}  ratio")
    for (front, step, label), values in figures.items():
        first = statistics.median(figures[(front, step, checkouts[0][0])])
        median = statistics.median(values)
        print(
            f"{front:<5} {step:<18} {label:<10} {median:>7.2f}s {min(values):>6.2f}s {max(values):>6.2f}s"
            f"  {median / first:.2f}x"
        )
    for label, text in answers.items():
        print(f"first find_definition ({label}): {text}")


if __name__ == "__main__":
    main()
