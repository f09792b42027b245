"""The language-server pool of a workspace, as its configuration and trust allow.

``open_pool(config)`` resolves the servers (off the event loop: it touches the disk and may probe a
rustup proxy), refuses the servers an untrusted repository's ``.ided.toml`` chose
(``untrusted_servers``, each with why and how to trust), and hands every server the paths the index
leaves out (``server_exclusions``), so servers skip what ided skips.
"""

from __future__ import annotations

import asyncio
import functools

from daemon.config import Config
from daemon.intel.lsp.pool import LanguageServerPool
from daemon.service.intel.server_exclusions import server_exclusions

__all__ = ["open_pool", "untrusted_servers"]


def untrusted_servers(config: Config) -> dict[str, tuple[str, str]]:
    """Language -> (why, how to trust) for the servers an untrusted repository's ``.ided.toml`` chose."""
    project = config.project
    return {
        lang: (
            f"the {lang} language server is chosen by this repository's {project.file} "
            f"({', '.join(k for k in project.withheld if k.startswith(f'intel.servers.{lang}.'))}), and the "
            f"workspace is not trusted, so it is not started; trust it with `{project.how_to_trust}` "
            "(docs/configuration.md, Workspace trust) and restart the daemon (`ided stop`)",
            project.how_to_trust,
        )
        for lang in project.untrusted_languages
    }


async def open_pool(config: Config) -> LanguageServerPool:
    """The pool for ``config``'s workspace (no server started yet)."""
    return await asyncio.to_thread(
        functools.partial(
            LanguageServerPool,
            config.workspace_path,
            config.intel,
            refused=untrusted_servers(config),
            trusted=config.project.trusted is True,
            exclusions=functools.partial(
                server_exclusions,
                config.workspace_path,
                max_file_bytes=config.index.max_file_bytes,
                extra=config.index.exclude,
                respect_gitignore=config.index.respect_gitignore,
            ),
        )
    )
