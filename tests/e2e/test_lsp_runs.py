"""``ided/run/*`` over real stdio: start a run and follow its progress, then review a run branch's changes."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import sys
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from pygls.exceptions import JsonRpcException
from pytest_lsp.client import DEFAULT_CLIENT_FEATURES, register_lsp_features

from daemon.config import load_config
from daemon.vcs.worktrees import RunWorktrees
from tests.e2e.lsp_support import (
    WAIT_S,
    IdedTestClient,
    RawIdedProtocol,
    RawNotification,
    initialize_params,
    overrides,
    server_args,
    stop_daemon,
)
from tests.pipeline_support import (
    choose,
    everyone_succeeds,
    recorded_tools,
    reflected_workflow,
    stage_intel_tools,
    write_script,
)
from tests.vcs_support import git, make_repo, write

pytestmark = pytest.mark.e2e

REQUEST_FAILED = -32803
RUN_METHODS = {"ided/run/start", "ided/run/cancel", "ided/run/diff", "ided/run/accept", "ided/run/reject",
               "ided/run/rollback"}  # fmt: skip


class RunsProtocol(RawIdedProtocol):
    @functools.lru_cache  # noqa: B019 - the shape pygls declares
    def get_message_type(self, method: str) -> type[Any] | None:
        return RawNotification if method == "ided/run/progress" else super().get_message_type(method)


class RunsClient(IdedTestClient):
    def __init__(self) -> None:
        super(IdedTestClient, self).__init__(protocol_cls=RunsProtocol)  # pyright: ignore[reportUnknownMemberType]
        self.run_progress: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self.experimental: Any = None


@asynccontextmanager
async def runs_client(workspace: Path, state: Path, *extra: str) -> AsyncGenerator[RunsClient]:
    client = RunsClient()
    features = dict(DEFAULT_CLIENT_FEATURES)

    def on_progress(ls: RunsClient, params: Any) -> None:
        ls.run_progress.put_nowait(params)

    features["ided/run/progress"] = on_progress
    register_lsp_features(client, features)
    args = server_args(state)
    await client.start_io(sys.executable, *args[:-1], *extra, args[-1], cwd=str(workspace))  # pyright: ignore[reportUnknownMemberType]
    try:
        result = await asyncio.wait_for(client.initialize_session(initialize_params(workspace)), WAIT_S)
        client.experimental = result.capabilities.experimental
        yield client
        await asyncio.wait_for(client.shutdown_session(), WAIT_S)
    finally:
        process = client._server
        if process is not None and process.returncode is None:
            process.terminate()
            await asyncio.wait_for(process.wait(), WAIT_S)
        await asyncio.wait_for(client.stop(), WAIT_S)
        with contextlib.suppress(Exception):
            await stop_daemon(load_config(workspace, overrides=overrides(state)))


@pytest.fixture
def repo(tmp_path: Path, isolated_home: Path) -> Path:
    return make_repo(tmp_path / "repo", {"calc.py": "def add(a, b):\n    return a + b\n", "README.md": "# calc\n"})


async def test_review_methods_show_the_diff_refuse_a_conflict_then_accept_and_roll_back(
    repo: Path, tmp_path: Path
) -> None:
    state = tmp_path / "state"
    runs = RunWorktrees(repo, state)
    branch = runs.create("r1")
    write(branch.workdir, "calc.py", "def add(a, b):\n    return a + b + 0\n")
    run_commit = runs.commit_attempt("r1", stage_id="implement", attempt=1, agent_ids=["coder"])
    write(repo, "calc.py", "# my unsaved idea\n")

    async with runs_client(repo, state) as client:
        assert set(client.experimental["ided"]["requests"]) >= RUN_METHODS
        assert "ided/run/progress" in client.experimental["ided"]["notifications"]

        diff = await client.ided("ided/run/diff", {"runId": "r1"})
        assert diff["branch"] == "ided/run/r1" and diff["commits"][0]["sha"] == run_commit
        assert diff["commits"][0]["stageId"] == "implement" and diff["commits"][0]["agents"] == ["coder"]
        (changed,) = diff["files"]
        assert changed["uri"] == (repo / "calc.py").as_uri()
        assert changed["oldText"] == "def add(a, b):\n    return a + b\n"
        assert changed["newText"] == "def add(a, b):\n    return a + b + 0\n"
        assert changed["status"] == "modified" and "+    return a + b + 0" in changed["diff"]

        with pytest.raises(JsonRpcException) as caught:
            await client.ided("ided/run/accept", {"runId": "r1"})
        assert caught.value.code == REQUEST_FAILED
        data: Any = caught.value.data
        assert data["code"] == "change_conflict" and data["report"]["files"][0]["path"] == "calc.py"
        assert (repo / "calc.py").read_text() == "# my unsaved idea\n"

        git(repo, "checkout", "--", "calc.py")
        accepted = await client.ided("ided/run/accept", {"runId": "r1"})
        assert accepted["sourceCommits"] == [run_commit]
        assert git(repo, "rev-parse", "HEAD") == accepted["head"]
        assert (repo / "calc.py").read_text() == "def add(a, b):\n    return a + b + 0\n"

        rolled = await client.ided("ided/run/rollback", {"runId": "r1"})
        assert rolled["reverted"] == accepted["commits"]
        assert (repo / "calc.py").read_text() == "def add(a, b):\n    return a + b\n"

        with pytest.raises(JsonRpcException) as unknown:
            await client.ided("ided/run/reject", {"runId": "nope"})
        missing: Any = unknown.value.data
        assert missing["code"] == "run_not_found"
        with pytest.raises(JsonRpcException) as bad:
            await client.ided("ided/run/diff", {"runId": 7})
        assert bad.value.code == -32602


async def test_start_answers_with_the_plan_and_streams_progress_until_the_run_finishes(
    repo: Path, tmp_path: Path
) -> None:
    orchestrator = {"role": "orchestrator", "answer": choose("architecture_discussion"), "repeat": True}
    script = write_script(tmp_path / "script.yaml", [orchestrator, everyone_succeeds()])
    extra = ("--set", f"pipeline.replay_script={script}", "--set", "pipeline.resilience.cache=false")
    async with runs_client(repo, tmp_path / "state", *extra) as client:
        dry = await client.ided("ided/run/start", {"request": "how should calc grow?", "dryRun": True})
        assert dry["status"] == "planned" and dry["workflow"] == "architecture_discussion" and dry["stages"]

        started = await client.ided("ided/run/start", {"request": "how should calc grow?"})
        assert started["status"] == "running" and started["stages"] == dry["stages"]
        notes: list[dict[str, Any]] = []
        while not notes or notes[-1]["kind"] != "run_finished":
            notes.append(await asyncio.wait_for(client.run_progress.get(), WAIT_S))
        assert {n["runId"] for n in notes} == {started["runId"]}
        kinds = [n["kind"] for n in notes]
        assert kinds[0] == "run_started" and "node_started" in kinds
        assert notes[-1]["event"]["status"] == "succeeded"

        cancelled = await client.ided("ided/run/cancel", {"runId": dry["runId"]})
        assert cancelled["status"] == "cancelled"


async def test_a_dry_run_answers_its_plan_as_a_graph_of_stages_and_labelled_routes(repo: Path, tmp_path: Path) -> None:
    orchestrator = {"role": "orchestrator", "answer": choose("bug_fix", "a crash report", code_review="SKIP")}
    script = write_script(tmp_path / "script.yaml", [orchestrator])
    extra = ("--set", f"pipeline.replay_script={script}", "--set", "pipeline.resilience.cache=false")
    async with runs_client(repo, tmp_path / "state", *extra) as client:
        dry = await client.ided("ided/run/start", {"request": "fix add", "dryRun": True})

    graph: dict[str, Any] = dry["graph"]
    assert graph["entry"] == "reproduction"
    assert [(s["stageId"], s["name"], s["reason"]) for s in graph["stages"]] == [
        ("reproduction", "Reproduction", None),
        ("diagnosis", "Diagnosis", None),
        ("fix", "Fix", None),
        ("regression_testing", "Regression testing", None),
    ]
    assert [(s["stageId"], bool(s["reason"])) for s in graph["skipped"]] == [("code_review", True)]
    assert {(e["source"], e["outcome"], e["target"]) for e in graph["edges"]} == {
        ("reproduction", "success", "diagnosis"),
        ("reproduction", "failure", "diagnosis"),
        ("diagnosis", "success", "fix"),
        ("diagnosis", "failure", "ABORT"),
        ("fix", "success", "regression_testing"),
        ("fix", "failure", "ABORT"),
        ("regression_testing", "success", "DONE"),  # through the skipped code review
        ("regression_testing", "failure", "ABORT"),
        ("regression_testing", "retry", "fix"),
    }


async def test_a_workflow_with_a_reflector_and_an_evaluator_answers_them_as_nodes_with_the_graphs_edges(
    repo: Path, tmp_path: Path
) -> None:
    reflected = {"enabled": True, "stages": ["fix"]}
    write(repo, ".ided/workflows/bug_fix_reflected.yaml", reflected_workflow("bug_fix_reflected", reflection=reflected))
    write(
        repo,
        ".ided/workflows/bug_fix_judged.yaml",
        reflected_workflow("bug_fix_judged", reflection=reflected, evaluation={"enabled": True}),
    )
    entries = [
        {"role": "orchestrator", "match": "add crashes", "answer": choose("bug_fix_reflected", code_review="SKIP")},
        {"role": "orchestrator", "answer": choose("bug_fix_judged", code_review="SKIP")},
    ]
    script = write_script(tmp_path / "script.yaml", entries)
    extra = ("--set", f"pipeline.replay_script={script}", "--set", "pipeline.resilience.cache=false")
    async with runs_client(repo, tmp_path / "state", *extra) as client:
        reflecting = (await client.ided("ided/run/start", {"request": "add crashes", "dryRun": True}))["graph"]
        judged = (await client.ided("ided/run/start", {"request": "fix add", "dryRun": True}))["graph"]
        plain = (await client.ided("ided/run/start", {"request": "fix add", "workflow": "bug_fix", "dryRun": True}))[
            "graph"
        ]

    assert [s["stageId"] for s in reflecting["stages"]] == ["reproduction", "diagnosis", "fix", "regression_testing"]
    assert reflecting["nodes"] == [{"nodeId": "reflector", "name": "Reflector"}]
    assert {(e["source"], e["outcome"], e["target"]) for e in reflecting["edges"]} == {
        ("reproduction", "success", "diagnosis"),
        ("reproduction", "failure", "diagnosis"),
        ("diagnosis", "success", "fix"),
        ("diagnosis", "failure", "ABORT"),
        ("fix", "success", "reflector"),  # not committed until the reflector accepts
        ("fix", "failure", "ABORT"),
        ("reflector", "accept fix", "regression_testing"),
        ("reflector", "send back", "fix"),
        ("reflector", "limit", "ABORT"),  # regression testing used up its attempts
        ("regression_testing", "success", "DONE"),
        ("regression_testing", "failure", "ABORT"),
        ("regression_testing", "retry", "fix"),
    }
    assert judged["nodes"] == [
        {"nodeId": "reflector", "name": "Reflector"},
        {"nodeId": "evaluator", "name": "Evaluator"},
    ]
    judged_edges = {(e["source"], e["outcome"], e["target"]) for e in judged["edges"]}
    assert {e for e in judged_edges if "DONE" in e or "evaluator" in e} == {
        ("regression_testing", "success", "evaluator"),  # every route into DONE goes through the evaluator
        ("evaluator", "scored", "DONE"),
    }
    assert plain["nodes"] == [] and not {e["target"] for e in plain["edges"]} & {"reflector", "evaluator"}


async def test_a_code_run_started_over_lsp_ends_in_review_and_its_change_is_accepted(
    repo: Path, tmp_path: Path
) -> None:
    feature = "feature_with_iterative_testing"
    entries: list[dict[str, Any]] = [
        {
            "role": "orchestrator",
            "answer": choose(feature, requirements_analysis="SKIP", code_review="SKIP", documentation="SKIP"),
        },
        {
            "role": "coder",
            "tool_calls": [
                {"name": "write_file", "args": {"path": "calc.py", "content": "def add(a, b):\n    return b + a\n"}}
            ],
        },
        {"role": "*", "answer": {"status": "success", "summary": "fine", "evidence": list[str]()}, "repeat": True},
    ]
    script = write_script(tmp_path / "script.yaml", entries, record_tools="tools.jsonl")
    extra = ("--set", f"pipeline.replay_script={script}", "--set", "pipeline.resilience.cache=false")
    async with runs_client(repo, tmp_path / "state", *extra) as client:
        started = await client.ided("ided/run/start", {"request": "make add commutative", "mode": "code"})
        notes: list[dict[str, Any]] = []
        while not notes or notes[-1]["kind"] != "run_finished":
            notes.append(await asyncio.wait_for(client.run_progress.get(), WAIT_S))
        assert "review" in [n["kind"] for n in notes]
        assert (repo / "calc.py").read_text() == "def add(a, b):\n    return a + b\n"  # untouched before accept
        # the same tools as the CLI's runs: the code-intel tools the stage names, from the workspace daemon
        offered = recorded_tools(tmp_path / "tools.jsonl", "coder")
        assert stage_intel_tools("feature_with_iterative_testing", "implementation", "coder") <= offered

        diff = await client.ided("ided/run/diff", {"runId": started["runId"]})
        assert [f["path"] for f in diff["files"]] == ["calc.py"]
        assert diff["commits"][0]["stageId"] == "implementation"
        accepted = await client.ided("ided/run/accept", {"runId": started["runId"]})
        assert accepted["files"] == ["calc.py"]
        assert (repo / "calc.py").read_text() == "def add(a, b):\n    return b + a\n"

        with pytest.raises(JsonRpcException) as bad:
            await client.ided("ided/run/start", {"request": "x", "mode": "write"})
        assert bad.value.code == -32602


async def test_a_dry_run_of_the_specifications_file_lists_its_mapped_and_informational_fields(
    repo: Path, tmp_path: Path
) -> None:
    spec = Path(__file__).parents[1] / "fixtures" / "spec_workflows" / "architecture_discussion.yaml"
    (repo / ".ided" / "workflows").mkdir(parents=True)
    (repo / ".ided" / "workflows" / spec.name).write_bytes(spec.read_bytes())
    orchestrator = {"role": "orchestrator", "answer": choose("architecture_discussion"), "repeat": True}
    script = write_script(tmp_path / "script.yaml", [orchestrator])
    extra = ("--set", f"pipeline.replay_script={script}", "--set", "pipeline.resilience.cache=false")
    async with runs_client(repo, tmp_path / "state", *extra) as client:
        dry = await client.ided("ided/run/start", {"request": "discuss the architecture of calc", "dryRun": True})

    assert dry["status"] == "planned" and dry["stages"][0] == "architectural_analysis"
    notes: list[str] = dry["notes"]
    assert any(
        n.startswith("retrieval_strategy_config.strategy_name = document_domain_discussion: informational")
        for n in notes
    )
    assert any(n.startswith("stages[0].stage_id = 1: mapped: stage id 'architectural_analysis'") for n in notes)


async def test_feedback_runs_the_editing_stage_again_on_the_same_branch_and_streams_its_progress(
    repo: Path, tmp_path: Path
) -> None:
    fixed = "def add(a, b):\n    return a + b  # checked\n"
    asked = "def add(a, b):\n    return b + a  # as asked\n"
    entries: list[dict[str, Any]] = [
        {"role": "orchestrator", "answer": choose("bug_fix", "a crash report", code_review="SKIP")},
        {
            "role": "coder",
            "match": "swap the operands",
            "tool_calls": [{"name": "write_file", "args": {"path": "calc.py", "content": asked}}],
        },  # each request opens its own pipeline, so the script starts over: the next answer ends the attempt
        {"role": "coder", "match": "swap the operands", "answer": {"status": "success", "summary": "swapped"}},
        {"role": "coder", "tool_calls": [{"name": "write_file", "args": {"path": "calc.py", "content": fixed}}]},
        everyone_succeeds(),
    ]
    script = write_script(tmp_path / "script.yaml", entries)
    extra = ("--set", f"pipeline.replay_script={script}", "--set", "pipeline.resilience.cache=false")
    async with runs_client(repo, tmp_path / "state", *extra) as client:
        assert "ided/run/feedback" in client.experimental["ided"]["requests"]
        started = await client.ided("ided/run/start", {"request": "fix add"})
        run_id = started["runId"]
        while (await asyncio.wait_for(client.run_progress.get(), WAIT_S))["kind"] != "run_finished":
            pass
        first = await client.ided("ided/run/diff", {"runId": run_id})
        assert first["files"][0]["newText"] == fixed

        empty = await _refusal(client.ided("ided/run/feedback", {"runId": run_id, "text": "  "}))
        assert empty.code == -32602 and "text" in empty.message
        unknown = await _refusal(client.ided("ided/run/feedback", {"runId": "nope", "text": "swap"}))
        unknown_data: Any = unknown.data
        assert unknown.code == REQUEST_FAILED and unknown_data["code"] == "run_not_found"

        again = await client.ided("ided/run/feedback", {"runId": run_id, "text": "please swap the operands"})
        assert again["runId"] == run_id and again["status"] == "running"
        notes: list[dict[str, Any]] = []
        while not notes or notes[-1]["kind"] != "run_finished":
            notes.append(await asyncio.wait_for(client.run_progress.get(), WAIT_S))
        assert {n["runId"] for n in notes} == {run_id} and "review" in [n["kind"] for n in notes]

        second = await client.ided("ided/run/diff", {"runId": run_id})
        assert second["branch"] == first["branch"] and len(second["commits"]) == len(first["commits"]) + 1
        assert second["files"][0]["oldText"] == "def add(a, b):\n    return a + b\n"
        assert second["files"][0]["newText"] == asked
        rejected = await client.ided("ided/run/reject", {"runId": run_id})
        assert rejected["runId"] == run_id
        after = await _refusal(client.ided("ided/run/feedback", {"runId": run_id, "text": "swap the operands"}))
        assert after.code == REQUEST_FAILED
    assert (repo / "calc.py").read_text() == "def add(a, b):\n    return a + b\n"


async def _refusal(awaitable: Any) -> JsonRpcException:
    with pytest.raises(JsonRpcException) as caught:
        await awaitable
    return caught.value


async def test_accept_with_keep_applies_only_the_kept_file_and_rollback_undoes_it(repo: Path, tmp_path: Path) -> None:
    state = tmp_path / "state"
    runs = RunWorktrees(repo, state)
    branch = runs.create("r1")
    write(branch.workdir, "calc.py", "def add(a, b):\n    return a + b + 0\n")
    write(branch.workdir, "README.md", "# calc, by the run\n")
    runs.commit_attempt("r1", stage_id="implement", attempt=1, agent_ids=["coder"])
    before = git(repo, "rev-parse", "HEAD")

    async with runs_client(repo, state) as client:
        with pytest.raises(JsonRpcException) as empty:
            await client.ided("ided/run/accept", {"runId": "r1", "keep": []})
        assert empty.value.code == -32602
        accepted = await client.ided("ided/run/accept", {"runId": "r1", "keep": [{"path": "calc.py"}]})
        assert accepted["files"] == ["calc.py"] and accepted["dropped"] == ["README.md"]
        assert accepted["reviewedCommit"] == git(repo, "rev-parse", "ided/run/r1") == accepted["sourceCommits"][0]
        assert git(repo, "diff", "--name-only", before, "HEAD") == "calc.py"
        assert (repo / "calc.py").read_text() == "def add(a, b):\n    return a + b + 0\n"
        assert (repo / "README.md").read_text() == "# calc\n"

        rolled = await client.ided("ided/run/rollback", {"runId": "r1"})
        assert rolled["reverted"] == accepted["commits"]
        assert (repo / "calc.py").read_text() == "def add(a, b):\n    return a + b\n"
