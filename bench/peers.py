"""Peer benchmark: ``ided mcp`` against the MCP code-intelligence servers users would pick instead.

Installs Serena (``serena-agent``), jCodeMunch (``jcodemunch-mcp``) and ``code-index-mcp`` from
PyPI, each into its own virtual environment under ``--cache`` (default
``~/.cache/ided/bench-peers/<package>``, outside the repository), and drives each of them and this
checkout's ``ided mcp`` with the MCP SDK client over stdio, interleaved in one run, on two
workloads the script makes itself:

* ``polyglot``: a small Python + TypeScript workspace written here;
* ``requests``: the source of ``requests`` unpacked from its PyPI sdist (downloaded once into the
  cache with ``pip download --no-binary :all:``).

Printed per workload and server:

* cold start: spawn -> ``initialize`` answered, and spawn -> the first *correct* definition of a
  known symbol by name (wrong or "not ready" answers are retried at once). Cold means cold: a
  fresh state/index directory per run, and ided's daemon stopped after each run;
* spawn -> settled: ided answers a definition by name from a scan or the index while its workspace
  opens and its language server starts; the warm calls begin once the language server answers
  (a peer is settled once its first answer is right);
* warm p50/p95 per operation (definition, references, overview of one file, search) over
  ``--warm`` calls, as the client sees them;
* correctness of each operation against the workload's known answer, and the answer size in
  characters (printed beside each operation's latency: an agent pays for both);
* RSS of every process the server started (its process tree, plus detached processes that carry
  the run's marker in their environment: ided's daemon, its language servers and embedding
  worker), in all and per kind of process; measured after the warm calls, and again once the server's
  background work is done ("steady": ided's embedding worker, which lives only while vectors fill,
  has exited; bounded by ``STEADY_WAIT``, 300 s; peers have no such work and are measured again at once);
* how ided answered the first correct definition (``answered_by``);
* ided's ratio to each peer (and, with several ``--checkout``, each checkout's to the first).

Correctness is judged from the answer text, since the peers' shapes differ: a definition is right
when it names the expected file and the expected line (1- or 0-based); references score the share
of known call sites (file and line) found; an overview must name the expected symbols; a search
must name the expected file. A peer that fails to install or start is reported with its reason.
Peers run offline (``HF_HUB_OFFLINE=1``); Serena is given the same language servers as ided
(``.tools``) through its ``ls_path`` setting, as it would otherwise fetch them with ``uvx``.

    uv run --frozen python bench/peers.py [--runs 3] [--warm 20] [--only ided,serena] [--workloads polyglot,requests]
        [--checkout before=DIR --checkout after=.]   # ided from several checkouts, interleaved
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
import uuid
from collections.abc import AsyncGenerator, Callable, Mapping
from contextlib import asynccontextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client

ROOT = Path(__file__).resolve().parents[1]
TOOLS = ROOT / ".tools"
SEARCH_PATH = [str(TOOLS / "lsp-venv" / "bin"), str(TOOLS / "node" / "node_modules" / ".bin")]
PEER_PACKAGES = {"code-index": "code-index-mcp", "jcodemunch": "jcodemunch-mcp", "serena": "serena-agent"}
REQUESTS_VERSION = "2.32.3"
CALL_TIMEOUT = 120.0
COLD_DEADLINE = 90.0
STEADY_WAIT = 300.0
"""How long the steady RSS waits for a server's background work (``Server.transient``) to end."""
MARKER = "IDED_BENCH_PEERS_RUN"
OPS = ("definition", "references", "overview", "search")


# ---------------------------------------------------------------- workloads


@dataclass
class Workload:
    """A workspace and the known answers each operation is checked against."""

    name: str
    root: Path
    symbol: str  # dotted: Class.method
    def_file: str
    def_line: int  # 1-based line of the definition
    call_sites: list[tuple[str, int]]  # (file, 1-based line) of each known call
    overview_file: str
    overview_names: list[str]
    query: str
    query_file: str
    languages: list[str] = field(default_factory=lambda: ["python"])

    @property
    def bare(self) -> str:
        return self.symbol.split(".")[-1]


