"""A stage's focus hint as a view of the task's hits: the hint's words re-rank them, nothing is searched."""

from __future__ import annotations

from daemon.core.models import Chunk, ChunkKind, SearchHit, SearchMode, SearchResult, SymbolKind
from daemon.retrieval.focus import FOCUS_PRIOR, focus_view, hit_terms
from daemon.retrieval.models import RetrievalRequest, SourceName, StageHints, WorkflowKind
from daemon.retrieval.queries import deterministic_queries


def _hit(path: str, text: str, score: float) -> SearchHit:
    chunk = Chunk(
        path=path,
        kind=ChunkKind.CODE,
        symbol_kind=SymbolKind.FUNCTION,
        language="python",
        text=text,
        start_line=1,
        end_line=text.count("\n") + 1,
        qualified_name=path.removesuffix(".py"),
    )
    return SearchHit(id=path, score=score, chunk=chunk)


def _task_hits(n: int) -> SearchResult:
    hits = [
        _hit(f"shop/m{i:02d}.py", f"def apply_discount_{i}(price):\n    return round(price, 2)\n", 1 / (i + 1))
        for i in range(n)
    ]
    return SearchResult(query="apply a discount", hits=tuple(hits), mode=SearchMode.LEXICAL, embedded_fraction=0.0)


def test_a_hit_carrying_the_hint_moves_ahead_of_the_tasks_better_hits_that_do_not() -> None:
    task = _task_hits(8)
    carrying = _hit("shop/secrets_store.py", "def read_secret(name):\n    return vault[name]\n", 0.01)
    wide = task.model_copy(update={"hits": (*task.hits, carrying)})

    view = focus_view(wide, "secrets", k=8)

    ids = [h.id for h in view.hits]
    assert ids[0] == "shop/secrets_store.py"
    assert ids[1:] == [h.id for h in task.hits[:7]]  # the others keep the task's order
    assert view.query == "secrets | apply a discount"


def test_a_hit_too_far_down_the_task_stays_below_its_head() -> None:
    task = _task_hits(2 * FOCUS_PRIOR + 5)
    far = _hit("shop/secrets_store.py", "def read_secret(name):\n    return vault[name]\n", 0.001)
    view = focus_view(task.model_copy(update={"hits": (*task.hits, far)}), "secrets", k=8)
    assert "shop/secrets_store.py" not in [h.id for h in view.hits]


def test_a_hint_no_hit_carries_leaves_the_tasks_order_cut_to_k() -> None:
    task = _task_hits(20)
    for hint in ("authentication and authorization", "the and of"):
        view = focus_view(task, hint, k=8)
        assert [h.id for h in view.hits] == [h.id for h in task.hits[:8]]


def test_a_focus_query_names_its_hint_and_the_task_query_it_refines() -> None:
    request = RetrievalRequest(
        task="Apply the discount   to every order line",
        workflow_kind=WorkflowKind.CODE,
        stage=StageHints(stage_id="code", focus_on=("existing patterns", "secrets")),
    )
    plan = deterministic_queries(request, [SourceName.CODE, SourceName.DOCS, SourceName.DECISIONS], max_queries=6)
    task = "Apply the discount to every order line"
    for source in (SourceName.CODE, SourceName.DOCS):
        queries = plan.for_source(source)
        assert [(q.focus, q.refines) for q in queries if q.focus] == [
            ("existing patterns", task),
            ("secrets", task),
        ]
        assert any(q.text == task and q.focus is None for q in queries)
    assert all(q.focus is None and q.refines is None for q in plan.for_source(SourceName.DECISIONS))


def test_a_focus_query_whose_task_query_was_cut_is_an_ordinary_search() -> None:
    request = RetrievalRequest(
        task="Apply the discount to every order line with apply_discount",
        workflow_kind=WorkflowKind.CODE,
        stage=StageHints(stage_id="code", focus_on=("existing patterns",)),
    )
    plan = deterministic_queries(request, [SourceName.CODE], max_queries=1)  # the identifiers' query only
    assert all(q.focus is None and q.refines is None for q in plan.queries)


def test_words_made_once_give_every_view_what_it_would_make_itself() -> None:
    task = _task_hits(10)
    tail = _hit("shop/secrets_store.py", "def read_secret(name):\n    return vault[name]\n", 0.01)
    wide = task.model_copy(update={"hits": (*task.hits, tail)})
    words = hit_terms(wide)
    for hint in ("secrets", "existing patterns", "price rounding"):
        assert focus_view(wide, hint, k=8, words=words) == focus_view(wide, hint, k=8)
