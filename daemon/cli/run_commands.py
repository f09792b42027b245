"""``ided run``, ``ided runs [show ID | migrate --to URL]``, ``ided resume ID``, ``ided cancel ID``, ``ided workflows``.

This module is the composition root of the pipeline for the command line: ``ided run``, ``ided resume``
and ``ided runs feedback`` hand their runs to the workspace daemon (``daemon.service.runs.opening``: attaching
to it, starting it as the other fronts do), so their agents get the daemon's code intelligence;
``--no-daemon`` (or a daemon with other run settings) runs them in this process
(with the environment's API keys) and says which tools the agents lack. Listing, showing and cancelling
read the run store in this process. Every command goes through the run service
(``daemon.service.runs.service.RunService``), as the ACP and LSP fronts do: a launch answers a ``RunFollow`` whose
events are printed until the run ends.
``ided runs feedback ID TEXT`` answers a run's review through the service's ``feedback``, as ACP does.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import AsyncGenerator, Awaitable, Callable, Coroutine
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

import typer

from daemon.cli.context import CliState, WorkspaceOpt, text_argument
from daemon.cli.run_render import (
    print_catalog,
    print_decisions,
    print_plan,
    print_problems,
    print_progress,
    print_record,
    print_runs,
    print_selection,
    print_workflow,
)
from daemon.cli.trust_commands import ask_trust
from daemon.core.run_models import RunRecord, RunStatus
from daemon.errors import DaemonError

if TYPE_CHECKING:  # LangGraph, LangChain, git and YAML load only when a command needs them, not for --help
    from daemon.config import Config
    from daemon.service.pipeline.workflow_catalog import WorkflowCatalog, WorkflowProblem
    from daemon.service.runs.follow import RunFollow
    from daemon.service.runs.service import RunService

__all__ = ["register_run_commands", "runs_app", "workflows_app"]


T = TypeVar("T")

EXIT_NO_MODEL = 3
EXIT_CANCELLED = 130

runs_app = typer.Typer(help="List workflow runs and show one (record, decision log, events).")
workflows_app = typer.Typer(
    help="List, show, validate the workflows (workflows/ and .ided/workflows/).", no_args_is_help=True
)

JsonOpt = Annotated[bool, typer.Option("--json", help="Print the run record as JSON on stdout.")]
TrustOpt = Annotated[
    bool,
    typer.Option(
        "--trust",
        help="Let the commands the repository defines (.ided.toml, its workflow files) run, this once, "
        "without asking (`ided trust` remembers it).",
    ),
]
EventsOpt = Annotated[
    bool, typer.Option("--events", help="Print every progress event as one JSON line on stdout (for fronts).")
]
NoDaemonOpt = Annotated[
    bool,
    typer.Option(
        "--no-daemon",
        help="Run in this process instead of the workspace daemon: agents get no code intelligence "
        "(find_definition, get_references, ...).",
    ),
]


def _state(ctx: typer.Context) -> CliState:
    state = ctx.obj
    assert isinstance(state, CliState)
    return state


def _catalog(state: CliState, config: Config, *, quiet: bool = False) -> WorkflowCatalog:
    from daemon.service.pipeline.workflow_catalog import WorkflowCatalog, workflow_dirs

    catalog = WorkflowCatalog.load(workflow_dirs(config.workspace_path, config.pipeline.workflow_dirs))
    if catalog.problems and not quiet:
        state.err.print(
            f"{len(catalog.problems)} problem(s) in workflow files; those files are left out:", style="yellow"
        )
        print_problems(state.err, list(catalog.problems))
    if not catalog.workflows:
        state.fail("no valid workflow found (`ided workflows validate` explains)")
    return catalog


@asynccontextmanager
async def _service(
    state: CliState, config: Config, *, models_needed: bool, no_daemon: bool = True, quiet: bool = False
) -> AsyncGenerator[RunService]:
    """The run service: the daemon's unless ``no_daemon`` (``open_run_service``); when the runs stay in this
    process though a daemon was asked for, says why and what the agents lack (unless ``quiet``)."""
    from daemon.service.runs.opening import REDUCED_TOOLSET, open_run_service

    catalog = _catalog(state, config, quiet=not models_needed)
    async with open_run_service(
        config,
        daemon="never" if no_daemon else "start",
        client="cli",
        models_needed=models_needed,
        catalog=catalog,
        env=os.environ,
        overrides=state.overrides,
    ) as opened:
        if models_needed and not opened.in_daemon and not quiet:
            why = "--no-daemon" if no_daemon else opened.note
            state.err.print(f"{REDUCED_TOOLSET} ({why})", style="yellow", markup=False, highlight=False)
        yield opened.service


def _guarded(state: CliState, work: Callable[[], Coroutine[Any, Any, T]]) -> T:
    try:
        return asyncio.run(work())
    except DaemonError as exc:
        state.fail(str(exc))


async def _follow(
    state: CliState, service: RunService, launch: Callable[[], Awaitable[RunFollow]], events: bool
) -> RunRecord:
    async with await launch() as run:
        async for event in run:
            if events:
                sys.stdout.write(event.model_dump_json() + "\n")
                sys.stdout.flush()
            else:
                print_progress(state.err, event)
        return await service.wait(run.run_id)


def _exit_code(record: RunRecord) -> int:
    if record.status is RunStatus.SUCCEEDED or record.status is RunStatus.PLANNED:
        return 0
    return EXIT_CANCELLED if record.status is RunStatus.CANCELLED else 1


def _report(state: CliState, record: RunRecord, *, as_json: bool, events: bool = False) -> None:
    """The record (JSON on stdout, else rendered; nothing more after ``--events`` alone), then the exit code."""
    if as_json:
        sys.stdout.write(record.model_dump_json(indent=2) + "\n")
    elif not events:
        print_record(state.out if sys.stdout.isatty() else state.err, record)
    code = _exit_code(record)
    if code:
        raise typer.Exit(code)


def run(
    ctx: typer.Context,
    request: Annotated[str, text_argument("What you want done, in your words.")],
    workflow: Annotated[
        str | None, typer.Option("--workflow", help="Use this workflow instead of letting the orchestrator choose.")
    ] = None,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Show selection, plan and graph; execute nothing.")
    ] = False,
    ask: Annotated[
        bool, typer.Option("--ask", help="Read-only: agents read and search but write nothing (no run branch).")
    ] = False,
    include_uncommitted: Annotated[
        bool,
        typer.Option(
            "--include-uncommitted",
            help="Start the run's branch from HEAD plus your uncommitted changes (default: vcs.include_uncommitted).",
        ),
    ] = False,
    trust: TrustOpt = False,
    workspace: WorkspaceOpt = None,
    events: EventsOpt = False,
    as_json: JsonOpt = False,
    no_daemon: NoDaemonOpt = False,
) -> None:
    """Run a request through a workflow: selection, plan, then the LangGraph state machine.

    In a git workspace an editing run works on its own branch `ided/run/<id>` in a worktree and
    commits each stage attempt; nothing touches your files until you accept the change set
    (`ided runs diff ID`, `ided runs accept ID` or `ided runs reject ID`). `--ask` runs read-only.

    With no model configured it shows the deterministic selection and the plan, and says how to
    configure a model (exit code 3). The run is recorded either way (`ided runs`).

    Commands the repository defines run only in a workspace you trust: `ided run` asks when stdin is
    a terminal (else they are withheld and the run says so), `--trust` allows them for this run.
    A code-mode run whose plan edits, in a folder that is not a git repository, fails with
    `not_a_repository`.

    The run executes in the workspace daemon (started when none runs), whose language servers serve
    the agents' code intelligence; `--no-daemon` runs it in this process, without code intelligence.
    """
    from daemon.core.run_models import HOW_TO_CONFIGURE
    from daemon.service.pipeline.workflow_catalog import plan_mermaid
    from daemon.service.runs.params import RunStart

    state = _state(ctx)
    config = state.config(workspace)

    async def go() -> RunRecord:
        async with _service(state, config, models_needed=True, no_daemon=no_daemon, quiet=events) as service:
            record = await service.prepare(
                RunStart(
                    request=request,
                    workflow=workflow,
                    mode="ask" if ask else "code",
                    include_uncommitted=True if include_uncommitted else None,  # None: vcs.include_uncommitted
                )
            )
            assert record.selection is not None and record.plan is not None
            if not events:
                print_selection(state.err, record.selection)
                print_plan(state.err, record.plan)
            missing = await service.missing_models(record.plan)
            if dry_run or missing:
                if dry_run and not events:
                    state.err.print(plan_mermaid(record.plan), markup=False, highlight=False)
                if missing and not dry_run:
                    state.err.print(f"no model configured for {', '.join(missing)}: nothing executed.", style="yellow")
                    state.err.print(HOW_TO_CONFIGURE, markup=False, highlight=False)
                return record
            trusted: bool | None = None
            if (untrusted := await service.untrusted_commands(record.run_id)).withheld:
                trusted = True if trust else ask_trust(state, config.workspace_path, untrusted)
            return await _follow(state, service, lambda: service.execute(record.run_id, trusted=trusted), events)

    record = _guarded(state, go)
    missing_model = record.status is RunStatus.PLANNED and not dry_run
    if as_json:
        sys.stdout.write(record.model_dump_json(indent=2) + "\n")
    elif not events:
        print_record(state.err, record)
    if missing_model:
        raise typer.Exit(EXIT_NO_MODEL)
    if code := _exit_code(record):
        raise typer.Exit(code)


def resume(
    ctx: typer.Context,
    run_id: Annotated[str, typer.Argument(help="The run to continue (`ided runs` lists them).")],
    trust: TrustOpt = False,
    workspace: WorkspaceOpt = None,
    events: EventsOpt = False,
    as_json: JsonOpt = False,
    no_daemon: NoDaemonOpt = False,
) -> None:
    """Continue an interrupted run from its last checkpoint, or execute a planned one.

    The repository's own commands run only in a trusted workspace (`ided trust`) or with `--trust`.
    """
    state = _state(ctx)
    config = state.config(workspace)

    async def go() -> RunRecord:
        async with _service(state, config, models_needed=True, no_daemon=no_daemon, quiet=events) as service:
            trusted = True if trust else None
            return await _follow(state, service, lambda: service.resume(run_id, trusted=trusted), events)

    record = _guarded(state, go)
    _report(state, record, as_json=as_json, events=events)


def cancel(
    ctx: typer.Context,
    run_id: Annotated[str, typer.Argument(help="The run to cancel.")],
    workspace: WorkspaceOpt = None,
) -> None:
    """Cancel a run: no further node starts (the one in flight finishes)."""
    state = _state(ctx)
    config = state.config(workspace)

    async def go() -> RunRecord:
        async with _service(state, config, models_needed=False) as service:
            return await service.cancel(run_id)

    record = _guarded(state, go)
    if record.status is RunStatus.RUNNING:
        state.err.print(f"cancel requested: run {run_id} stops before its next node")
    else:
        state.err.print(f"run {run_id}: {record.status.value}")


@runs_app.callback(invoke_without_command=True)
def runs_list(
    ctx: typer.Context,
    workspace: WorkspaceOpt = None,
    limit: Annotated[int, typer.Option("--limit", "-n", min=1, help="How many runs, newest first.")] = 20,
    this_workspace: Annotated[
        bool,
        typer.Option(
            "--this-workspace",
            help="Only the runs this workspace wrote (runs.workspace_id); default: every writer's runs in the store.",
        ),
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="JSON on stdout.")] = False,
) -> None:
    """List recent runs, newest first: every writer's in the run store (a shared Postgres holds several
    workspaces' runs; the WORKSPACE column then says whose), or this workspace's with --this-workspace."""
    if ctx.invoked_subcommand is not None:
        return
    state = _state(ctx)
    config = state.config(workspace)

    async def go() -> list[RunRecord]:
        async with _service(state, config, models_needed=False) as service:
            return await service.list_runs(limit, all_workspaces=not this_workspace)

    records = _guarded(state, go)
    if as_json:
        sys.stdout.write(json.dumps([r.model_dump(mode="json") for r in records], indent=2) + "\n")
    else:
        print_runs(state.out, records)


@runs_app.command("migrate")
def runs_migrate(
    ctx: typer.Context,
    to: Annotated[str, typer.Option("--to", help="The Postgres to copy into: postgresql://user@host:port/db.")],
    workspace: WorkspaceOpt = None,
    as_json: Annotated[bool, typer.Option("--json", help="The report as JSON on stdout.")] = False,
) -> None:
    """Copy this workspace's runs (records, decision logs, events, checkpoints) into a shared Postgres.

    Runs the target holds already are skipped, so running it twice is safe; the source is only read.
    Afterwards set runs.database_url to the same URL (docs/scale-out.md)."""
    from daemon.core.run_models import MigrationReport
    from daemon.service.runs.migration import migrate_workspace_runs

    state = _state(ctx)
    config = state.config(workspace)

    async def go() -> MigrationReport:
        return await migrate_workspace_runs(config, to)

    report = _guarded(state, go)
    if as_json:
        payload = {
            "copied": list(report.copied),
            "skipped": list(report.skipped),
            "checkpoints": report.checkpoints,
            "source": report.source,
            "target": report.target,
        }
        sys.stdout.write(json.dumps(payload, indent=2) + "\n")
    state.err.print(
        f"{len(report.copied)} run(s) copied ({report.checkpoints} checkpoint(s)), "
        f"{len(report.skipped)} already there: {report.source} -> {report.target}"
    )
    if report.copied or report.skipped:
        state.err.print(f"now set runs.database_url = {report.target!r} (with its password) to use it")


@runs_app.command("show")
def runs_show(
    ctx: typer.Context,
    run_id: Annotated[str, typer.Argument(help="The run to show.")],
    workspace: WorkspaceOpt = None,
    events: Annotated[bool, typer.Option("--events", help="Also list the progress events.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Record, decision log (and events) as JSON.")] = False,
) -> None:
    """Show a run: record, plan, stop decision and the decision log."""
    state = _state(ctx)
    config = state.config(workspace)

    async def go() -> None:
        async with _service(state, config, models_needed=False) as service:
            detail = await service.show(run_id, events=events)  # one call: record, decision log, events
            record, log, progress = detail.record, detail.decisions, detail.events
            if as_json:
                payload = {
                    "record": record.model_dump(mode="json"),
                    "decisions": [e.model_dump(mode="json") for e in log],
                    "events": [e.model_dump(mode="json") for e in progress],
                }
                sys.stdout.write(json.dumps(payload, indent=2) + "\n")
            else:
                print_record(state.out, record)
                if record.plan is not None:
                    print_plan(state.out, record.plan)
                state.out.print("decision log:", style="bold")
                print_decisions(state.out, log)
                for event in progress:
                    print_progress(state.out, event)

    _guarded(state, go)


@runs_app.command("feedback")
def runs_feedback(
    ctx: typer.Context,
    run_id: Annotated[str, typer.Argument(help="The editing run to answer (`ided runs` lists them).")],
    text: Annotated[str, text_argument("What to change, in your words.")],
    workspace: WorkspaceOpt = None,
    events: EventsOpt = False,
    as_json: JsonOpt = False,
    no_daemon: NoDaemonOpt = False,
) -> None:
    """Send review feedback on an editing run, as an editor does over ACP.

    The run's last editing stage runs again with your feedback in its task, on the same branch; its
    changes become a new commit and the run ends with a review again (`ided runs diff ID`, then
    `ided runs accept|reject ID`). Only a run that ended, edited and is neither accepted nor rejected
    takes feedback.
    """
    state = _state(ctx)
    config = state.config(workspace)

    async def go() -> RunRecord:
        async with _service(state, config, models_needed=True, no_daemon=no_daemon, quiet=events) as service:
            return await _follow(state, service, lambda: service.feedback(run_id, text), events)

    record = _guarded(state, go)
    _report(state, record, as_json=as_json, events=events)


def workflows_list(ctx: typer.Context, workspace: WorkspaceOpt = None) -> None:
    """List the available workflows (built-in, then the workspace's .ided/workflows/)."""
    state = _state(ctx)
    print_catalog(state.out, _catalog(state, state.config(workspace)))


def workflows_show(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument(help="Workflow name.")],
    mermaid: Annotated[bool, typer.Option("--mermaid", help="Print the compiled LangGraph graph as Mermaid.")] = False,
    request: Annotated[
        str | None, typer.Option("--request", help="Decide optional stages for this request (deterministic rules).")
    ] = None,
    workspace: WorkspaceOpt = None,
) -> None:
    """Show a workflow's stages and routing, or (--mermaid) its compiled graph; all stages included by default."""
    from daemon.service.pipeline.workflow_catalog import plan_mermaid, workflow_plan

    state = _state(ctx)
    catalog = _catalog(state, state.config(workspace), quiet=True)
    try:
        wf = catalog.get(name)
    except DaemonError as exc:
        state.fail(str(exc))
    plan = workflow_plan(wf, request)
    if mermaid:
        sys.stdout.write(plan_mermaid(plan) + "\n")
        return
    print_workflow(state.out, wf, catalog.sources[name])
    print_plan(state.out, plan)