POLYGLOT = {
    "shop/__init__.py": "",
    "shop/cart.py": '''"""A shopping cart."""

from dataclasses import dataclass, field


@dataclass
class Cart:
    """Items and their prices; a discount applies at checkout."""

    items: dict[str, float] = field(default_factory=dict)

    def add_item(self, name: str, price: float) -> None:
        """Add one item at its price."""
        self.items[name] = price

    def total(self) -> float:
        return sum(self.items.values())
''',
    "shop/checkout.py": '''"""Checkout: fill a cart and apply the loyalty discount."""

from shop.cart import Cart


def fill(cart: Cart) -> Cart:
    cart.add_item("apple", 1.0)
    cart.add_item("pear", 2.0)
    return cart


def checkout() -> float:
    cart = fill(Cart())
    cart.add_item("bag", 0.1)
    return cart.total() * 0.9
''',
    "web/util.ts": """export function slugify(text: string): string {
  return text.trim().toLowerCase().replace(/\\s+/g, "-");
}
""",
    "web/main.ts": """import { slugify } from "./util";

export function render(title: string): string {
  return `<a href="/${slugify(title)}">${title}</a>`;
}
""",
    "README.md": "# shop\n\nA cart, a checkout and a web helper.\n",
}


def _line_of(path: Path, pattern: str, after: str | None = None) -> int:
    lines = path.read_text().splitlines()
    start = 0
    if after is not None:
        start = next(i for i, line in enumerate(lines) if re.search(after, line))
    return next(i + 1 for i in range(start, len(lines)) if re.search(pattern, lines[i]))


def _sites(root: Path, rel: str, pattern: str) -> list[tuple[str, int]]:
    lines = (root / rel).read_text().splitlines()
    return [(rel, i + 1) for i, line in enumerate(lines) if re.search(pattern, line)]


def _git_init(root: Path) -> None:
    (root / ".gitignore").write_text(".serena/\n")
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    subprocess.run(["git", "-C", str(root), "add", "-A"], check=True)
    ident = ["-c", "user.name=bench", "-c", "user.email=bench@localhost"]
    subprocess.run(["git", "-C", str(root), *ident, "commit", "-q", "-m", "workload"], check=True)


def make_polyglot(base: Path) -> Workload:
    root = base / "polyglot"
    for rel, text in POLYGLOT.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    _git_init(root)
    return Workload(
        name="polyglot",
        root=root,
        symbol="Cart.add_item",
        def_file="shop/cart.py",
        def_line=_line_of(root / "shop/cart.py", r"def add_item\("),
        call_sites=_sites(root, "shop/checkout.py", r"\.add_item\("),
        overview_file="shop/cart.py",
        overview_names=["Cart", "add_item", "total"],
        query="discount",
        query_file="shop/cart.py",
        languages=["python", "typescript"],
    )


def make_requests(base: Path, cache: Path) -> Workload:
    sdist_dir = cache / "sdists"
    sdist = sdist_dir / f"requests-{REQUESTS_VERSION}.tar.gz"
    if not sdist.exists():
        sdist_dir.mkdir(parents=True, exist_ok=True)
        pip = [sys.executable, "-m", "pip"] if _has_pip(sys.executable) else ["python3", "-m", "pip"]
        subprocess.run(
            [*pip, "download", "-q", "--no-deps", "--no-binary", ":all:", f"requests=={REQUESTS_VERSION}"],
            cwd=sdist_dir,
            check=True,
        )
    with tarfile.open(sdist) as tar:
        tar.extractall(base, filter="data")
    root = base / f"requests-{REQUESTS_VERSION}"
    _git_init(root)
    sessions = "src/requests/sessions.py"
    return Workload(
        name="requests",
        root=root,
        symbol="Session.request",
        def_file=sessions,
        def_line=_line_of(root / sessions, r"^    def request\(", after=r"^class Session\b"),
        call_sites=_sites(root, sessions, r"self\.request\(")
        + _sites(root, "src/requests/api.py", r"session\.request\("),
        overview_file=sessions,
        overview_names=["Session", "request", "merge_setting", "SessionRedirectMixin"],
        query="rebuild_proxies",
        query_file=sessions,
    )


def _has_pip(python: str) -> bool:
    return subprocess.run([python, "-m", "pip", "--version"], capture_output=True).returncode == 0


# ---------------------------------------------------------------- processes and memory


def _proc_table() -> dict[int, int]:
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            parents[int(entry.name)] = int(stat.rsplit(")", 1)[1].split()[1])
    return parents


