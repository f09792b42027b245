"""What ided left out of an untrusted workspace, said once to the user, with how to trust.

A repository's ``.ided.toml`` keys that an untrusted workspace may not set are left out of the
configuration (``daemon.repository_settings``), and the programs it ships (a ``venv/bin`` server, its
own interpreter or TypeScript, a build a language server would run) are not run
(``daemon.intel.lsp.server_lookup``). ``TrustNotice`` carries both, and ``message`` is the one plain
paragraph every front shows once: ``ided status`` (and its JSON's ``trust``), the first line a command
prints on stderr, an LSP ``window/showMessage``, the MCP server's instructions and first tool answer,
an ACP session's first update.
"""

from __future__ import annotations

from daemon.core.frozen_model import FrozenModel

__all__ = ["TrustNotice"]


class TrustNotice(FrozenModel):
    workspace: str
    how_to_trust: str
    """The command that trusts the workspace (``ided trust PATH``)."""
    withheld: tuple[str, ...] = ()
    """Keys of the repository's ``.ided.toml`` left out (dotted, names filled in)."""
    unused_programs: tuple[str, ...] = ()
    """What the workspace ships that ided does not run (workspace-relative paths)."""
    message: str

    @classmethod
    def of(
        cls, workspace: str, how_to_trust: str, *, file: str | None, withheld: tuple[str, ...], unused: tuple[str, ...]
    ) -> TrustNotice:
        parts: list[str] = []
        if withheld:
            count = len(withheld)
            parts.append(
                f"its {file or '.ided.toml'} sets {count} setting{'s' if count != 1 else ''} ided takes only from a "
                f"trusted workspace, left out: {', '.join(withheld)}"
            )
        if unused:
            parts.append(f"it ships programs ided does not run: {', '.join(unused)}")
        message = (
            f"ided: the workspace {workspace} is not trusted; "
            + "; ".join(parts)
            + ". Your own settings and tools apply. To use the repository's, trust it: "
            + f"`{how_to_trust}` (docs/configuration.md#workspace-trust), then restart a running daemon (`ided stop`)."
        )
        return cls(
            workspace=workspace, how_to_trust=how_to_trust, withheld=withheld, unused_programs=unused, message=message
        )
