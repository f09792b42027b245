// Pure model of ided runs in VS Code: the `ided/run/*` wire shapes (docs/lsp.md, "Runs"), a run's
// state folded from its `ided/run/progress` notifications, and what the plan tree, the status bar
// and the review list show. No `vscode` import, so it runs under node's test runner.
import { PlanGraph } from "./planGraph";

/** `ided/run/start` and `ided/run/feedback` result. */
export interface RunStartResult {
  runId: string;
  status: string;
  workflow: string | null;
  stages: string[];
  skipped: string[];
  notes: string[];
  /** The plan as a graph (absent from older servers). */
  graph?: PlanGraph | null;
}

/** A stage of a `plan` progress event. */
export interface PlanEntry {
  stage_id: string;
  name: string;
  status: "pending" | "in_progress" | "completed" | "failed" | "skipped";
  attempt: number;
  reason: string | null;
}

export interface ChangedFileStats {
  path: string;
  status: string;
  added: number;
  removed: number;
}

/** The pipeline's progress message as the server forwards it (snake_case keys). */
export interface ProgressEvent {
  event: string;
  workflow?: string;
  node?: string | null;
  stage_name?: string | null;
  attempt?: number | null;
  status?: string;
  planned_stages?: string[];
  completed_stages?: string[];
  summary?: string | null;
  plan?: PlanEntry[];
  text?: string | null;
  agent_id?: string | null;
  title?: string | null;
  tool_status?: string | null;
  output?: string | null;
  changes?: { branch: string; files: ChangedFileStats[]; commits: string[] } | null;
}

/** `ided/run/progress` params. */
export interface RunProgressParams {
  runId: string;
  seq: number;
  kind: string;
  event: ProgressEvent;
}

export interface DiffFile {
  uri: string;
  path: string;
  status: "added" | "modified" | "deleted" | "renamed";
  oldPath: string | null;
  oldText: string | null;
  newText: string | null;
  diff: string;
  added: number;
  removed: number;
  binary: boolean;
}

/** `ided/run/diff` result. */
export interface RunDiff {
  runId: string;
  branch: string;
  review: "open" | "accepted" | "rejected" | "rolled_back";
  baseCommit: string;
  startCommit: string;
  headCommit: string | null;
  commits: { sha: string; message: string; stageId: string | null; attempt: number | null; agents: string[] }[];
  files: DiffFile[];
}

export interface AcceptResult {
  runId: string;
  branch: string;
  commits: string[];
  sourceCommits: string[];
  files: string[];
  head: string;
  /** With `keep`: the files kept in part, and those left out. */
  partial?: string[];
  dropped?: string[];
}

export interface RejectResult {
  runId: string;
  branch: string;
  review: string;
}

export interface RollbackResult {
  runId: string;
  branch: string;
  commits: string[];
  reverted: string[];
  files: string[];
  head: string;
}

export interface CancelResult {
  runId: string;
  status: string;
  cancelRequested: boolean;
}

export type StageStatus = PlanEntry["status"];

export interface StageState {
  id: string;
  name: string;
  status: StageStatus;
  attempt: number;
  reason: string | null;
  /** What happened in the stage, oldest first (tool calls, agent messages, routing). */
  lines: string[];
}

/** Where a run is, as the extension shows it. */
export type RunPhase =
  | "planned"
  | "running"
  | "review"
  | "succeeded"
  | "failed"
  | "cancelled"
  | "accepted"
  | "rejected"
  | "rolled_back";

const MAX_STAGE_LINES = 200;

