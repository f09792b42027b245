// Unit tests of the per-hunk review model: hunks of a unified diff, what is kept, the accept's `keep`.
import * as assert from "node:assert/strict";
import { describe, it } from "node:test";

import { acceptedText, hunkRow, hunksOf, ReviewMarks } from "../src/reviewModel";
import { DiffFile, RunDiff } from "../src/runModel";

const calc: DiffFile = {
  uri: "file:///ws/calc.py",
  path: "calc.py",
  status: "modified",
  oldPath: null,
  oldText: "",
  newText: "",
  diff: [
    "--- a/calc.py",
    "+++ b/calc.py",
    "@@ -1,5 +1,5 @@",
    " def add(a, b):",
    "-    return a + b",
    "+    return a + b  # checked",
    "@@ -11,4 +11,4 @@ def mul(a, b):",
    " ",
    "-",
    "-    return a / b",
    "+    return a / b if b else 0.0",
    "",
  ].join("\n"),
  added: 2,
  removed: 3,
  binary: false,
};
const readme: DiffFile = { ...calc, uri: "file:///ws/README.md", path: "README.md", diff: "@@ -1 +1,3 @@\n # calc\n+\n+Adds.\n" };
const image: DiffFile = { ...calc, uri: "file:///ws/logo.png", path: "logo.png", diff: "", binary: true };

function diff(...files: DiffFile[]): RunDiff {
  return { runId: "r1", branch: "ided/run/r1", review: "open", baseCommit: "a", startCommit: "a", headCommit: "b", commits: [], files };
}

describe("hunksOf", () => {
  it("finds each @@ header, where it starts in the new text, and its first changed line that is not blank", () => {
    const hunks = hunksOf(calc);
    assert.deepEqual(
      hunks.map((h) => [h.index, h.newStart, h.first]),
      [
        [0, 1, "-    return a + b"],
        [1, 11, "-    return a / b"],
      ],
    );
    assert.deepEqual(hunkRow(hunks[1]), { label: "@@ -11,4 +11,4 @@", description: "def mul(a, b):  -    return a / b" });
    assert.deepEqual(hunksOf(readme)[0].first, "+Adds.");
    assert.deepEqual(hunksOf(image), []);
  });
});

describe("ReviewMarks", () => {
  it("keeps everything to start with: a plain accept", () => {
    const marks = new ReviewMarks(diff(calc, readme, image));
    assert.equal(marks.keepParam(), undefined);
    assert.equal(marks.summary(), "");
    assert.equal(marks.fileKept("calc.py"), "all");
  });

  it("a dropped hunk keeps the file in part, a dropped file is left out", () => {
    const marks = new ReviewMarks(diff(calc, readme, image));
    marks.set("calc.py", false, 1);
    marks.set("README.md", false);
    assert.equal(marks.fileKept("calc.py"), "some");
    assert.equal(marks.isKept("calc.py", 0), true);
    assert.equal(marks.isKept("calc.py"), false);
    assert.deepEqual(marks.keepParam(), [{ path: "calc.py", hunks: [0] }, { path: "logo.png" }]);
    assert.equal(marks.summary(), "1 in part, 1 dropped");
    marks.set("calc.py", true);
    assert.deepEqual(marks.keepParam(), [{ path: "calc.py" }, { path: "logo.png" }]);
  });

  it("nothing kept is an empty keep, which the extension refuses to send", () => {
    const marks = new ReviewMarks(diff(calc, image));
    marks.set("calc.py", false);
    marks.set("logo.png", false);
    assert.deepEqual(marks.keepParam(), []);
    assert.equal(marks.summary(), "nothing kept");
  });
});

describe("acceptedText", () => {
  const result = { commits: ["c1"], files: ["calc.py"], branch: "refs/heads/main" };
  it("says whole or in part", () => {
    assert.equal(acceptedText("r1", result, "main"), "ided: accepted run r1: 1 commit(s), 1 file(s) on main");
    assert.equal(
      acceptedText("r1", { ...result, partial: ["calc.py"], dropped: ["README.md"] }, "main"),
      "ided: accepted run r1 in part: 1 commit(s), 1 file(s) on main; kept in part: calc.py; dropped: README.md",
    );
  });
});
