"""What ``intel.node_options`` does to a Node-based language server: memory and answer times.

Starts the workspace's Python (or TypeScript) server through ided's own ``LanguageServerPool``
once per setting, interleaved over ``--rounds``, and asks what an agent asks: the definition of a
symbol at a position, then its references ``--refs`` times (the first makes the server analyse
every file that names it). Printed per setting: the first definition's time, the first references'
time and the median of the others, and the RSS of the server's process tree (the launcher, node,
tsserver) a few seconds after the last answer, with the median over the rounds.

    uv run --frozen python bench/node_heap.py /tmp/req/requests-2.32.3 src/requests/sessions.py \\
        "return self.request(" --setting= --setting=--max-semi-space-size=4

``""`` is Node's default heap. The symbol is the text's last word before ``(`` on the first line
that contains it.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import subprocess
import time
from pathlib import Path
from typing import Any

from lsprotocol import types as lsp

from daemon.config import IntelConfig
from daemon.intel.lsp.client import LspClient
from daemon.intel.lsp.documents import OpenDocument
from daemon.intel.lsp.pool import LanguageServerPool

TOOLS = Path(__file__).resolve().parents[1] / ".tools"
SEARCH_PATH = (str(TOOLS / "lsp-venv" / "bin"), str(TOOLS / "node" / "node_modules" / ".bin"))
SETTLE_S = 5.0


def tree_rss_mb(pid: int) -> float:
    rows = [
        tuple(int(v) for v in line.split())
        for line in subprocess.run(
            ["ps", "-e", "-o", "pid=,ppid=,rss="], capture_output=True, text=True
        ).stdout.splitlines()
    ]
    tree, frontier = {pid}, [pid]
    while frontier:
        parent = frontier.pop()
        for child, ppid, _ in rows:
            if ppid == parent and child not in tree:
                tree.add(child)
                frontier.append(child)
    return sum(rss for p, _, rss in rows if p in tree) / 1024


async def one_round(
    workspace: Path, file: Path, marker: str, language: str, node_options: str, refs: int
) -> dict[str, float]:
    config = IntelConfig(search_path=SEARCH_PATH, prestart=False, node_options=node_options)
    lines = (await asyncio.to_thread(file.read_text)).split("\n")
    line = next(i for i, text in enumerate(lines) if marker in text)
    column = lines[line].index(marker) + len(marker) - 2  # on the name before "("

    def ask(method: str) -> Any:
        async def op(client: LspClient, doc: OpenDocument | None) -> Any:
            assert doc is not None
            document, position = lsp.TextDocumentIdentifier(uri=doc.uri), lsp.Position(line=line, character=column)
            params: Any = (
                lsp.DefinitionParams(text_document=document, position=position)
                if method == lsp.TEXT_DOCUMENT_DEFINITION
                else lsp.ReferenceParams(
                    text_document=document, position=position, context=lsp.ReferenceContext(include_declaration=True)
                )
            )
            return await client.request(method, params, timeout_s=120.0)

        return op

    async with LanguageServerPool(workspace, config) as pool:
        started = time.perf_counter()
        answer = await pool.run(language, ask(lsp.TEXT_DOCUMENT_DEFINITION), path=file, ready_wait=120.0)
        definition = time.perf_counter() - started
        if not answer:
            raise SystemExit(f"no definition at {file}:{line + 1}:{column + 1}")
        times: list[float] = []
        for _ in range(refs):
            started = time.perf_counter()
            await pool.run(language, ask(lsp.TEXT_DOCUMENT_REFERENCES), path=file, ready_wait=120.0)
            times.append(time.perf_counter() - started)
        await asyncio.sleep(SETTLE_S)
        pid = next(s.pid for s in pool.statuses() if language in s.languages)
        assert pid is not None
        return {
            "definition_s": definition,
            "first_references_s": times[0],
            "references_ms": 1000 * statistics.median(times[1:] or times),
            "rss_mb": tree_rss_mb(pid),
        }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("workspace", type=Path)
    parser.add_argument("file", help="workspace-relative file")
    parser.add_argument("marker", help="text on the line asked about, ending in the name and '('")
    parser.add_argument("--language", default="python")
    parser.add_argument(
        "--setting",
        action="append",
        dest="settings",
        help="NODE_OPTIONS to compare, repeated (write --setting=--max-semi-space-size=2; '' is Node's default); "
        "default: '' and --max-semi-space-size=4",
    )
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--refs", type=int, default=5)
    args = parser.parse_args()
    workspace = args.workspace.resolve()
    args.settings = args.settings or ["", "--max-semi-space-size=4"]
    results: dict[str, list[dict[str, float]]] = {s: [] for s in args.settings}
    for round_no in range(args.rounds):
        for setting in args.settings:
            figures = asyncio.run(
                one_round(workspace, workspace / args.file, args.marker, args.language, setting, args.refs)
            )
            results[setting].append(figures)
            print(
                f"round {round_no + 1} {setting or '(node default)':28} "
                + "  ".join(f"{k} {v:.2f}" for k, v in figures.items())
            )
    print(f"\n{workspace.name}: median of {args.rounds} rounds")
    print(f"{'NODE_OPTIONS added':28} {'definition s':>12} {'1st refs s':>10} {'refs ms':>7} {'RSS MB':>7}")
    for setting, rows in results.items():
        med = {k: statistics.median(r[k] for r in rows) for k in rows[0]}
        name = setting or "(node default)"
        print(
            f"{name:28} {med['definition_s']:12.2f} {med['first_references_s']:10.2f} {med['references_ms']:7.1f} "
            f"{med['rss_mb']:7.0f}"
        )


if __name__ == "__main__":
    main()
