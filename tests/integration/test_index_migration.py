"""``ided index --migrate-to URL`` end to end: a workspace indexed on Qdrant Edge moves to a real Qdrant
server with its vectors, and the next pass there has nothing to redo."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from daemon.cli.app import app
from daemon.core.models import SearchMode
from daemon.errors import ConfigError
from daemon.index.workspace_index import WorkspaceIndex
from daemon.service.index.migration import migrate_workspace_index
from tests.integration.conftest import make_config
from tests.qdrant_server_support import drop_collections


def test_an_edge_index_moves_to_the_server_with_its_vectors_and_needs_no_new_pass(
    polyglot: Path, tmp_path: Path, qdrant_server_url: str
) -> None:
    edge = make_config(polyglot, tmp_path / "state")
    with WorkspaceIndex.open(edge) as ws:
        ws.index()
        assert ws.embed() > 0
        before = ws.search("try again after waiting longer each time it fails", k=5)
        chunks = ws.status().chunks
    server = make_config(polyglot, tmp_path / "state", qdrant={"url": qdrant_server_url})
    try:
        report = migrate_workspace_index(edge, qdrant_server_url)
        assert report.copied == chunks and report.embedded == chunks and report.removed_paths == 0
        with WorkspaceIndex.open(server) as ws:
            status = ws.status()
            assert status.chunks == chunks and status.embedded_fraction == 1.0
            again = ws.index()
            assert again.files_indexed == 0 and again.files_unchanged == 4
            after = ws.search("try again after waiting longer each time it fails", k=5)
            assert after.mode is SearchMode.HYBRID
            assert [h.chunk for h in after.hits] == [h.chunk for h in before.hits]
        # a second run copies again over the same ids: nothing doubles
        assert migrate_workspace_index(edge, qdrant_server_url).copied == chunks
        with WorkspaceIndex.open(server) as ws:
            assert ws.status().chunks == chunks
    finally:
        drop_collections(server)


@pytest.mark.usefixtures("isolated_home")
def test_migrating_to_something_that_is_not_a_server_url_is_refused(polyglot: Path, tmp_path: Path) -> None:
    config = make_config(polyglot, tmp_path / "state")
    with pytest.raises(ConfigError, match="http"):
        migrate_workspace_index(config, "postgresql://db/ided")
    result = CliRunner().invoke(app, ["index", str(polyglot), "--migrate-to", "ftp://nowhere"])
    assert result.exit_code != 0 and "http://" in result.output
