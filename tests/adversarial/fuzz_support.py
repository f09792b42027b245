"""A bounded, seeded JSON-RPC fuzzer for ided's stdio fronts (``ided mcp``, ``ided lsp``, ``ided acp``).

Each front is a real subprocess spoken to in raw bytes. The fuzzer sends hand-written hostile cases
(deep nesting, non-object JSON, batches, missing params, wrong types, huge ids, invalid UTF-8,
truncated frames, bad ``Content-Length`` headers for LSP) and then seeded mutations of the front's
valid frames (structural: keys dropped, values swapped for junk of another type; byte-level: flips,
cuts, insertions). After every case it sends a liveness request and waits for its answer.

What it counts, per front (:class:`FuzzReport`):

- ``sent``: cases sent;
- ``survived``: cases after which the liveness request was answered;
- ``unanswered``: cases that were requests with a usable id (an integer or a string that UTF-8 can
  carry, in a body a standard JSON parser reads) and got no response with that id (JSON-RPC owes
  every request one);
- ``deaths``: cases after which the process had exited or closed its stdout (it is restarted and
  the run goes on);
- ``garbled``: lines or frames on stdout that were not JSON (stdout is the wire).

The same engine runs small in CI (``tests/adversarial/test_fuzz_<front>.py``) and long under
``just fuzz`` (``scripts/fuzz_fronts.py``). Cases are reproducible from the seed.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import random
import shutil
import sys
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, cast

from tests.vcs_support import make_repo

__all__ = ["FRONTS", "Case", "FrontSpec", "FuzzReport", "fuzz_front", "hand_cases", "mutations"]

Framing = Literal["lines", "content-length"]

ANSWER_WAIT_S = 30.0
"""How long a case's own answer may lag behind the liveness answer before it counts as unanswered."""
LIVENESS_WAITS_S = (3.0, 20.0, 20.0)
"""How long each liveness request may take. It is re-sent (up to three times in all) for cases that
leave a frame half-read, whose missing bytes the re-sent request supplies; the first wait is short
so such a case costs seconds, and a late answer to an earlier liveness request is ignored."""
START_WAIT_S = 60.0


@dataclass(frozen=True, kw_only=True)
class Case:
    """One thing to send: its framed bytes, a label, and the id a response is owed to (if any)."""

    label: str
    data: bytes
    expects: str | None = None
    """``json.dumps`` of the request id an answer must carry; None when no answer is owed."""


@dataclass
class FuzzReport:
    front: str
    sent: int = 0
    survived: int = 0
    unanswered: int = 0
    deaths: int = 0
    garbled: int = 0
    failures: list[str] = field(default_factory=list[str])
    slowest: list[tuple[float, str]] = field(default_factory=list[tuple[float, str]])
    """The cases that took longest (seconds from sending to the liveness answer), longest first."""

    def line(self) -> str:
        return (
            f"{self.front}: frames sent {self.sent}, survived {self.survived}, unanswered {self.unanswered}, "
            f"deaths {self.deaths}, garbled output {self.garbled}"
        )


@dataclass(frozen=True, kw_only=True)
class FrontSpec:
    """How to start one front and speak to it."""

    name: str
    framing: Framing
    argv: Callable[[Path], list[str]]
    env: Callable[[Path], dict[str, str]]
    handshake: Callable[[Path], list[dict[str, Any]]]
    """Messages sent once after start (the first must be a request with id "hello")."""
    liveness: Callable[[str], dict[str, Any]]
    valid: Callable[[Path], list[dict[str, Any]]]
    """Well-formed frames the mutations start from."""
    cleanup: Callable[[Path], Awaitable[None]] | None = None
    """Run after the front has stopped (the LSP front's daemon is stopped here)."""


# -- wire ----------------------------------------------------------------------------------------


def frame(framing: Framing, body: bytes) -> bytes:
    if framing == "content-length":
        return b"Content-Length: %d\r\n\r\n" % len(body) + body
    return body + b"\n"


def encode(message: Any) -> bytes:
    return json.dumps(message).encode()


def owed(message: Any) -> str | None:
    """The id a response is owed to, for a request with a usable id; None otherwise."""
    if not isinstance(message, dict) or "method" not in message or "id" not in message:
        return None
    msg_id: Any = message["id"]  # pyright: ignore[reportUnknownVariableType]
    if isinstance(msg_id, bool) or not isinstance(msg_id, int | str):
        return None
    if isinstance(msg_id, str) and any(0xD800 <= ord(c) <= 0xDFFF for c in msg_id):
        return None  # a lone surrogate cannot be written back as UTF-8: the id is unreadable on the wire
    return json.dumps(msg_id)


