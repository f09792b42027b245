"""The workflow pipeline: YAML workflows, LLM selection, a pure plan, a LangGraph state machine, runs.

Modules, in the order a request flows through them:

- ``workflow_schema`` / ``workflow_loader``: the schema of ``workflows/*.yaml`` and the catalog loader
  (built-in ``workflows/`` plus the workspace's ``.ided/workflows/``) that validates the routing graph;
- ``project_profile``: languages, size and security-sensitive markers of the workspace;
- ``selection`` (LLM, structured output) with ``deterministic_selector`` as its fallback;
- ``plan``: workflow + stage decisions -> execution plan (pure);
- ``graph_builder``: plan -> LangGraph ``StateGraph`` (stage nodes, ``adaptive_retrieval``, ``done``, ``abort``);
- ``runtime``: start / resume / cancel / inspect runs, progress events, run records, stop decisions.

Nothing here imports the service layer or a front; the retriever arrives by injection (``retriever``).
"""

from __future__ import annotations

__all__: list[str] = []
