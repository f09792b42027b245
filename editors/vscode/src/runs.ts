// ided runs in VS Code: start a run (or a dry run), follow its `ided/run/progress` notifications in
// the "Run" tree (the plan: one row per stage, what happened under it), the plan webview (the plan
// as a graph, planView.ts) and a status bar item, review the change set in VS Code's diff editor
// (the "Review" tree: one row per changed file and one per hunk, each with a checkbox: kept or
// dropped), answer it (accept what is kept / reject / feedback), roll an accepted run back, cancel a
// running one.
//
// Requests go to the `ided lsp` client `getClient()` gives; refusals are shown as one line (message
// and ided error code), never as a stack. The context key `ided.run.phase` (see RunPhase) drives
// which buttons the views show.
import * as vscode from "vscode";
import { LanguageClient } from "vscode-languageclient/node";

import { PlanPanel } from "./planView";
import { acceptedText, Hunk, hunkRow, hunksOf, ReviewMarks } from "./reviewModel";
import {
  AcceptResult,
  branchName,
  CancelResult,
  DiffFile,
  diffTitle,
  parseRunDocumentPath,
  phaseWords,
  refusalText,
  RejectResult,
  reviewReadyText,
  reviewRow,
  RollbackResult,
  RUN_SCHEME,
  runDocumentPath,
  RunDiff,
  RunProgressParams,
  RunStartResult,
  RunState,
  runStatusView,
  sideText,
  StageState,
  stageIcon,
  stageRow,
} from "./runModel";

const MAX_EARLY_EVENTS = 1000;

type RunNode =
  | { type: "header"; run: RunState }
  | { type: "stage"; run: RunState; stage: StageState }
  | { type: "line"; text: string; icon?: string }
  | { type: "log"; run: RunState };

/** The plan tree: the run's header, one row per stage (expand for what happened), the run's log. */
class RunTree implements vscode.TreeDataProvider<RunNode> {
  private readonly changed = new vscode.EventEmitter<RunNode | undefined>();
  readonly onDidChangeTreeData = this.changed.event;

  constructor(private readonly runs: RunController) {}

  refresh(): void {
    this.changed.fire(undefined);
  }

  getChildren(node?: RunNode): RunNode[] {
    const run = this.runs.current;
    if (!run) {
      return [];
    }
    if (!node) {
      const rows: RunNode[] = [{ type: "header", run }];
      rows.push(...run.stages.map((stage): RunNode => ({ type: "stage", run, stage })));
      if (run.log.length > 0 || run.notes.length > 0) {
        rows.push({ type: "log", run });
      }
      return rows;
    }
    if (node.type === "stage") {
      return node.stage.lines.map((text): RunNode => ({ type: "line", text }));
    }
    if (node.type === "log") {
      return [
        ...run.notes.map((text): RunNode => ({ type: "line", text: `note: ${text}`, icon: "info" })),
        ...run.log.map((text): RunNode => ({ type: "line", text })),
      ];
    }
    return [];
  }

  getTreeItem(node: RunNode): vscode.TreeItem {
    const None = vscode.TreeItemCollapsibleState.None;
    switch (node.type) {
      case "header": {
        const item = new vscode.TreeItem(node.run.request, None);
        item.description = `${node.run.dryRun ? "dry run" : "run"} ${node.run.runId} · ${node.run.workflow ?? "?"} · ${phaseWords(node.run.phase)}`;
        item.iconPath = new vscode.ThemeIcon(node.run.dryRun ? "list-tree" : "rocket");
        item.tooltip = runStatusView(node.run).tooltip;
        item.id = `header:${node.run.runId}`;
        return item;
      }
      case "stage": {
        const row = stageRow(node.stage);
        const state =
          node.stage.lines.length === 0
            ? None
            : node.stage.status === "in_progress"
              ? vscode.TreeItemCollapsibleState.Expanded
              : vscode.TreeItemCollapsibleState.Collapsed;
        const item = new vscode.TreeItem(row.label, state);
        item.description = row.description;
        item.iconPath = new vscode.ThemeIcon(stageIcon(node.stage.status));
        item.id = `stage:${node.run.runId}:${node.stage.id}:${node.stage.lines.length === 0 ? "leaf" : "tree"}`;
        item.contextValue = "idedStage";
        return item;
      }
      case "log": {
        const item = new vscode.TreeItem("Log", vscode.TreeItemCollapsibleState.Collapsed);
        item.description = node.run.log[node.run.log.length - 1] ?? "";
        item.iconPath = new vscode.ThemeIcon("output");
        item.id = `log:${node.run.runId}`;
        return item;
      }
      case "line": {
        const item = new vscode.TreeItem(node.text, None);
        item.tooltip = node.text;
        if (node.icon) {
          item.iconPath = new vscode.ThemeIcon(node.icon);
        }
        return item;
      }
    }
  }
}