def _marked(tag: str) -> set[int]:
    needle = f"{MARKER}={tag}".encode()
    found: set[int] = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if needle in (entry / "environ").read_bytes():
                    found.add(int(entry.name))
            except OSError:
                continue
    return found


def server_pids(tag: str) -> set[int]:
    """This bench's descendants plus detached processes carrying the run's marker, and theirs."""
    parents = _proc_table()
    roots = {os.getpid()} | _marked(tag)
    pids = set(roots)
    changed = True
    while changed:
        changed = False
        for pid, ppid in parents.items():
            if ppid in pids and pid not in pids:
                pids.add(pid)
                changed = True
    pids.discard(os.getpid())
    return pids


def rss_mb(pids: set[int]) -> float:
    total = 0
    for pid in pids:
        try:
            for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1])
        except OSError:
            continue
    return total / 1024


def _names(pids: set[int]) -> list[str]:
    names: list[str] = []
    for pid in sorted(pids):
        try:
            names.append(Path(f"/proc/{pid}/comm").read_text().strip())
        except OSError:
            continue
    return names


def _label(pid: int) -> str:
    """What a process is: a Python module run with ``-m`` (and its sub-command), else its command name."""
    try:
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace").split("\0")
        comm = Path(f"/proc/{pid}/comm").read_text().strip()
    except OSError:
        return "?"
    if "-m" in argv[:-1]:
        at = argv.index("-m")
        module = argv[at + 1]
        if module == "daemon" and "daemon" in argv[at + 2 :]:
            return "ided daemon"
        return module.rsplit(".", 1)[-1] if module.startswith("daemon.") else module
    return comm


def rss_by_process(pids: set[int]) -> dict[str, float]:
    """RSS MB per kind of process (summed over processes of one kind)."""
    out: dict[str, float] = {}
    for pid in pids:
        mb = rss_mb({pid})
        if mb:
            label = _label(pid)
            out[label] = out.get(label, 0.0) + mb
    return dict(sorted(out.items(), key=lambda item: -item[1]))


def kill_marked(tag: str) -> None:
    for pid in _marked(tag):
        if pid != os.getpid():
            with suppress(OSError):
                os.kill(pid, signal.SIGKILL)


# ---------------------------------------------------------------- servers


@dataclass
class Call:
    tool: str
    arguments: dict[str, Any]


class Server:
    """One MCP server: how it is started and which tool answers each operation."""

    name = ""
    transient: frozenset[str] = frozenset()
    """Kinds of process (``_label``) that do background work and exit when it is done."""

    def __init__(self, cache: Path, work: Path) -> None:
        self.cache = cache
        self.work = work
        self.error: str | None = None
        self.version = ""
        self.repo = ""  # jCodeMunch's repository id

    def command(self, wl: Workload, run_dir: Path) -> tuple[str, list[str], dict[str, str]]:
        raise NotImplementedError

    async def setup(self, client: Client, wl: Workload) -> None:
        return None

    async def settle(self, client: Client, wl: Workload) -> bool:
        """Wait (untimed, bounded) until the server answers as it will when warm; whether it got there."""
        return True

    def call(self, op: str, wl: Workload) -> Call:
        raise NotImplementedError

    def prepare(self, wl: Workload, run_dir: Path) -> None:
        return None

    def teardown(self, wl: Workload, run_dir: Path, env: dict[str, str]) -> None:
        return None


