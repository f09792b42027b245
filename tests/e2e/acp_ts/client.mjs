// An independent ACP client for ided's end-to-end tests: the TypeScript SDK's `client()` builder
// (npm @agentclientprotocol/sdk, pinned in package.json) spawns `python -m daemon.acp` over real
// stdio and drives one scripted flow; tests/e2e/test_acp_ts_client.py runs it and checks the
// JSON it prints on stdout (and the repository's branch).
//
//   node client.mjs --python PY --repo DIR --stderr FILE [--timeout-ms N]
//
// Flow: initialize, session/new in DIR, "/dry-run fix add" (plan + thoughts), "fix add" (tool
// calls, one diff for review, session/request_permission answered "accept"). fs/read_text_file is
// offered and answered from the disk. Every session/update is recorded. Exit code 0 when the flow
// ran (the test judges the result), 1 on an error, 2 on the time limit.

import { spawn } from "node:child_process";
import { openSync, readFileSync } from "node:fs";
import { Readable, Writable } from "node:stream";
import { parseArgs } from "node:util";

import { PROTOCOL_VERSION, client, methods, ndJsonStream } from "@agentclientprotocol/sdk";

const { values: opts } = parseArgs({
  options: {
    python: { type: "string" },
    repo: { type: "string" },
    stderr: { type: "string" },
    "timeout-ms": { type: "string", default: "120000" },
  },
});
if (!opts.python || !opts.repo || !opts.stderr) {
  console.error("usage: node client.mjs --python PY --repo DIR --stderr FILE [--timeout-ms N]");
  process.exit(64);
}

const limit = setTimeout(() => {
  console.error(`acp_ts client: time limit of ${opts["timeout-ms"]} ms reached`);
  process.exit(2);
}, Number(opts["timeout-ms"]));

const agentProcess = spawn(opts.python, ["-P", "-m", "daemon.acp"], {
  cwd: opts.repo,
  env: process.env,
  stdio: ["pipe", "pipe", openSync(opts.stderr, "w")],
});
const exited = new Promise((resolve) => agentProcess.on("exit", (code, signal) => resolve({ code, signal })));

const permissionRequests = [];
const reads = [];

const app = client({ name: "ided-acp-ts-test" })
  .onRequest(methods.client.session.requestPermission, async ({ params }) => {
    permissionRequests.push({
      toolCall: params.toolCall,
      options: params.options.map((o) => ({ optionId: o.optionId, kind: o.kind })),
    });
    return { outcome: { outcome: "selected", optionId: "accept" } };
  })
  .onRequest(methods.client.fs.readTextFile, async ({ params }) => {
    reads.push(params.path);
    return { content: readFileSync(params.path, "utf8") };
  });

/** Sends one prompt and collects every update of the turn until its stop message. */
async function turn(session, text) {
  const reply = session.prompt(text);
  const updates = [];
  for (;;) {
    const message = await session.nextUpdate();
    if (message.kind === "stop") {
      await reply;
      return { stopReason: message.stopReason, updates };
    }
    updates.push(message.update);
  }
}

const stream = ndJsonStream(Writable.toWeb(agentProcess.stdin), Readable.toWeb(agentProcess.stdout));
let summary;
try {
  summary = await app.connectWith(stream, async (ctx) => {
    const init = await ctx.request(methods.agent.initialize, {
      protocolVersion: PROTOCOL_VERSION,
      clientCapabilities: { fs: { readTextFile: true, writeTextFile: false } },
      clientInfo: { name: "ided-acp-ts-test", version: "0" },
    });
    return await ctx.buildSession({ cwd: opts.repo, mcpServers: [] }).withSession(async (session) => {
      const dryRun = await turn(session, "/dry-run fix add");
      const edit = await turn(session, "fix add");
      return {
        initialize: init,
        sessionId: session.sessionId,
        modes: session.modes,
        dryRun,
        edit,
        permissionRequests,
        reads,
      };
    });
  });
} catch (error) {
  console.error("acp_ts client: the flow failed:", error);
  agentProcess.kill("SIGTERM");
  process.exit(1);
}
agentProcess.stdin.end();
const exit = await exited;
clearTimeout(limit);
process.stdout.write(JSON.stringify({ ...summary, agentExit: exit }) + "\n");
