"""``ided cve sync`` and ``ided cve audit`` as service calls: the OSV mirror a workspace's config names.

``sync`` imports an OSV export (a directory of records or a ZIP) into the mirror; ``audit`` matches the
workspace's locked dependencies against it and says each finding as the security stage is given it.
Blocking (file I/O): the CLI calls them directly.
"""

from __future__ import annotations

from pathlib import Path

from daemon.config import Config
from daemon.retrieval.osv_mirror import AuditReport, OsvMirror
from daemon.retrieval.osv_sync import SyncReport, sync_mirror
from daemon.retrieval.sources import audit_candidates
from daemon.service.pipeline.retrieval_sources import mirror_path

__all__ = ["AuditReport", "SyncReport", "audit_texts", "audit_workspace", "sync_osv_mirror"]


def sync_osv_mirror(config: Config, source: Path, mirror: Path | None = None) -> SyncReport:
    """Import ``source`` into ``mirror`` (default: ``retrieval.osv_mirror``); ``DaemonError`` when it cannot."""
    return sync_mirror(source, mirror if mirror is not None else mirror_path(config))


def audit_workspace(config: Config, mirror: Path | None = None) -> AuditReport:
    """The workspace's locked dependencies matched against ``mirror`` (default: ``retrieval.osv_mirror``)."""
    return OsvMirror(mirror if mirror is not None else mirror_path(config)).audit_blocking(config.workspace_path)


def audit_texts(report: AuditReport) -> list[str]:
    """Each finding as the text the security stage reads."""
    return [candidate.text for candidate in audit_candidates(report)]
