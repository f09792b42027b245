// Pure drawing of a run's plan as a graph (an SVG document for the plan webview): one box per
// planned stage, top to bottom in plan order, coloured by its status; DONE at the bottom; the
// routes between them as arrows labelled with their outcome (success, failure, retry): straight down
// to the next stage, in lanes on the left to any other stage (up for a retry, down past a stage),
// to an ABORT mark on the right. The nodes a workflow adds (reflector, evaluator: `reflection:` /
// `evaluation:`) are boxes of their own, each after the last box with a route into it, their routes
// labelled like the stages' (accept <stage>, send back, limit, scored). No `vscode` import, so it runs
// under node's test runner.

/** `graph` of `ided/run/start` (docs/lsp.md). */
export interface PlanGraph {
  entry: string;
  stages: { stageId: string; name: string; reason: string | null }[];
  skipped: { stageId: string; name: string; reason: string | null }[];
  edges: { source: string; target: string; outcome: string }[];
  /** The nodes the workflow adds to its stages (absent from older servers). */
  nodes?: { nodeId: string; name: string }[];
}

/** A stage's status and attempt, as the run's progress says. */
export interface StageStatus {
  status: string;
  attempt: number;
}

export interface DrawnNode {
  id: string;
  label: string;
  status: string;
  x: number;
  y: number;
  width: number;
  height: number;
}

export interface DrawnEdge {
  source: string;
  target: string;
  outcome: string;
  /** down: to the next box; lane: around, on the left; abort: to the ABORT mark on the right. */
  route: "down" | "lane" | "abort";
  path: string;
  label: { text: string; x: number; y: number };
}

export interface DrawnGraph {
  width: number;
  height: number;
  nodes: DrawnNode[];
  edges: DrawnEdge[];
  svg: string;
}

const BOX_W = 260;
const BOX_H = 44;
const GAP = 64;
const LANE_GAP = 26;
const LANE_LABEL = 78;
const ABORT_GAP = 120;
const TOP = 48;
const ORDER: Record<string, number> = { success: 0, failure: 1, retry: 2 };
export const DONE = "DONE";
export const ABORT = "ABORT";

const ICONS: Record<string, string> = { pending: "○", in_progress: "▶", completed: "✓", failed: "✗", skipped: "–" };
const NODE_ICON = "◇";
/** The status of a box that is a node the workflow adds, not a stage. */
export const NODE_STATUS = "node";

function escape(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");
}

/** A stage's box text: status icon, name, attempt when more than one. */
export function nodeLabel(name: string, status?: StageStatus): string {
  const icon = ICONS[status?.status ?? "pending"] ?? ICONS.pending;
  const attempt = status && status.attempt > 1 ? ` · attempt ${status.attempt}` : "";
  return `${icon} ${name}${attempt}`;
}

interface Box {
  id: string;
  name: string;
  node: boolean;
}

/** The boxes top to bottom: the planned stages, then each node the workflow adds after the last box with a
 * route into it (the reflector after the last stage it reflects, the evaluator before DONE). */
export function boxesOf(graph: PlanGraph): Box[] {
  const boxes: Box[] = graph.stages.map((s) => ({ id: s.stageId, name: s.name, node: false }));
  for (const node of graph.nodes ?? []) {
    let at = boxes.length;
    boxes.forEach((box, i) => {
      if (graph.edges.some((e) => e.source === box.id && e.target === node.nodeId)) {
        at = i + 1;
      }
    });
    boxes.splice(at, 0, { id: node.nodeId, name: node.name, node: true });
  }
  return boxes;
}

