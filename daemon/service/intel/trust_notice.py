"""The trust notice of a workspace (``daemon.core.trust_notice``), built from its loaded configuration.

None when the workspace is trusted, when the configuration was not loaded from files (no repository
layer to judge), or when there is nothing to say: no key was left out and the workspace ships no
program ided would otherwise have run. Cheap (a few ``stat`` calls): fronts build it when they need it.
"""

from __future__ import annotations

from daemon.config import Config
from daemon.core.trust_notice import TrustNotice
from daemon.intel.lsp.registry import server_executables
from daemon.intel.lsp.server_lookup import workspace_programs

__all__ = ["trust_notice"]


def trust_notice(config: Config) -> TrustNotice | None:
    """What ``config``'s untrusted workspace had left out, with how to trust (see the module docstring)."""
    project = config.project
    if project.trusted is not False:
        return None
    unused = tuple(workspace_programs(config.workspace_path, server_executables()))
    if not project.withheld and not unused:
        return None
    return TrustNotice.of(
        config.workspace,
        project.how_to_trust,
        file=project.file,
        withheld=project.withheld,
        unused=unused,
    )
