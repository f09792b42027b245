"""Human-readable rendering of results for the terminal (JSON output bypasses this)."""

from __future__ import annotations

import re

from rich.console import Console
from rich.table import Table
from rich.text import Text

from daemon.core.intel_models import IntelStatus
from daemon.core.models import IndexReport, IndexStatus, MatchConfidence, SearchHit, SearchResult

__all__ = ["print_report", "print_search", "print_serving", "print_status", "snippet"]

_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]{2,}")


def snippet(hit: SearchHit, query: str, lines: int = 3) -> list[tuple[int, str]]:
    """Up to ``lines`` lines of the chunk, preferring lines that contain query words."""
    words = {w.lower() for w in _WORD.findall(query)}
    body = hit.chunk.text.splitlines()
    numbered = [(hit.chunk.start_line + i, line.rstrip()) for i, line in enumerate(body) if line.strip()]
    if not numbered:
        return []
    matching = [(n, line) for n, line in numbered if any(w in line.lower() for w in words)]
    chosen = matching[:lines] if matching else numbered[:lines]
    return [(n, line if len(line) <= 160 else line[:157] + "...") for n, line in chosen]


def _one_line(hit: SearchHit, query: str) -> tuple[int, str] | None:
    """The hit in one line: its signature (whitespace folded), else its best line for the query."""
    c = hit.chunk
    if c.signature:
        line = " ".join(c.signature.split())
        return c.start_line, line if len(line) <= 160 else line[:157] + "..."
    lines = snippet(hit, query, lines=1)
    return lines[0] if lines else None


def print_search(console: Console, result: SearchResult, *, verbose: bool = False, group_by_file: bool = False) -> None:
    """Hits in score order, each as path:line, symbol, score and one line (``verbose``: its kind,
    language, rankers and up to three lines); ``group_by_file``: each file's hits under its path."""
    query = result.query if len(result.query) <= 80 else result.query[:77] + "..."
    if not result.hits:
        console.print(f"no results for {query!r}", highlight=False)
    elif result.matches is MatchConfidence.NONE:
        console.print(Text(f"nothing relevant found for {query!r}; the nearest hits follow", style="yellow"))
    elif result.matches is MatchConfidence.WEAK:
        console.print(Text("weak matches: the hits carry little of the query", style="yellow"))
    shown = result.grouped_by_file() if group_by_file else result
    rank_of = {hit.id: rank for rank, hit in enumerate(result.hits, 1)}
    current_file: str | None = None
    for hit in shown.hits:
        c = hit.chunk
        title = Text()
        if group_by_file:
            if c.path != current_file:
                console.print(Text(c.path, style="bold cyan"), highlight=False)
                current_file = c.path
            title.append(f"  {rank_of[hit.id]:>2}. ", style="dim")
            title.append(f":{c.start_line}", style="cyan")
        else:
            title.append(f"{rank_of[hit.id]:>2}. ", style="dim")
            title.append(f"{c.path}:{c.start_line}", style="bold cyan")
        title.append(f"  {c.qualified_name or c.name or c.symbol_kind.value}", style="bold")
        if verbose:
            title.append(f"  [{c.symbol_kind.value}, {c.language}]", style="dim")
            title.append(f"  score {hit.score:.4f} ({'+'.join(hit.sources) or '-'})", style="dim")
        else:
            title.append(f"  {hit.score:.3f}", style="dim")
        console.print(title)
        shown_lines = snippet(hit, result.query) if verbose else [x for x in [_one_line(hit, result.query)] if x]
        for n, line in shown_lines:
            console.print(Text(f"      {n:>5} │ {line}", style="default"), highlight=False)
    footer = f"{result.mode.value} search, {result.seconds * 1000:.0f} ms, vectors {result.embedded_fraction:.0%}"
    if result.reranked:
        footer += ", reranked"
    footer += f", matches {result.matches.value}"
    console.print(Text(footer, style="dim"))
    for note in result.notes:
        console.print(Text(f"note: {note}", style="yellow"))


def print_report(console: Console, report: IndexReport) -> None:
    skipped = sum(report.skipped.values())
    console.print(
        f"indexed {report.files_indexed} file(s), {report.files_unchanged} unchanged, "
        f"{report.files_removed} removed, {skipped} skipped; {report.chunks_written} chunk(s) written "
        f"in {report.seconds:.2f}s",
        highlight=False,
    )
    for reason, n in sorted(report.skipped.items(), key=lambda kv: -kv[1]):
        examples = ", ".join(report.skipped_examples.get(reason, [])[:3])
        console.print(Text(f"  skipped {n:>6} {reason.value:<16} e.g. {examples}", style="dim"))


def print_status(console: Console, status: IndexStatus) -> None:
    table = Table(show_header=False, box=None, pad_edge=False)
    table.add_column(style="bold")
    table.add_column()
    table.add_row("workspace", status.workspace)
    table.add_row("ready", ("yes" if status.ready else "no") + (f" ({status.reason})" if status.reason else ""))
    table.add_row("store", f"{status.store} in {status.state_dir}")
    table.add_row("files", str(status.files_indexed))
    kinds = ", ".join(f"{k} {v}" for k, v in sorted(status.chunks_by_kind.items()))
    table.add_row("chunks", f"{status.chunks}" + (f" ({kinds})" if kinds else ""))
    table.add_row("embedded", f"{status.embedded} ({status.embedded_fraction:.0%})")
    table.add_row("dense model", status.dense_model or f"off ({status.dense_unavailable_reason})")
    if status.dense_unavailable_reason and status.dense_model:
        table.add_row("", Text(f"unavailable: {status.dense_unavailable_reason}", style="yellow"))
    table.add_row("rerank", status.rerank_model or f"off ({status.rerank_unavailable_reason})")
    table.add_row("last update", status.last_update or "never")
    if status.last_report is not None:
        skipped = ", ".join(f"{k.value} {v}" for k, v in sorted(status.last_report.skipped.items()))
        table.add_row("last pass", f"seen {status.last_report.files_seen}, skipped: {skipped or 'none'}")
    console.print(table)


def print_serving(console: Console, status: IntelStatus) -> None:
    """Which process serves the workspace (the daemon, its clients and idle limit) and its language servers."""
    daemon = status.daemon
    if daemon is None:
        console.print("daemon: not running (`ided daemon` starts one)", style="dim")
    else:
        clients = ", ".join(f"{c.client}" + (f" (pid {c.pid})" if c.pid else "") for c in daemon.clients) or "none"
        console.print(
            f"daemon: pid {daemon.pid}, up {daemon.uptime_seconds:,.0f}s, "
            f"watching {'on' if daemon.watching else 'off'}, clients: {clients}"
            + (f", busy: {daemon.busy}" if daemon.busy else ""),
            highlight=False,
        )
        who = "an editor has attached" if daemon.editor_attached else "no editor has attached"
        stops = (
            f"stops {daemon.idle_limit_seconds:,}s after the last client leaves ({who})"
            if daemon.idle_limit_seconds
            else "never stops by itself (daemon.idle_shutdown_seconds = 0)"
        )
        console.print(Text(f"  idle: {stops}", style="dim"))
    for server in status.servers:
        line = f"  language server {server.name} ({', '.join(server.languages)}): {server.state.value}"
        if server.pid:
            line += f", pid {server.pid}, {server.requests} request(s), {server.restarts} restart(s)"
        if server.reason:
            line += f" - {server.reason}"
        console.print(Text(line, style="dim"))
