"""Which chunks get their vectors first, and when a search uses vectors that are not complete yet.

Real index (scanner, Tree-sitter, BM25, Qdrant Edge; the bundled embedding model where vectors are
made) over a small workspace with source, docs, tests and vendored code written here.
"""

from __future__ import annotations

import os
import textwrap
from pathlib import Path

import pytest

from daemon.core.models import SearchMode
from daemon.index.embed_order import GROUP_FILES, embedding_order, tier_of
from daemon.index.manifest import FileRecord
from daemon.index.workspace_index import WorkspaceIndex
from tests.integration.conftest import make_config

FILES = {
    "pkg/billing.py": '''
        def compute_invoice_total(lines, tax_rate):
            """Sum the invoice lines and add the tax."""
            subtotal = sum(line.amount for line in lines)
            return subtotal * (1 + tax_rate)


        def round_currency(amount):
            return round(amount, 2)
        ''',
    "pkg/old_report.py": '''
        def render_quarterly_report(rows):
            """Format the quarter's rows as a table."""
            return "\\n".join(str(row) for row in rows)
        ''',
    "README.md": "# Billing\n\nInvoices are totalled with their tax.\n\n## Reports\n\nQuarterly tables.\n",
    "tests/test_billing.py": """
        from pkg.billing import compute_invoice_total


        def test_refund_ledger_balances():
            assert compute_invoice_total([], 0.2) == 0


        def test_refund_ledger_reversal():
            assert compute_invoice_total([], 0.0) == 0
        """,
    "vendor/leftpad.py": '''
        def leftpad(text, width, fill=" "):
            """Pad text on the left to the width."""
            return fill * (width - len(text)) + text
        ''',
}


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    for rel, text in FILES.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip())
    old = (root / "pkg" / "old_report.py").stat().st_mtime - 3600
    os.utime(root / "pkg" / "old_report.py", (old, old))
    return root


def _drain(ws: WorkspaceIndex, limit: int = 1000) -> list[set[str]]:
    """Take every chunk without a vector, batch after batch, marking each batch embedded (with a
    placeholder vector: the order is what is tested); the files of each batch."""
    batches: list[set[str]] = []
    while batch := ws.missing_dense(limit):
        ws.set_dense({pid: [1.0] + [0.0] * (ws.config.embedding.dim - 1) for pid, _ in batch})
        batches.append({chunk.path for _, chunk in batch})
    return batches


def test_the_order_puts_own_source_first_then_docs_then_tests_then_vendored_code() -> None:
    def record(path: str, language: str, mtime_ns: int) -> FileRecord:
        return FileRecord(path=path, size=1, mtime_ns=mtime_ns, hash="h", language=language, chunks=1)

    records = [
        record("vendor/leftpad.py", "python", 9),
        record("tests/test_billing.py", "python", 8),
        record("README.md", "markdown", 7),
        record("pkg/old_report.py", "python", 1),
        record("pkg/billing.py", "python", 5),
        record("web/static/app.min.js", "javascript", 9),
        record("app/migrations/0001_initial.py", "python", 9),
        record("app/migrations/executor.py", "python", 2),
    ]
    groups = embedding_order(records)
    assert groups == [
        ["pkg/billing.py", "app/migrations/executor.py", "pkg/old_report.py"],  # most recently changed first
        ["README.md"],
        ["tests/test_billing.py"],
        ["app/migrations/0001_initial.py", "vendor/leftpad.py", "web/static/app.min.js"],
    ]
    many = [record(f"src/m{i:04d}.py", "python", i) for i in range(GROUP_FILES + 5)]
    assert [len(g) for g in embedding_order(many)] == [GROUP_FILES, 5]
    assert tier_of("third_party/zlib/inflate.c", "c") == tier_of("node_modules/x/index.js", "javascript")


def test_chunks_are_handed_out_source_first_and_hot_files_before_everything(workspace: Path, tmp_path: Path) -> None:
    config = make_config(workspace, tmp_path / "state", embedding={"enabled": False})
    with WorkspaceIndex.open(config) as ws:
        ws.index()
        assert _drain(ws) == [
            {"pkg/billing.py", "pkg/old_report.py"},
            {"README.md"},
            {"tests/test_billing.py"},
            {"vendor/leftpad.py"},
        ]
    # a file that changes on disk is embedded before the rest; so is one a code-intel request is about
    with WorkspaceIndex.open(make_config(workspace, tmp_path / "state2", embedding={"enabled": False})) as ws:
        ws.index()
        (workspace / "vendor" / "leftpad.py").write_text("def leftpad(text, width):\n    return text.rjust(width)\n")
        ws.update_paths(["vendor/leftpad.py"])
        ws.prefer(["tests/test_billing.py"])
        assert _drain(ws)[:3] == [
            {"tests/test_billing.py", "vendor/leftpad.py"},
            {"pkg/billing.py", "pkg/old_report.py"},
            {"README.md"},
        ]


def test_a_searchs_answer_makes_its_files_hot_while_vectors_fill(workspace: Path, tmp_path: Path) -> None:
    config = make_config(workspace, tmp_path / "state")  # embedding on: the search sees vectors pending
    with WorkspaceIndex.open(config) as ws:
        ws.index()
        result = ws.search("refund ledger reversal", k=1, mode=SearchMode.LEXICAL)
        assert result.hits[0].chunk.path == "tests/test_billing.py"
        assert _drain(ws)[0] == {"tests/test_billing.py"}


def test_a_search_uses_partial_vectors_once_its_best_candidates_files_have_them(
    workspace: Path, tmp_path: Path
) -> None:
    config = make_config(workspace, tmp_path / "state")
    with WorkspaceIndex.open(config) as ws:
        ws.index()
        source_chunks = sum(1 for _, c in ws.missing_dense(1000) if c.path.startswith("pkg/"))
        assert ws.embed(limit=source_chunks) == source_chunks  # the source files, first in the order
        assert ws.status().embedded_fraction < 0.95
        about_source = ws.search("round the currency amount")
        assert about_source.mode is SearchMode.HYBRID
        assert any("best lexical candidates: ranked with them" in n for n in about_source.notes)
        assert any("dense" in h.sources for h in about_source.hits)
        about_tests = ws.search("refund ledger reversal")  # its best candidates are tests: no vectors yet
        assert about_tests.mode is SearchMode.LEXICAL
        assert any("lexical ranking until they are complete" in n for n in about_tests.notes)
