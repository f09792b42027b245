"""Terminal rendering of selections, plans, runs, decision logs and progress events (``--json`` bypasses it)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from rich.console import Console
from rich.text import Text

from daemon.core.run_models import DecisionEntry, ExecutionPlan, ExecutionProgress, ProgressKind, RunRecord, RunStatus
from daemon.core.selection_models import Selection
from daemon.core.workflow_schema import Workflow

if TYPE_CHECKING:  # the loader brings YAML; the CLI imports this module for every command
    from daemon.service.pipeline.workflow_catalog import WorkflowCatalog, WorkflowProblem

__all__ = [
    "print_catalog",
    "print_decisions",
    "print_plan",
    "print_problems",
    "print_progress",
    "print_record",
    "print_runs",
    "print_selection",
    "print_workflow",
]

_STATUS_STYLE = {
    RunStatus.SUCCEEDED: "green",
    RunStatus.FAILED: "red",
    RunStatus.ABORTED: "red",
    RunStatus.CANCELLED: "yellow",
    RunStatus.INTERRUPTED: "yellow",
    RunStatus.RUNNING: "cyan",
    RunStatus.PLANNED: "dim",
}


def print_selection(console: Console, selection: Selection) -> None:
    head = Text()
    head.append("workflow ", style="bold")
    head.append(selection.workflow, style="bold cyan")
    head.append(f"  (selected by: {selection.path.value}", style="dim")
    head.append(f", model {selection.model})" if selection.model else ")", style="dim")
    console.print(head)
    console.print(Text(f"  {selection.rationale}"), highlight=False)
    for attempt in selection.attempts:
        if not attempt.ok:
            console.print(Text(f"  model answer {attempt.attempt} rejected: {attempt.error}", style="yellow"))
    for d in selection.stage_decisions:
        line = Text("  ")
        line.append("INCLUDE" if d.include else "SKIP   ", style="green" if d.include else "yellow")
        line.append(f" {d.stage_id}", style="bold")
        line.append(f" ({d.source.value}): {d.reason}", style="dim" if d.source.value == "required" else "")
        console.print(line, highlight=False)


def print_plan(console: Console, plan: ExecutionPlan) -> None:
    console.print(Text(f"plan: entry {plan.entry}", style="bold"))
    for stage in plan.stages:
        route = plan.routing[stage.stage_id]
        line = Text("  ")
        line.append(stage.stage_id, style="bold")
        agents = ", ".join(a.agent_id for a in stage.agents)
        limit = f", max {stage.max_attempts}" if stage.max_attempts else ""
        line.append(f" [{agents}; {stage.failure_aggregation.value}{limit}; budget {stage.token_budget}]", style="dim")
        line.append(f" success -> {route.on_success}, failure -> {route.on_failure}")
        if route.retry != stage.stage_id:
            line.append(f", retry -> {route.retry}")
        console.print(line, highlight=False)
    for skipped in plan.skipped:
        console.print(Text(f"  skipped {skipped.stage_id}: {skipped.reason}", style="dim"), highlight=False)
    strategy = plan.retrieval_strategy
    sources = ", ".join(f"{s.name}({s.priority})" for s in strategy.rag_strategy.sources) or "none"
    console.print(
        Text(
            f"  retrieval: ast_parsing={strategy.ast_parsing} lsp_integration={strategy.lsp_integration} "
            f"rag sources {sources}; adaptive retrieval "
            f"{'on' if strategy.adaptive_retrieval.enabled else 'off'} "
            f"(max {strategy.adaptive_retrieval.max_enrichment_attempts} per stage)",
            style="dim",
        )
    )
    if plan.notes:
        mapped = [n for n in plan.notes if not n.informational]
        console.print(
            Text(
                f"  written in the specification's spelling: {len(mapped)} field(s) mapped, "
                f"{len(plan.notes) - len(mapped)} informational",
                style="dim",
            )
        )
        for note in plan.notes:
            tag = "informational" if note.informational else "mapped"
            console.print(Text(f"    {tag}: {note.field} = {note.value}: {note.meaning}", style="dim"), highlight=False)


def print_progress(console: Console, event: ExecutionProgress) -> None:
    if event.event is ProgressKind.NODE_STARTED:
        attempt = f" (attempt {event.attempt})" if event.attempt else ""
        console.print(Text(f"▶ {event.node}{attempt}", style="bold"), highlight=False)
    elif event.event is ProgressKind.NODE_FINISHED:
        ok = event.status != "failed"
        mark, style = ("✔", "green") if ok else ("✘", "red")
        console.print(Text(f"{mark} {event.node}: {event.summary or ''}", style=style), highlight=False)
    elif event.event is ProgressKind.ROUTING_DECISION and event.routing is not None:
        r = event.routing
        console.print(Text(f"  → {r.target}  [{r.condition}]", style="dim"), highlight=False)
    elif event.event is ProgressKind.TOOL_CALL:
        console.print(Text(f"  ⚙ {event.agent_id or ''}: {event.title or ''}", style="dim"), highlight=False)
    elif event.event is ProgressKind.TOOL_CALL_UPDATE and event.tool_status == "failed":
        first = (event.output or "").strip().splitlines()[:1]
        console.print(Text(f"  ⚠ {event.title or 'tool call'} failed: {' '.join(first)}", style="yellow"))
    elif event.event is ProgressKind.AGENT_MESSAGE and event.text:
        console.print(Text(f"  {event.agent_id or 'agent'}: {event.text.strip()}", style="italic"), highlight=False)
    elif event.event is ProgressKind.REVIEW and event.changes is not None:
        files = event.changes.files
        console.print(
            Text(
                f"changes to review on {event.changes.branch}: {len(files)} file(s), {len(event.changes.commits)} "
                f"commit(s) — `ided runs diff {event.run_id}`, then `ided runs accept|reject {event.run_id}`",
                style="bold magenta",
            ),
            highlight=False,
        )
    elif event.event in (ProgressKind.RUN_STARTED, ProgressKind.RUN_RESUMED):
        verb = "started" if event.event is ProgressKind.RUN_STARTED else "resumed"
        console.print(Text(f"run {event.run_id} {verb}: {event.summary or ''}", style="bold cyan"), highlight=False)


def print_record(console: Console, record: RunRecord) -> None:
    style = _STATUS_STYLE.get(record.status, "default")
    head = Text()
    head.append(f"run {record.run_id}: ", style="bold")
    head.append(record.status.value, style=f"bold {style}")
    head.append(f"  workflow {record.workflow or '-'}", style="dim")
    console.print(head)
    console.print(Text(f"  request: {record.request}"), highlight=False)
    console.print(
        Text(f"  created {record.created_at}, updated {record.updated_at}, resumed {record.resumed}x", style="dim")
    )
    if record.stop is not None:
        console.print(Text(f"  stop: {record.stop.status.value}: {record.stop.reason}", style=style), highlight=False)
        for ref in record.stop.evidence_refs:
            console.print(Text(f"    evidence {ref}", style="dim"), highlight=False)
    if record.status is RunStatus.INTERRUPTED:
        console.print(
            Text(f"  interrupted: `ided resume {record.run_id}` continues from its last checkpoint", style="yellow")
        )
    if record.status is RunStatus.PLANNED:
        console.print(Text(f"  planned only: `ided resume {record.run_id}` executes it", style="dim"))
    if record.changes is not None and not record.changes.empty:
        changes = record.changes
        stats = ", ".join(f"{f.path} +{f.added}/-{f.removed}" for f in changes.files[:8])
        more = f" and {len(changes.files) - 8} more" if len(changes.files) > 8 else ""
        console.print(Text(f"  changes on {changes.branch}: {stats}{more}", style="magenta"), highlight=False)
        console.print(
            Text(f"  review: `ided runs diff {record.run_id}`, then `ided runs accept|reject {record.run_id}`"),
            highlight=False,
        )


def print_runs(console: Console, records: list[RunRecord]) -> None:
    if not records:
        console.print('no runs yet (`ided run "your request"` starts one)')
        return
    writers = {r.workspace for r in records}
    for r in records:
        line = Text()
        line.append(r.run_id, style="bold")
        line.append(f"  {r.status.value:<11}", style=_STATUS_STYLE.get(r.status, ""))
        line.append(f" {r.created_at[:19].replace('T', ' ')}  {r.workflow or '-'}", style="dim")
        if len(writers) > 1:  # a shared run store: say which workspace wrote the run
            line.append(f"  [{r.workspace or '?'}]", style="cyan")
        request = r.request if len(r.request) <= 70 else r.request[:67] + "..."
        line.append(f"  {request}")
        console.print(line, highlight=False)


def print_decisions(console: Console, entries: Sequence[DecisionEntry]) -> None:
    for e in entries:
        console.print(Text(f"{e.seq:>3} {e.at[11:23]} {e.kind.value:<15} {e.summary}"), highlight=False)


def print_catalog(console: Console, catalog: WorkflowCatalog) -> None:
    for name in catalog.names():
        wf = catalog.get(name)
        optional = ", ".join(s.stage_id for s in wf.optional_stages) or "none"
        head = Text()
        head.append(name, style="bold cyan")
        head.append(f"  {wf.metadata.workflow_type.value}, {len(wf.stages)} stages (optional: {optional})", style="dim")
        console.print(head, highlight=False)
        console.print(Text(f"    {wf.metadata.description.strip()}"), highlight=False)
        console.print(Text(f"    from {catalog.sources[name]}", style="dim"), highlight=False)


def print_workflow(console: Console, workflow: Workflow, source: str) -> None:
    meta = workflow.metadata
    console.print(Text(f"{meta.name} v{meta.version} ({meta.workflow_type.value}) from {source}", style="bold"))
    console.print(Text(meta.description.strip()), highlight=False)
    for s in workflow.stages:
        line = Text("  ")
        line.append(s.stage_id, style="bold")
        agents = ", ".join(a.agent_id for a in s.parallel_agents)
        line.append(f" ({s.type.value}, {'required' if s.required else 'optional'}): {agents}")
        if len(s.parallel_agents) > 1:
            line.append(f" [{s.parallel_config.failure_aggregation.value}]", style="dim")
        console.print(line, highlight=False)
        if not s.required and s.reasoning_guidance:
            console.print(Text(f"      include when: {s.reasoning_guidance.strip()}", style="dim"), highlight=False)


def print_problems(console: Console, problems: list[WorkflowProblem]) -> None:
    for p in problems:
        console.print(Text("✘ ", style="red") + Text(str(p)), highlight=False)
