"""Token-lean answers: ``document_symbols`` compact by default, every cut stated (basedpyright, a real index)."""

from __future__ import annotations

import asyncio
from pathlib import Path

from daemon.service.intel.capabilities import SEARCH_CODE
from daemon.service.intel.code_intel import CodeIntelService
from daemon.service.intel.params import DocumentSymbolsParams, SearchCodeParams, SignatureParams
from daemon.service.workspace.local import LocalWorkspace
from tests.intel_tools import require_server, workspace_config

SOURCE = '''\
class Client:
    """A client."""

    class Options:
        retries: int = 3

    def send(self, method: str, url: str) -> str:
        prepared = method.upper() + url
        attempts = 0
        return prepared + str(attempts)

    def close(self) -> None:
        pending = 0
        del pending


def helper(value: int) -> int:
    doubled = value * 2
    return doubled
'''


async def test_the_outline_is_two_levels_without_locals_by_default_and_says_what_it_left_out(tmp_path: Path) -> None:
    require_server("python")
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "client.py").write_text(SOURCE)
    many = "".join(f"def function_number_{i}(argument: int) -> int:\n    return argument\n\n\n" for i in range(300))
    (workspace / "many.py").write_text(many)
    async with CodeIntelService.open(workspace_config(workspace, tmp_path / "state")) as intel:
        compact = await asyncio.wait_for(intel.document_symbols(DocumentSymbolsParams(file="client.py")), 90)
        names = [(s.container, s.name) for s in compact.symbols]
        assert names == [
            (None, "Client"),
            ("Client", "Options"),
            ("Client", "send"),
            ("Client", "close"),
            (None, "helper"),
        ]
        assert compact.truncated
        assert any("parameters/locals inside functions omitted" in n for n in compact.notes)
        assert any("nested deeper than 2" in n for n in compact.notes)  # Options.retries

        full = await asyncio.wait_for(
            intel.document_symbols(DocumentSymbolsParams(file="client.py", depth=64, include_locals=True)), 90
        )
        full_names = {(s.container, s.name) for s in full.symbols}
        assert {("Client.send", "prepared"), ("Client.Options", "retries"), ("helper", "doubled")} <= full_names
        assert not full.truncated and full.total == len(full.symbols)

        top = await asyncio.wait_for(intel.document_symbols(DocumentSymbolsParams(file="client.py", depth=1)), 90)
        assert [s.name for s in top.symbols] == ["Client", "helper"]

        budgeted = await asyncio.wait_for(
            intel.document_symbols(DocumentSymbolsParams(file="many.py", max_results=500, max_chars=2000)), 90
        )
        size = sum(len(s.model_dump_json(exclude_defaults=True)) + 1 for s in budgeted.symbols)
        assert 0 < len(budgeted.symbols) < 300 and size <= 2000
        assert budgeted.truncated
        assert any("to stay within max_chars=2000" in n for n in budgeted.notes)

        signature = await asyncio.wait_for(intel.get_signature(SignatureParams(symbol="Client.send", max_chars=20)), 90)
        assert len(signature.signature) <= 20
        assert "signature cut to max_chars=20" in signature.notes
        workspace = LocalWorkspace(intel.config, intel.index, intel)
        query = SearchCodeParams(query="function_number_7 argument", detail=True, max_chars=30)
        found = await asyncio.wait_for(SEARCH_CODE.run(workspace, query), 90)
        assert found.hits and all(h.text is not None and len(h.text) <= 30 for h in found.hits)
        assert any("hits was cut to max_chars=30" in n for n in found.notes)
