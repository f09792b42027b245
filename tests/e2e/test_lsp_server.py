"""``ided lsp`` as editors run it: real stdio, pytest-lsp's client, a real daemon behind it."""

from __future__ import annotations

import asyncio
import os
import signal
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcException

from daemon.config import load_config
from daemon.service.wire.api import DaemonStatus, Methods
from daemon.service.wire.client import DaemonClient
from daemon.trust import TrustStore
from tests.e2e.lsp_support import WAIT_S, copy_fixture, lsp_client, overrides, wait_gone
from tests.intel_tools import SEARCH_PATH, require_server

pytestmark = pytest.mark.e2e

INVALID_PARAMS = -32602
METHOD_NOT_FOUND = -32601
REQUEST_FAILED = -32803


@pytest.fixture
def workspace(tmp_path: Path, isolated_home: Path) -> Path:
    return copy_fixture(tmp_path / "ws")


@pytest.fixture
def state(tmp_path: Path) -> Path:
    return tmp_path / "state"


async def _error(awaitable: Any) -> JsonRpcException:
    with pytest.raises(JsonRpcException) as caught:
        await awaitable
    return caught.value


async def test_startup_announces_the_methods_and_reports_progress_until_indexed(workspace: Path, state: Path) -> None:
    async with lsp_client(workspace, state) as client:
        await asyncio.wait_for(client.progress_ended.wait(), WAIT_S)
        reports = [value for values in client.progress_reports.values() for value in values]
        assert isinstance(reports[0], types.WorkDoneProgressBegin)
        assert reports[0].title == "ided: indexing"
        end = reports[-1]
        assert isinstance(end, types.WorkDoneProgressEnd)
        assert end.message is not None
        assert end.message.startswith("4 files, ")
        assert not client.messages  # nothing went wrong that a user must see

        status = await client.ided("ided/index/status")
        assert status["ready"] is True
        assert status["filesIndexed"] == 4
        assert status["busy"] is None
        assert status["workspace"] == str(workspace)


async def test_initialize_result_lists_workspace_symbols_and_every_ided_method(workspace: Path, state: Path) -> None:
    async with lsp_client(workspace, state) as client:
        result = await client.initialize_async(types.InitializeParams(capabilities=types.ClientCapabilities()))
        # a second initialize is answered too; the first one's capabilities are the same
        capabilities = result.capabilities
        assert capabilities.workspace_symbol_provider
        experimental: Any = capabilities.experimental
        ided: dict[str, list[str]] = experimental["ided"]
        assert set(ided["requests"]) == {
            "ided/index/search",
            "ided/index/status",
            "ided/intel/definition",
            "ided/intel/references",
            "ided/intel/type",
            "ided/intel/signature",
            "ided/intel/astNode",
            "ided/run/start",
            "ided/run/cancel",
            "ided/run/diff",
            "ided/run/accept",
            "ided/run/reject",
            "ided/run/rollback",
            "ided/run/feedback",
        }
        assert ided["notifications"] == ["ided/index/changed", "ided/run/progress"]


async def test_search_answers_hits_with_file_uris_and_zero_based_line_ranges(workspace: Path, state: Path) -> None:
    async with lsp_client(workspace, state) as client:
        await asyncio.wait_for(client.progress_ended.wait(), WAIT_S)
        result = await client.ided("ided/index/search", {"query": "hypotenuse right triangle", "mode": "lexical"})
        assert result["mode"] == "lexical"
        hit: dict[str, Any] = result["hits"][0]
        assert hit["path"] == "src/geometry.py"
        assert hit["qualifiedName"] == "hypotenuse"
        assert hit["symbolKind"] == "function"
        assert hit["location"]["uri"] == (workspace / "src" / "geometry.py").as_uri()
        lines = (workspace / "src" / "geometry.py").read_text().splitlines()
        start: dict[str, int] = hit["location"]["range"]["start"]
        assert lines[start["line"]].startswith("def hypotenuse(")
        assert start["character"] == 0
        assert hit["preview"].startswith("def hypotenuse(")
        assert hit["text"] is None

        docs = await client.ided("ided/index/search", {"query": "guide", "kind": "docs", "k": 2, "includeText": True})
        assert docs["hits"]
        assert all(h["kind"] == "docs" and h["text"] for h in docs["hits"])

        # score order by default; groupByFile lists each file's hits together, files by their best hit
        flat = await client.ided(
            "ided/index/search", {"query": "total attempts delay cart item", "k": 8, "mode": "lexical"}
        )
        scores = [h["score"] for h in flat["hits"]]
        assert scores == sorted(scores, reverse=True)
        grouped = await client.ided(
            "ided/index/search",
            {"query": "total attempts delay cart item", "k": 8, "mode": "lexical", "groupByFile": True},
        )
        order = list(dict.fromkeys(h["path"] for h in flat["hits"]))
        paths = [h["path"] for h in grouped["hits"]]
        assert paths == sorted(paths, key=order.index) != [h["path"] for h in flat["hits"]]
        assert sorted(h["score"] for h in grouped["hits"]) == sorted(scores)