class Ided(Server):
    """``ided mcp`` of this checkout, or of ``checkout`` (its sources first on ``PYTHONPATH``, this
    checkout's environment): several checkouts run interleaved in one run (``--checkout LABEL=DIR``)."""

    name = "ided"
    transient = frozenset({"embed_worker"})

    def __init__(self, cache: Path, work: Path, checkout: tuple[str, Path] | None = None) -> None:
        super().__init__(cache, work)
        self.checkout = checkout[1] if checkout is not None else None
        if checkout is not None:
            self.name = f"ided:{checkout[0]}"
        out = subprocess.run(
            [str(ROOT / ".venv/bin/ided"), "--version"], capture_output=True, text=True, env=self._env(os.environ)
        )
        self.version = out.stdout.strip().split()[-1] if out.returncode == 0 and out.stdout.strip() else "?"

    def _env(self, base: Mapping[str, str]) -> dict[str, str]:
        return {**base, "PYTHONPATH": str(self.checkout)} if self.checkout is not None else dict(base)

    def command(self, wl: Workload, run_dir: Path) -> tuple[str, list[str], dict[str, str]]:
        env = self._env(
            {
                "IDED_STATE_DIR": str(run_dir / "state"),
                "IDED_INTEL__SEARCH_PATH": json.dumps(SEARCH_PATH),
                "XDG_CONFIG_HOME": str(run_dir / "config"),
            }
        )
        return str(ROOT / ".venv/bin/ided"), ["mcp", "--workspace", str(wl.root)], env

    async def settle(self, client: Client, wl: Workload) -> bool:
        """Until its language server answers a definition by name (before: the index's or a scan's
        answer, given while the workspace opens and the server starts)."""
        deadline = time.perf_counter() + COLD_DEADLINE
        while time.perf_counter() < deadline:
            text, ok = await call_text(client, "find_definition", {"symbol": wl.symbol})
            if ok and _answered_by(text) == "language_server":
                return True
            await asyncio.sleep(0.1)
        return False

    def call(self, op: str, wl: Workload) -> Call:
        if op == "definition":
            return Call("find_definition", {"symbol": wl.symbol})
        if op == "references":
            return Call("get_references", {"symbol": wl.symbol})
        if op == "overview":
            return Call("document_symbols", {"file": wl.overview_file})
        return Call("search_code", {"query": wl.query, "k": 5})

    def teardown(self, wl: Workload, run_dir: Path, env: dict[str, str]) -> None:
        subprocess.run(
            [str(ROOT / ".venv/bin/ided"), "stop", "--workspace", str(wl.root)],
            env=env,
            capture_output=True,
            timeout=60,
        )


class Peer(Server):
    @property
    def venv(self) -> Path:
        return self.cache / PEER_PACKAGES[self.name]

    def install(self) -> None:
        package = PEER_PACKAGES[self.name]
        uv = shutil.which("uv") or str(TOOLS / "uv" / "bin" / "uv")
        python = self.venv / "bin" / "python"
        if not python.exists():
            out = subprocess.run([uv, "venv", "-q", "--python", "3.11", str(self.venv)], capture_output=True, text=True)
            if out.returncode != 0:
                self.error = f"uv venv failed: {out.stderr.strip()[-300:]}"
                return
        probe = subprocess.run(
            [str(python), "-c", f"import importlib.metadata as m; print(m.version({package!r}))"],
            capture_output=True,
            text=True,
        )
        if probe.returncode != 0:
            out = subprocess.run(
                [uv, "pip", "install", "-q", "--python", str(python), package], capture_output=True, text=True
            )
            if out.returncode != 0:
                self.error = f"install failed: {out.stderr.strip()[-300:]}"
                return
            probe = subprocess.run(
                [str(python), "-c", f"import importlib.metadata as m; print(m.version({package!r}))"],
                capture_output=True,
                text=True,
            )
        self.version = probe.stdout.strip()


class CodeIndex(Peer):
    """code-index-mcp: a regex/ripgrep search plus a file index; definitions by pattern."""

    name = "code-index"

    def command(self, wl: Workload, run_dir: Path) -> tuple[str, list[str], dict[str, str]]:
        args = ["--project-path", str(wl.root), "--indexer-path", str(run_dir / "index")]
        return str(self.venv / "bin/code-index-mcp"), args, {"HOME": str(run_dir / "home")}

    async def setup(self, client: Client, wl: Workload) -> None:
        # Its file summaries need the deep index, which it builds only when asked.
        text, ok = await call_text(client, "build_deep_index", {})
        if not ok:
            raise RuntimeError(f"build_deep_index failed: {text[:300]}")

    def call(self, op: str, wl: Workload) -> Call:
        if op == "definition":
            pattern = rf"(def|class|function)\s+{wl.bare}\b"
            return Call("search_code_advanced", {"pattern": pattern, "regex": True})
        if op == "references":
            return Call("search_code_advanced", {"pattern": rf"\.{wl.bare}\(", "regex": True})
        if op == "overview":
            return Call("get_file_summary", {"file_path": wl.overview_file})
        return Call("search_code_advanced", {"pattern": wl.query})


