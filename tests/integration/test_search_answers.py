"""What a search answers beyond its hits: whether anything matched, and clear errors for bad input.

Real index (scanner, Tree-sitter, BM25, Qdrant Edge) over a small workspace written here; lexical,
as a user gets it before vectors exist. The CLI cases run the real `ided` command.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from daemon.core.models import ChunkKind, MatchConfidence, SearchMode
from daemon.errors import InvalidToolInput
from daemon.index.workspace_index import WorkspaceIndex
from daemon.retrieval.models import PlannedQuery, SourceName
from daemon.retrieval.ports import BlockingIndexSearch
from daemon.retrieval.queries import QueryPlan
from daemon.retrieval.sources import IndexScope, IndexSource
from tests.integration.conftest import make_config

SETTINGS = '''
def merge_setting(request_setting, session_setting, dict_class=dict):
    """Determine the appropriate setting for a request: combine the per-request setting with the
    session's default setting."""
    if session_setting is None:
        return request_setting
    merged = dict_class(session_setting)
    merged.update(request_setting)
    return merged


def to_key_val_list(value):
    """Take an object and test to see if it can be represented as a dictionary."""
    return list(value.items())
'''

SESSION = '''
from .settings import merge_setting


class Session:
    """A requests session: cookie persistence, connection pooling and configuration."""

    def request(self, method, url, params=None, headers=None):
        headers = merge_setting(headers, self.headers)
        return self.send(method, url, params, headers)

    def send(self, method, url, params, headers):
        raise NotImplementedError
