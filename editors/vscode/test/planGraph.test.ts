// Unit tests of the plan graph's layout: boxes in plan order, routes down, around and to ABORT, labels.
import * as assert from "node:assert/strict";
import { describe, it } from "node:test";

import { drawPlanGraph, nodeLabel, PlanGraph } from "../src/planGraph";

const bugFix: PlanGraph = {
  entry: "reproduction",
  stages: [
    { stageId: "reproduction", name: "Reproduction", reason: null },
    { stageId: "diagnosis", name: "Diagnosis", reason: null },
    { stageId: "fix", name: "Fix", reason: null },
    { stageId: "regression_testing", name: "Regression testing", reason: null },
  ],
  skipped: [{ stageId: "code_review", name: "Code review", reason: "scripted skip" }],
  edges: [
    { source: "reproduction", target: "diagnosis", outcome: "success" },
    { source: "reproduction", target: "diagnosis", outcome: "failure" },
    { source: "diagnosis", target: "fix", outcome: "success" },
    { source: "diagnosis", target: "ABORT", outcome: "failure" },
    { source: "fix", target: "regression_testing", outcome: "success" },
    { source: "fix", target: "ABORT", outcome: "failure" },
    { source: "regression_testing", target: "DONE", outcome: "success" },
    { source: "regression_testing", target: "ABORT", outcome: "failure" },
    { source: "regression_testing", target: "fix", outcome: "retry" },
  ],
};

// bug_fix with `reflection: {enabled: true, stages: [fix]}` and `evaluation: {enabled: true}`, as the server
// answers it (code review planned)
const reflected: PlanGraph = {
  entry: "reproduction",
  stages: [
    { stageId: "reproduction", name: "Reproduction", reason: null },
    { stageId: "diagnosis", name: "Diagnosis", reason: null },
    { stageId: "fix", name: "Fix", reason: null },
    { stageId: "regression_testing", name: "Regression testing", reason: null },
    { stageId: "code_review", name: "Code review", reason: null },
  ],
  skipped: [],
  edges: [
    { source: "reproduction", target: "diagnosis", outcome: "success" },
    { source: "reproduction", target: "diagnosis", outcome: "failure" },
    { source: "diagnosis", target: "fix", outcome: "success" },
    { source: "diagnosis", target: "ABORT", outcome: "failure" },
    { source: "fix", target: "reflector", outcome: "success" },
    { source: "fix", target: "ABORT", outcome: "failure" },
    { source: "regression_testing", target: "code_review", outcome: "success" },
    { source: "regression_testing", target: "ABORT", outcome: "failure" },
    { source: "regression_testing", target: "fix", outcome: "retry" },
    { source: "code_review", target: "evaluator", outcome: "success" },
    { source: "code_review", target: "evaluator", outcome: "failure" },
    { source: "reflector", target: "regression_testing", outcome: "accept fix" },
    { source: "reflector", target: "ABORT", outcome: "limit" },
    { source: "reflector", target: "fix", outcome: "send back" },
    { source: "evaluator", target: "DONE", outcome: "scored" },
  ],
  nodes: [
    { nodeId: "reflector", name: "Reflector" },
    { nodeId: "evaluator", name: "Evaluator" },
  ],
};

describe("drawPlanGraph", () => {
  it("stacks the stages in plan order and closes with DONE", () => {
    const drawn = drawPlanGraph(bugFix);
    assert.deepEqual(
      drawn.nodes.map((n) => n.id),
      ["reproduction", "diagnosis", "fix", "regression_testing", "DONE"],
    );
    const ys = drawn.nodes.map((n) => n.y);
    assert.deepEqual([...ys].sort((a, b) => a - b), ys);
    assert.equal(new Set(drawn.nodes.map((n) => n.x)).size, 1);
  });

  it("draws each route once, labelled: down to the next stage, around for a retry, aside to ABORT", () => {
    const drawn = drawPlanGraph(bugFix);
    const routes = drawn.edges.map((e) => `${e.source} ${e.route} ${e.label.text} ${e.target}`).sort();
    assert.deepEqual(routes, [
      "diagnosis abort failure ABORT",
      "diagnosis down success fix",
      "fix abort failure ABORT",
      "fix down success regression_testing",
      "regression_testing abort failure ABORT",
      "regression_testing down success DONE",
      "regression_testing lane retry fix",
      "reproduction down success, failure diagnosis",
    ]);
    const retry = drawn.edges.find((e) => e.outcome === "retry")!;
    const regression = drawn.nodes.find((n) => n.id === "regression_testing")!;
    assert.ok(retry.label.x < regression.x, "the retry's lane runs left of the boxes");
    assert.match(drawn.svg, /class="edge edge-retry route-lane"/);
    assert.match(drawn.svg, />○ Regression testing</);
    assert.equal((drawn.svg.match(/>ABORT</g) ?? []).length, 3);
  });

  it("colours a box by its status and says the attempt", () => {
    const drawn = drawPlanGraph(bugFix, new Map([["fix", { status: "in_progress", attempt: 2 }]]));
    const fix = drawn.nodes.find((n) => n.id === "fix")!;
    assert.equal(fix.label, "▶ Fix · attempt 2");
    assert.match(drawn.svg, /class="node status-in_progress" data-id="fix"/);
    assert.equal(nodeLabel("A & <B>"), "○ A & <B>");
    assert.match(drawPlanGraph({ ...bugFix, stages: [{ stageId: "x", name: "A & <B>", reason: null }], edges: [] }).svg, /A &amp; &lt;B&gt;/);
  });

  it("draws the reflector after the stage it reflects and the evaluator before DONE, their routes labelled", () => {
    const drawn = drawPlanGraph(reflected, new Map([["fix", { status: "completed", attempt: 1 }]]));
    assert.deepEqual(
      drawn.nodes.map((n) => n.id),
      ["reproduction", "diagnosis", "fix", "reflector", "regression_testing", "code_review", "evaluator", "DONE"],
    );
    const reflector = drawn.nodes.find((n) => n.id === "reflector")!;
    assert.equal(reflector.label, "◇ Reflector");
    assert.equal(reflector.status, "node");
    const routes = drawn.edges
      .filter((e) => [e.source, e.target].some((id) => id === "reflector" || id === "evaluator"))
      .map((e) => `${e.source} ${e.route} ${e.label.text} ${e.target}`)
      .sort();
    assert.deepEqual(routes, [
      "code_review down success, failure evaluator",
      "evaluator down scored DONE",
      "fix down success reflector",
      "reflector abort limit ABORT",
      "reflector down accept fix regression_testing",
      "reflector lane send back fix",
    ]);
    assert.match(drawn.svg, /class="node status-node" data-id="evaluator"/);
    assert.match(drawn.svg, />◇ Evaluator</);
    assert.match(drawn.svg, />send back</);
    // an older server sends no nodes: the plan draws as before
    assert.deepEqual(
      drawPlanGraph({ ...bugFix, nodes: undefined }).nodes.map((n) => n.id),
      drawPlanGraph(bugFix).nodes.map((n) => n.id),
    );
  });
});
