"""The error tree. Every message ends with a pointer to the docs page that explains it."""

from __future__ import annotations

from enum import StrEnum

__all__ = [
    "ConfigError",
    "ConflictError",
    "DaemonError",
    "EditLockHeld",
    "EmbeddingUnavailable",
    "ErrorCode",
    "IndexingError",
    "InvalidToolInput",
    "LanguageServerError",
    "LanguageServerNotReady",
    "LanguageServerTerminated",
    "McpServerError",
    "PathOutsideWorkspace",
    "PipelineError",
    "SourceUnavailable",
    "StoreError",
    "TooComplex",
    "VcsError",
    "WorkflowError",
]

DOCS = "docs/errors.md"


class ErrorCode(StrEnum):
    CONFIG_INVALID = "config_invalid"
    PATH_OUTSIDE_WORKSPACE = "path_outside_workspace"
    INDEXING_FAILED = "indexing_failed"
    STORE_FAILED = "store_failed"
    EMBEDDING_UNAVAILABLE = "embedding_unavailable"
    LANGUAGE_SERVER_FAILED = "language_server_failed"
    LANGUAGE_SERVER_TERMINATED = "language_server_terminated"
    LANGUAGE_SERVER_NOT_READY = "language_server_not_ready"
    INVALID_TOOL_INPUT = "invalid_tool_input"
    WORKFLOW_INVALID = "workflow_invalid"
    PIPELINE_FAILED = "pipeline_failed"
    MODEL_UNAVAILABLE = "model_unavailable"
    RUN_NOT_FOUND = "run_not_found"
    SOURCE_UNAVAILABLE = "source_unavailable"
    VCS_FAILED = "vcs_failed"
    NOT_A_REPOSITORY = "not_a_repository"
    CHANGE_CONFLICT = "change_conflict"
    EDIT_LOCK_HELD = "edit_lock_held"
    MCP_SERVER_FAILED = "mcp_server_failed"
    TOO_COMPLEX = "too_complex"


class DaemonError(Exception):
    """Base of every error ided raises on purpose."""

    default_code: ErrorCode = ErrorCode.INDEXING_FAILED

    def __init__(self, message: str, *, code: ErrorCode | None = None, cause: BaseException | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.code = code or self.default_code
        self.cause = cause

    def __str__(self) -> str:
        text = self.message
        if self.cause is not None:
            text += f" (caused by {type(self.cause).__name__}: {self.cause})"
        return f"{text} [see {DOCS}#{self.code.value}]"


class ConfigError(DaemonError):
    default_code = ErrorCode.CONFIG_INVALID


class PathOutsideWorkspace(DaemonError):
    default_code = ErrorCode.PATH_OUTSIDE_WORKSPACE


class IndexingError(DaemonError):
    default_code = ErrorCode.INDEXING_FAILED


class StoreError(DaemonError):
    default_code = ErrorCode.STORE_FAILED


class EmbeddingUnavailable(DaemonError):
    default_code = ErrorCode.EMBEDDING_UNAVAILABLE


class LanguageServerError(DaemonError):
    default_code = ErrorCode.LANGUAGE_SERVER_FAILED


class LanguageServerTerminated(LanguageServerError):
    default_code = ErrorCode.LANGUAGE_SERVER_TERMINATED

    def __init__(self, message: str, *, language: str, cause: BaseException | None = None) -> None:
        super().__init__(message, cause=cause)
        self.language = language


class LanguageServerNotReady(LanguageServerError):
    """The server is still starting or indexing: an answer now could look like "nothing found"."""

    default_code = ErrorCode.LANGUAGE_SERVER_NOT_READY


class InvalidToolInput(DaemonError):
    """Bad input to a code-intel tool: unknown symbol, position past the end, binary file, unsupported language."""

    default_code = ErrorCode.INVALID_TOOL_INPUT


class TooComplex(DaemonError):
    """A request spent its time or depth budget (a file nested too deep to walk, a parse that ran too long)."""

    default_code = ErrorCode.TOO_COMPLEX


class WorkflowError(DaemonError):
    default_code = ErrorCode.WORKFLOW_INVALID


class PipelineError(DaemonError):
    """A workflow run could not proceed: no model answered (``model_unavailable``), an unknown run id
    (``run_not_found``), a checkpoint backend that cannot be opened (``pipeline_failed``)."""

    default_code = ErrorCode.PIPELINE_FAILED


class VcsError(DaemonError):
    """A run's git branch or worktree could not be made, read or applied (``vcs_failed``), or the workspace
    is not a git repository (``not_a_repository``)."""

    default_code = ErrorCode.VCS_FAILED


class ConflictError(VcsError):
    """Accept or rollback stopped before writing: the user changed files the run changed. ``report`` is a
    ``daemon.vcs.ConflictReport`` (files, why, the user's side and the run's side)."""

    default_code = ErrorCode.CHANGE_CONFLICT

    def __init__(self, message: str, *, report: object, cause: BaseException | None = None) -> None:
        super().__init__(message, cause=cause)
        self.report = report


class EditLockHeld(VcsError):
    """Another editing run holds the workspace's edit lock; ``holder`` is its run id."""

    default_code = ErrorCode.EDIT_LOCK_HELD

    def __init__(self, message: str, *, holder: str, cause: BaseException | None = None) -> None:
        super().__init__(message, cause=cause)
        self.holder = holder


class SourceUnavailable(DaemonError):
    """A configured retrieval source (web search, advisory API, language servers) cannot answer now."""

    default_code = ErrorCode.SOURCE_UNAVAILABLE


class McpServerError(DaemonError):
    """An MCP server a client lent a session (ACP ``mcpServers``) did not start, or a call to it failed."""

    default_code = ErrorCode.MCP_SERVER_FAILED
