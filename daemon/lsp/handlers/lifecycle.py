"""``initialize`` / ``initialized`` / ``shutdown``: pick the workspace, attach to its daemon, detach.

``initialize`` also registers the opt-in standard methods (``initializationOptions``
``{"standardIntel": true}``, see ``standard_intel``) before pygls builds the capabilities.

``exit`` keeps pygls' own handler (it closes the transport and sets the exit code); the transport
loop detaches from the daemon once it returns.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from lsprotocol import types
from pygls.uris import to_fs_path

from daemon.lsp.handlers import standard_intel

if TYPE_CHECKING:
    from daemon.lsp.server import IdedLanguageServer

__all__ = ["register", "workspace_root"]


def workspace_root(params: types.InitializeParams) -> Path:
    """The first workspace folder, else rootUri, else rootPath, else the current directory."""
    uris = [folder.uri for folder in params.workspace_folders or []]
    if params.root_uri:
        uris.append(params.root_uri)
    for uri in uris:
        path = to_fs_path(uri) if uri.startswith("file:") else None
        if path:
            return Path(path)
    if params.root_path:
        return Path(params.root_path)
    return Path.cwd()


def register(server: IdedLanguageServer) -> None:
    @server.feature(types.INITIALIZE)
    def initialize(params: types.InitializeParams) -> None:
        server.set_root(workspace_root(params), server.workspace.position_encoding)
        server.session.expect_attach()  # requests sent before `initialized` wait for the attach
        server.session.configure(server.root)
        if standard_intel.enabled(params.initialization_options) and not server.standard_intel:
            standard_intel.register(server)
            server.standard_intel = True

    @server.feature(types.INITIALIZED)
    def initialized(params: types.InitializedParams) -> None:
        server.start_session()

    @server.feature(types.SHUTDOWN)
    async def shutdown(params: None) -> None:
        await server.stop_session()