async def test_workspace_symbol_finds_classes_and_methods_by_name(workspace: Path, state: Path) -> None:
    async with lsp_client(workspace, state) as client:
        await asyncio.wait_for(client.progress_ended.wait(), WAIT_S)
        classes = await client.workspace_symbol_async(types.WorkspaceSymbolParams(query="Circle"))
        assert classes is not None
        by_name = {(s.name, s.kind) for s in classes if isinstance(s, types.SymbolInformation)}
        assert ("Circle", types.SymbolKind.Class) in by_name

        methods = await client.workspace_symbol_async(types.WorkspaceSymbolParams(query="circumference"))
        assert methods is not None
        method = next(s for s in methods if isinstance(s, types.SymbolInformation) and s.name == "circumference")
        assert method.kind == types.SymbolKind.Method
        assert method.container_name == "Circle"
        assert method.location.uri == (workspace / "src" / "geometry.py").as_uri()

        assert await client.workspace_symbol_async(types.WorkspaceSymbolParams(query="")) == []


async def test_a_save_is_announced_as_ided_index_changed_and_is_searchable(workspace: Path, state: Path) -> None:
    async with lsp_client(workspace, state) as client:
        await asyncio.wait_for(client.progress_ended.wait(), WAIT_S)
        saved = workspace / "src" / "saved.py"
        saved.write_text("def freshly_saved_function():\n    return 1\n")

        async def announced() -> dict[str, Any]:
            while True:
                params = await client.index_changed.get()
                if "src/saved.py" in params["paths"]:
                    return params

        note = await asyncio.wait_for(announced(), WAIT_S)
        assert note["uris"] == [saved.as_uri()]
        assert note["filesIndexed"] == 1
        result = await client.ided("ided/index/search", {"query": "freshly_saved_function", "mode": "lexical"})
        assert result["hits"][0]["path"] == "src/saved.py"


async def test_bad_params_are_invalid_params_naming_the_field(workspace: Path, state: Path) -> None:
    async with lsp_client(workspace, state) as client:
        wrong_type = await _error(client.ided("ided/index/search", {"query": 5}))
        assert wrong_type.code == INVALID_PARAMS
        assert "$.params.query" in wrong_type.message

        out_of_range = await _error(client.ided("ided/index/search", {"query": "x", "k": 0}))
        assert out_of_range.code == INVALID_PARAMS
        assert "k:" in out_of_range.message

        no_target = await _error(client.ided("ided/intel/definition", {"maxResults": 3}))
        assert no_target.code == INVALID_PARAMS
        assert "give symbol, or textDocument and position" in no_target.message

        no_position = await _error(client.ided("ided/intel/astNode", {"textDocument": {"uri": "file:///x.py"}}))
        assert no_position.code == INVALID_PARAMS
        assert "position: Field required" in no_position.message

        unknown = await _error(client.ided("ided/index/nope", {}))
        assert unknown.code == METHOD_NOT_FOUND

        status = await client.ided("ided/index/status")  # the server is still there
        assert status["filesIndexed"] >= 0


async def test_intel_methods_forward_to_the_daemon_and_answer_rather_than_hang(workspace: Path, state: Path) -> None:
    geometry = (workspace / "src" / "geometry.py").as_uri()
    position = {"textDocument": {"uri": geometry}, "position": {"line": 21, "character": 6}}
    async with lsp_client(workspace, state) as client:
        calls = {
            "ided/intel/definition": {"symbol": "hypotenuse"},
            "ided/intel/references": {"symbol": "Circle.area", "includeDeclaration": True},
            "ided/intel/signature": position,
            "ided/intel/astNode": position,
        }
        for method, params in calls.items():
            try:
                result = await client.ided(method, params)
            except JsonRpcException as exc:  # no language server here is an answer too, but never "no such method"
                assert exc.code != METHOD_NOT_FOUND, (method, exc.message)
                assert method != "ided/intel/astNode", exc.message  # Tree-sitter needs no server
            else:
                assert isinstance(result, dict), method
        node = await client.ided("ided/intel/astNode", position)
        assert node["node"]["type"] == "string_start"  # the docstring's opening quotes
        assert node["node"]["range"]["start"] == {"line": 21, "character": 4}
        assert "function_definition" in [a["type"] for a in node["ancestors"]]


