// Unit tests of the extension's pure parts, on node's built-in test runner.
import * as assert from "node:assert/strict";
import { describe, it } from "node:test";

import { firstLine, hitToItem, IndexStatus, progressView, SearchHit, searchParams, serverArgs, statusView } from "../src/format";

const hit: SearchHit = {
  location: { uri: "file:///ws/src/geometry.py", range: { start: { line: 20, character: 0 }, end: { line: 23, character: 0 } } },
  path: "src/geometry.py",
  score: 0.8,
  kind: "code",
  symbolKind: "function",
  language: "python",
  name: "hypotenuse",
  qualifiedName: "hypotenuse",
  signature: null,
  preview: "\ndef hypotenuse(a: float, b: float) -> float:\n    return 1",
  text: null,
  sources: ["lexical"],
};

const status: IndexStatus = {
  workspace: "/ws",
  ready: true,
  reason: null,
  busy: null,
  filesIndexed: 4,
  chunks: 15,
  embedded: 0,
  embeddedFraction: 0,
  denseModel: null,
  lastUpdate: "2026-01-01T00:00:00+00:00",
  store: "qdrant-edge",
  stateDir: "/state",
  daemonPid: 42,
  clients: 2,
  watching: true,
};

describe("hitToItem", () => {
  it("labels a hit with its kind icon and qualified name and points at its 1-based line", () => {
    const item = hitToItem(hit);
    assert.equal(item.label, "$(symbol-function) hypotenuse");
    assert.equal(item.description, "src/geometry.py:21");
    assert.equal(item.detail, "def hypotenuse(a: float, b: float) -> float:");
    assert.equal(item.uri, "file:///ws/src/geometry.py");
    assert.equal(item.line, 20);
  });

  it("prefers the signature and falls back to the path for unnamed chunks", () => {
    const item = hitToItem({ ...hit, name: null, qualifiedName: null, symbolKind: "window", signature: "sig()" });
    assert.equal(item.label, "$(symbol-file) src/geometry.py");
    assert.equal(item.detail, "sig()");
  });
});

describe("firstLine", () => {
  it("skips blank lines and bounds the length", () => {
    assert.equal(firstLine("\n  \n  x = 1\ny"), "x = 1");
    assert.equal(firstLine("a".repeat(200), 10), `${"a".repeat(9)}…`);
    assert.equal(firstLine(null), "");
  });
});

describe("searchParams", () => {
  it("trims the query and clamps k into 1..200", () => {
    assert.deepEqual(searchParams("  retry  ", 500, "lexical"), { query: "retry", k: 200, mode: "lexical" });
    assert.deepEqual(searchParams("q", 0, "hybrid"), { query: "q", k: 1, mode: "hybrid" });
  });
});

describe("serverArgs", () => {
  it("puts extra arguments before the lsp subcommand", () => {
    assert.deepEqual(serverArgs(["--set", "embedding.enabled=false"]), ["--set", "embedding.enabled=false", "lsp"]);
    assert.deepEqual(serverArgs([]), ["lsp"]);
  });
});

describe("status bar views", () => {
  it("spins with the percentage while a progress period is open and stops at its end", () => {
    const report = progressView({ kind: "report", message: "parse 3/4", percentage: 75 }, "ided: indexing");
    assert.deepEqual(report, { text: "$(sync~spin) ided 75%", tooltip: "ided: indexing: parse 3/4", busy: true });
    assert.equal(progressView({ kind: "end", message: "done" }, "ided: indexing").busy, false);
  });

  it("shows the file count when ready, a spinner when busy and a warning when not ready", () => {
    assert.equal(statusView(status).text, "$(database) ided 4");
    assert.match(statusView(status).tooltip, /4 files, 15 chunks, 0% embedded/);
    assert.equal(statusView({ ...status, busy: "embedding (3 chunk(s) to go)" }).text, "$(sync~spin) ided");
    const broken = statusView({ ...status, ready: false, reason: "store failed" });
    assert.equal(broken.text, "$(warning) ided");
    assert.match(broken.tooltip, /not ready: store failed/);
  });
});