/** Lay the plan out and draw it. */
export function drawPlanGraph(graph: PlanGraph, statuses: Map<string, StageStatus> = new Map()): DrawnGraph {
  const boxes = boxesOf(graph);
  const index = new Map(boxes.map((s, i) => [s.id, i]));
  const edges = [...graph.edges].sort(
    (a, b) => (index.get(a.source) ?? 0) - (index.get(b.source) ?? 0) || (ORDER[a.outcome] ?? 9) - (ORDER[b.outcome] ?? 9),
  );
  const toDone = edges.some((e) => e.target === DONE);
  const next = (i: number): string | undefined => boxes[i + 1]?.id ?? (toDone ? DONE : undefined);
  const laneEdges = edges.filter((e) => e.target !== ABORT && e.target !== next(index.get(e.source) ?? -1));
  const lanes = laneEdges.length;
  const left = 24 + lanes * LANE_GAP + LANE_LABEL;
  const yOf = (i: number): number => TOP + i * (BOX_H + GAP);

  const nodes: DrawnNode[] = boxes.map((box, i) => {
    const status = box.node ? undefined : statuses.get(box.id);
    return {
      id: box.id,
      label: box.node ? `${NODE_ICON} ${box.name}` : nodeLabel(box.name, status),
      status: box.node ? NODE_STATUS : (status?.status ?? "pending"),
      x: left,
      y: yOf(i),
      width: BOX_W,
      height: BOX_H,
    };
  });
  if (toDone) {
    nodes.push({ id: DONE, label: DONE, status: "done", x: left, y: yOf(boxes.length), width: BOX_W, height: BOX_H });
  }
  const at = new Map(nodes.map((n) => [n.id, n]));
  const centerX = left + BOX_W / 2;
  const right = left + BOX_W;

  const drawn: DrawnEdge[] = [];
  // straight down: one arrow per source, the outcomes joined
  const downs = new Map<string, string[]>();
  for (const edge of edges) {
    const i = index.get(edge.source);
    if (i !== undefined && edge.target === next(i)) {
      downs.set(edge.source, [...(downs.get(edge.source) ?? []), edge.outcome]);
    }
  }
  for (const [source, outcomes] of downs) {
    const from = at.get(source)!;
    const to = at.get(next(index.get(source)!)!)!;
    const y1 = from.y + BOX_H;
    const y2 = to.y;
    drawn.push({
      source,
      target: to.id,
      outcome: outcomes.join(", "),
      route: "down",
      path: `M ${centerX} ${y1} V ${y2 - 2}`,
      label: { text: outcomes.join(", "), x: centerX + 8, y: (y1 + y2) / 2 + 4 },
    });
  }
  // around, on the left: the farther the jump, the farther out its lane
  const byReach = [...laneEdges].sort(
    (a, b) => Math.abs(reach(a)) - Math.abs(reach(b)) || (index.get(a.source) ?? 0) - (index.get(b.source) ?? 0),
  );
  function reach(e: { source: string; target: string }): number {
    const target = e.target === DONE ? boxes.length : (index.get(e.target) ?? 0);
    return target - (index.get(e.source) ?? 0);
  }
  const leaving = new Map<string, number>();
  const arriving = new Map<string, number>();
  byReach.forEach((edge, lane) => {
    const from = at.get(edge.source)!;
    const to = at.get(edge.target);
    if (!to) {
      return;
    }
    const laneX = left - LANE_LABEL - lane * LANE_GAP;
    const up = to.y < from.y;
    // several routes leaving (or reaching) one box start (end) a little apart
    const out = leaving.get(edge.source) ?? 0;
    const into = arriving.get(edge.target) ?? 0;
    leaving.set(edge.source, out + 1);
    arriving.set(edge.target, into + 1);
    const y1 = from.y + BOX_H / 2 + (up ? -1 : 1) * Math.min(6 + out * 8, BOX_H / 2 - 4);
    const y2 = to.y + BOX_H / 2 + (up ? 1 : -1) * Math.min(6 + into * 8, BOX_H / 2 - 4);
    drawn.push({
      source: edge.source,
      target: edge.target,
      outcome: edge.outcome,
      route: "lane",
      path: `M ${left} ${y1} H ${laneX} V ${y2} H ${left - 2}`,
      label: { text: edge.outcome, x: laneX + 6, y: y1 - 5 },
    });
  });
  // to ABORT: a short arrow to the right, to a mark beside the box
  for (const edge of edges.filter((e) => e.target === ABORT)) {
    const from = at.get(edge.source);
    if (!from) {
      continue;
    }
    const y = from.y + BOX_H / 2;
    drawn.push({
      source: edge.source,
      target: ABORT,
      outcome: edge.outcome,
      route: "abort",
      path: `M ${right} ${y} H ${right + ABORT_GAP - 2}`,
      label: { text: edge.outcome, x: right + 10, y: y - 6 },
    });
  }

  const width = right + ABORT_GAP + 70;
  const height = yOf(nodes.length) + 8;
  return { width, height, nodes, edges: drawn, svg: svgOf(graph, nodes, drawn, width, height, right) };
}

function svgOf(graph: PlanGraph, nodes: DrawnNode[], edges: DrawnEdge[], width: number, height: number, right: number): string {
  const parts: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" class="ided-plan" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}">`,
    "<defs>",
    ...["success", "failure", "retry", "other"].map(
      (o) =>
        `<marker id="arrow-${o}" class="arrow arrow-${o}" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M 0 0 L 10 5 L 0 10 z"/></marker>`,
    ),
    "</defs>",
  ];
  const entry = nodes.find((n) => n.id === graph.entry);
  if (entry) {
    const cx = entry.x + entry.width / 2;
    parts.push(
      `<g class="start"><text x="${cx}" y="${entry.y - 26}" text-anchor="middle">start</text><path class="edge-line" d="M ${cx} ${entry.y - 20} V ${entry.y - 2}" marker-end="url(#arrow-other)"/></g>`,
    );
  }
  for (const edge of edges) {
    const kind = edge.outcome.split(", ")[0];
    const marker = ORDER[kind] !== undefined ? kind : "other";
    parts.push(
      `<g class="edge edge-${escape(kind)} route-${edge.route}" data-source="${escape(edge.source)}" data-target="${escape(edge.target)}">` +
        `<path class="edge-line" d="${edge.path}" marker-end="url(#arrow-${marker})"/>` +
        `<text class="edge-label" x="${edge.label.x}" y="${edge.label.y}">${escape(edge.label.text)}</text></g>`,
    );
  }
  const aborting = [...new Set(edges.filter((e) => e.route === "abort").map((e) => e.source))];
  for (const source of aborting) {
    const node = nodes.find((n) => n.id === source)!;
    parts.push(
      `<g class="terminal abort"><rect x="${right + ABORT_GAP}" y="${node.y + 10}" width="58" height="${BOX_H - 20}" rx="10"/>` +
        `<text x="${right + ABORT_GAP + 29}" y="${node.y + BOX_H / 2 + 4}" text-anchor="middle">${ABORT}</text></g>`,
    );
  }
  for (const node of nodes) {
    const terminal = node.id === DONE;
    parts.push(
      `<g class="node ${terminal ? "terminal done" : `status-${escape(node.status)}`}" data-id="${escape(node.id)}">` +
        `<rect x="${node.x}" y="${node.y}" width="${node.width}" height="${node.height}" rx="${terminal ? 22 : 6}"/>` +
        `<text x="${terminal ? node.x + node.width / 2 : node.x + 14}" y="${node.y + node.height / 2 + 5}"${terminal ? ' text-anchor="middle"' : ""}>${escape(node.label)}</text></g>`,
    );
  }
  parts.push("</svg>");
  return parts.join("\n");
}

/** The skipped stages, as the panel lists them under the graph. */
export function skippedLines(graph: PlanGraph): string[] {
  return graph.skipped.map((s) => (s.reason ? `${s.name}: ${s.reason}` : s.name));
}