class JCodeMunch(Peer):
    """jCodeMunch: a Tree-sitter symbol index, its actions reached through ``order`` (the default surface)."""

    name = "jcodemunch"

    def command(self, wl: Workload, run_dir: Path) -> tuple[str, list[str], dict[str, str]]:
        env = {"HOME": str(run_dir / "home"), "CODE_INDEX_PATH": str(run_dir / "index")}
        return str(self.venv / "bin/jcodemunch-mcp"), [], env

    async def setup(self, client: Client, wl: Workload) -> None:
        text, ok = await call_text(
            client, "order", {"action": "index_folder", "args": {"path": str(wl.root)}, "allow_state_change": True}
        )
        if not ok:
            raise RuntimeError(f"index_folder failed: {text[:300]}")
        match = re.search(r'"repo"\s*:\s*"([^"]+)"', text)
        if not match:
            raise RuntimeError(f"index_folder named no repo: {text[:300]}")
        self.repo = match.group(1)

    def call(self, op: str, wl: Workload) -> Call:
        if op == "definition":
            action, args = "search_symbols", {"query": wl.bare}
        elif op == "references":
            action, args = "check_references", {"identifier": wl.bare}
        elif op == "overview":
            action, args = "get_file_outline", {"file_path": wl.overview_file}
        else:
            action, args = "search_text", {"query": wl.query}
        return Call("order", {"action": action, "args": {"repo": self.repo, **args}})


class Serena(Peer):
    """Serena: real language servers (here the same basedpyright and typescript-language-server as ided)."""

    name = "serena"

    @property
    def home(self) -> Path:
        return self.cache / "serena-home"

    def prepare(self, wl: Workload, run_dir: Path) -> None:
        ls = {"python_basedpyright": TOOLS / "lsp-venv/bin/basedpyright-langserver"}
        ls["typescript"] = TOOLS / "node/node_modules/.bin/typescript-language-server"
        settings = "\n".join(f'  {k}: {{ls_path: "{v.resolve()}"}}' for k, v in ls.items())
        config = self.home / ".serena" / "serena_config.yml"
        config.parent.mkdir(parents=True, exist_ok=True)
        config.write_text(
            "language_backend: LSP\nagent_interface: tools\nweb_dashboard: false\n"
            "web_dashboard_open_on_launch: false\ngui_log_window: false\nlog_level: 20\n"
            'trusted_project_path_patterns: ["**"]\nprojects: []\n'
            f"ls_specific_settings:\n{settings}\n"
        )
        project = wl.root / ".serena"
        shutil.rmtree(project, ignore_errors=True)  # its caches: cold means cold
        project.mkdir()
        servers = ["python_basedpyright"] + (["typescript"] if "typescript" in wl.languages else [])
        (project / "project.yml").write_text(
            f'project_name: "{wl.name}"\nlanguage_servers: [{", ".join(servers)}]\nencoding: "utf-8"\n'
        )

    def command(self, wl: Workload, run_dir: Path) -> tuple[str, list[str], dict[str, str]]:
        args = ["start-mcp-server", "--project", str(wl.root), "--context", "agent", "--agent-interface", "tools"]
        args += ["--enable-web-dashboard", "false", "--open-web-dashboard", "false"]
        return str(self.venv / "bin/serena"), args, {"HOME": str(self.home)}

    def call(self, op: str, wl: Workload) -> Call:
        name_path = wl.symbol.replace(".", "/")
        if op == "definition":
            return Call("find_symbol", {"name_path_pattern": name_path})
        if op == "references":
            return Call("find_referencing_symbols", {"name_path": name_path, "relative_path": wl.def_file})
        if op == "overview":
            return Call("get_symbols_overview", {"relative_path": wl.overview_file, "depth": 1})
        return Call("search_for_pattern", {"substring_pattern": wl.query})


# ---------------------------------------------------------------- driving


async def call_text(client: Client, tool: str, arguments: dict[str, Any]) -> tuple[str, bool]:
    result = await asyncio.wait_for(client.call_tool(tool, arguments), CALL_TIMEOUT)
    text = "".join(getattr(block, "text", "") for block in result.content)
    if not text and result.structured_content:
        text = json.dumps(result.structured_content)
    return text, not result.is_error


def _mentions_line(text: str, line: int) -> bool:
    return re.search(rf"(?<![\d.]){line}(?![\d.])", text) is not None or (
        re.search(rf"(?<![\d.]){line - 1}(?![\d.])", text) is not None
    )