'''


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "settings.py").write_text(textwrap.dedent(SETTINGS))
    (root / "pkg" / "sessions.py").write_text(textwrap.dedent(SESSION))
    (root / "tests").mkdir()
    (root / "tests" / "test_settings.py").write_text(
        "from pkg.settings import merge_setting\n\n\n"
        "def test_merge_setting():\n    assert merge_setting({}, None) == {}\n"
    )
    (root / "build").mkdir()
    (root / "build" / "generated.py").write_text("def frobnicate_quuxinator():\n    return 42\n")
    (root / ".gitignore").write_text("build/\n")
    return root


def _open(workspace: Path, tmp_path: Path) -> WorkspaceIndex:
    return WorkspaceIndex.open(make_config(workspace, tmp_path / "state", embedding={"enabled": False}))


def test_a_real_question_matches_and_ranks_the_code_above_its_test(workspace: Path, tmp_path: Path) -> None:
    with _open(workspace, tmp_path) as ws:
        ws.index()
        result = ws.search("combine the per-request setting with the session default setting", k=5)
        assert result.matches is MatchConfidence.STRONG
        assert result.hits[0].chunk.qualified_name == "merge_setting"
        by_name = ws.search("merge_setting", k=10)
        paths = [h.chunk.path for h in by_name.hits]
        assert paths.index("pkg/settings.py") < paths.index("tests/test_settings.py")  # the test names it more


def test_an_issue_that_names_a_method_finds_it_through_its_dotted_name(workspace: Path, tmp_path: Path) -> None:
    issue = "Session.request ignores the headers\n\nCalling `Session.request('GET', url)` drops them."
    with _open(workspace, tmp_path) as ws:
        ws.index()
        result = ws.search(issue, k=5, mode=SearchMode.LEXICAL)
        assert result.hits[0].chunk.qualified_name == "Session.request"


@pytest.mark.parametrize(
    "query",
    [
        "xyzzy plugh grault",  # nonsense: no term is in the index
        "frobnicate_quuxinator",  # exists only in an ignored file
        "zorblax handler",  # one made-up word beside nothing that names code here
    ],
)
def test_a_query_that_matches_nothing_says_so(workspace: Path, tmp_path: Path, query: str) -> None:
    with _open(workspace, tmp_path) as ws:
        ws.index()
        result = ws.search(query, k=5)
        assert result.matches is MatchConfidence.NONE, [h.chunk.qualified_name for h in result.hits]
        assert any("nothing in the index matches" in note for note in result.notes)


async def test_the_retrieval_agent_takes_no_context_from_a_search_that_matched_nothing(
    workspace: Path, tmp_path: Path
) -> None:
    def plan(*texts: str) -> QueryPlan:
        queries = tuple(PlannedQuery(source=SourceName.CODE, text=t, purpose="test") for t in texts)
        return QueryPlan(queries=queries, writer="test", symbols=(), files=())

    with _open(workspace, tmp_path) as ws:
        ws.index()
        source = IndexSource(
            SourceName.CODE, BlockingIndexSearch(ws), [IndexScope(label="code", kind=ChunkKind.CODE)], k=5
        )
        ignored_name = "call frobnicate_quuxinator() on the request"  # defined only in an ignored file
        noise = ws.search(ignored_name, k=5)
        assert noise.hits and noise.matches is MatchConfidence.NONE  # the nearest hits, none of them relevant
        assert await source.fetch(plan("xyzzy plugh grault", ignored_name)) == []
        found = await source.fetch(plan("xyzzy plugh grault", "combine the request setting with the session's"))
        assert found and {c.query for c in found} == {"combine the request setting with the session's"}


def test_the_same_query_on_the_same_index_gives_the_same_answer(workspace: Path, tmp_path: Path) -> None:
    with _open(workspace, tmp_path) as ws:
        ws.index()
        first = ws.search("merge the session setting", k=5)
        second = ws.search("merge the session setting", k=5)
        assert [(h.id, h.score) for h in first.hits] == [(h.id, h.score) for h in second.hits]


def test_bad_queries_get_clear_errors_or_documented_truncation(workspace: Path, tmp_path: Path) -> None:
    with _open(workspace, tmp_path) as ws:
        ws.index()
        with pytest.raises(InvalidToolInput, match="empty"):
            ws.search("   ", k=5)
        with pytest.raises(InvalidToolInput, match="at least 1"):
            ws.search("merge", k=0)
        huge = ws.search("merge_setting " + "word " * 25_000, k=5)  # ~125 KB
        assert any("only its start was used" in n for n in huge.notes)
        assert huge.hits[0].chunk.qualified_name == "merge_setting"
        many = ws.search("merge", k=100_000)
        assert any("1000 hits at most" in n for n in many.notes)
        binary = ws.search("\x00\x01\xff\ufffd merge_setting \x7f", k=5)
        assert binary.hits[0].chunk.qualified_name == "merge_setting"


def _ided(*args: str, cwd: Path, state: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "IDED_STATE_DIR": str(state), "IDED_EMBEDDING__ENABLED": "false"}
    return subprocess.run(
        [sys.executable, "-m", "daemon", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=300
    )


def test_the_cli_answers_bad_input_without_a_traceback(workspace: Path, tmp_path: Path) -> None:
    state = tmp_path / "cli-state"
    empty = _ided("search", "", cwd=workspace, state=state)
    assert empty.returncode != 0 and "Traceback" not in empty.stderr and "empty" in empty.stderr
    zero = _ided("search", "merge", "-k", "0", cwd=workspace, state=state)
    assert zero.returncode != 0 and "Traceback" not in zero.stderr
    nonsense = _ided("search", "xyzzy plugh grault", "--json", cwd=workspace, state=state)
    assert nonsense.returncode == 0, nonsense.stderr
    assert json.loads(nonsense.stdout)["matches"] == "none"
    text = _ided("search", "xyzzy plugh grault", cwd=workspace, state=state)
    assert "matches none" in text.stdout
    # bytes that are not UTF-8 on the command line (Python hands them over as lone surrogates)
    raw = _ided("search", os.fsdecode(b"merge_setting \xff\xfe\x80"), "--json", cwd=workspace, state=state)
    assert raw.returncode == 0 and "Traceback" not in raw.stderr, raw.stderr
    answer = json.loads(raw.stdout)
    assert answer["query"] == "merge_setting \ufffd\ufffd\ufffd"
    assert answer["hits"][0]["chunk"]["qualified_name"] == "merge_setting"


def test_the_cli_shows_each_hit_in_two_lines_in_score_order_and_more_on_request(
    workspace: Path, tmp_path: Path
) -> None:
    state = tmp_path / "cli-state"
    lean = _ided("search", "merge the session setting", "-k", "4", cwd=workspace, state=state)
    assert lean.returncode == 0, lean.stderr
    titles = [line for line in lean.stdout.splitlines() if line[:3].strip().rstrip(".").isdigit()]
    assert len(titles) == 4
    scores = [float(line.split()[-1]) for line in titles]
    assert scores == sorted(scores, reverse=True)
    # one line under each title: the signature
    assert "def merge_setting(request_setting, session_setting, dict_class=dict)" in lean.stdout
    assert len([line for line in lean.stdout.splitlines() if "│" in line]) == 4
    assert "[function, python]" not in lean.stdout and "vectors 0%" in lean.stdout
    verbose = _ided("search", "merge the session setting", "-k", "4", "--verbose", cwd=workspace, state=state)
    assert "[function, python]" in verbose.stdout and "(lexical)" in verbose.stdout
    grouped = _ided("search", "merge the session setting", "-k", "4", "--group-by-file", cwd=workspace, state=state)
    headers = [line for line in grouped.stdout.splitlines() if line.endswith(".py") and not line.startswith(" ")]
    assert len(headers) == len(set(headers)) >= 2
    as_json = json.loads(
        _ided("search", "merge the session setting", "-k", "4", "--json", cwd=workspace, state=state).stdout
    )
    assert [h["score"] for h in as_json["hits"]] == sorted((h["score"] for h in as_json["hits"]), reverse=True)