def _not_json(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def owed_in(body: bytes) -> str | None:
    """The id owed an answer, for a body a standard JSON parser reads as a request (else None)."""
    try:
        return owed(json.loads(body.decode("utf-8"), parse_constant=_not_json))
    except (ValueError, RecursionError):
        return None


class _Peer:
    """A running front: writes bytes, collects the responses it writes, by id."""

    def __init__(self, spec: FrontSpec, workdir: Path) -> None:
        self.spec = spec
        self.workdir = workdir
        self.process: asyncio.subprocess.Process | None = None
        self.answers: dict[str, int] = {}
        self.arrived = asyncio.Condition()
        self.garbled = 0
        self.closed = False
        self._reader: asyncio.Task[None] | None = None
        self._stderr = (workdir / f"{spec.name}-stderr.log").open("ab")

    async def start(self) -> None:
        self.closed = False
        self.process = await asyncio.create_subprocess_exec(
            *self.spec.argv(self.workdir),
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=self._stderr.fileno(),
            env=self.spec.env(self.workdir),
            cwd=str(self.workdir / "repo"),
            limit=256 * 1024 * 1024,
        )
        self._reader = asyncio.create_task(self._read())
        messages = self.spec.handshake(self.workdir)
        for message in messages:
            await self.write(frame(self.spec.framing, encode(message)))
        if not await self.wait_answer(json.dumps("hello"), START_WAIT_S):
            raise AssertionError(f"{self.spec.name} did not answer its handshake; see {self._stderr.name}")

    async def write(self, data: bytes) -> bool:
        assert self.process is not None and self.process.stdin is not None
        try:
            self.process.stdin.write(data)
            await self.process.stdin.drain()
        except (ConnectionError, RuntimeError):
            return False
        return True

    async def _read(self) -> None:
        assert self.process is not None and self.process.stdout is not None
        stdout = self.process.stdout
        try:
            while True:
                body = await (self._frame(stdout) if self.spec.framing == "content-length" else stdout.readline())
                if not body:
                    break
                if body.strip():
                    await self._record(body)
        except (asyncio.IncompleteReadError, ConnectionError, ValueError):
            pass
        finally:
            self.closed = True
            async with self.arrived:
                self.arrived.notify_all()

    async def _frame(self, stdout: asyncio.StreamReader) -> bytes:
        length: int | None = None
        while True:
            line = await stdout.readline()
            if not line:
                return b""
            if line in (b"\r\n", b"\n"):
                if length is None:
                    self.garbled += 1
                    continue
                return await stdout.readexactly(length)
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"content-length":
                length = int(value.strip())
            elif not name.strip():
                self.garbled += 1

    async def _record(self, body: bytes) -> None:
        try:
            message = json.loads(body)
        except ValueError:
            self.garbled += 1
            return
        if isinstance(message, dict) and "method" not in message and "id" in message:
            key = json.dumps(message["id"])
            async with self.arrived:
                self.answers[key] = self.answers.get(key, 0) + 1
                self.arrived.notify_all()

    async def wait_answer(self, key: str, wait_s: float) -> bool:
        async def until() -> None:
            async with self.arrived:
                await self.arrived.wait_for(lambda: key in self.answers or self.closed)

        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(until(), wait_s)
        return key in self.answers

    def dead(self) -> bool:
        return self.closed or self.process is None or self.process.returncode is not None

    async def stop(self) -> None:
        if self.process is not None and self.process.returncode is None:
            assert self.process.stdin is not None
            with contextlib.suppress(Exception):
                self.process.stdin.close()
            try:
                await asyncio.wait_for(self.process.wait(), 10)
            except TimeoutError:
                self.process.kill()
                await self.process.wait()
        if self._reader is not None:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await asyncio.wait_for(self._reader, 5)

    def close_log(self) -> None:
        self._stderr.close()


# -- cases ---------------------------------------------------------------------------------------

_JUNK_WORDS = ("", "x", "ided", "0", "null", "../../etc/passwd", "a" * 300, "é€😀", "\u0000", "\ud800")


def _junk(rng: random.Random) -> Any:
    choice = rng.randrange(12)
    if choice == 0:
        return None
    if choice == 1:
        return rng.choice([True, False])
    if choice == 2:
        return rng.choice([0, -1, 1, 2**31, 2**63, -(2**63) - 1, 10**30])
    if choice == 3:
        return rng.choice([0.5, -1e308, 1e-300])
    if choice == 4:
        return rng.choice(_JUNK_WORDS)
    if choice == 5:
        return "".join(chr(rng.randrange(32, 0x2FFF)) for _ in range(rng.randrange(1, 40)))
    if choice == 6:
        return []
    if choice == 7:
        return {}
    if choice == 8:
        return [_junk_leaf(rng) for _ in range(rng.randrange(1, 5))]
    if choice == 9:
        return {rng.choice(["a", "uri", "textDocument", "query", "cwd"]): _junk_leaf(rng)}
    if choice == 10:
        nested: Any = 1
        for _ in range(rng.choice([10, 100, 129, 200, 300])):
            nested = [nested]
        return nested
    return "x" * rng.choice([1000, 70_000])


def _junk_leaf(rng: random.Random) -> Any:
    return rng.choice([None, 0, -7, 3.5, "", "s", True, 2**64])


def _containers(value: Any) -> list[dict[str, Any] | list[Any]]:
    found: list[dict[str, Any] | list[Any]] = []
    stack: list[Any] = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            mapping = cast(dict[str, Any], item)
            found.append(mapping)
            stack.extend(mapping.values())
        elif isinstance(item, list):
            items = cast(list[Any], item)
            found.append(items)
            stack.extend(items)
    return found


def _mutate_structure(message: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    mutated: dict[str, Any] = json.loads(json.dumps(message))
    for _ in range(rng.randrange(1, 4)):
        target = rng.choice(_containers(mutated))
        op = rng.randrange(5)
        if isinstance(target, dict):
            keys = list(target)
            if op == 0 and keys:
                del target[rng.choice(keys)]
            elif op in (1, 2) and keys:
                target[rng.choice(keys)] = _junk(rng)
            elif op == 3 and keys:
                key = rng.choice(keys)
                target[key + rng.choice(["_", "X", ""])] = target.pop(key)
            else:
                target[rng.choice(["params", "id", "method", "jsonrpc", "extra", "result", "error"])] = _junk(rng)
        elif target and op < 2:
            target[rng.randrange(len(target))] = _junk(rng)
        else:
            target.append(_junk(rng))
    return mutated


def _mutate_bytes(body: bytes, rng: random.Random) -> bytes:
    data = bytearray(body)
    for _ in range(rng.randrange(1, 4)):
        op = rng.randrange(5)
        pos = rng.randrange(len(data) + 1)
        if op == 0 and data:
            data[min(pos, len(data) - 1)] ^= 1 << rng.randrange(8)
        elif op == 1:
            del data[pos:]
        elif op == 2:
            data[pos:pos] = bytes(rng.randrange(256) for _ in range(rng.randrange(1, 8)))
        elif op == 3:
            data[pos:pos] = rng.choice([b"[", b"{", b"]", b"}", b'"', b",", b":", b"\\", b"\xff", b"\xc0\xaf"])
        else:
            chunk = bytes(data[pos : pos + rng.randrange(1, 32)])
            data[pos:pos] = chunk
    # newlines inside a body would split it into several lines for newline-delimited fronts
    return bytes(data).replace(b"\n", b" ")


def mutations(spec: FrontSpec, workdir: Path, *, seed: int, count: int) -> list[Case]:
    """``count`` seeded mutations of the front's valid frames, framed for it."""
    rng = random.Random(seed)
    valid = spec.valid(workdir)
    cases: list[Case] = []
    for index in range(count):
        base = dict(rng.choice(valid))
        if "id" in base:
            base["id"] = 100_000 + index  # distinct from every other id in the run
        body: bytes | None = None
        label = f"mutation {index} (bytes) of {base.get('method')}"
        if rng.random() < 0.6:
            try:
                body = json.dumps(_mutate_structure(base, rng), allow_nan=False).encode()
                label = f"mutation {index} (structure) of {base.get('method')}"
            except RecursionError:  # junk nested in junk past what json.dumps can write: mutate bytes instead
                body = None
        if body is None:
            body = _mutate_bytes(encode(base), rng)
        cases.append(Case(label=label, data=frame(spec.framing, body), expects=owed_in(body)))
    return cases


def hand_cases(spec: FrontSpec, workdir: Path) -> list[Case]:
    """The hostile frames every front gets, then the framing cases of its own protocol."""
    method = next(m for m in spec.valid(workdir) if "id" in m)["method"]

    def req(msg_id: Any, **extra: Any) -> dict[str, Any]:
        return {"jsonrpc": "2.0", "id": msg_id, "method": method, **extra}

    raw: list[tuple[str, bytes]] = [
        ("1000 nested [ then ]", b"[" * 1000 + b"]" * 1000),
        ("100,000 [", b"[" * 100_000),
        ('5,000 nested {"a":', b'{"a":' * 5000 + b"1" + b"}" * 5000),
        ("deep params", encode(req(1))[:-1] + b', "params": {"x": ' + b"[" * 900 + b"]" * 900 + b"}}"),
        ("a number", b"1"),
        ("null", b"null"),
        ("a string", b'"hello"'),
        ("true", b"true"),
        ("empty batch", b"[]"),
        ("a batch of requests", encode([req(2), req(3)])),
        ("a batch of numbers", b"[1, 2, 3]"),
        ("not JSON", b"{not json"),
        ("NaN", b'{"jsonrpc":"2.0","id":4,"method":"x","params":{"a":NaN}}'),
        ("invalid UTF-8", b"\xff\xfe{}"),
        ("overlong UTF-8 in a string", b'{"jsonrpc":"2.0","id":5,"method":"\xc0\xaf"}'),
        ("a lone surrogate id", b'{"jsonrpc":"2.0","id":"\\ud800","method":"' + method.encode() + b'"}'),
        ("a 5000-digit id", b'{"jsonrpc":"2.0","id":' + b"9" * 5000 + b',"method":"x"}'),
        ("truncated object", encode(req(6, params={}))[:25]),
        ("only an open brace", b"{"),
        ("empty object", b"{}"),
    ]
    messages: list[tuple[str, Any]] = [
        ("missing params", req(7)),
        ("null params", req(8, params=None)),
        ("params a string", req(9, params="text")),
        ("params a number", req(10, params=5)),
        ("params an array", req(11, params=[1, 2])),
        ("params of wrong types", req(12, params={"textDocument": 3, "query": [], "cwd": 7, "protocolVersion": "x"})),
        ("method a number", {"jsonrpc": "2.0", "id": 13, "method": 42}),
        ("method null", {"jsonrpc": "2.0", "id": 14, "method": None}),
        ("empty method", {"jsonrpc": "2.0", "id": 15, "method": ""}),
        ("unknown method", {"jsonrpc": "2.0", "id": 16, "method": "no/such/method", "params": {}}),
        ("jsonrpc 1.0", {"jsonrpc": "1.0", "id": 17, "method": method}),
        ("no jsonrpc", {"id": 18, "method": method}),
        ("id an object", {"jsonrpc": "2.0", "id": {"a": 1}, "method": method}),
        ("id a float", {"jsonrpc": "2.0", "id": 1.5, "method": method}),
        ("id true", {"jsonrpc": "2.0", "id": True, "method": method}),
        ("id null", {"jsonrpc": "2.0", "id": None, "method": method}),
        ("id 2**64", req(2**64)),
        ("id 10**100", req(10**100)),
        ("id -2**63-1", req(-(2**63) - 1)),
        ("id a 100 KB string", req("i" * 100_000)),
        ("a response nobody asked for", {"jsonrpc": "2.0", "id": 999_999, "result": {}}),
        ("a response with result and error", {"jsonrpc": "2.0", "id": 19, "result": 1, "error": {"code": 1}}),
        ("an error with a junk code", {"jsonrpc": "2.0", "id": 20, "error": {"code": "x", "message": 5}}),
        ("a notification with junk params", {"jsonrpc": "2.0", "method": method, "params": 7}),
        ("a long method name", {"jsonrpc": "2.0", "id": 21, "method": "m" * 100_000}),
    ]
    cases = [Case(label=label, data=frame(spec.framing, body), expects=owed_in(body)) for label, body in raw]
    cases += [
        Case(label=label, data=frame(spec.framing, encode(message)), expects=owed(message))
        for label, message in messages
    ]
    good = encode(req(30))
    if spec.framing == "content-length":
        cases += [
            Case(label="no Content-Length", data=b"\r\n" + good, expects=None),
            Case(label="Content-Length: abc", data=b"Content-Length: abc\r\n\r\n" + good, expects=None),
            Case(label="Content-Length: -5", data=b"Content-Length: -5\r\n\r\n" + good, expects=None),
            Case(label="Content-Length too short", data=b"Content-Length: 10\r\n\r\n" + good, expects=None),
            Case(label="Content-Length 0", data=b"Content-Length: 0\r\n\r\n", expects=None),
            Case(
                label="Content-Length too long (the liveness frame completes it)",
                data=b"Content-Length: %d\r\n\r\n" % (len(good) + 20) + good,
                expects=None,
            ),
            Case(
                label="two Content-Length headers",
                data=b"Content-Length: 3\r\nContent-Length: %d\r\n\r\n" % len(good) + good,
                expects=None,
            ),
            Case(label="a junk header line", data=b"X-Junk\x00\xff: 1\r\n" + frame(spec.framing, good), expects=None),
            Case(label="a header with no body, then EOF-like silence", data=b"Content-Length: 5\r\n", expects=None),
            Case(label="a 20 MB body of spaces", data=frame(spec.framing, b" " * 20_000_000), expects=None),
        ]
    else:
        cases += [
            Case(label="two messages on one line", data=good + good + b"\n", expects=None),
            Case(label="a blank line", data=b"\n", expects=None),
            Case(label="a 20 MB line of spaces", data=b" " * 20_000_000 + b"\n", expects=None),
            Case(label="a line of NUL bytes", data=b"\x00" * 1000 + b"\n", expects=None),
        ]
    return cases


# -- the run -------------------------------------------------------------------------------------


async def fuzz_front(
    spec: FrontSpec, workdir: Path, *, seed: int, mutations_count: int, include_hand_cases: bool = True
) -> FuzzReport:
    """Run the hand cases and ``mutations_count`` seeded mutations against one freshly started front."""
    prepare_workdir(workdir)
    report = FuzzReport(front=spec.name)
    cases = (hand_cases(spec, workdir) if include_hand_cases else []) + mutations(
        spec, workdir, seed=seed, count=mutations_count
    )
    peer = _Peer(spec, workdir)
    await peer.start()
    try:
        for number, case in enumerate(cases):
            report.sent += 1
            started = time.monotonic()
            await peer.write(case.data)
            alive = False
            for attempt, wait_s in enumerate(LIVENESS_WAITS_S):
                live_id = f"live-{number}-{attempt}"
                if peer.dead() or not await peer.write(frame(spec.framing, encode(spec.liveness(live_id)))):
                    break
                if await peer.wait_answer(json.dumps(live_id), wait_s):
                    alive = True
                    break
            if alive:
                report.survived += 1
                if case.expects is not None and not await peer.wait_answer(case.expects, ANSWER_WAIT_S):
                    report.unanswered += 1
                    report.failures.append(f"unanswered: {case.label}: {case.data[:300]!r}")
                report.slowest = sorted([*report.slowest, (time.monotonic() - started, case.label)], reverse=True)[:5]
                continue
            if peer.dead():
                report.deaths += 1
                report.failures.append(f"death: {case.label}")
            else:
                report.failures.append(f"no liveness answer: {case.label}")
            await peer.stop()
            peer.answers.clear()
            await peer.start()
    finally:
        await peer.stop()
        report.garbled = peer.garbled
        peer.close_log()
        if spec.cleanup is not None:
            await spec.cleanup(workdir)
    return report


def prepare_workdir(workdir: Path) -> None:
    workdir.mkdir(parents=True, exist_ok=True)
    if not (workdir / "repo").exists():
        make_repo(
            workdir / "repo",
            {"app.py": "def add(a, b):\n    return a + b\n", "README.md": "# fuzz\n\nA small repository.\n"},
        )
    (workdir / "home" / ".config").mkdir(parents=True, exist_ok=True)


def _base_env(workdir: Path) -> dict[str, str]:
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(workdir / "home"),
        "XDG_CONFIG_HOME": str(workdir / "home" / ".config"),
        "IDED_STATE_DIR": str(workdir / "state"),
        "IDED_EMBEDDING__ENABLED": "false",
        "IDED_INTEL__PRESTART": "false",
        "IDED_INTEL__INDEX_ON_START": "false",
        "IDED_DAEMON__IDLE_SHUTDOWN_SECONDS": "5",
        "HF_HUB_OFFLINE": "1",
        "GIT_CONFIG_NOSYSTEM": "1",
    }
    return env


async def _stop_daemon(workdir: Path) -> None:
    from daemon.config import load_config
    from tests.e2e.lsp_support import stop_daemon

    await stop_daemon(load_config(workdir / "repo", env=_base_env(workdir)))


def _python() -> list[str]:
    return [sys.executable, "-P", "-m", "daemon"]


def _mcp_valid(workdir: Path) -> list[dict[str, Any]]:
    return [
        {"jsonrpc": "2.0", "id": 1, "method": "ping"},
        {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}},
        {"jsonrpc": "2.0", "id": 1, "method": "resources/list", "params": {}},
        {"jsonrpc": "2.0", "id": 1, "method": "prompts/list", "params": {}},
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {"name": "get_ast_node", "arguments": {"file": "app.py", "line": 2, "column": 12}},
        },
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {"name": "search_code", "arguments": {"query": "add numbers", "k": 3}},
        },
        {"jsonrpc": "2.0", "id": 1, "method": "logging/setLevel", "params": {"level": "info"}},
        {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}},
    ]


