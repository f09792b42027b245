// Unit tests of the run model: progress folded into stage states, the status bar text, the review
// rows, run document paths and refusal lines.
import * as assert from "node:assert/strict";
import { describe, it } from "node:test";

import {
  branchName,
  DiffFile,
  parseRunDocumentPath,
  ProgressEvent,
  refusalText,
  reviewReadyText,
  reviewRow,
  runDocumentPath,
  RunProgressParams,
  RunState,
  runStatusView,
  sideText,
  stageRow,
} from "../src/runModel";

const start = {
  runId: "r1",
  status: "running",
  workflow: "bug_fix",
  stages: ["reproduction", "fix"],
  skipped: ["code_review"],
  notes: [],
};

let seq = 0;
function progress(kind: string, event: Partial<ProgressEvent> = {}, runId = "r1"): RunProgressParams {
  seq += 1;
  return { runId, seq, kind, event: { event: kind, ...event } };
}

function finishedRun(): RunState {
  const run = new RunState("r1", "fix add", false, start);
  run.apply(progress("run_started", { workflow: "bug_fix" }));
  run.apply(progress("node_started", { node: "reproduction", stage_name: "Reproduction", attempt: 1 }));
  run.apply(progress("node_finished", { node: "reproduction", status: "succeeded" }));
  run.apply(progress("node_started", { node: "fix", attempt: 1 }));
  run.apply(progress("tool_call", { node: "fix", title: "write_file calc.py" }));
  run.apply(progress("agent_message", { node: "fix", agent_id: "coder", text: "\n done \nmore" }));
  run.apply(progress("node_finished", { node: "fix", status: "succeeded" }));
  run.apply(
    progress("review", {
      changes: { branch: "ided/run/r1", commits: ["abc"], files: [{ path: "calc.py", status: "modified", added: 1, removed: 1 }] },
    }),
  );
  run.apply(progress("run_finished", { status: "succeeded", summary: "fixed" }));
  return run;
}

describe("RunState", () => {
  it("starts with the planned stages pending and the skipped ones marked", () => {
    const run = new RunState("r1", "fix add", false, start);
    assert.equal(run.phase, "running");
    assert.deepEqual(
      run.stages.map((s) => [s.id, s.status]),
      [
        ["reproduction", "pending"],
        ["fix", "pending"],
        ["code_review", "skipped"],
      ],
    );
    assert.equal(new RunState("r2", "plan it", true, { ...start, status: "planned" }).phase, "planned");
  });

  it("folds node, tool and message events into the stages and ends in review when files changed", () => {
    const run = finishedRun();
    assert.equal(run.phase, "review");
    assert.deepEqual(run.stage("reproduction")?.status, "completed");
    assert.deepEqual(run.stage("fix")?.lines, ["write_file calc.py", "coder: done"]);
    assert.deepEqual(run.reviewFiles.map((f) => f.path), ["calc.py"]);
    assert.deepEqual(run.log, ["review: 1 file(s) changed on ided/run/r1", "run finished: succeeded: fixed"]);
    assert.deepEqual(run.progress(), { done: 2, total: 2, current: undefined });
  });

  it("ignores other runs' events and repeated sequence numbers", () => {
    const run = new RunState("r1", "fix add", false, start);
    const event = progress("node_started", { node: "fix", attempt: 1 });
    assert.equal(run.apply(event), true);
    assert.equal(run.apply(event), false);
    assert.equal(run.apply(progress("node_started", { node: "reproduction" }, "other")), false);
    assert.equal(run.stage("reproduction")?.status, "pending");
  });

  it("takes a plan event's stages, names and statuses, keeping what happened under them", () => {
    const run = new RunState("r1", "fix add", false, start);
    run.apply(progress("tool_call", { node: "fix", title: "read calc.py" }));
    run.apply(
      progress("plan", {
        plan: [
          { stage_id: "reproduction", name: "Reproduction", status: "completed", attempt: 1, reason: null },
          { stage_id: "fix", name: "Fix", status: "in_progress", attempt: 2, reason: null },
          { stage_id: "code_review", name: "Code review", status: "skipped", attempt: 0, reason: "not needed" },
        ],
      }),
    );
    assert.deepEqual(run.stages.map((s) => s.name), ["Reproduction", "Fix", "Code review"]);
    assert.deepEqual(run.stage("fix")?.lines, ["read calc.py"]);
    assert.deepEqual(stageRow(run.stage("fix")!), { label: "Fix", description: "in progress · attempt 2" });
    assert.deepEqual(stageRow(run.stage("code_review")!), { label: "Code review", description: "skipped · not needed" });
    assert.match(runStatusView(run).text, /^\$\(sync~spin\) ided 1\/2 Fix$/);
  });

  it("a failed run without changes is failed; a cancelled one cancelled; feedback runs again", () => {
    const failed = new RunState("r1", "x", false, start);
    failed.apply(progress("run_finished", { status: "failed", summary: "no model" }));
    assert.equal(failed.phase, "failed");
    assert.equal(runStatusView(failed).text, "$(error) ided run failed");
    const cancelled = new RunState("r1", "x", false, start);
    cancelled.apply(progress("run_finished", { status: "cancelled" }));
    assert.equal(cancelled.phase, "cancelled");
    const run = finishedRun();
    assert.equal(runStatusView(run).text, "$(diff) ided: review 1 file(s)");
    assert.equal(reviewReadyText(run), "ided: run r1 is ready for review: 1 file(s) changed");
    run.resumed("swap the operands");
    assert.equal(run.phase, "running");
    assert.deepEqual(run.reviewFiles, []);
    assert.equal(run.log[run.log.length - 1], "feedback: swap the operands");
    run.apply(progress("review", { changes: { branch: "b", commits: [], files: [{ path: "a", status: "added", added: 1, removed: 0 }] } }));
    run.apply(progress("run_finished", { status: "succeeded" }));
    assert.equal(reviewReadyText(run), "ided: run r1 is ready for review (round 2): 1 file(s) changed");
    run.resumed("again, but faster", true); // the round's events came first: its review stays
    assert.equal(run.phase, "review");
    assert.equal(run.reviewFiles.length, 1);
  });
});

