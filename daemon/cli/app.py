"""The ``ided`` command line."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import sys
import time
from collections.abc import Awaitable, Callable, Generator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, TypeVar

import typer
from rich.text import Text

from daemon.cli.context import CliState, JsonOpt, WorkspaceOpt, text_argument
from daemon.cli.cve_commands import register_cve_commands
from daemon.cli.eval_command import eval_command
from daemon.cli.render import print_report, print_search, print_serving, print_status
from daemon.cli.review_commands import register_review_commands
from daemon.cli.root import app
from daemon.cli.run_commands import register_run_commands, runs_app
from daemon.cli.trust_commands import register_trust_command
from daemon.config import Config, config_json_schema
from daemon.core.models import ChunkKind, SearchMode, SearchResult
from daemon.errors import DaemonError
from daemon.service.daemon.process import (
    remote_reindex,
    run_daemon,
    run_daemon_detached,
    stop_daemon,
)
from daemon.service.wire.api import DaemonStatus, SearchParams
from daemon.service.wire.daemon_or_here import daemon_or_here
from daemon.service.workspace.command import Prepare, command_workspace

if TYPE_CHECKING:
    from daemon.core.ports import Workspace
    from daemon.service.index.local import WorkspaceIndex

__all__ = ["app"]

T = TypeVar("T")

config_app = typer.Typer(help="Inspect the configuration and its JSON Schema.", no_args_is_help=True)
app.add_typer(config_app, name="config")
register_run_commands(app)
register_review_commands(runs_app)
register_trust_command(app)
app.command("eval")(eval_command)
register_cve_commands(app)


@contextmanager
def _open(state: CliState, config: Config, command: str) -> Generator[WorkspaceIndex]:
    """The index opened in this process; ``command`` names this process in the lock (``ided index``)."""
    from daemon.service.index.local import open_local_index  # the index's imports only where it is opened

    try:
        with open_local_index(config, command=command) as ws:
            yield ws
    except DaemonError as exc:
        state.fail(str(exc))


class _PlainProgress:
    """Progress as a plain line every few seconds, for a stderr that is not a terminal (a log, a pipe,
    ``--json`` read by a program): a bar would print nothing until the end."""

    def __init__(self, state: CliState, every_s: float = 5.0) -> None:
        self._state = state
        self._every = every_s
        self._last: dict[str, float] = {}
        self._start: dict[str, float] = {}

    def __call__(self, phase: str, done: int, total: int) -> None:
        now = time.monotonic()
        self._start.setdefault(phase, now)
        if done < total and now - self._last.get(phase, 0.0) < self._every:
            return
        self._last[phase] = now
        elapsed = now - self._start[phase]
        rate = f", {done / elapsed:,.1f}/s" if elapsed > 0.5 else ""
        share = f" ({100 * done / total:.0f}%)" if total else ""
        self._state.err.print(f"{phase}: {done:,}/{total:,}{share}{rate}", highlight=False)


def _run_index(state: CliState, ws: WorkspaceIndex, *, embed: bool, quiet: bool) -> None:
    if not state.err.is_terminal:
        plain = _PlainProgress(state)
        report = ws.index(plain)
        pending = ws.pending_embeddings() if embed else 0
        if pending and ws.dense_embedder() is not None:
            ws.embed(lambda done: plain("embed", done, pending))
        if not quiet:
            print_report(state.err, report)
        return
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn, TimeElapsedColumn

    columns = (
        TextColumn("{task.description:<10}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[rate]}"),
        TimeElapsedColumn(),
    )
    with Progress(*columns, console=state.err, transient=False) as bar:
        tasks: dict[str, TaskID] = {}

        def on_progress(phase: str, done: int, total: int) -> None:
            if phase not in tasks:
                tasks[phase] = bar.add_task(phase, total=total or None, rate="")
            task = tasks[phase]
            elapsed = bar.tasks[task].elapsed or 0.0
            rate = f"{done / elapsed:,.0f} files/s" if elapsed > 0.2 and phase == "parse" else ""
            bar.update(task, completed=done, total=total or None, rate=rate)

        report = ws.index(on_progress)
        pending = ws.pending_embeddings() if embed else 0
        if pending and ws.dense_embedder() is not None:
            task = bar.add_task("embed", total=pending, rate="")

            def on_embed(done: int) -> None:
                elapsed = bar.tasks[task].elapsed or 0.0
                bar.update(task, completed=done, rate=f"{done / elapsed:,.1f} chunks/s" if elapsed > 0.5 else "")

            ws.embed(on_embed)
    if not quiet:
        print_report(state.err, report)


@app.command()
def index(
    ctx: typer.Context,
    path: Annotated[
        Path | None, typer.Argument(help="Workspace to index (default: see --workspace).", file_okay=False)
    ] = None,
    rebuild: Annotated[bool, typer.Option("--rebuild", help="Forget the existing index and start over.")] = False,
    embed: Annotated[
        bool, typer.Option("--embed/--no-embed", help="Compute dense vectors after the lexical pass.")
    ] = True,
    migrate_to: Annotated[
        str | None,
        typer.Option(
            "--migrate-to",
            help="Copy the existing index (points and vectors, nothing re-embedded) into the Qdrant server "
            "at this URL, then set qdrant.url to it (docs/scale-out.md).",
        ),
    ] = None,
    as_json: JsonOpt = False,
) -> None:
    """Index a workspace: scan, chunk with Tree-sitter, store lexical then dense vectors.

    Only files that changed since the last pass are re-read. Skipped files are counted by reason
    (ignored, secret, binary, too large, ...). The index lives in the workspace's state directory
    (see `ided status`).
    """
    state = CliState.of(ctx)
    config = state.config(path)
    served = daemon_or_here(config, daemon="running").daemon  # asked once: the pass, or the migration, goes by it
    if migrate_to is not None:
        _migrate_index(state, config, migrate_to, as_json=as_json, daemon_serves=served)
        return
    if served and not rebuild:
        state.err.print("a daemon serves this workspace: asking it to run the pass", style="dim")
        report, status_ = _guard(state, lambda: remote_reindex(config))
        if as_json:
            print(status_.model_dump_json(indent=2))
        else:
            print_report(state.err, report)
        return
    with _open(state, config, "index") as ws:
        if rebuild:
            ws.rebuild()
        _run_index(state, ws, embed=embed, quiet=as_json)
        if as_json:
            print(ws.status().model_dump_json(indent=2))


def _migrate_index(state: CliState, config: Config, to_url: str, *, as_json: bool, daemon_serves: bool) -> None:
    from daemon.service.index.migration import migrate_workspace_index

    if daemon_serves:
        state.fail("ided index --migrate-to: a daemon serves this workspace; stop it first (ided stop)")
    report = _guard(state, lambda: migrate_workspace_index(config, to_url))
    if as_json:
        print(json.dumps(dataclasses.asdict(report), indent=2))
    state.err.print(
        f"{report.copied} point(s) copied ({report.embedded} with a dense vector) from {report.source} into "
        f"collection {report.collection} at {report.target}; {report.removed_paths} stale file(s) removed there"
    )
    state.err.print(f"now set qdrant.url = {report.target!r} to use it")


@app.command()
def search(
    ctx: typer.Context,
    query: Annotated[str, text_argument("What you are looking for: words, identifiers or a question.")],
    workspace: WorkspaceOpt = None,
    kind: Annotated[ChunkKind | None, typer.Option("--kind", help="Only code or only docs.")] = None,
    lang: Annotated[str | None, typer.Option("--lang", help="Only this language, e.g. python, typescript.")] = None,
    glob: Annotated[
        str | None, typer.Option("--glob", help="Only paths matching this glob, e.g. 'src/**/*.py'.")
    ] = None,
    k: Annotated[int | None, typer.Option("-k", min=1, max=200, help="Number of results.")] = None,
    mode: Annotated[SearchMode, typer.Option("--mode", help="hybrid (default), lexical or dense.")] = SearchMode.HYBRID,
    group_by_file: Annotated[
        bool,
        typer.Option("--group-by-file", help="Show each file's hits together (files in the order of their best hit)."),
    ] = False,
    verbose: Annotated[
        bool, typer.Option("--verbose", "-v", help="Each hit's kind, language, rankers and up to three lines.")
    ] = False,
    as_json: JsonOpt = False,
) -> None:
    """Search the index: lexical (BM25) and, once they are complete, dense vectors, ranked as one list.

    Hits come in score order, each as path:line, symbol, score and one line (the signature, or its
    best line for the query); the footer says how complete the dense vectors are.

    The query may be a few words, an identifier or a whole issue with tracebacks and code: the names,
    dotted names and paths it mentions count, and so do the files whose code matches it best. Each
    answer says which rankers took part and whether anything matched at all. A workspace never indexed
    is indexed lexically first.
    """
    state = CliState.of(ctx)
    config = state.config(workspace)
    if not query.strip():
        state.fail("ided search: the query is empty: give words or code to search for")
    filters = SearchParams(query=query, k=k, kind=kind, language=lang, path_glob=glob, mode=mode).filters()

    def first_pass(ws: WorkspaceIndex) -> None:
        if ws.status().last_update is None:
            # lexical first: the answer comes in seconds; dense vectors are `ided index`'s (or a daemon's) work
            state.err.print(
                "no index yet for this workspace: indexing it lexically first"
                " (`ided index` or `ided daemon` adds dense vectors)",
                style="yellow",
            )
            _run_index(state, ws, embed=False, quiet=False)

    def ask(workspace: Workspace) -> Awaitable[SearchResult]:
        return workspace.search(query, k=k, filters=filters, mode=mode)

    result = _in_workspace(state, config, "search", ask, prepare=first_pass)
    if as_json:
        print((result.grouped_by_file() if group_by_file else result).model_dump_json(indent=2))
    else:
        print_search(state.out, result, verbose=verbose, group_by_file=group_by_file)


@app.command()
def status(ctx: typer.Context, workspace: WorkspaceOpt = None, as_json: JsonOpt = False) -> None:
    """Show the index: files, chunks, embedded fraction, models, last pass and why anything is off.

    Also which process serves the workspace: its daemon (pid, clients, when it stops by itself, its
    language servers), or this command when no daemon runs.
    """
    state = CliState.of(ctx)
    config = state.config(workspace, notice=False)
    result = _in_workspace(state, config, "status", lambda ws: ws.status())
    if as_json:
        # the shapes scripts already read: the daemon's `daemon/status`, or the index's status alone
        shown = result.index if result.daemon is None else DaemonStatus.of(result, result.daemon)
        if shown is None:
            print(result.model_dump_json(indent=2))
        elif result.daemon is None and result.trust is not None:  # the index's status, and the trust notice
            print(
                json.dumps({**shown.model_dump(mode="json"), "trust": result.trust.model_dump(mode="json")}, indent=2)
            )
        else:
            print(shown.model_dump_json(indent=2))
        return
    print_serving(state.out, result)
    if result.index is not None:
        print_status(state.out, result.index)
    if result.index_note:
        state.out.print(f"index: {result.index_note}", style="yellow", highlight=False)
    if result.trust is not None:
        state.out.print(Text(f"trust: {result.trust.message}", style="yellow"), highlight=False)


def _in_workspace(
    state: CliState,
    config: Config,
    command: str,
    ask: Callable[[Workspace], Awaitable[T]],
    *,
    prepare: Prepare | None = None,
) -> T:
    """``ask`` the workspace (its daemon's, or opened here as ``ided COMMAND``); a coded failure ends the command."""

    async def go() -> T:
        async with command_workspace(config, command=command, prepare=prepare) as workspace:
            return await ask(workspace)

    return _guard(state, lambda: asyncio.run(go()))


@app.command()
def daemon(
    ctx: typer.Context,
    workspace: WorkspaceOpt = None,
    detach: Annotated[
        bool, typer.Option("--detach", help="Run in the background; return once it is listening.")
    ] = False,
) -> None:
    """Run the workspace daemon in the foreground: keeps the index hot and serves `ided lsp|mcp|acp`.

    Editors and agents normally start it for you (`ided lsp`, `ided mcp` attach to it, starting it
    when none runs). It stops after `daemon.idle_shutdown_seconds` without clients, on SIGTERM, or
    with `ided stop`. Logs go to stderr (or `logging.file`).
    """
    state = CliState.of(ctx)
    config = state.config(workspace)
    if detach:
        code, message = _guard(state, lambda: run_daemon_detached(config))
        if code:
            state.fail(message)
        state.err.print(message, markup=False)
        return
    try:
        run_daemon(config)
    except DaemonError as exc:
        state.fail(str(exc))


@app.command()
def stop(ctx: typer.Context, workspace: WorkspaceOpt = None) -> None:
    """Stop the workspace's daemon (it flushes the index first)."""
    state = CliState.of(ctx)
    pid = stop_daemon(state.config(workspace))
    state.err.print(f"stopped daemon pid {pid}" if pid else "no daemon is running for this workspace")


def _guard(state: CliState, fn: Callable[[], T]) -> T:
    try:
        return fn()
    except DaemonError as exc:
        state.fail(str(exc))
    except (ConnectionError, TimeoutError) as exc:
        state.fail(f"lost the connection to the daemon: {exc}")


@config_app.command("show")
def config_show(ctx: typer.Context, workspace: WorkspaceOpt = None) -> None:
    """Print the effective configuration (all layers merged) as JSON."""
    config = CliState.of(ctx).config(workspace)
    print(config.model_dump_json(indent=2))


@config_app.command("schema")
def config_schema() -> None:
    """Print the JSON Schema of the configuration (for editors and CI validation)."""
    json.dump(config_json_schema(), sys.stdout, indent=2)
    print()
