"""The retrieval agent over the real index and embedding model, real HTTP providers on loopback, real files."""

from __future__ import annotations

import asyncio
import json
import shutil
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

from daemon.config import Config
from daemon.core.workflow_schema import RetrievalStrategyConfig
from daemon.index.workspace_index import WorkspaceIndex
from daemon.orchestration.workflow_loader import load_workflow_file
from daemon.retrieval.agent import RetrievalAgent
from daemon.retrieval.models import (
    RetrievalRequest,
    RetrievalResult,
    SourceName,
    SourceState,
    StageHints,
    WorkflowKind,
)
from daemon.service.pipeline.retrieval_sources import build_retrieval_agent
from tests.integration.conftest import FIXTURES, make_config

CODE_TASK = "Fix the rounding of apply_discount so that discounts round to whole cents"


def _request(task: str = CODE_TASK, kind: WorkflowKind = WorkflowKind.CODE, budget: int = 1500) -> RetrievalRequest:
    return RetrievalRequest(task=task, workflow_kind=kind, stage=StageHints(stage_id="fix", token_budget=budget))


@pytest.fixture(scope="module")
def shop(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, WorkspaceIndex, Config]]:
    """retrieval_shop indexed once (lexical + dense) for the read-only tests of this module."""
    root = tmp_path_factory.mktemp("shop") / "ws"
    shutil.copytree(FIXTURES / "retrieval_shop", root)
    config = make_config(root, root.parent / "state")
    with WorkspaceIndex.open(config) as index:
        index.index()
        index.embed()
        yield root, index, config


def _agent(shop: tuple[Path, WorkspaceIndex, Config], **retrieval: Any) -> RetrievalAgent:
    _, index, config = shop
    config = config.model_copy(update={"retrieval": config.retrieval.model_copy(update=retrieval)})
    return build_retrieval_agent(config, index=index)


async def _run(agent: RetrievalAgent, request: RetrievalRequest | None = None) -> RetrievalResult:
    return await asyncio.wait_for(agent.retrieve(request or _request(), RetrievalStrategyConfig()), 60)


async def test_code_task_gets_the_named_function_grounded_cited_and_within_budget(shop: Any) -> None:
    result = await _run(_agent(shop))
    top = result.context[0]
    assert (top.attribution.path, top.attribution.symbol) == ("shop/pricing.py", "apply_discount")
    assert top.score == 1.0 and all(p.score >= 0.7 for p in result.context)
    assert top.attribution.cite() == "shop/pricing.py:15-19 (apply_discount)"
    assert result.tokens <= result.token_budget == 1500
    assert result.ast_map is not None and "function apply_discount L15-19" in result.ast_map
    assert {e.kind for e in result.events} >= {"queries", "source", "fusion", "validation", "budget"}
    assert all(r.reason for r in result.rejections)
    assert result.source(SourceName.LSP) is not None
    lsp = result.source(SourceName.LSP)
    assert lsp is not None and lsp.state is SourceState.UNAVAILABLE and lsp.reason == "no language servers attached"


@pytest.mark.parametrize("switch", ["code", "docs", "decisions", "lsp", "web", "advisories", "libraries"])
async def test_every_source_is_off_when_the_config_switches_it_off(shop: Any, switch: str) -> None:
    # the advisory source needs its data: the OSV records of the fixtures, a hand-unzipped export without an index
    data = {"osv_mirror": str(Path(__file__).parents[1] / "fixtures" / "osv")} if switch == "advisories" else {}
    on = await _run(_agent(shop, **{switch: True}, **data))
    off = await _run(_agent(shop, **{switch: False}))
    name = SourceName(switch)
    status = off.source(name)
    assert status is not None and status.state is SourceState.OFF and status.reason == f"retrieval.{switch} is false"
    assert not any(c.source is name for c in off.candidates)
    on_status = on.source(name)
    assert on_status is not None and on_status.state is not SourceState.OFF
    if name in (SourceName.CODE, SourceName.DOCS, SourceName.DECISIONS):
        assert on_status.state is SourceState.OK and any(c.source is name for c in on.candidates)