const file: DiffFile = {
  uri: "file:///ws/src/calc.py",
  path: "src/calc.py",
  status: "renamed",
  oldPath: "calc.py",
  oldText: "a\n",
  newText: null,
  diff: "",
  added: 3,
  removed: 1,
  binary: false,
};

describe("review helpers", () => {
  it("a branch ref is shown by its name", () => {
    assert.equal(branchName("refs/heads/main"), "main");
    assert.equal(branchName("feature/x"), "feature/x");
  });

  it("a review row names the file, the rename and the line counts", () => {
    assert.deepEqual(reviewRow(file), { label: "src/calc.py", description: "calc.py → R +3 −1", letter: "R" });
  });

  it("run document paths round-trip, ids with odd characters included", () => {
    const path = runDocumentPath("2026/x y", "after", "src/a b.py");
    assert.deepEqual(parseRunDocumentPath(path), { runId: "2026/x y", side: "after", path: "src/a b.py" });
    assert.equal(parseRunDocumentPath("/r1/middle/a.py"), undefined);
  });

  it("a missing side is empty and a binary file says so", () => {
    assert.equal(sideText(file, "before"), "a\n");
    assert.equal(sideText(file, "after"), "");
    assert.match(sideText({ ...file, binary: true }, "before"), /binary/);
  });

  it("a refusal is one line with the ided code, the conflicting files and how to trust", () => {
    const conflict = {
      message: "accept stopped: calc.py was changed on your side\nmore detail",
      data: { code: "change_conflict", report: { files: [{ path: "calc.py" }] } },
    };
    assert.equal(
      refusalText("ided/run/accept", conflict),
      "ided: accept refused: accept stopped: calc.py was changed on your side [change_conflict] Conflicting file(s): calc.py.",
    );
    const untrusted = { message: "not trusted", data: { code: "workspace_untrusted", how_to_trust: "ided trust /ws" } };
    assert.equal(
      refusalText("ided/run/start", untrusted),
      "ided: start refused: not trusted [workspace_untrusted] Trust it with `ided trust /ws`.",
    );
    assert.equal(refusalText("ided/index/search", new Error("boom")), "ided: search refused: boom");
    const hinted = { message: "nothing to roll back [see docs/errors.md#vcs_failed]", data: { code: "vcs_failed" } };
    assert.equal(refusalText("ided/run/rollback", hinted), "ided: rollback refused: nothing to roll back [see docs/errors.md#vcs_failed]");
  });
});
