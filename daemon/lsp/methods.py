"""The table of ``ided/<area>/<verb>`` LSP methods, apart from their types.

Standard library only: the early ``initialize`` answer (``daemon.lsp.handshake``) announces these
methods before pygls and lsprotocol are loaded; ``daemon.lsp.protocol`` re-exports the table and
registers a type pair for each method.
"""

from __future__ import annotations

__all__ = ["NOTIFICATIONS", "REQUESTS", "LspMethods"]


class LspMethods:
    """Every ``ided/<area>/<verb>`` method of the LSP extension, in one table."""

    INDEX_SEARCH = "ided/index/search"
    INDEX_STATUS = "ided/index/status"
    INTEL_DEFINITION = "ided/intel/definition"
    INTEL_REFERENCES = "ided/intel/references"
    INTEL_SIGNATURE = "ided/intel/signature"
    INTEL_TYPE = "ided/intel/type"
    INTEL_AST_NODE = "ided/intel/astNode"
    RUN_START = "ided/run/start"
    RUN_CANCEL = "ided/run/cancel"
    RUN_DIFF = "ided/run/diff"
    RUN_ACCEPT = "ided/run/accept"
    RUN_REJECT = "ided/run/reject"
    RUN_ROLLBACK = "ided/run/rollback"
    RUN_FEEDBACK = "ided/run/feedback"
    # notifications, server -> client
    INDEX_CHANGED = "ided/index/changed"
    RUN_PROGRESS = "ided/run/progress"


NOTIFICATIONS: tuple[str, ...] = (LspMethods.INDEX_CHANGED, LspMethods.RUN_PROGRESS)
"""The server's ``ided/*`` notifications, in table order."""

REQUESTS: tuple[str, ...] = tuple(
    value
    for name, value in vars(LspMethods).items()
    if not name.startswith("_") and isinstance(value, str) and value not in NOTIFICATIONS
)
"""The ``ided/*`` requests the server answers, in table order (as ``experimental.ided.requests`` lists them)."""
