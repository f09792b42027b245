"""The ACP front: ``ided acp`` speaks the Agent Client Protocol on stdio and drives the pipeline.

``python -m daemon.acp`` is its composition root; ``IdedAgent`` the agent; docs/acp.md the guide.
"""

from __future__ import annotations

__all__: list[str] = []
