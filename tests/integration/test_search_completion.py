"""The best files are ranked complete: a function of the best file that is too weak to be among the
workspace's top lexical candidates is still ranked, on its own evidence, in a real index (real
grammars, BM25, Qdrant Edge)."""

from __future__ import annotations

from pathlib import Path

import pytest

from daemon.index import searcher
from daemon.index.workspace_index import WorkspaceIndex
from tests.integration.conftest import make_config

QUERY = "frobnicate_widget_registry leaves the widget registry stale after a frobnicate"
OTHERS = searcher.LEXICAL_CANDIDATES + 50
K = 50  # under the candidate depth, which is the largest of k, the prefetch and LEXICAL_CANDIDATES


def _workspace(root: Path) -> Path:
    core = root / "core"
    core.mkdir(parents=True)
    (core / "registry.py").write_text(
        "def frobnicate_widget_registry(registry):\n"
        '    """Frobnicate every widget of the registry."""\n'
        "    for widget in registry:\n"
        "        widget.frobnicate()\n"
        "\n\n"
        "def cleanup(entries, cache, handlers, timeout):\n"
        '    """Close the handlers, empty the cache and forget the entries."""\n'
        "    for handler in handlers:\n"
        "        handler.close(timeout)\n"
        "    cache.clear()\n"
        "    entries.clear()\n"
        "    return registry_count(entries)\n",
        encoding="utf-8",
    )
    plugins = root / "plugins"
    plugins.mkdir()
    for i in range(OTHERS):  # each outranks `cleanup` (every term of the query), none ties another
        (plugins / f"plugin_{i}.py").write_text(
            f"def handle_{i}(widget, registry):\n"
            f'    """Frobnicate the widget and keep the registry fresh, not stale."""\n'
            f"    # {' '.join(['note'] * i)}\n"
            f"    registry.add(widget.frobnicate())\n",
            encoding="utf-8",
        )
    return root


def test_a_weak_function_of_the_best_file_is_ranked_though_beyond_the_candidate_depth(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _workspace(tmp_path / "ws")
    config = make_config(root, tmp_path / "state", embedding={"enabled": False})
    with WorkspaceIndex.open(config) as ws:
        ws.index()
        result = ws.search(QUERY, k=K)
        names = [h.chunk.qualified_name for h in result.hits]
        assert names[0] == "frobnicate_widget_registry"
        assert "cleanup" in names, "the best file's other function is ranked"
        assert len(names) == K
        assert [h.chunk.qualified_name for h in ws.search(QUERY, k=K).hits] == names

        # the workspace is what the test says: without completing the best files, `cleanup` is not
        # among the workspace-wide candidates at all
        monkeypatch.setattr(searcher, "COMPLETED_FILES", 0)
        without = [h.chunk.qualified_name for h in ws.search(QUERY, k=K).hits]
        assert "cleanup" not in without
        assert without[0] == "frobnicate_widget_registry"