async def test_an_lsp_client_and_a_daemon_client_share_one_daemon(workspace: Path, state: Path) -> None:
    async with lsp_client(workspace, state) as client:
        status = await client.ided("ided/index/status")
        config = load_config(workspace, overrides=overrides(state))
        other = await DaemonClient.attach(config, client="mcp", start=False)
        try:
            assert other.daemon_pid == status["daemonPid"]
            daemon = await other.call_model(Methods.DAEMON_STATUS, None, DaemonStatus)
            assert sorted(c.client for c in daemon.clients) == ["lsp", "mcp"]
        finally:
            await other.close()
        assert (await client.ided("ided/index/status"))["daemonPid"] == status["daemonPid"]


async def test_after_the_daemon_is_killed_the_next_request_attaches_a_new_one(workspace: Path, state: Path) -> None:
    async with lsp_client(workspace, state) as client:
        await asyncio.wait_for(client.progress_ended.wait(), WAIT_S)
        before = await client.ided("ided/index/status")
        os.kill(before["daemonPid"], signal.SIGKILL)
        await wait_gone(before["daemonPid"])

        after = await client.ided("ided/index/status")
        assert after["daemonPid"] != before["daemonPid"]
        result = await client.ided("ided/index/search", {"query": "retry_with_backoff", "mode": "lexical"})
        assert result["hits"][0]["path"] == "src/retry.py"  # the persisted index, reopened


async def test_a_daemon_that_cannot_start_is_shown_to_the_user_and_requests_say_why(
    workspace: Path, state: Path, tmp_path: Path
) -> None:
    (workspace / ".ided.toml").write_text("[index]\nno_such_key = 1\n")
    async with lsp_client(workspace, state, cwd=tmp_path) as client:
        shown = await asyncio.wait_for(client.shown.get(), WAIT_S)
        assert shown.type == types.MessageType.Error
        assert "the workspace daemon is not available" in shown.message
        assert "unknown key 'index.no_such_key'" in shown.message

        failed = await _error(client.ided("ided/index/search", {"query": "retry"}))
        assert failed.code == REQUEST_FAILED
        assert "unknown key 'index.no_such_key'" in failed.message


async def test_refused_requests_are_coded_errors_and_the_log_has_no_traceback(workspace: Path, state: Path) -> None:
    log = state.parent / "lsp.log"
    extra = ("--set", f"logging.file={log}", "--set", "logging.level=INFO")
    async with lsp_client(workspace, state, *extra) as client:
        for k in (0, -3, 1000):
            bad_k = await _error(client.ided("ided/index/search", {"query": "circle", "k": k}))
            assert bad_k.code == INVALID_PARAMS
            assert bad_k.message.startswith("invalid params for ided/index/search: k: ")
        for k in ("3", 2.5, True):
            wrong_type = await _error(client.ided("ided/index/search", {"query": "circle", "k": k}))
            assert wrong_type.code == INVALID_PARAMS and "$.params.k" in wrong_type.message
        empty = await _error(client.ided("ided/index/search", {"query": ""}))
        assert empty.code == INVALID_PARAMS and "query" in empty.message
        no_run = await _error(client.ided("ided/run/diff", {"runId": "no-such-run"}))
        assert no_run.code == REQUEST_FAILED
        assert (await client.ided("ided/index/status"))["filesIndexed"] >= 0
    text = log.read_text()
    assert "Traceback" not in text, text
    assert "refused: -32602 invalid params for ided/index/search: k: " in text  # the log was written
    assert "refused: -32803" in text


async def test_standard_definition_references_and_hover_are_off_unless_asked_for(workspace: Path, state: Path) -> None:
    geometry = workspace / "src" / "geometry.py"
    async with lsp_client(workspace, state) as client:
        assert client.initialize_result is not None
        capabilities = client.initialize_result.capabilities
        assert capabilities.definition_provider is None and capabilities.hover_provider is None
        assert capabilities.references_provider is None
        params = types.DefinitionParams(
            text_document=types.TextDocumentIdentifier(uri=geometry.as_uri()),
            position=types.Position(line=20, character=5),
        )
        off = await _error(asyncio.wait_for(client.text_document_definition_async(params), WAIT_S))
        assert off.code == METHOD_NOT_FOUND


