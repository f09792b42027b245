// Pure helpers of the ided extension: no `vscode` import, so they run under node's test runner.
// Wire shapes follow docs/lsp.md (camelCase JSON; 0-based LSP positions).

export interface Position {
  line: number;
  character: number;
}

export interface Range {
  start: Position;
  end: Position;
}

export interface Location {
  uri: string;
  range: Range;
}

export interface SearchHit {
  location: Location;
  path: string;
  score: number;
  kind: string;
  symbolKind: string;
  language: string;
  name: string | null;
  qualifiedName: string | null;
  signature: string | null;
  preview: string;
  text: string | null;
  sources: string[];
}

export interface IndexSearchResult {
  query: string;
  mode: string;
  hits: SearchHit[];
  embeddedFraction: number;
  reranked: boolean;
  notes: string[];
  seconds: number;
}

export interface IndexStatus {
  workspace: string;
  ready: boolean;
  reason: string | null;
  busy: string | null;
  filesIndexed: number;
  chunks: number;
  embedded: number;
  embeddedFraction: number;
  denseModel: string | null;
  lastUpdate: string | null;
  store: string;
  stateDir: string;
  daemonPid: number;
  clients: number;
  watching: boolean;
}

/** A `$/progress` value (begin, report or end). */
export interface ProgressValue {
  kind: "begin" | "report" | "end";
  title?: string;
  message?: string;
  percentage?: number;
}

export interface HitItem {
  label: string;
  description: string;
  detail: string;
  uri: string;
  line: number;
}

const CODICONS: Record<string, string> = {
  function: "symbol-function",
  method: "symbol-method",
  class: "symbol-class",
  interface: "symbol-interface",
  struct: "symbol-struct",
  enum: "symbol-enum",
  trait: "symbol-interface",
  type: "symbol-type-parameter",
  module: "symbol-module",
  namespace: "symbol-namespace",
  section: "symbol-string",
  window: "symbol-file",
};

/** The first non-empty line of a text, trimmed and bounded. */
export function firstLine(text: string | null | undefined, max = 120): string {
  const line = (text ?? "").split("\n").find((l) => l.trim().length > 0)?.trim() ?? "";
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

/** A QuickPick entry for a search hit: what it is, where it is, its first line. */
export function hitToItem(hit: SearchHit): HitItem {
  const icon = CODICONS[hit.symbolKind] ?? "symbol-misc";
  const name = hit.qualifiedName ?? hit.name ?? hit.path;
  const line = hit.location.range.start.line;
  return {
    label: `$(${icon}) ${name}`,
    description: `${hit.path}:${line + 1}`,
    detail: firstLine(hit.signature ?? hit.preview),
    uri: hit.location.uri,
    line,
  };
}

/** The search request's params from a query and the extension's settings. */
export function searchParams(query: string, maxResults: number, mode: string): Record<string, unknown> {
  const k = Number.isFinite(maxResults) ? Math.max(1, Math.min(200, Math.round(maxResults))) : 30;
  return { query: query.trim(), k, mode };
}

/** The server command line: extra arguments (e.g. `--set key=value`) go before `lsp`. */
export function serverArgs(extraArgs: readonly string[]): string[] {
  return [...extraArgs, "lsp"];
}

export interface StatusView {
  text: string;
  tooltip: string;
  busy: boolean;
}

/** What the status bar shows while a `$/progress` period is open. */
export function progressView(value: ProgressValue, title: string): StatusView {
  const percent = value.percentage !== undefined ? ` ${value.percentage}%` : "";
  const message = value.message ? `: ${value.message}` : "";
  return {
    text: `$(sync~spin) ided${percent}`,
    tooltip: `${title}${message}`,
    busy: value.kind !== "end",
  };
}

/** What the status bar shows from `ided/index/status`. */
export function statusView(status: IndexStatus): StatusView {
  const embedded = Math.round(100 * status.embeddedFraction);
  const lines = [
    `ided: ${status.workspace}`,
    `${status.filesIndexed} files, ${status.chunks} chunks, ${embedded}% embedded`,
    `daemon pid ${status.daemonPid}, ${status.clients} client(s)`,
  ];
  if (status.busy) {
    return { text: "$(sync~spin) ided", tooltip: [...lines, `busy: ${status.busy}`].join("\n"), busy: true };
  }
  if (!status.ready) {
    return {
      text: "$(warning) ided",
      tooltip: [...lines, `not ready: ${status.reason ?? "unknown reason"}`].join("\n"),
      busy: false,
    };
  }
  return { text: `$(database) ided ${status.filesIndexed}`, tooltip: lines.join("\n"), busy: false };
}
