"""``ided runs diff|accept|reject|rollback|cleanup``: review an editing run's branch from the command line.

An editing run keeps its changes as commits on ``ided/run/<id>``; nothing reaches your working tree
until ``accept``. Exit codes: 0 done, 1 error, 4 conflict (accept/rollback stopped; nothing written).
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, TypeVar

import typer
from rich.console import Console
from rich.text import Text

from daemon.cli.context import CliState
from daemon.errors import ConflictError, DaemonError

if TYPE_CHECKING:  # the pipeline and git stacks load only when a review command runs
    from daemon.core.review_models import ChangeSet, ConflictReport
    from daemon.service.runs.service import RunService

__all__ = ["EXIT_CONFLICT", "register_review_commands"]

T = TypeVar("T")

EXIT_CONFLICT = 4

WorkspaceOpt = Annotated[
    Path | None,
    typer.Option(
        "--workspace", "-w", help="Workspace root (default: found from the current directory).", file_okay=False
    ),
]
RunIdArg = Annotated[str, typer.Argument(help="The run (`ided runs` lists them).")]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print the result as JSON on stdout.")]


def _state(ctx: typer.Context) -> CliState:
    state = ctx.obj
    assert isinstance(state, CliState)
    return state


def _review(ctx: typer.Context, workspace: Path | None, work: Callable[[RunService], Awaitable[T]]) -> T:
    from daemon.core.review_models import ConflictReport
    from daemon.service.runs.local import reviewing
    from daemon.service.runs.review import RunReview

    state = _state(ctx)
    config = state.config(workspace)

    async def go() -> T:
        async with RunReview.open(config) as review:
            return await work(reviewing(review))

    try:
        return asyncio.run(go())
    except ConflictError as exc:
        report = exc.report
        if isinstance(report, ConflictReport):
            _print_conflict(state.err, report)
        else:
            state.err.print(str(exc), markup=False)
        raise typer.Exit(EXIT_CONFLICT) from None
    except DaemonError as exc:
        state.fail(str(exc))


def _print_conflict(err: Console, report: ConflictReport) -> None:
    err.print(Text("conflict: ", style="bold red") + Text(report.why), highlight=False)
    for item in report.files:
        err.print(Text(f"  {item.path}", style="bold"), highlight=False)
        err.print(Text(f"    yours: {item.user_side}"), highlight=False)
        err.print(Text(f"    run:   {item.run_side}"), highlight=False)


def _print_summary(err: Console, changes: ChangeSet) -> None:
    err.print(
        f"run {changes.run_id}: {changes.branch} ({changes.review}), {len(changes.commits)} commit(s), "
        f"{len(changes.files)} file(s)",
        markup=False,
        highlight=False,
    )
    for commit in changes.commits:
        err.print(f"  {commit.sha[:10]} {commit.message.splitlines()[0]}", markup=False, highlight=False)
    for f in changes.files:
        moved = f" (from {f.old_path})" if f.old_path else ""
        stat = "binary" if f.binary else f"+{f.added} -{f.removed}"
        err.print(f"  {f.status:<8} {f.path}{moved}  {stat}", markup=False, highlight=False)


def runs_diff(
    ctx: typer.Context,
    run_id: RunIdArg,
    workspace: WorkspaceOpt = None,
    as_json: Annotated[
        bool, typer.Option("--json", help="The change set as JSON: commits, files with both texts and diffs.")
    ] = False,
    stat: Annotated[bool, typer.Option("--stat", help="Only the summary (commits and files), no diff.")] = False,
) -> None:
    """Show everything a run changed, as one diff from where it started to its branch tip.

    The summary (commits, files) goes to stderr, the unified diff to stdout (pipe it to a pager or
    `git apply`).
    """
    changes = _review(ctx, workspace, lambda review: review.diff(run_id))
    if as_json:
        sys.stdout.write(changes.model_dump_json(indent=2) + "\n")
        return
    _print_summary(_state(ctx).err, changes)
    if not stat and not changes.empty:
        sys.stdout.write(changes.diff)


def runs_accept(
    ctx: typer.Context,
    run_id: RunIdArg,
    workspace: WorkspaceOpt = None,
    as_json: JsonOpt = False,
    only: Annotated[
        list[str] | None,
        typer.Option(
            "--only",
            help="Keep only this file of the run (as `ided runs diff` names it; repeat for more); PATH#N,M keeps "
            "its hunks N and M (0-based, in the order of the file's diff).",
        ),
    ] = None,
) -> None:
    """Apply a run's commits to your current branch (as new commits).

    With --only, only the files (or hunks) named are kept, as one reviewed commit on the run's branch,
    applied as one commit (`ided runs rollback ID` undoes it like any accept); the rest is dropped.
    Stops with exit code 4 and a conflict report, writing nothing, when you changed any of the same
    files since the run started (committed, staged, unstaged or untracked). Your other uncommitted
    work is kept as it is.
    """
    from daemon.core.review_models import AcceptSelection, KeptFile

    kept: list[KeptFile] = []
    for item in only or ():
        head, sep, tail = item.rpartition("#")
        path, hunks = (head, tail) if sep else (item, "")
        try:
            numbers = tuple(int(n) for n in hunks.split(",")) if hunks else None
        except ValueError:
            _state(ctx).fail(f"--only {item}: hunks are numbers, e.g. {path}#0,2")
        kept.append(KeptFile(path=path, hunks=numbers))
    selection = AcceptSelection(files=tuple(kept)) if kept else None
    result = _review(ctx, workspace, lambda review: review.accept(run_id, selection=selection))
    if as_json:
        sys.stdout.write(result.model_dump_json(indent=2) + "\n")
        return
    err = _state(ctx).err
    err.print(
        f"accepted run {run_id} onto {result.branch}: {len(result.commits)} commit(s), {len(result.files)} file(s)",
        markup=False,
    )
    for sha in result.commits:
        err.print(f"  {sha[:10]}", markup=False)
    if result.reviewed_commit is not None:
        partial, dropped = ", ".join(result.partial) or "none", ", ".join(result.dropped) or "none"
        err.print(f"kept in part: {partial}; dropped: {dropped}", markup=False)


def runs_reject(ctx: typer.Context, run_id: RunIdArg, workspace: WorkspaceOpt = None, as_json: JsonOpt = False) -> None:
    """Reject a run: your working tree is not touched; its branch is kept until `ided runs cleanup`."""
    branch = _review(ctx, workspace, lambda review: review.reject(run_id))
    if as_json:
        sys.stdout.write(branch.model_dump_json(indent=2) + "\n")
        return
    _state(ctx).err.print(f"rejected run {run_id}; branch {branch.branch} kept until cleanup", markup=False)


def runs_rollback(
    ctx: typer.Context, run_id: RunIdArg, workspace: WorkspaceOpt = None, as_json: JsonOpt = False
) -> None:
    """Undo an accepted run with new revert commits (history is never rewritten)."""
    result = _review(ctx, workspace, lambda review: review.rollback(run_id))
    if as_json:
        sys.stdout.write(result.model_dump_json(indent=2) + "\n")
        return
    _state(ctx).err.print(
        f"rolled back run {run_id} on {result.branch}: {len(result.commits)} revert commit(s)", markup=False
    )


def runs_cleanup(
    ctx: typer.Context,
    workspace: WorkspaceOpt = None,
    older_than: Annotated[
        int | None,
        typer.Option(
            "--older-than", min=0, help="Days; default: vcs.retention_days. 0: every run but the one editing now."
        ),
    ] = None,
    as_json: JsonOpt = False,
) -> None:
    """Remove the worktrees and branches of old runs (the run editing now is always kept)."""
    report = _review(ctx, workspace, lambda review: review.cleanup(older_than_days=older_than))
    if as_json:
        sys.stdout.write(report.model_dump_json(indent=2) + "\n")
        return
    _state(ctx).err.print(
        f"removed {len(report.removed_runs)} run(s) older than {report.older_than_days} day(s) "
        f"({report.removed_worktrees} worktree(s), {report.removed_branches} branch(es)); "
        f"kept {len(report.kept_runs)}",
        markup=False,
    )


def register_review_commands(runs: typer.Typer) -> None:
    """Add the review commands to the ``ided runs`` sub-app."""
    runs.command("diff")(runs_diff)
    runs.command("accept")(runs_accept)
    runs.command("reject")(runs_reject)
    runs.command("rollback")(runs_rollback)
    runs.command("cleanup")(runs_cleanup)