async def test_standard_methods_answer_from_a_language_server_in_the_projects_venv(
    workspace: Path, state: Path
) -> None:
    server = require_server("python")
    installed = next(
        Path(d) / n for d in SEARCH_PATH for n in (f"{server}-langserver", server) if (Path(d) / n).exists()
    )
    (workspace / ".venv" / "bin").mkdir(parents=True)
    (workspace / ".venv" / "bin" / installed.name).symlink_to(installed)
    TrustStore.default().add(workspace)  # your own project: its .venv/bin is searched once trusted
    geometry = workspace / "src" / "geometry.py"
    geometry.write_text(geometry.read_text() + "\n\nUNIT = hypotenuse(3.0, 4.0)\n")  # line 26 (0-based 25)
    uri = geometry.as_uri()
    use = types.Position(line=25, character=9)
    extra = ("--set", "intel.ready_wait_seconds=60")
    async with lsp_client(workspace, state, *extra, options={"standardIntel": True}) as client:
        assert client.initialize_result is not None
        capabilities = client.initialize_result.capabilities
        assert capabilities.definition_provider and capabilities.references_provider and capabilities.hover_provider

        document = types.TextDocumentIdentifier(uri=uri)
        definition = await asyncio.wait_for(
            client.text_document_definition_async(types.DefinitionParams(text_document=document, position=use)),
            WAIT_S,
        )
        assert isinstance(definition, list) and len(definition) == 1
        target = definition[0]
        assert isinstance(target, types.Location)
        assert target.uri == uri and target.range.start.line == 20

        references = await asyncio.wait_for(
            client.text_document_references_async(
                types.ReferenceParams(
                    text_document=document,
                    position=use,
                    context=types.ReferenceContext(include_declaration=True),
                )
            ),
            WAIT_S,
        )
        assert references is not None
        assert sorted(r.range.start.line for r in references) == [20, 25]

        hover = await asyncio.wait_for(
            client.text_document_hover_async(types.HoverParams(text_document=document, position=use)), WAIT_S
        )
        assert hover is not None and isinstance(hover.contents, types.MarkupContent)
        assert hover.contents.kind == types.MarkupKind.Markdown
        assert hover.contents.value.startswith("```python\n")
        assert "def hypotenuse(" in hover.contents.value and "-> float" in hover.contents.value
        assert "Length of the long side of a right triangle" in hover.contents.value

        blank = await asyncio.wait_for(
            client.text_document_hover_async(
                types.HoverParams(text_document=document, position=types.Position(line=1, character=0))
            ),
            WAIT_S,
        )
        assert blank is None


async def test_no_language_server_found_is_shown_once_not_only_logged(workspace: Path, state: Path) -> None:
    """A new user with no Python language server installed: the editor (VS Code, Neovim) only logs a
    failed definition/references/hover request, so ided shows why, once per reason and language."""
    geometry = workspace / "src" / "geometry.py"
    geometry.write_text(geometry.read_text() + "\n\nUNIT = hypotenuse(3.0, 4.0)\n")  # line 26 (0-based 25)
    document = types.TextDocumentIdentifier(uri=geometry.as_uri())
    use = types.Position(line=25, character=9)
    bare = {**os.environ, "PATH": "/usr/bin:/bin"}  # no server on PATH, none on intel.search_path
    async with lsp_client(workspace, state, options={"standardIntel": True}, env=bare) as client:
        refused = await _error(
            asyncio.wait_for(
                client.text_document_definition_async(types.DefinitionParams(text_document=document, position=use)),
                WAIT_S,
            )
        )
        assert "no python language server found" in refused.message, refused.message
        shown = await asyncio.wait_for(client.shown.get(), WAIT_S)
        assert shown.type == types.MessageType.Warning
        assert shown.message.startswith(
            "ided: no definitions, references or hover for python files: no python language server found"
        ), shown.message
        assert "basedpyright" in shown.message and "install" in shown.message

        again = await _error(
            asyncio.wait_for(
                client.text_document_definition_async(types.DefinitionParams(text_document=document, position=use)),
                WAIT_S,
            )
        )
        assert "no python language server found" in again.message
        # ided says why before it answers: a second message would be queued by now
        assert client.shown.empty(), "shown once per reason and language, not at every request"