type ReviewNode = { type: "file"; file: DiffFile } | { type: "hunk"; file: DiffFile; hunk: Hunk };

function checkbox(kept: boolean): vscode.TreeItemCheckboxState {
  return kept ? vscode.TreeItemCheckboxState.Checked : vscode.TreeItemCheckboxState.Unchecked;
}

/** The review list: one row per changed file of the run's diff, under it one per hunk, each with a
 * checkbox (kept or dropped); a click opens the diff editor (at the hunk). */
class ReviewTree implements vscode.TreeDataProvider<ReviewNode> {
  private readonly changed = new vscode.EventEmitter<ReviewNode | undefined>();
  readonly onDidChangeTreeData = this.changed.event;

  constructor(private readonly runs: RunController) {}

  refresh(): void {
    this.changed.fire(undefined);
  }

  getChildren(node?: ReviewNode): ReviewNode[] {
    if (!node) {
      return (this.runs.diff?.files ?? []).map((file): ReviewNode => ({ type: "file", file }));
    }
    if (node.type === "file") {
      return hunksOf(node.file).map((hunk): ReviewNode => ({ type: "hunk", file: node.file, hunk }));
    }
    return [];
  }

  getTreeItem(node: ReviewNode): vscode.TreeItem {
    const marks = this.runs.marks;
    const open = this.runs.phase() === "review";
    if (node.type === "hunk") {
      const row = hunkRow(node.hunk);
      const item = new vscode.TreeItem(row.label, vscode.TreeItemCollapsibleState.None);
      item.description = row.description;
      item.tooltip = node.hunk.header;
      item.id = `hunk:${node.file.path}:${node.hunk.index}`;
      item.command = { command: "ided.openFileDiff", title: "Open the diff", arguments: [node.file, node.hunk] };
      item.contextValue = "idedReviewHunk";
      if (open && marks) {
        item.checkboxState = checkbox(marks.isKept(node.file.path, node.hunk.index));
      }
      return item;
    }
    const file = node.file;
    const row = reviewRow(file);
    const hunks = hunksOf(file).length;
    const item = new vscode.TreeItem(
      row.label,
      hunks > 0 ? vscode.TreeItemCollapsibleState.Expanded : vscode.TreeItemCollapsibleState.None,
    );
    const kept = marks?.fileKept(file.path) ?? "all";
    item.description = `${row.description}${open && kept !== "all" ? (kept === "none" ? " · dropped" : " · in part") : ""}`;
    item.resourceUri = vscode.Uri.parse(file.uri);
    item.tooltip = file.diff || file.path;
    item.id = `file:${file.path}`;
    item.command = { command: "ided.openFileDiff", title: "Open the diff", arguments: [file] };
    item.contextValue = "idedReviewFile";
    if (open && marks) {
      item.checkboxState = checkbox(kept === "all");
    }
    return item;
  }
}

/** Serves `ided-run:/<runId>/<before|after>/<path>` from the diffs fetched so far (read-only). */
class RunDocuments implements vscode.TextDocumentContentProvider {
  private readonly changed = new vscode.EventEmitter<vscode.Uri>();
  /** Fired for a run's documents when a newer diff arrives (after feedback), so open ones reload. */
  readonly onDidChange = this.changed.event;

