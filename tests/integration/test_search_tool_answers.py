"""What the search tools answer (MCP ``search_code``/``search_docs``, the agents' tools): lean hits in score
order, detail on request, files grouped on request, and how complete the vectors are.

Real index (scanner, Tree-sitter, BM25, Qdrant Edge, the bundled embedding model where vectors are
asked for) over a small workspace written here, through the capability registry's own entries.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from daemon.core.models import MatchConfidence, SearchMode
from daemon.index.workspace_index import WorkspaceIndex
from daemon.service.intel.capabilities import SEARCH_CODE, SEARCH_DOCS
from daemon.service.intel.params import SearchCodeParams, SearchDocsParams
from daemon.service.intel.search_answer import SNIPPET_CHARS, SearchAnswer
from daemon.service.workspace.local import LocalWorkspace
from tests.integration.conftest import make_config

REDIRECTS = '''
class RedirectMixin:
    """Follows the redirects of a response."""

    def resolve_redirects(self, response, request):
        """Receive a response and yield the redirected responses, following each redirect in turn."""
        while response.is_redirect:
            location = self.get_redirect_target(response)
            response = self.send(request.copy(url=location))
            yield response

    def get_redirect_target(self, response):
        """The location a redirect response points at."""
        return response.headers.get("location")

    def rebuild_auth(self, request, response):
        """Drop the authorization header when a redirect leaves the host."""
        if response.host != request.host:
            request.headers.pop("Authorization", None)
'''

MODELS = '''
class Response:
    """The server's answer to a request."""

    @property
    def is_redirect(self):
        """True when this response is a redirect that would be followed (it has a location)."""
        return "location" in self.headers and self.status_code in (301, 302, 303, 307, 308)

    def raise_for_status(self):
        """Raise an error for a 4xx or 5xx status."""
        if self.status_code >= 400:
            raise RuntimeError(self.status_code)
'''

README = """# Redirects

A redirect response is followed by the session until a final response arrives.

## Limits

At most 30 redirects are followed.
"""


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / "web").mkdir(parents=True)
    (root / "web" / "redirects.py").write_text(textwrap.dedent(REDIRECTS))
    (root / "web" / "models.py").write_text(textwrap.dedent(MODELS))
    (root / "README.md").write_text(README)
    return root


async def _answers(
    workspace: Path, tmp_path: Path, *params: SearchCodeParams, embed: bool = False
) -> list[SearchAnswer]:
    config = make_config(workspace, tmp_path / "state", embedding={"enabled": embed})
    with WorkspaceIndex.open(config) as ws:
        ws.index()
        if embed:
            ws.embed()
    async with LocalWorkspace.open_index(config) as local:
        return [await SEARCH_CODE.run(local, p) for p in params]


async def test_a_search_tool_answers_lean_hits_in_score_order(workspace: Path, tmp_path: Path) -> None:
    query = "how are redirects followed"
    (lean,) = await _answers(workspace, tmp_path, SearchCodeParams(query=query, k=6))
    assert lean.matches is not MatchConfidence.NONE and len(lean.hits) >= 4
    scores = [h.score for h in lean.hits]
    assert scores == sorted(scores, reverse=True)
    resolve = next(h for h in lean.hits if h.symbol == "RedirectMixin.resolve_redirects")
    assert resolve.path == "web/redirects.py"
    assert resolve.snippet == "def resolve_redirects(self, response, request)"
    assert resolve.line < resolve.end_line
    for hit in lean.hits:
        assert hit.text is None and hit.kind is None and hit.sources is None
        assert "\n" not in hit.snippet and len(hit.snippet) <= SNIPPET_CHARS
    # what the model reads: the JSON without null fields carries no text of any hit
    wire = lean.model_dump_json(exclude_none=True)
    assert "yield response" not in wire and '"query"' not in wire
    assert lean.vectors == 0.0 and lean.mode is SearchMode.LEXICAL
    assert any("lexical" in note for note in lean.notes)


async def test_detail_adds_each_hits_text_and_grouping_keeps_each_files_hits_together(
    workspace: Path, tmp_path: Path
) -> None:
    query = "redirect response location"
    lean, detail, grouped = await _answers(
        workspace,
        tmp_path,
        SearchCodeParams(query=query, k=8),
        SearchCodeParams(query=query, k=8, detail=True, max_chars=60),
        SearchCodeParams(query=query, k=8, group_by_file=True),
    )
    assert [(h.path, h.line) for h in detail.hits] == [(h.path, h.line) for h in lean.hits]
    assert all(h.text and len(h.text) <= 60 and h.kind and h.language == "python" for h in detail.hits)
    assert detail.query == query and detail.seconds is not None
    assert any("max_chars=60" in note for note in detail.notes)
    assert len(lean.model_dump_json(exclude_none=True)) < len(detail.model_dump_json(exclude_none=True))
    # the lean order interleaves the two files; grouped, each file's hits are together, in score order,
    # and the files come in the order of their best hit
    paths = [h.path for h in lean.hits]
    assert len(set(paths)) == 2
    grouped_paths = [h.path for h in grouped.hits]
    assert grouped_paths == sorted(grouped_paths, key=paths.index)
    assert sorted((h.path, h.line) for h in grouped.hits) == sorted((h.path, h.line) for h in lean.hits)
    for path in set(paths):
        scores = [h.score for h in grouped.hits if h.path == path]
        assert scores == sorted(scores, reverse=True)


async def test_a_docs_search_answers_sections_in_the_same_lean_shape(workspace: Path, tmp_path: Path) -> None:
    config = make_config(workspace, tmp_path / "state", embedding={"enabled": False})
    with WorkspaceIndex.open(config) as ws:
        ws.index()
    async with LocalWorkspace.open_index(config) as local:
        answer = await SEARCH_DOCS.run(local, SearchDocsParams(query="how many redirects are followed"))
    assert answer.hits and all(h.path == "README.md" for h in answer.hits)
    limits = next(h for h in answer.hits if h.symbol == "Redirects > Limits")
    assert limits.snippet == "## Limits" and limits.line == 5


async def test_the_answer_says_the_vectors_are_complete_once_they_are(workspace: Path, tmp_path: Path) -> None:
    (answer,) = await _answers(
        workspace, tmp_path, SearchCodeParams(query="follow each redirect in turn", k=3), embed=True
    )
    assert answer.vectors == 1.0 and answer.mode is SearchMode.HYBRID
    assert json.loads(answer.model_dump_json(exclude_none=True))["vectors"] == 1.0