def _lsp_valid(workdir: Path) -> list[dict[str, Any]]:
    uri = (workdir / "repo" / "app.py").as_uri()
    return [
        {"jsonrpc": "2.0", "id": 1, "method": "workspace/symbol", "params": {"query": "add"}},
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "ided/intel/astNode",
            "params": {"textDocument": {"uri": uri}, "position": {"line": 1, "character": 11}},
        },
        {"jsonrpc": "2.0", "id": 1, "method": "ided/index/search", "params": {"query": "add", "k": 3}},
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "textDocument/hover",
            "params": {"textDocument": {"uri": uri}, "position": {"line": 0, "character": 4}},
        },
        {
            "jsonrpc": "2.0",
            "method": "textDocument/didOpen",
            "params": {"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": "x = 1\n"}},
        },
        {"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": 1}},
    ]


def _acp_valid(workdir: Path) -> list[dict[str, Any]]:
    repo = str(workdir / "repo")
    return [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}},
        {"jsonrpc": "2.0", "id": 1, "method": "session/new", "params": {"cwd": repo, "mcpServers": []}},
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "session/load",
            "params": {"sessionId": "s-none", "cwd": repo, "mcpServers": []},
        },
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "session/prompt",
            "params": {"sessionId": "s-none", "prompt": [{"type": "text", "text": "hello"}]},
        },
        {"jsonrpc": "2.0", "id": 1, "method": "session/set_mode", "params": {"sessionId": "s-none", "modeId": "ask"}},
        {"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": "s-none"}},
    ]