  constructor(private readonly runs: RunController) {}

  reload(uris: vscode.Uri[]): void {
    for (const uri of uris) {
      this.changed.fire(uri);
    }
  }

  provideTextDocumentContent(uri: vscode.Uri): string {
    const parsed = parseRunDocumentPath(uri.path);
    const file = parsed && this.runs.diffs.get(parsed.runId)?.files.find((f) => f.path === parsed.path);
    if (!parsed || !file) {
      return "";
    }
    return sideText(file, parsed.side);
  }
}

export class RunController implements vscode.Disposable {
  /** The run the commands act on: the last one started, answered or reviewed in this window. */
  current: RunState | undefined;
  /** run id -> the last `ided/run/diff` of it. */
  readonly diffs = new Map<string, RunDiff>();
  private readonly states = new Map<string, RunState>();
  private readonly early = new Map<string, RunProgressParams[]>();
  private readonly runTree = new RunTree(this);
  private readonly reviewTree = new ReviewTree(this);
  private readonly documents = new RunDocuments(this);
  private readonly plan = new PlanPanel();
  /** run id -> what its review keeps (reset when a new diff of the run arrives). */
  private readonly reviewMarks = new Map<string, ReviewMarks>();
  private readonly bar: vscode.StatusBarItem;
  private readonly disposables: vscode.Disposable[] = [];
  private readonly runView: vscode.TreeView<RunNode>;
  private readonly reviewView: vscode.TreeView<ReviewNode>;

  constructor(private readonly getClient: () => LanguageClient | undefined) {
    this.bar = vscode.window.createStatusBarItem(vscode.StatusBarAlignment.Left, 9);
    this.bar.command = "ided.showRun";
    this.runView = vscode.window.createTreeView("ided.runView", { treeDataProvider: this.runTree });
    this.reviewView = vscode.window.createTreeView("ided.reviewView", {
      treeDataProvider: this.reviewTree,
      manageCheckboxStateManually: true, // a file's box follows its hunks', set here
    });
    this.disposables.push(
      this.bar,
      this.runView,
      this.reviewView,
      this.plan,
      this.reviewView.onDidChangeCheckboxState((event) => this.onMarked(event)),
      vscode.workspace.registerTextDocumentContentProvider(RUN_SCHEME, this.documents),
      vscode.commands.registerCommand("ided.run", () => this.start(false)),
      vscode.commands.registerCommand("ided.dryRun", () => this.start(true)),
      vscode.commands.registerCommand("ided.showRun", () => this.showRun()),
      vscode.commands.registerCommand("ided.review", () => this.review()),
      vscode.commands.registerCommand("ided.openFileDiff", (file: DiffFile, hunk?: Hunk) => this.openFileDiff(file, hunk)),
      vscode.commands.registerCommand("ided.showPlanGraph", () => this.showPlanGraph()),
      vscode.commands.registerCommand("ided.openAllChanges", () => this.openAllChanges()),
      vscode.commands.registerCommand("ided.accept", () => this.accept()),
      vscode.commands.registerCommand("ided.reject", () => this.reject()),
      vscode.commands.registerCommand("ided.feedback", () => this.feedback()),
      vscode.commands.registerCommand("ided.rollback", () => this.rollback()),
      vscode.commands.registerCommand("ided.cancel", () => this.cancel()),
    );
    void this.setPhase();
  }

  /** Register the `ided/run/progress` handler on a (re)started client. */
  attach(client: LanguageClient): void {
    client.onNotification("ided/run/progress", (params: RunProgressParams) => this.onProgress(params));
  }

  dispose(): void {
    for (const d of this.disposables) {
      d.dispose();
    }
  }

  get diff(): RunDiff | undefined {
    return this.current ? this.diffs.get(this.current.runId) : undefined;
  }

