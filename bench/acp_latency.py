"""``ided acp`` latency as an IDE sees it: the ACP SDK's client drives the real process over stdio.

Measures, on a small generated git repository with a replay-scripted model (no LLM time):
- cold start: spawn -> initialize reply, and session/new (opens the pipeline for the folder);
- per prompt: prompt -> first session update, -> first ``plan`` update, -> reply; updates per run
  and their rate (updates/s between the first and the last);
- the same for a ``/dry-run`` prompt (selection + plan only).

Usage: ``uv run --frozen python bench/acp_latency.py [--prompts 5] [--stage-delay 0.0] [--direct]``
(``--stage-delay``: seconds every scripted agent answer takes, to see the update rate of a slower run).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

import yaml
from acp import PROTOCOL_VERSION, Client, spawn_agent_process
from acp.schema import AgentPlanUpdate, ClientCapabilities, Implementation, RequestPermissionResponse, TextContentBlock


@dataclass
class TimingClient:
    started: float = 0.0
    first_update: float | None = None
    first_plan: float | None = None
    last_update: float | None = None
    updates: int = 0
    log: list[str] = field(default_factory=lambda: list[str]())

    def reset(self) -> None:
        self.started = time.perf_counter()
        self.first_update = self.first_plan = self.last_update = None
        self.updates = 0

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        now = time.perf_counter()
        self.updates += 1
        self.last_update = now
        if self.first_update is None:
            self.first_update = now
        if self.first_plan is None and isinstance(update, AgentPlanUpdate):
            self.first_plan = now

    async def request_permission(self, *args: Any, **kwargs: Any) -> RequestPermissionResponse:
        return RequestPermissionResponse.model_validate({"outcome": {"outcome": "cancelled"}})


def make_repo(root: Path) -> Path:
    root.mkdir(parents=True)
    for i in range(50):
        (root / f"mod_{i}.py").write_text(f"def f{i}(x):\n    return x + {i}\n")
    env = {"GIT_CONFIG_NOSYSTEM": "1", "HOME": str(root.parent), "PATH": "/usr/bin:/bin"}
    for args in (["init", "-q", "-b", "main"], ["add", "-A"]):
        subprocess.run(["git", *args], cwd=root, check=True, env=env, timeout=60)
    subprocess.run(
        ["git", "-c", "user.name=b", "-c", "user.email=b@x", "commit", "-q", "-m", "init"],
        cwd=root,
        check=True,
        env=env,
        timeout=60,
    )
    return root


def write_script(path: Path, delay: float) -> Path:
    choose = {
        "workflow": "bug_fix",
        "rationale": "bench",
        "stage_decisions": [{"stage_id": "code_review", "decision": "SKIP", "reason": "bench"}],
    }
    entries: list[dict[str, Any]] = [{"role": "orchestrator", "answer": choose, "repeat": True}]
    entries.append(
        {"role": "*", "answer": {"status": "success", "summary": "done"}, "repeat": True, "delay_seconds": delay}
    )
    path.write_text(yaml.safe_dump({"responses": entries}))
    return path


def ms(seconds: float | None) -> str:
    return "-" if seconds is None else f"{seconds * 1000:.0f} ms"


async def bench(prompts: int, delay: float, *, direct: bool) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        repo = make_repo(base / "repo")
        script = write_script(base / "script.yaml", delay)
        env = {
            "IDED_STATE_DIR": str(base / "state"),
            "IDED_EMBEDDING__ENABLED": "false",
            "IDED_ACP__ATTACH_DAEMON": "false",
            "IDED_PIPELINE__RESILIENCE__CACHE": "false",
            "IDED_PIPELINE__REPLAY_SCRIPT": str(script),
            "XDG_CONFIG_HOME": str(base / "home"),
            "HF_HUB_OFFLINE": "1",
        }
        client = TimingClient()
        t0 = time.perf_counter()
        with (base / "stderr.log").open("wb") as err:
            module = ["daemon.acp"] if direct else ["daemon", "acp"]
            async with spawn_agent_process(
                cast(Client, client),
                sys.executable,
                "-P",
                "-m",
                *module,
                env=env,
                transport_kwargs={"stderr": err.fileno(), "shutdown_timeout": 20.0},
            ) as (conn, _proc):
                await conn.initialize(
                    protocol_version=PROTOCOL_VERSION,
                    client_capabilities=ClientCapabilities(),
                    client_info=Implementation(name="bench", version="0"),
                )
                t_init = time.perf_counter() - t0
                t1 = time.perf_counter()
                session = await conn.new_session(cwd=str(repo), mcp_servers=[])
                t_session = time.perf_counter() - t1
                how = "python -m daemon.acp" if direct else "ided acp (the CLI runs the front in-process)"
                print(f"cold start of {how}: spawn -> initialize {ms(t_init)}; session/new {ms(t_session)}")
                for label, text in (("dry run", "/dry-run fix the crash in f1"), ("run", "fix the crash in f1")):
                    firsts: list[float] = []
                    plans: list[float] = []
                    totals: list[float] = []
                    rates: list[float] = []
                    counts: list[int] = []
                    for _ in range(prompts):
                        client.reset()
                        await conn.prompt(
                            session_id=session.session_id, prompt=[TextContentBlock(type="text", text=text)]
                        )
                        end = time.perf_counter()
                        totals.append(end - client.started)
                        if client.first_update is not None:
                            firsts.append(client.first_update - client.started)
                        if client.first_plan is not None:
                            plans.append(client.first_plan - client.started)
                        counts.append(client.updates)
                        if client.first_update and client.last_update and client.last_update > client.first_update:
                            rates.append((client.updates - 1) / (client.last_update - client.first_update))
                    print(
                        f"{label:>8} (n={prompts}, median): prompt -> first update {ms(_median(firsts))}, "
                        f"-> plan {ms(_median(plans))}, -> reply {ms(_median(totals))}; "
                        f"{statistics.median(counts):.0f} updates/run"
                        + (f", {statistics.median(rates):.0f} updates/s" if rates else "")
                    )


def _median(values: list[float]) -> float | None:
    return statistics.median(values) if values else None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--prompts", type=int, default=5)
    parser.add_argument("--stage-delay", type=float, default=0.0)
    parser.add_argument("--direct", action="store_true", help="spawn python -m daemon.acp (skips the ided entry point)")
    args = parser.parse_args()
    asyncio.run(bench(args.prompts, args.stage_delay, direct=args.direct))


if __name__ == "__main__":
    main()