def judge(op: str, wl: Workload, text: str, ok: bool) -> float:
    """1.0 right, 0.0 wrong; references: the share of known call sites named (file and line)."""
    if not ok:
        return 0.0
    if op == "definition":
        return float(_tail(wl.def_file) in text and _mentions_line(text, wl.def_line))
    if op == "references":
        found = sum(1 for f, line in wl.call_sites if _tail(f) in text and _mentions_line(text, line))
        return found / len(wl.call_sites)
    if op == "overview":
        return float(all(re.search(rf"\b{n}\b", text) for n in wl.overview_names))
    return float(_tail(wl.query_file) in text)


def _tail(rel: str) -> str:
    return "/".join(rel.split("/")[-2:])


@dataclass
class Result:
    cold: list[float] = field(default_factory=list[float])
    initialize: list[float] = field(default_factory=list[float])
    cold_error: str | None = None
    cold_via: list[str] = field(default_factory=list[str])
    settled: list[float] = field(default_factory=list[float])
    warm: dict[str, list[float]] = field(default_factory=dict[str, list[float]])
    correct: dict[str, float] = field(default_factory=dict[str, float])
    size: dict[str, int] = field(default_factory=dict[str, int])
    rss: float | None = None
    procs: list[str] = field(default_factory=list[str])
    rss_each: dict[str, float] = field(default_factory=dict[str, float])
    rss_steady: float | None = None
    rss_steady_each: dict[str, float] = field(default_factory=dict[str, float])
    notes: list[str] = field(default_factory=list[str])


@asynccontextmanager
async def spawn(server: Server, wl: Workload, run_dir: Path, tag: str) -> AsyncGenerator[tuple[Client, dict[str, str]]]:
    command, args, extra = server.command(wl, run_dir)
    env = {**os.environ, "HF_HUB_OFFLINE": "1", MARKER: tag, **extra}
    env["PATH"] = os.pathsep.join([*SEARCH_PATH, env.get("PATH", "")])
    params = StdioServerParameters(command=command, args=args, env=env, cwd=str(wl.root))
    with open(run_dir / "stderr.log", "w") as errlog:  # noqa: ASYNC230 (the bench waits on nothing else)
        async with Client(stdio_client(params, errlog=errlog), read_timeout_seconds=CALL_TIMEOUT) as client:
            yield client, env


async def one_run(server: Server, wl: Workload, run_dir: Path, res: Result, warm_calls: int, last: bool) -> None:
    run_dir.mkdir(parents=True)  # noqa: ASYNC240
    (run_dir / "home").mkdir()
    tag = uuid.uuid4().hex
    server.prepare(wl, run_dir)
    env: dict[str, str] = {}
    started = time.perf_counter()
    try:
        async with spawn(server, wl, run_dir, tag) as (client, env):
            res.initialize.append(time.perf_counter() - started)
            await server.setup(client, wl)
            definition = server.call("definition", wl)
            last_text = ""
            while True:
                text, ok = await call_text(client, definition.tool, definition.arguments)
                if judge("definition", wl, text, ok):
                    res.cold.append(time.perf_counter() - started)
                    res.cold_via.append(_answered_by(text))
                    break
                last_text = text
                if time.perf_counter() - started > COLD_DEADLINE:
                    raise RuntimeError(f"no correct definition within {COLD_DEADLINE:.0f} s: {last_text[:300]}")
            if await server.settle(client, wl):
                res.settled.append(time.perf_counter() - started)
            else:
                res.notes.append(f"not settled within {COLD_DEADLINE:.0f} s: warm figures include unsettled answers")
            if last:
                await warm(server, client, wl, res, warm_calls)
                pids = server_pids(tag)
                res.rss = rss_mb(pids)
                res.procs = _names(pids)
                res.rss_each = rss_by_process(pids)
                if not await steady(server, tag):
                    res.notes.append(f"background work still running after {STEADY_WAIT:.0f} s: steady RSS includes it")
                pids = server_pids(tag)
                res.rss_steady = rss_mb(pids)
                res.rss_steady_each = rss_by_process(pids)
    except Exception as exc:  # a peer that fails is reported, not fatal
        leaf = _leaf(exc)
        res.cold_error = f"{type(leaf).__name__}: {str(leaf).strip()[:400]}"
        tail = (run_dir / "stderr.log").read_text(errors="replace").strip().splitlines()[-3:]
        if tail:
            res.cold_error += " | stderr: " + " / ".join(line[:200] for line in tail)
    finally:
        server.teardown(wl, run_dir, env)
        kill_marked(tag)