  /** What the current run's review keeps. */
  get marks(): ReviewMarks | undefined {
    return this.current ? this.reviewMarks.get(this.current.runId) : undefined;
  }

  phase(): string {
    return this.current?.phase ?? "none";
  }

  private onMarked(event: vscode.TreeCheckboxChangeEvent<ReviewNode>): void {
    const marks = this.marks;
    if (!marks) {
      return;
    }
    for (const [node, state] of event.items) {
      const keep = state === vscode.TreeItemCheckboxState.Checked;
      marks.set(node.file.path, keep, node.type === "hunk" ? node.hunk.index : undefined);
    }
    this.update();
  }

  async showPlanGraph(): Promise<void> {
    const run = this.requireRun();
    if (run) {
      this.plan.show(run);
    }
  }

  private async request<T>(method: string, params: Record<string, unknown>): Promise<T | undefined> {
    const client = this.getClient();
    if (!client || !client.isRunning()) {
      void vscode.window.showErrorMessage("ided: the language server is not running (ided: Restart the language server)");
      return undefined;
    }
    try {
      return await client.sendRequest<T>(method, params);
    } catch (error) {
      void vscode.window.showErrorMessage(refusalText(method, error));
      return undefined;
    }
  }

  private requireRun(): RunState | undefined {
    if (!this.current) {
      void vscode.window.showWarningMessage("ided: no run yet: start one with “ided: Start a run”");
    }
    return this.current;
  }

  private async setPhase(): Promise<void> {
    await vscode.commands.executeCommand("setContext", "ided.run.phase", this.current?.phase ?? "none");
  }

  private update(): void {
    const run = this.current;
    if (run) {
      const view = runStatusView(run);
      this.bar.text = view.text;
      this.bar.tooltip = view.tooltip;
      this.bar.show();
      this.runView.message = undefined;
      const kept = run.phase === "review" ? this.marks?.summary() : "";
      this.reviewView.description = this.diff
        ? `${phaseWords(run.phase)} · ${this.diff.files.length} file(s)${kept ? ` · ${kept}` : ""}`
        : "";
    }
    this.plan.refresh(run);
    this.runTree.refresh();
    this.reviewTree.refresh();
    void this.setPhase();
  }

