// The plan webview: a run's plan drawn as a graph (planGraph.ts) in an editor-area panel, coloured by
// the stages' status and redrawn as the run's progress arrives. One panel, showing the current run;
// a dry run opens it by itself, "ided: Show the plan as a graph" at any time. The page holds no
// script: it is an SVG and its styles (from the theme's colours), replaced whole on each change.
import * as vscode from "vscode";

import { drawPlanGraph, skippedLines, StageStatus } from "./planGraph";
import { phaseWords, RunState } from "./runModel";

export class PlanPanel implements vscode.Disposable {
  private panel: vscode.WebviewPanel | undefined;
  private run: RunState | undefined;

  /** Open (or reveal) the panel on `run`'s plan. */
  show(run: RunState): void {
    if (!run.graph) {
      void vscode.window.showWarningMessage(`ided: no plan graph for run ${run.runId} (the server sent none)`);
      return;
    }
    this.run = run;
    if (!this.panel) {
      this.panel = vscode.window.createWebviewPanel(
        "ided.plan",
        this.title(run),
        { viewColumn: vscode.ViewColumn.Beside, preserveFocus: true },
        { enableScripts: false, retainContextWhenHidden: false },
      );
      this.panel.onDidDispose(() => {
        this.panel = undefined;
      });
    } else {
      this.panel.reveal(undefined, true);
    }
    this.render();
  }

  /** Draw again when the panel shows `run` (its progress changed). */
  refresh(run: RunState | undefined): void {
    if (this.panel && run && run === this.run) {
      this.render();
    }
  }

  dispose(): void {
    this.panel?.dispose();
  }

  private title(run: RunState): string {
    return `ided plan: ${run.runId}`;
  }

  private render(): void {
    const run = this.run;
    if (!this.panel || !run?.graph) {
      return;
    }
    const statuses = new Map<string, StageStatus>(run.stages.map((s) => [s.id, { status: s.status, attempt: s.attempt }]));
    const drawn = drawPlanGraph(run.graph, statuses);
    const skipped = skippedLines(run.graph)
      .map((line) => `<li>${escape(line)}</li>`)
      .join("");
    this.panel.title = this.title(run);
    this.panel.webview.html = `<!DOCTYPE html>
<html lang="en"><head><meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline';">
<title>${escape(this.title(run))}</title>
<style>${STYLE}</style></head>
<body>
<h1>${escape(run.request)}</h1>
<p class="meta">${run.dryRun ? "dry run" : "run"} ${escape(run.runId)} · ${escape(run.workflow ?? "?")} · ${escape(phaseWords(run.phase))}</p>
${drawn.svg}
${skipped ? `<p class="meta">skipped:</p><ul class="skipped">${skipped}</ul>` : ""}
<p class="legend">○ pending · ▶ running · ✓ completed · ✗ failed — <span class="l-success">success</span> · <span class="l-failure">failure</span> · <span class="l-retry">retry</span></p>
</body></html>`;
  }
}

function escape(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");
}

const STYLE = `
body { font-family: var(--vscode-font-family); color: var(--vscode-foreground); padding: 8px 16px; }
h1 { font-size: 1.1em; font-weight: 600; margin: 0.4em 0 0.2em; }
.meta, .legend, .skipped { color: var(--vscode-descriptionForeground); }
svg.ided-plan { max-width: 100%; height: auto; }
svg text { font-family: var(--vscode-font-family); font-size: 13px; fill: var(--vscode-foreground); }
.node rect { fill: var(--vscode-editorWidget-background, var(--vscode-editor-background)); stroke: var(--vscode-panel-border, #888); stroke-width: 1.5; }
.node.status-pending text { fill: var(--vscode-descriptionForeground); }
.node.status-completed rect { stroke: var(--vscode-testing-iconPassed, #73c991); }
.node.status-failed rect { stroke: var(--vscode-testing-iconFailed, #f14c4c); }
.node.status-in_progress rect { stroke: var(--vscode-progressBar-background, #0e70c0); stroke-width: 3; }
.node.status-node rect { stroke-dasharray: 6 3; }
.terminal rect { fill: var(--vscode-badge-background, #4d4d4d); stroke: none; }
.terminal text { fill: var(--vscode-badge-foreground, #fff); font-weight: 600; }
.terminal.abort rect { fill: var(--vscode-inputValidation-errorBackground, #5a1d1d); }
.start text { fill: var(--vscode-descriptionForeground); font-size: 12px; }
.edge-line { fill: none; stroke: var(--vscode-descriptionForeground); stroke-width: 1.5; }
.start .edge-line { stroke: var(--vscode-descriptionForeground); }
.edge-success .edge-line { stroke: var(--vscode-charts-green, #89d185); }
.edge-failure .edge-line { stroke: var(--vscode-charts-red, #f14c4c); }
.edge-retry .edge-line { stroke: var(--vscode-charts-orange, #d18616); stroke-dasharray: 5 3; }
.edge-label { font-size: 11px; fill: var(--vscode-descriptionForeground); }
.arrow path { fill: var(--vscode-descriptionForeground); }
.arrow-success path { fill: var(--vscode-charts-green, #89d185); }
.arrow-failure path { fill: var(--vscode-charts-red, #f14c4c); }
.arrow-retry path { fill: var(--vscode-charts-orange, #d18616); }
.l-success { color: var(--vscode-charts-green, #89d185); }
.l-failure { color: var(--vscode-charts-red, #f14c4c); }
.l-retry { color: var(--vscode-charts-orange, #d18616); }
`;