async def steady(server: Server, tag: str) -> bool:
    """Wait (bounded by ``STEADY_WAIT``) until none of the server's transient processes is left."""
    deadline = time.perf_counter() + STEADY_WAIT
    while any(_label(pid) in server.transient for pid in server_pids(tag)):
        if time.perf_counter() > deadline:
            return False
        await asyncio.sleep(0.5)
    return True


def _answered_by(text: str) -> str:
    """How ided says it answered (``answered_by``); "" for a peer's answer."""
    with suppress(ValueError, AttributeError):
        return str(json.loads(text).get("answered_by") or "")
    return ""


def _leaf(exc: BaseException) -> BaseException:
    current = exc
    while inner := cast("tuple[BaseException, ...]", getattr(current, "exceptions", ())):
        current = inner[0]
    return current


async def warm(server: Server, client: Client, wl: Workload, res: Result, calls: int) -> None:
    for op in OPS:
        call = server.call(op, wl)
        text, ok = await call_text(client, call.tool, call.arguments)  # first call: not timed
        samples: list[float] = []
        for _ in range(calls):
            t = time.perf_counter()
            text, ok = await call_text(client, call.tool, call.arguments)
            samples.append(time.perf_counter() - t)
        res.warm[op] = samples
        res.correct[op] = judge(op, wl, text, ok)
        res.size[op] = len(text)
        if not ok:
            res.notes.append(f"{op}: error {text[:160]!r}")


# ---------------------------------------------------------------- report


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def _ms(v: float) -> str:
    return f"{v * 1000:.1f}" if v < 10 else f"{v * 1000:.0f}"


def _warm_cell(r: Result, op: str) -> str:
    """Latency and the answer's size side by side: an agent pays for both."""
    if op not in r.warm:
        return "–"
    size = f", {r.size[op]:,} chars" if op in r.size else ""
    return f"{_ms(_pct(r.warm[op], 0.5))} / {_ms(_pct(r.warm[op], 0.95))}{size}"


def report(wl: Workload, servers: list[Server], results: dict[str, Result]) -> None:
    names = [s.name for s in servers]
    head = f"| {wl.name} | " + " | ".join(f"{s.name} {s.version}".strip() for s in servers) + " |"
    print("\n" + head)
    print("|" + "---|" * (len(servers) + 1))

    def row(label: str, cell: Callable[[Result], str]) -> None:
        print(f"| {label} | " + " | ".join(cell(results[n]) for n in names) + " |")

    def cold(r: Result) -> str:
        if not r.cold:
            return "failed"
        runs = ", ".join(f"{c:.2f}" for c in r.cold)
        return f"{statistics.median(r.cold):.2f} s ({runs})"

    row("cold → first correct definition, median (runs)", cold)
    row(
        "first correct definition answered by",
        lambda r: ", ".join(dict.fromkeys(v for v in r.cold_via if v)) or "–",
    )
    row(
        "cold → settled (ided: its language server's answer), median",
        lambda r: f"{statistics.median(r.settled):.2f} s" if r.settled else "–",
    )
    row(
        "cold → initialize answered, median",
        lambda r: f"{statistics.median(r.initialize):.2f} s" if r.initialize else "–",
    )
    for op in OPS:
        row(f"warm {op}: p50 / p95 ms, answer chars", lambda r, op=op: _warm_cell(r, op))
    for op in OPS:
        row(f"{op} correct", lambda r, op=op: f"{r.correct[op]:.2f}" if op in r.correct else "–")
    row("RSS MB (all its processes)", lambda r: f"{r.rss:,.0f}" if r.rss is not None else "–")
    row("RSS MB, steady (background work done)", lambda r: f"{r.rss_steady:,.0f}" if r.rss_steady is not None else "–")
    row("processes", lambda r: ", ".join(sorted(set(r.procs))) if r.procs else "–")
    row(
        "RSS MB by process",
        lambda r: ", ".join(f"{label} {mb:,.0f}" for label, mb in r.rss_each.items()) if r.rss_each else "–",
    )
    row(
        "RSS MB by process, steady",
        lambda r: (
            ", ".join(f"{label} {mb:,.0f}" for label, mb in r.rss_steady_each.items()) if r.rss_steady_each else "–"
        ),
    )
    ratios(wl, servers, results)