async def test_document_workflows_skip_static_analysis_and_flag_a_doc_contradicting_a_decision(shop: Any) -> None:
    result = await _run(
        _agent(shop), _request("How are prices represented? update the money documentation", WorkflowKind.DOCUMENT)
    )
    lsp, ast = result.source(SourceName.LSP), result.source(SourceName.AST)
    assert lsp is not None and lsp.reason == "document workflows skip static analysis"
    assert ast is not None and result.ast_map is None
    assert not any(c.source is SourceName.CODE for c in result.candidates)
    top = {(p.attribution.path, p.attribution.section_path) for p in result.context[:2]}
    assert top == {
        ("docs/money.md", "Money > Representation"),
        ("docs/adr/0001-money-as-decimal.md", "ADR 0001: money as Decimal > Decision"),
    }, top
    assert any("docs/money.md" in f and "0001-money-as-decimal" in f for f in result.flags), result.flags


class _Http:
    """A real HTTP/1.1 server on loopback: answers JSON per path, or stops answering when ``hang`` is set."""

    def __init__(self, routes: dict[str, Any], *, hang: bool = False) -> None:
        self.routes = routes
        self.hang = hang
        self.requests: list[str] = []
        self._stop = asyncio.Event()

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await reader.readuntil(b"\r\n\r\n")
        target = head.split(b" ")[1].decode()
        self.requests.append(target)
        if self.hang:
            await self._stop.wait()  # accepted, read, never answered
        else:
            body = json.dumps(self.routes.get(target.split("?")[0], {})).encode()
            writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n" % len(body))
            writer.write(body)
            await writer.drain()
        writer.close()

    async def __aenter__(self) -> str:
        self._server = await asyncio.start_server(self.handle, "127.0.0.1", 0)
        port = self._server.sockets[0].getsockname()[1]
        return f"http://127.0.0.1:{port}"

    async def __aexit__(self, *exc: object) -> None:
        self._stop.set()
        self._server.close()
        await self._server.wait_closed()


@pytest.fixture
async def searxng() -> AsyncIterator[tuple[str, _Http]]:
    routes = {
        "/search": {
            "results": [
                {
                    "title": "Decimal rounding",
                    "url": "https://docs.python.org/3/library/decimal.html",
                    "content": "quantize rounds",
                }
            ]
        }
    }
    server = _Http(routes)
    async with server as url:
        yield url, server


async def test_a_web_provider_answers_over_http_and_its_hits_carry_their_url(
    shop: Any, searxng: tuple[str, _Http]
) -> None:
    url, server = searxng
    result = await _run(_agent(shop, web=True, web_url=url, docs_threshold=0.0, code_threshold=0.0))
    web = result.source(SourceName.WEB)
    assert web is not None and web.state is SourceState.OK and web.candidates >= 1
    assert any(r.startswith("/search?q=") and "format=json" in r for r in server.requests)
    assert any(p.attribution.url == "https://docs.python.org/3/library/decimal.html" for p in result.context)


async def test_a_web_provider_that_stops_answering_is_unavailable_and_the_run_goes_on(shop: Any) -> None:
    async with _Http({}, hang=True) as url:
        agent = _agent(shop, web=True, web_url=url, http_timeout_seconds=0.5, source_timeout_seconds=5.0)
        result = await _run(agent)
    web = result.source(SourceName.WEB)
    assert web is not None and web.state is SourceState.UNAVAILABLE
    assert web.reason is not None and "did not answer within 0.5 s" in web.reason and "source_unavailable" in web.reason
    assert result.context[0].attribution.symbol == "apply_discount"  # the other sources carried the run


async def test_the_breaker_skips_a_source_that_failed_repeatedly(shop: Any) -> None:
    async with _Http({}, hang=True) as url:
        agent = _agent(shop, web=True, web_url=url, http_timeout_seconds=0.3, breaker_failure_threshold=1)
        await _run(agent)
        second = await _run(agent)
    web = second.source(SourceName.WEB)
    assert web is not None and web.state is SourceState.UNAVAILABLE and "skipped for 60 s" in (web.reason or "")


