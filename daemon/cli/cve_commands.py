"""``ided cve sync --from DIR|ZIP``: import an OSV export into the workspace's OSV mirror; ``ided cve audit``:
the dependency audit the advisory source gives a security stage, printed.

The mirror is ``retrieval.osv_mirror`` (or ``--mirror``); the export is a directory of OSV records or
OSV's ``<ecosystem>/all.zip``, downloaded by the user (ided downloads nothing). Both print a
summary on stderr, or the report as JSON on stdout with ``--json``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from daemon.cli.context import CliState
from daemon.errors import DaemonError

__all__ = ["cve_app", "register_cve_commands"]

cve_app = typer.Typer(
    help="The local OSV advisory mirror: import an export, audit the dependencies.", no_args_is_help=True
)

WorkspaceOpt = Annotated[
    Path | None, typer.Option("--workspace", "-w", help="Workspace root (default: found from the current directory).")
]
MirrorOpt = Annotated[
    Path | None, typer.Option("--mirror", help="The mirror directory; default: retrieval.osv_mirror.")
]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print the report as JSON on stdout.")]


def _state(ctx: typer.Context) -> CliState:
    state = ctx.obj
    return state if isinstance(state, CliState) else CliState()


@cve_app.command("sync")
def cve_sync(
    ctx: typer.Context,
    source: Annotated[
        Path, typer.Option("--from", help="A directory of OSV records or an OSV export ZIP (e.g. PyPI/all.zip).")
    ],
    mirror: MirrorOpt = None,
    workspace: WorkspaceOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Import the OSV records of an export into the mirror (validated; running it twice changes nothing)."""
    from daemon.service.commands.osv_audit import sync_osv_mirror

    state = _state(ctx)
    config = state.config(workspace)
    try:
        report = sync_osv_mirror(config, source, mirror)
    except DaemonError as exc:
        state.fail(str(exc))
    if as_json:
        print(json.dumps(report.to_json(), indent=2))
        return
    per = ", ".join(f"{eco} {n}" for eco, n in sorted(report.ecosystems.items())) or "none"
    state.err.print(
        f"{report.mirror}: {report.added} added, {report.updated} updated, {report.unchanged} unchanged, "
        f"{report.older} older than the stored ones, {report.invalid} invalid; {report.total} records in all "
        f"(read per ecosystem: {per})",
        highlight=False,
    )
    for problem in report.problems:
        state.err.print(f"  invalid: {problem}", highlight=False, markup=False)
    for note in report.notes:
        state.err.print(f"  note: {note}", highlight=False, markup=False)


@cve_app.command("audit")
def cve_audit(
    ctx: typer.Context, mirror: MirrorOpt = None, workspace: WorkspaceOpt = None, as_json: JsonOpt = False
) -> None:
    """Match the workspace's locked dependencies against the mirror (what a security stage is given)."""
    from daemon.service.commands.osv_audit import audit_texts, audit_workspace

    state = _state(ctx)
    config = state.config(workspace)
    try:
        report = audit_workspace(config, mirror)
    except DaemonError as exc:
        state.fail(str(exc))
    if as_json:
        body = {
            "records": report.records,
            "checked": report.checked,
            "files": report.scan.files,
            "problems": report.scan.problems,
            "unreadable": report.unreadable,
            "findings": [
                {
                    "ecosystem": f.ecosystem,
                    "name": f.name,
                    "version": f.version,
                    "where": list(f.where),
                    "advisory": f.advisory,
                    "aliases": list(f.aliases),
                    "severity": f.severity,
                    "fixed": list(f.fixed),
                    "summary": f.summary,
                }
                for f in report.findings
            ],
        }
        print(json.dumps(body, indent=2))
        return
    for text in audit_texts(report):
        state.out.print(text, highlight=False, markup=False)
    if report.findings:
        raise typer.Exit(1)


def register_cve_commands(app: typer.Typer) -> None:
    app.add_typer(cve_app, name="cve")
