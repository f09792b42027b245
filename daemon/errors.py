"""The error tree. Every message ends with a pointer to the docs page that explains it."""

from __future__ import annotations

import errno
from enum import StrEnum
from pathlib import Path

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
    "SecretRefused",
    "SourceUnavailable",
    "StateError",
    "StoreError",
    "TooComplex",
    "VcsError",
    "WorkflowError",
    "WorkspaceBusy",
    "WorkspaceRefused",
    "WorkspaceUntrusted",
    "state_error",
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
    LANGUAGE_SERVER_SLOW = "language_server_slow"
    INVALID_TOOL_INPUT = "invalid_tool_input"
    WORKFLOW_INVALID = "workflow_invalid"
    PIPELINE_FAILED = "pipeline_failed"
    MODEL_UNAVAILABLE = "model_unavailable"
    RUN_NOT_FOUND = "run_not_found"
    RUN_EXISTS = "run_exists"
    RUN_STORE_FAILED = "run_store_failed"
    DRIVER_MISSING = "driver_missing"
    SOURCE_UNAVAILABLE = "source_unavailable"
    VCS_FAILED = "vcs_failed"
    NOT_A_REPOSITORY = "not_a_repository"
    CHANGE_CONFLICT = "change_conflict"
    EDIT_LOCK_HELD = "edit_lock_held"
    MCP_SERVER_FAILED = "mcp_server_failed"
    SECRET_REFUSED = "secret_refused"
    WORKSPACE_REFUSED = "workspace_refused"
    WORKSPACE_UNTRUSTED = "workspace_untrusted"
    DISK_FULL = "disk_full"
    STATE_UNWRITABLE = "state_unwritable"
    DAEMON_RUNNING = "daemon_running"
    WORKSPACE_BUSY = "workspace_busy"
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


class SecretRefused(DaemonError):
    """A file that holds credentials (by name or content, judged on its resolved target): never served."""

    default_code = ErrorCode.SECRET_REFUSED


class WorkspaceRefused(DaemonError):
    """A workspace folder that does not exist, is not a folder, or lies outside ``roots.allowed``."""

    default_code = ErrorCode.WORKSPACE_REFUSED


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


class LanguageServerSlow(LanguageServerError):
    """A request ran past its timeout on a server that still answers: cancelled, the server kept."""

    default_code = ErrorCode.LANGUAGE_SERVER_SLOW


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
    (``run_not_found``), a run id taken already (``run_exists``), a run store that cannot be read or
    written (``run_store_failed``), the Postgres driver not installed (``driver_missing``), a
    checkpoint backend that cannot be opened (``pipeline_failed``)."""

    default_code = ErrorCode.PIPELINE_FAILED


class VcsError(DaemonError):
    """A run's git branch or worktree could not be made, read or applied (``vcs_failed``), or the workspace
    is not a git repository (``not_a_repository``)."""

    default_code = ErrorCode.VCS_FAILED


class ConflictError(VcsError):
    """Accept or rollback stopped before writing: the user changed files the run changed. ``report`` is a
    ``daemon.core.review_models.ConflictReport`` (files, why, the user's side and the run's side)."""

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


class WorkspaceUntrusted(DaemonError):
    """The repository defines commands (its ``.ided.toml``, a workflow file in it) and the user has not
    trusted the workspace; ``how_to_trust`` is the command that does (``ided trust PATH``)."""

    default_code = ErrorCode.WORKSPACE_UNTRUSTED

    def __init__(self, message: str, *, how_to_trust: str, cause: BaseException | None = None) -> None:
        super().__init__(message, cause=cause)
        self.how_to_trust = how_to_trust


class StateError(DaemonError):
    """ided's own files (state directory, index, logs) cannot be written: the disk is full (``disk_full``)
    or the place is read-only or not ours (``state_unwritable``). Built by :func:`state_error`."""

    default_code = ErrorCode.STATE_UNWRITABLE


_DISK_FULL_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG})
_UNWRITABLE_ERRNOS = frozenset({errno.EROFS, errno.EACCES, errno.EPERM, errno.ENOTDIR, errno.EEXIST})


def state_error(action: str, path: Path | str, exc: OSError) -> DaemonError:
    """The coded error for an ``OSError`` met while ``action`` (e.g. "write the daemon record") on ``path``.

    No space, a quota or a file-size limit is ``disk_full``; a read-only file system, missing permission or
    a file where a directory belongs is ``state_unwritable``; anything else ``store_failed``.
    """
    if exc.errno in _DISK_FULL_ERRNOS:
        why = "a file would pass the file-size limit (`ulimit -f`)" if exc.errno == errno.EFBIG else "no space left"
        return StateError(
            f"cannot {action}: {why} for {path}; free some space (or set `state_dir` to another disk)",
            code=ErrorCode.DISK_FULL,
            cause=exc,
        )
    if exc.errno in _UNWRITABLE_ERRNOS:
        return StateError(
            f"cannot {action}: {path} is not writable (read-only file system or no permission); "
            "fix its permissions or set `state_dir` to a writable directory",
            cause=exc,
        )
    return StoreError(f"cannot {action} ({path})", cause=exc)


class WorkspaceBusy(DaemonError):
    """Another ided process holds the workspace's index (``workspace_busy``); ``holder`` names it."""

    default_code = ErrorCode.WORKSPACE_BUSY

    def __init__(self, message: str, *, holder: str, pid: int | None, cause: BaseException | None = None) -> None:
        super().__init__(message, cause=cause)
        self.holder = holder
        self.pid = pid