/** The first non-empty line of a text, trimmed and bounded. */
export function firstLineOf(text: string | null | undefined, max = 160): string {
  const line = (text ?? "").split("\n").find((l) => l.trim().length > 0)?.trim() ?? "";
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

/** A run this window started (or sent feedback to), folded from its progress notifications. */
export class RunState {
  phase: RunPhase;
  workflow: string | null;
  stages: StageState[];
  skipped: string[];
  notes: string[];
  /** Lines that belong to no stage (start, feedback, review, finish), oldest first. */
  log: string[] = [];
  /** The files of the last `review` event (statistics only; `ided/run/diff` has the texts). */
  reviewFiles: ChangedFileStats[] = [];
  summary: string | null = null;
  lastSeq = 0;
  /** How many reviews the run has reached (a feedback round ends in another one). */
  reviewRound = 0;
  /** The plan as a graph, from `ided/run/start` (or the last `ided/run/feedback`). */
  graph: PlanGraph | null;

  constructor(
    readonly runId: string,
    readonly request: string,
    readonly dryRun: boolean,
    start: RunStartResult,
  ) {
    this.phase = start.status === "planned" ? "planned" : "running";
    this.workflow = start.workflow;
    this.skipped = [...start.skipped];
    this.notes = [...start.notes];
    this.graph = start.graph ?? null;
    this.stages = start.stages.map((id) => ({ id, name: id, status: "pending", attempt: 0, reason: null, lines: [] }));
    for (const id of start.skipped) {
      this.stages.push({ id, name: id, status: "skipped", attempt: 0, reason: "skipped by the plan", lines: [] });
    }
  }

  /** A feedback round started: the run runs again and ends with a review again. `overtaken`: the
   * round's progress arrived before the answer to `ided/run/feedback`, so the state is already it. */
  resumed(text: string, overtaken = false): void {
    if (!overtaken) {
      this.phase = "running";
      this.reviewFiles = [];
    }
    this.log.push(`feedback: ${firstLineOf(text)}`);
  }

  stage(id: string | null | undefined): StageState | undefined {
    return id ? this.stages.find((s) => s.id === id) : undefined;
  }

  /** Apply one `ided/run/progress` notification; false when it was already seen (or not this run's). */
  apply(params: RunProgressParams): boolean {
    if (params.runId !== this.runId || params.seq <= this.lastSeq) {
      return false;
    }
    this.lastSeq = params.seq;
    const e = params.event;
    const stage = this.stage(e.node);
    const say = (line: string): void => {
      if (!line) {
        return;
      }
      if (stage) {
        stage.lines.push(line);
        if (stage.lines.length > MAX_STAGE_LINES) {
          stage.lines.splice(0, stage.lines.length - MAX_STAGE_LINES);
        }
      } else {
        this.log.push(line);
      }
    };
    switch (params.kind) {
      case "run_started":
      case "run_resumed":
        this.phase = "running";
        this.workflow = e.workflow ?? this.workflow;
        break;
      case "plan":
        this.applyPlan(e.plan ?? []);
        break;
      case "node_started":
        if (stage) {
          stage.status = "in_progress";
          stage.attempt = e.attempt ?? stage.attempt + 1;
          if (stage.attempt > 1) {
            stage.lines.push(`attempt ${stage.attempt}`);
          }
        }
        break;
      case "node_finished":
        if (stage) {
          stage.status = e.status === "succeeded" ? "completed" : e.status === "failed" ? "failed" : stage.status;
        }
        break;
      case "tool_call":
        say(e.title ?? "tool call");
        break;
      case "tool_call_update":
        if (e.tool_status === "failed") {
          say(`failed: ${firstLineOf(e.output)}`);
        }
        break;
      case "agent_message":
      case "thought": {
        const text = firstLineOf(e.text);
        if (text) {
          say(e.agent_id ? `${e.agent_id}: ${text}` : text);
        }
        break;
      }
      case "routing_decision":
        if (e.summary) {
          say(`→ ${firstLineOf(e.summary)}`);
        }
        break;
      case "review": {
        this.reviewFiles = [...(e.changes?.files ?? [])];
        this.reviewRound += 1;
        const n = this.reviewFiles.length;
        this.log.push(`review: ${n} file(s) changed on ${e.changes?.branch ?? "the run branch"}`);
        break;
      }
      case "run_finished":
        this.summary = e.summary ?? null;
        this.phase = finishedPhase(e.status, this.reviewFiles.length > 0);
        this.log.push(`run finished: ${e.status ?? "?"}${e.summary ? `: ${firstLineOf(e.summary)}` : ""}`);
        for (const s of this.stages) {
          if (s.status === "in_progress") {
            s.status = e.status === "succeeded" ? "completed" : "failed";
          }
        }
        break;
      default:
        break;
    }
    return true;
  }

  private applyPlan(plan: PlanEntry[]): void {
    const byId = new Map(this.stages.map((s) => [s.id, s]));
    this.stages = plan.map((entry) => {
      const known = byId.get(entry.stage_id);
      return {
        id: entry.stage_id,
        name: entry.name,
        status: entry.status,
        attempt: entry.attempt,
        reason: entry.reason,
        lines: known?.lines ?? [],
      };
    });
  }

  /** Stages done (completed or skipped) out of the stages that run. */
  progress(): { done: number; total: number; current: StageState | undefined } {
    const running = this.stages.filter((s) => s.status !== "skipped");
    return {
      done: running.filter((s) => s.status === "completed").length,
      total: running.length,
      current: running.find((s) => s.status === "in_progress"),
    };
  }
}

function finishedPhase(status: string | undefined, hasChanges: boolean): RunPhase {
  if (status === "succeeded") {
    return hasChanges ? "review" : "succeeded";
  }
  if (status === "cancelled") {
    return "cancelled";
  }
  return hasChanges ? "review" : "failed";
}

/** The notification that a run waits for its review (the round once feedback has run). */
export function reviewReadyText(run: RunState): string {
  const round = run.reviewRound > 1 ? ` (round ${run.reviewRound})` : "";
  return `ided: run ${run.runId} is ready for review${round}: ${run.reviewFiles.length} file(s) changed`;
}

/** The codicon for a stage's status. */
export function stageIcon(status: StageStatus): string {
  switch (status) {
    case "completed":
      return "pass";
    case "failed":
      return "error";
    case "in_progress":
      return "sync~spin";
    case "skipped":
      return "circle-slash";
    default:
      return "circle-large-outline";
  }
}

/** The label and description of a stage row in the plan tree. */
export function stageRow(stage: StageState): { label: string; description: string } {
  const parts: string[] = [stage.status.replace("_", " ")];
  if (stage.attempt > 1) {
    parts.push(`attempt ${stage.attempt}`);
  }
  if (stage.status === "skipped" && stage.reason) {
    parts.push(stage.reason);
  }
  return { label: stage.name, description: parts.join(" · ") };
}

const PHASE_WORDS: Record<RunPhase, string> = {
  planned: "planned (dry run)",
  running: "running",
  review: "waiting for your review",
  succeeded: "succeeded",
  failed: "failed",
  cancelled: "cancelled",
  accepted: "accepted",
  rejected: "rejected",
  rolled_back: "rolled back",
};

export function phaseWords(phase: RunPhase): string {
  return PHASE_WORDS[phase];
}

/** The run's status bar item: text (with a codicon) and tooltip. */
export function runStatusView(run: RunState): { text: string; tooltip: string } {
  const { done, total, current } = run.progress();
  const head = `ided run ${run.runId}: ${firstLineOf(run.request, 80)}`;
  const workflow = run.workflow ? `workflow ${run.workflow}` : "";
  switch (run.phase) {
    case "running":
      return {
        text: `$(sync~spin) ided ${done}/${total}${current ? ` ${current.name}` : ""}`,
        tooltip: [head, workflow, current ? `running: ${current.name}` : "starting"].filter(Boolean).join("\n"),
      };
    case "review":
      return {
        text: `$(diff) ided: review ${run.reviewFiles.length} file(s)`,
        tooltip: [head, workflow, "waiting for your review: accept, reject or give feedback"].filter(Boolean).join("\n"),
      };
    case "planned":
      return { text: "$(list-tree) ided: dry run", tooltip: [head, workflow, "planned: nothing ran"].filter(Boolean).join("\n") };
    case "failed":
    case "cancelled":
      return { text: `$(error) ided run ${phaseWords(run.phase)}`, tooltip: [head, run.summary ?? ""].filter(Boolean).join("\n") };
    default:
      return { text: `$(check) ided run ${phaseWords(run.phase)}`, tooltip: [head, run.summary ?? ""].filter(Boolean).join("\n") };
  }
}

const STATUS_LETTERS: Record<string, string> = { added: "A", modified: "M", deleted: "D", renamed: "R" };

/** A branch as people name it: `main` for `refs/heads/main`. */
export function branchName(ref: string): string {
  return ref.replace(/^refs\/heads\//, "");
}

/** A changed file's row in the review list. */
export function reviewRow(file: DiffFile): { label: string; description: string; letter: string } {
  const renamed = file.oldPath && file.oldPath !== file.path ? `${file.oldPath} → ` : "";
  return {
    label: file.path,
    description: `${renamed}${STATUS_LETTERS[file.status] ?? "?"} +${file.added} −${file.removed}${file.binary ? " (binary)" : ""}`,
    letter: STATUS_LETTERS[file.status] ?? "?",
  };
}

/** The title of a file's diff editor. */
export function diffTitle(runId: string, file: DiffFile): string {
  return `${file.path} (ided run ${runId}: before ↔ after)`;
}

/** The scheme of the read-only documents that hold a run's texts before and after. */
export const RUN_SCHEME = "ided-run";

/** The path of a run document: `/<runId>/<side>/<file path>` (`side`: before or after). */
export function runDocumentPath(runId: string, side: "before" | "after", path: string): string {
  return `/${encodeURIComponent(runId)}/${side}/${path}`;
}

/** Parse a run document path back; undefined for anything else. */
export function parseRunDocumentPath(path: string): { runId: string; side: "before" | "after"; path: string } | undefined {
  const match = /^\/([^/]+)\/(before|after)\/(.+)$/.exec(path);
  if (!match) {
    return undefined;
  }
  return { runId: decodeURIComponent(match[1]), side: match[2] as "before" | "after", path: match[3] };
}

/** The text a side of a file shows (empty for the side where the file does not exist). */
export function sideText(file: DiffFile, side: "before" | "after"): string {
  if (file.binary) {
    return "(binary file: no text diff)";
  }
  return (side === "before" ? file.oldText : file.newText) ?? "";
}

/** An error from a refused `ided/*` request as one line: the message and the ided code. */
export function refusalText(method: string, error: unknown): string {
  const e = error as { message?: unknown; data?: { code?: unknown; how_to_trust?: unknown; report?: { files?: { path: string }[] } } };
  const message = typeof e?.message === "string" ? e.message : String(error);
  const code = typeof e?.data?.code === "string" && !message.includes(e.data.code) ? ` [${e.data.code}]` : "";
  const trust = typeof e?.data?.how_to_trust === "string" ? ` Trust it with \`${e.data.how_to_trust}\`.` : "";
  const files = e?.data?.report?.files?.map((f) => f.path) ?? [];
  const conflict = files.length > 0 ? ` Conflicting file(s): ${files.join(", ")}.` : "";
  return `ided: ${method.split("/").pop() ?? method} refused: ${firstLineOf(message, 400)}${code}${conflict}${trust}`;
}
