"""The retrieval agent's language-server facts (``CodeIntelFacts``) against a real language server.

intel_python (shapes/geometry.py, shapes/report.py, app.py) with basedpyright from the test tools
(scripts/install-test-tools.sh), the real code-intel service and the real index (lexical only).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from daemon.config import Config
from daemon.core.workflow_schema import RetrievalStrategyConfig
from daemon.index.workspace_index import WorkspaceIndex
from daemon.retrieval.models import RetrievalRequest, RetrievalResult, SourceName, SourceState, StageHints, WorkflowKind
from daemon.service.pipeline.retrieval_sources import CodeIntelFacts, build_retrieval_agent
from daemon.service.workspace.local import LocalWorkspace
from tests.intel_tools import copy_workspace, require_server, workspace_config

pytestmark = pytest.mark.asyncio(loop_scope="module")

TIMEOUT = 90.0


@dataclass(frozen=True, kw_only=True)
class Intel:
    workspace: Path
    config: Config
    index: WorkspaceIndex
    service: LocalWorkspace


async def within(awaitable: Any) -> Any:
    return await asyncio.wait_for(awaitable, TIMEOUT)


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def intel(tmp_path_factory: pytest.TempPathFactory) -> AsyncGenerator[Intel]:
    """intel_python indexed once; the code-intel service adopts that index (as the daemon does)."""
    require_server("python")
    root = tmp_path_factory.mktemp("lsp")
    workspace = copy_workspace("intel_python", root)
    config = workspace_config(workspace, root / "state")
    with WorkspaceIndex.open(config) as index:
        await asyncio.to_thread(index.index)
        async with LocalWorkspace.open(config, background=False, index=index) as service:
            yield Intel(workspace=workspace, config=config, index=index, service=service)


def _lines(workspace: Path, path: str, start: int, end: int) -> str:
    return "\n".join((workspace / path).read_text().splitlines()[start - 1 : end])


async def test_facts_of_a_function_are_its_verbatim_definition_its_hover_signature_and_its_call_sites(
    intel: Intel,
) -> None:
    workspace, service = intel.workspace, intel.service
    facts = {f.kind: f for f in await within(CodeIntelFacts(service).facts("centroid", max_references=8))}
    assert set(facts) == {"definition", "signature", "references"}
    definition = facts["definition"]
    assert (definition.path, definition.start_line, definition.end_line) == ("shapes/geometry.py", 24, 29)
    assert definition.verbatim and definition.text == _lines(workspace, "shapes/geometry.py", 24, 29)
    signature = facts["signature"]
    assert "def centroid(points: list[Point]) -> Point" in signature.text and "arithmetic mean" in signature.text
    assert signature.path == "shapes/geometry.py" and not signature.verbatim
    references = facts["references"].text
    assert "shapes/report.py:14 in spread: middle = centroid(points)" in references
    assert "shapes/report.py:26 in Reporter.render: middle = centroid(points)" in references
    assert "shapes/geometry.py:24" not in references  # the declaration is not a reference


async def test_a_method_named_by_its_class_resolves_to_the_method_and_its_caller(
    intel: Intel,
) -> None:
    workspace, service = intel.workspace, intel.service
    facts = {f.kind: f for f in await within(CodeIntelFacts(service).facts("Reporter.render", max_references=8))}
    definition = facts["definition"]
    assert (definition.path, definition.start_line, definition.end_line) == ("shapes/report.py", 24, 27)
    assert definition.text == _lines(workspace, "shapes/report.py", 24, 27)
    assert "app.py:11 in main:" in facts["references"].text


async def _retrieve(intel: Intel, task: str, **retrieval: Any) -> RetrievalResult:
    config = intel.config
    config = config.model_copy(update={"retrieval": config.retrieval.model_copy(update=retrieval)})
    agent = build_retrieval_agent(config, index=intel.index, code_intel=intel.service)
    request = RetrievalRequest(
        task=task, workflow_kind=WorkflowKind.CODE, stage=StageHints(stage_id="fix", token_budget=2000)
    )
    return await within(agent.retrieve(request, RetrievalStrategyConfig()))


async def test_the_agent_puts_language_server_facts_of_the_named_symbols_into_the_context(
    intel: Intel,
) -> None:
    workspace = intel.workspace
    result = await _retrieve(intel, "`centroid` must ignore repeated points; `no_such_helper` is gone")
    lsp = result.source(SourceName.LSP)
    assert lsp is not None and lsp.state is SourceState.OK and lsp.candidates >= 3, lsp
    assert any(c.source is SourceName.LSP and c.cite.startswith("shapes/geometry.py:24-29") for c in result.candidates)
    references = [p for p in result.context if p.source is SourceName.LSP and p.attribution.ref == "references"]
    assert references and "shapes/report.py:14 in spread" in references[0].text
    covering = [
        p
        for p in result.context
        if p.attribution.path == "shapes/geometry.py"
        and p.attribution.ref not in ("signature", "references")
        and (p.attribution.start_line or 0) <= 24 <= (p.attribution.end_line or 0)
    ]
    assert len(covering) == 1, [p.attribution.cite() for p in covering]  # one version of centroid's code, not two
    piece = covering[0]
    start, end = piece.attribution.start_line or 0, piece.attribution.end_line or 0
    assert piece.text == _lines(workspace, "shapes/geometry.py", start, end)  # grounded in the file as it is


async def test_language_server_facts_are_off_when_the_config_switches_them_off(
    intel: Intel,
) -> None:
    result = await _retrieve(intel, "`centroid` must ignore repeated points", lsp=False)
    lsp = result.source(SourceName.LSP)
    assert lsp is not None and lsp.state is SourceState.OFF and lsp.reason == "retrieval.lsp is false"
    assert not any(c.source is SourceName.LSP for c in result.candidates)