async def test_osv_advisories_are_looked_up_by_id_over_http(shop: Any) -> None:
    vuln = {"id": "GHSA-jjg7-2v4v-x38h", "summary": "idna denial of service", "aliases": ["CVE-2024-3651"]}
    async with _Http({"/v1/vulns/CVE-2024-3651": vuln}) as url:
        agent = _agent(shop, advisories=True, advisory_url=url, code_threshold=0.0)
        result = await _run(agent, _request("check CVE-2024-3651 against our pricing code"))
    adv = result.source(SourceName.ADVISORIES)
    assert adv is not None and adv.state is SourceState.OK and adv.candidates == 1
    piece = next(p for p in result.context if p.source is SourceName.ADVISORIES)
    assert piece.attribution.ref == "GHSA-jjg7-2v4v-x38h" and "denial of service" in piece.text


async def test_a_source_with_trigger_stages_serves_only_those_stages(shop: Any) -> None:
    spec = Path(__file__).parents[1] / "fixtures" / "spec_workflows" / "feature_with_iterative_testing.yaml"
    strategy = load_workflow_file(spec).retrieval_strategy_config  # cve_database, trigger_stages: [security_review]
    vuln = {"id": "GHSA-jjg7-2v4v-x38h", "summary": "idna denial of service", "aliases": ["CVE-2024-3651"]}

    def request(stage: str) -> RetrievalRequest:
        hints = StageHints(stage_id=stage, token_budget=1500)
        return RetrievalRequest(task="check CVE-2024-3651 in pricing", workflow_kind=WorkflowKind.CODE, stage=hints)

    async with _Http({"/v1/vulns/CVE-2024-3651": vuln}) as url:
        agent = _agent(shop, advisories=True, advisory_url=url, code_threshold=0.0)
        security = await asyncio.wait_for(agent.retrieve(request("security_review"), strategy), 60)
        coding = await asyncio.wait_for(agent.retrieve(request("code_generation"), strategy), 60)

    triggered, other = security.source(SourceName.ADVISORIES), coding.source(SourceName.ADVISORIES)
    assert triggered is not None and triggered.state is SourceState.OK and triggered.candidates == 1
    assert other is not None and other.state is SourceState.OFF
    assert other.reason == "the workflow triggers it only for security_review"
    assert any(p.source is SourceName.CODE for p in coding.context)  # the index still serves that stage


async def test_validation_drops_a_chunk_whose_file_changed_after_indexing(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    shutil.copytree(FIXTURES / "retrieval_shop", root)
    config = make_config(root, tmp_path / "state", embedding={"enabled": False})
    with WorkspaceIndex.open(config) as index:
        index.index()
        agent = build_retrieval_agent(config, index=index)
        pricing = root / "shop" / "pricing.py"
        text = pricing.read_text()
        start = text.index("def apply_discount")
        end = text.index("def order_total")
        pricing.write_text(text[:start] + text[end:])  # apply_discount removed, not re-indexed
        stock = root / "shop" / "stock.py"
        stock.write_text("# moved down by two lines\n\n" + stock.read_text())
        gone = await _run(agent)
        moved = await _run(agent, _request("StockLedger.release gives reserved units back"))
    dropped = [r for r in gone.rejections if r.step == "grounding"]
    assert any(
        "shop/pricing.py:15-19" in r.reason and "changed since indexing and the symbol is gone" in r.reason
        for r in dropped
    ), dropped
    assert all(p.attribution.symbol != "apply_discount" for p in gone.context)
    release = next(p for p in moved.context if "StockLedger.release" in (p.attribution.symbol or "").split(" + "))
    lines = stock.read_text().splitlines()
    start, end = release.attribution.start_line or 0, release.attribution.end_line or 0
    assert lines[start - 1 : end] == release.text.splitlines()  # re-fetched at the new lines, verbatim
    assert "    def release(self, sku: str, quantity: int) -> None:" in release.text.splitlines()
    assert any(r.step == "grounding" for r in gone.rejections) and moved.rejections is not None


async def test_one_agent_answers_from_two_event_loops_in_turn(shop: Any) -> None:
    agent = _agent(shop)

    def in_own_loop() -> RetrievalResult:
        return asyncio.run(asyncio.wait_for(agent.retrieve(_request(), RetrievalStrategyConfig()), 60))

    first = await asyncio.to_thread(in_own_loop)
    second = await asyncio.to_thread(in_own_loop)
    assert first.context[0].attribution.symbol == second.context[0].attribution.symbol == "apply_discount"