def ratios(wl: Workload, servers: list[Server], results: dict[str, Result]) -> None:
    """ided's figure over each peer's, then what failed."""

    ideds = [s for s in servers if isinstance(s, Ided)]
    for own in ideds:
        ided = results[own.name]
        print(f"\n{own.name} ÷ other ({wl.name}; > 1 means {own.name} is slower / larger):")
        for s in servers:
            if s is own or (isinstance(s, Ided) and s is not ideds[0]):
                continue
            peer = results[s.name]
            parts: list[str] = []
            if ided.cold and peer.cold:
                parts.append(f"cold {statistics.median(ided.cold) / statistics.median(peer.cold):.2f}×")
            parts.extend(
                f"{op} p50 {_pct(ided.warm[op], 0.5) / max(_pct(peer.warm[op], 0.5), 1e-6):.2f}×"
                for op in OPS
                if op in ided.warm and op in peer.warm
            )
            parts.extend(
                f"{op} chars {ided.size[op] / max(peer.size[op], 1):.2f}×"
                for op in OPS
                if op in ided.size and op in peer.size
            )
            if ided.rss and peer.rss:
                parts.append(f"RSS {ided.rss / peer.rss:.2f}×")
            if ided.rss_steady and peer.rss_steady:
                parts.append(f"steady RSS {ided.rss_steady / peer.rss_steady:.2f}×")
            print(f"- vs {s.name}: " + (", ".join(parts) if parts else "no figures to compare"))
    for s in servers:
        r = results[s.name]
        if s.error:
            print(f"- {s.name}: not run: {s.error}")
        if r.cold_error:
            print(f"- {s.name}: {r.cold_error}")
        for note in r.notes:
            print(f"- {s.name}: {note}")


def _checkouts(given: list[str]) -> list[tuple[str, Path]]:
    """``LABEL=DIR`` pairs as (label, absolute directory)."""
    return [(label, Path(path).resolve()) for label, _, path in (c.partition("=") for c in given)]


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=3, help="cold runs per server and workload")
    parser.add_argument("--warm", type=int, default=20, help="timed warm calls per operation")
    parser.add_argument("--only", default="ided,code-index,jcodemunch,serena")
    parser.add_argument("--workloads", default="polyglot,requests")
    parser.add_argument("--cache", type=Path, default=Path.home() / ".cache" / "ided" / "bench-peers")
    parser.add_argument(
        "--checkout",
        action="append",
        default=[],
        metavar="LABEL=DIR",
        help="run ided from these sources (PYTHONPATH, this environment), interleaved; repeat to compare commits",
    )
    args = parser.parse_args()
    cache: Path = args.cache
    cache.mkdir(parents=True, exist_ok=True)  # noqa: ASYNC240
    work = Path(tempfile.mkdtemp(prefix="ided-bench-peers-"))
    kinds: dict[str, type[Server]] = {"ided": Ided, "code-index": CodeIndex, "jcodemunch": JCodeMunch, "serena": Serena}
    checkouts = _checkouts(args.checkout)
    servers: list[Server] = []
    for name in args.only.split(","):
        if name == "ided" and checkouts:
            servers.extend(Ided(cache, work, checkout) for checkout in checkouts)
            continue
        server = kinds[name](cache, work)
        if isinstance(server, Peer):
            print(f"installing {PEER_PACKAGES[name]} into {server.venv} ...", flush=True)
            server.install()
        servers.append(server)
    try:
        workloads = [
            make_polyglot(work) if name == "polyglot" else make_requests(work, cache)
            for name in args.workloads.split(",")
        ]
        for wl in workloads:
            files = sum(1 for p in wl.root.rglob("*") if p.is_file() and ".git" not in p.parts)
            print(f"\nworkload {wl.name}: {files} files; symbol {wl.symbol} at {wl.def_file}:{wl.def_line}", flush=True)
            results = {s.name: Result() for s in servers}
            for run in range(args.runs):
                for server in servers:  # interleaved: each run visits every server in turn
                    if server.error:
                        continue
                    res = results[server.name]
                    if res.cold_error:
                        continue
                    run_dir = work / "runs" / wl.name / server.name / str(run)
                    await one_run(server, wl, run_dir, res, args.warm, last=run == args.runs - 1)
                    status = f"{res.cold[-1]:.2f} s" if res.cold and not res.cold_error else res.cold_error
                    print(f"  run {run + 1} {server.name}: {status}", flush=True)
            report(wl, servers, results)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    asyncio.run(main())