def workflows_validate(
    ctx: typer.Context,
    files: Annotated[
        list[Path] | None, typer.Argument(help="Files to check (default: every workflow directory).")
    ] = None,
    workspace: WorkspaceOpt = None,
) -> None:
    """Validate workflow files: schema, routing targets, reachability, bounded loops, unique ids.

    Files in the specification's spelling are valid too; the fields it normalised are counted here and
    listed by `ided workflows show NAME` and in the plan of `ided run`.
    """
    from daemon.service.pipeline.workflow_catalog import (
        Workflow,
        WorkflowCatalog,
        WorkflowValidationError,
        load_workflow_file,
        workflow_dirs,
    )

    state = _state(ctx)
    valid: dict[str, Workflow] = {}
    if files:
        problems: list[WorkflowProblem] = []
        for f in files:
            try:
                valid[str(f)] = load_workflow_file(f)
            except WorkflowValidationError as exc:
                problems.extend(exc.problems)
        checked = len(files)
    else:
        config = state.config(workspace)
        catalog = WorkflowCatalog.load(workflow_dirs(config.workspace_path, config.pipeline.workflow_dirs))
        problems = list(catalog.problems)
        valid = {catalog.sources[name]: wf for name, wf in catalog.workflows.items()}
        checked = len(catalog.workflows) + len({p.file for p in problems})
    if problems:
        print_problems(state.err, problems)
        state.fail(f"{len(problems)} problem(s) in {len({p.file for p in problems})} file(s)")
    state.err.print(f"{checked} workflow file(s) valid", style="green")
    for source, wf in valid.items():
        if wf.notes:
            informational = sum(n.informational for n in wf.notes)
            state.err.print(
                f"  {source}: {len(wf.notes)} field(s) in the specification's spelling, {informational} of them "
                f"informational (`ided workflows show {wf.name}` lists them)",
                markup=False,
                highlight=False,
            )


def workflows_schema() -> None:
    """Print the JSON Schema of workflow files (also in workflows/schema.json)."""
    from daemon.service.pipeline.workflow_catalog import workflow_json_schema

    sys.stdout.write(json.dumps(workflow_json_schema(), indent=2) + "\n")


workflows_app.command("list")(workflows_list)
workflows_app.command("show")(workflows_show)
workflows_app.command("validate")(workflows_validate)
workflows_app.command("schema")(workflows_schema)


def register_run_commands(app: typer.Typer) -> None:
    """Add the pipeline commands to the ``ided`` app."""
    app.command("run")(run)
    app.command("resume")(resume)
    app.command("cancel")(cancel)
    app.add_typer(runs_app, name="runs")
    app.add_typer(workflows_app, name="workflows")