  async start(dryRun: boolean): Promise<void> {
    const request = await vscode.window.showInputBox({
      title: dryRun ? "ided: dry run (plan only)" : "ided: start a run",
      prompt: dryRun ? "What should be planned? Nothing runs." : "What do you want done? The change comes back for your review.",
      placeHolder: "e.g. fix the off-by-one in pagination",
      ignoreFocusOut: true,
    });
    if (!request || !request.trim()) {
      return;
    }
    const result = await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Window, title: dryRun ? "ided: planning" : "ided: starting the run" },
      () => this.request<RunStartResult>("ided/run/start", { request: request.trim(), dryRun, mode: "code" }),
    );
    if (!result) {
      return;
    }
    const run = this.states.get(result.runId) ?? new RunState(result.runId, request.trim(), dryRun, result);
    this.states.set(result.runId, run);
    this.current = run;
    const early = this.early.get(result.runId) ?? [];
    this.early.delete(result.runId);
    this.update();
    for (const params of early) {
      this.onProgress(params);
    }
    await this.showRun();
    if (dryRun && run.graph) {
      this.plan.show(run);
    }
    if (dryRun) {
      const skipped = result.skipped.length > 0 ? `; skipped: ${result.skipped.join(", ")}` : "";
      void vscode.window.showInformationMessage(
        `ided: dry run ${result.runId}: workflow ${result.workflow ?? "?"}, stages ${result.stages.join(", ")}${skipped}`,
      );
    }
  }

  private onProgress(params: RunProgressParams): void {
    const run = this.states.get(params.runId);
    if (!run) {
      // A run's first events may overtake the answer to `ided/run/start`: kept until it arrives.
      const early = this.early.get(params.runId) ?? [];
      if (early.length < MAX_EARLY_EVENTS) {
        early.push(params);
      }
      this.early.set(params.runId, early);
      return;
    }
    if (!run.apply(params)) {
      return;
    }
    this.update();
    if (params.kind === "run_finished") {
      void this.finished(run);
    }
  }

  private async finished(run: RunState): Promise<void> {
    if (run.phase !== "review") {
      const text = `ided: run ${run.runId} ${phaseWords(run.phase)}${run.summary ? `: ${run.summary}` : ""}`;
      if (run.phase === "succeeded") {
        void vscode.window.showInformationMessage(text);
      } else {
        void vscode.window.showWarningMessage(text);
      }
      return;
    }
    if (run === this.current) {
      await this.review();
    }
    const round = run.reviewRound;
    const pick = await vscode.window.showInformationMessage(reviewReadyText(run), "Accept", "Reject", "Feedback");
    if (!pick) {
      return;
    }
    if (run !== this.current || run.phase !== "review" || run.reviewRound !== round) {
      // VS Code cannot withdraw a notification: an old one's buttons say why they do nothing.
      void vscode.window.showInformationMessage(
        `ided: that review of run ${run.runId} is over (the run is ${phaseWords(run.phase)}${run === this.current ? "" : "; another run is current"})`,
      );
      return;
    }
    if (pick === "Accept") {
      await this.accept();
    } else if (pick === "Reject") {
      await this.reject();
    } else if (pick === "Feedback") {
      await this.feedback();
    }
  }

  async showRun(): Promise<void> {
    await vscode.commands.executeCommand("ided.runView.focus");
  }

  /** Fetch the current run's diff into the review list and open the first file's diff. */
  async review(): Promise<void> {
    const run = this.requireRun();
    if (!run) {
      return;
    }
    const diff = await this.request<RunDiff>("ided/run/diff", { runId: run.runId });
    if (!diff) {
      return;
    }
    const known = this.diffs.get(run.runId);
    if (!known || known.headCommit !== diff.headCommit || !this.reviewMarks.has(run.runId)) {
      this.reviewMarks.set(run.runId, new ReviewMarks(diff)); // a new round: every hunk kept again
    }
    this.diffs.set(run.runId, diff);
    this.documents.reload(diff.files.flatMap((f) => [this.uri(run.runId, "before", f), this.uri(run.runId, "after", f)]));
    this.update();
    await vscode.commands.executeCommand("ided.reviewView.focus");
    if (diff.files.length === 0) {
      void vscode.window.showInformationMessage(`ided: run ${run.runId} changed no file`);
      return;
    }
    await this.openFileDiff(diff.files[0]);
  }

  private uri(runId: string, side: "before" | "after", file: DiffFile): vscode.Uri {
    const path = side === "before" ? (file.oldPath ?? file.path) : file.path;
    return vscode.Uri.from({ scheme: RUN_SCHEME, path: runDocumentPath(runId, side, path) });
  }

  async openFileDiff(file: DiffFile, hunk?: Hunk): Promise<void> {
    const run = this.current;
    if (!run || !file) {
      return;
    }
    const line = Math.max(0, (hunk?.newStart ?? 1) - 1);
    const options: vscode.TextDocumentShowOptions = { preview: true };
    if (hunk) {
      options.selection = new vscode.Range(line, 0, line, 0);
    }
    await vscode.commands.executeCommand(
      "vscode.diff",
      this.uri(run.runId, "before", file),
      this.uri(run.runId, "after", file),
      diffTitle(run.runId, file),
      options,
    );
  }

  /** Every changed file in one multi-diff editor (VS Code's `vscode.changes`, where it exists). */
  async openAllChanges(): Promise<void> {
    const run = this.current;
    const diff = this.diff;
    if (!run || !diff) {
      return this.review();
    }
    const commands = await vscode.commands.getCommands(true);
    if (!commands.includes("vscode.changes")) {
      return this.openFileDiff(diff.files[0]);
    }
    await vscode.commands.executeCommand(
      "vscode.changes",
      `ided run ${run.runId}`,
      diff.files.map((f) => [vscode.Uri.parse(f.uri), this.uri(run.runId, "before", f), this.uri(run.runId, "after", f)]),
    );
  }

  private async closeRunEditors(runId: string): Promise<void> {
    const prefix = `/${encodeURIComponent(runId)}/`;
    const tabs = vscode.window.tabGroups.all.flatMap((group) => group.tabs);
    const ours = tabs.filter((tab) => {
      const input = tab.input;
      if (input instanceof vscode.TabInputTextDiff) {
        return input.modified.scheme === RUN_SCHEME && input.modified.path.startsWith(prefix);
      }
      return tab.label.startsWith(`ided run ${runId}`); // the multi-diff editor of "Open all changes"
    });
    if (ours.length > 0) {
      await vscode.window.tabGroups.close(ours);
    }
  }

  async accept(): Promise<void> {
    const run = this.requireRun();
    if (!run) {
      return;
    }
    const keep = this.reviewMarks.get(run.runId)?.keepParam();
    if (keep !== undefined && keep.length === 0) {
      void vscode.window.showWarningMessage(
        `ided: nothing is kept in the review of run ${run.runId}: check a file or a hunk, or reject the run`,
      );
      return;
    }
    const params: Record<string, unknown> = { runId: run.runId };
    if (keep !== undefined) {
      params.keep = keep;
    }
    const result = await this.request<AcceptResult>("ided/run/accept", params);
    if (!result) {
      return;
    }
    run.phase = "accepted";
    const part = keep !== undefined ? " (in part)" : "";
    run.log.push(`accepted on ${branchName(result.branch)}${part}: ${result.commits.length} commit(s), ${result.files.join(", ")}`);
    await this.closeRunEditors(run.runId);
    this.update();
    void vscode.window.showInformationMessage(acceptedText(run.runId, result, branchName(result.branch)));
  }

  async reject(): Promise<void> {
    const run = this.requireRun();
    if (!run) {
      return;
    }
    const result = await this.request<RejectResult>("ided/run/reject", { runId: run.runId });
    if (!result) {
      return;
    }
    run.phase = "rejected";
    run.log.push(`rejected (${result.branch} kept until cleanup)`);
    await this.closeRunEditors(run.runId);
    this.update();
    void vscode.window.showInformationMessage(`ided: rejected run ${run.runId}: your files are untouched`);
  }

  async feedback(): Promise<void> {
    const run = this.requireRun();
    if (!run) {
      return;
    }
    const text = await vscode.window.showInputBox({
      title: `ided: feedback on run ${run.runId}`,
      prompt: "What should change? The run's last editing stage runs again with your words.",
      ignoreFocusOut: true,
    });
    if (!text || !text.trim()) {
      return;
    }
    const seen = run.lastSeq;
    const result = await this.request<RunStartResult>("ided/run/feedback", { runId: run.runId, text: text.trim() });
    if (!result) {
      return;
    }
    run.resumed(text.trim(), run.lastSeq !== seen);
    run.graph = result.graph ?? run.graph;
    await this.closeRunEditors(run.runId);
    this.update();
    await this.showRun();
  }

  async rollback(): Promise<void> {
    const run = this.requireRun();
    if (!run) {
      return;
    }
    const result = await this.request<RollbackResult>("ided/run/rollback", { runId: run.runId });
    if (!result) {
      return;
    }
    run.phase = "rolled_back";
    run.log.push(`rolled back: ${result.commits.length} revert commit(s), ${result.files.join(", ")}`);
    this.update();
    void vscode.window.showInformationMessage(
      `ided: rolled back run ${run.runId}: ${result.files.length} file(s) restored on ${branchName(result.branch)}`,
    );
  }

  async cancel(): Promise<void> {
    const run = this.requireRun();
    if (!run) {
      return;
    }
    const result = await this.request<CancelResult>("ided/run/cancel", { runId: run.runId });
    if (result) {
      run.log.push(`cancel requested: ${result.status}`);
      this.update();
    }
  }
}