FRONTS: dict[str, FrontSpec] = {
    "mcp": FrontSpec(
        name="mcp",
        framing="lines",
        argv=lambda w: [*_python(), "mcp", "--standalone", "-w", str(w / "repo")],
        env=_base_env,
        handshake=lambda w: [
            {
                "jsonrpc": "2.0",
                "id": "hello",
                "method": "initialize",
                "params": {
                    "protocolVersion": "2025-06-18",
                    "capabilities": {},
                    "clientInfo": {"name": "fuzz", "version": "0"},
                },
            },
            {"jsonrpc": "2.0", "method": "notifications/initialized"},
        ],
        liveness=lambda i: {"jsonrpc": "2.0", "id": i, "method": "ping"},
        valid=_mcp_valid,
    ),
    "lsp": FrontSpec(
        name="lsp",
        framing="content-length",
        argv=lambda w: [*_python(), "lsp"],
        env=_base_env,
        # `initialized` attaches the server to a daemon: the fuzzed requests go all the way through it
        handshake=lambda w: [
            {
                "jsonrpc": "2.0",
                "id": "hello",
                "method": "initialize",
                "params": {"capabilities": {}, "rootUri": (w / "repo").as_uri()},
            },
            {"jsonrpc": "2.0", "method": "initialized", "params": {}},
        ],
        liveness=lambda i: {"jsonrpc": "2.0", "id": i, "method": "ided/index/status", "params": {}},
        valid=_lsp_valid,
        cleanup=_stop_daemon,
    ),
    "acp": FrontSpec(
        name="acp",
        framing="lines",
        argv=lambda w: [*_python(), "acp"],
        env=lambda w: {**_base_env(w), "IDED_ACP__ATTACH_DAEMON": "false"},
        handshake=lambda w: [
            {"jsonrpc": "2.0", "id": "hello", "method": "initialize", "params": {"protocolVersion": 1}}
        ],
        liveness=lambda i: {"jsonrpc": "2.0", "id": i, "method": "initialize", "params": {"protocolVersion": 1}},
        valid=_acp_valid,
    ),
}


def clean_workdir(workdir: Path) -> None:
    shutil.rmtree(workdir, ignore_errors=True)
