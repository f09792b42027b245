"""A polyglot workspace: each request goes to the server of its file's language, several servers at once."""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path
from typing import Any

from lsprotocol import types as lsp

from daemon.core.intel_models import LanguageServerState
from daemon.intel.lsp.client import LspClient
from daemon.intel.lsp.convert import lsp_targets
from daemon.intel.lsp.documents import OpenDocument
from daemon.intel.lsp.pool import LanguageServerPool
from tests.intel_tools import FIXTURES, intel_config, require_server


def definition_at(pool: LanguageServerPool, line: int, column: int) -> Any:
    async def op(client: LspClient, doc: OpenDocument | None) -> list[str]:
        assert doc is not None
        params = lsp.DefinitionParams(
            text_document=lsp.TextDocumentIdentifier(uri=doc.uri), position=doc.position(line, column)
        )
        result = await client.request(lsp.TEXT_DOCUMENT_DEFINITION, params, timeout_s=30)
        return [target.path.name for target in lsp_targets(result)]

    return op


async def test_python_and_typescript_files_are_answered_by_their_own_servers_running_side_by_side(
    tmp_path: Path,
) -> None:
    python_server = require_server("python")
    typescript_server = require_server("typescript")
    workspace = tmp_path / "polyglot"
    shutil.copytree(FIXTURES / "intel_python", workspace)
    shutil.copytree(FIXTURES / "intel_typescript", workspace / "web")
    async with LanguageServerPool(workspace, intel_config()) as pool:
        python, typescript = await asyncio.wait_for(
            asyncio.gather(
                pool.run("python", definition_at(pool, 10, 17), path=workspace / "app.py"),
                pool.run("typescript", definition_at(pool, 6, 10), path=workspace / "web/src/checkout.ts"),
            ),
            90,
        )
        assert python == ["geometry.py"]
        assert typescript == ["cart.ts"]
        running = {s.name: s for s in pool.statuses() if s.pid is not None}
        assert set(running) == {python_server, typescript_server}
        assert all(s.state is LanguageServerState.READY for s in running.values())
