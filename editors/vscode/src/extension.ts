// ided for VS Code: starts `ided lsp` (which attaches to the workspace's ided daemon), offers a
// search command (QuickPick, opens the hit), shows index progress in the status bar, answers go to
// definition / find references / hover through the language servers ided runs (where no other
// extension does, intelGate.ts), and drives agent runs (runs.ts: start, plan tree and graph,
// review in the diff editor hunk by hunk, accept / reject / feedback / rollback).
import * as vscode from "vscode";
import {
  LanguageClient,
  LanguageClientOptions,
  RevealOutputChannelOn,
  ServerOptions,
  StaticFeature,
  WorkDoneProgress,
  WorkDoneProgressCreateParams,
  WorkDoneProgressCreateRequest,
} from "vscode-languageclient/node";

import { hitToItem, HitItem, IndexSearchResult, IndexStatus, ProgressValue, searchParams, serverArgs } from "./format";
import { IntelGate, intelMode } from "./intelGate";
import { refusalText } from "./runModel";
import { RunController } from "./runs";
import { IndexStatusBar } from "./statusBar";

const STATUS_POLL_MS = 15_000;

let client: LanguageClient | undefined;
let statusBar: IndexStatusBar | undefined;
let poll: NodeJS.Timeout | undefined;
let runs: RunController | undefined;

/** Takes over `window/workDoneProgress/create` so the status bar follows the server's progress. */
class StatusBarProgress implements StaticFeature {
  constructor(private readonly lsp: LanguageClient, private readonly bar: IndexStatusBar) {}

  fillClientCapabilities(capabilities: { window?: { workDoneProgress?: boolean } }): void {
    capabilities.window = { ...(capabilities.window ?? {}), workDoneProgress: true };
  }

  initialize(): void {
    this.lsp.onRequest(WorkDoneProgressCreateRequest.type, (params: WorkDoneProgressCreateParams) => {
      const subscription = this.lsp.onProgress(WorkDoneProgress.type, params.token, (value) => {
        this.bar.onProgress(value as ProgressValue);
        if (value.kind === "end") {
          subscription.dispose();
          void refreshStatus();
        }
      });
    });
  }

  getState(): { kind: "static" } {
    return { kind: "static" };
  }

  clear(): void {}
}

function settings(): vscode.WorkspaceConfiguration {
  return vscode.workspace.getConfiguration("ided");
}

async function refreshStatus(): Promise<void> {
  if (!client || !statusBar || !client.isRunning()) {
    return;
  }
  try {
    statusBar.onStatus(await client.sendRequest<IndexStatus>("ided/index/status", {}));
  } catch (error) {
    statusBar.onError(error instanceof Error ? error.message : String(error));
  }
}

async function startClient(context: vscode.ExtensionContext): Promise<void> {
  const command = settings().get<string>("path", "ided");
  const args = serverArgs(settings().get<string[]>("extraArgs", []));
  // No `transport`: with TransportKind.stdio the client appends `--stdio`, which `ided lsp` refuses;
  // an executable without one talks over stdin/stdout all the same.
  const serverOptions: ServerOptions = { command, args };
  const gate = new IntelGate(intelMode(settings().get<string>("intel", "auto")));
  const place = (method: string, document: vscode.TextDocument, position: vscode.Position): string =>
    `${method} ${document.uri.toString()} ${position.line}:${position.character}`;
  const clientOptions: LanguageClientOptions = {
    documentSelector: [{ scheme: "file" }],
    outputChannelName: "ided",
    // a failed request is logged in the output channel, not shown: what a person must see (no
    // language server installed, the daemon not reachable) the server shows itself, and the
    // extension's own commands show their refusals as one line
    revealOutputChannelOn: RevealOutputChannelOn.Never,
    initializationOptions: { standardIntel: gate.offered },
    middleware: {
      provideDefinition: async (document, position, token, next) => {
        const key = place("definition", document, position);
        const others = async (): Promise<number> =>
          (await vscode.commands.executeCommand<unknown[]>("vscode.executeDefinitionProvider", document.uri, position))?.length ?? 0;
        return (await gate.answers("definition", document.languageId, key, others)) ? next(document, position, token) : null;
      },
      provideReferences: async (document, position, options, token, next) => {
        const key = place("references", document, position);
        const others = async (): Promise<number> =>
          (await vscode.commands.executeCommand<unknown[]>("vscode.executeReferenceProvider", document.uri, position))?.length ?? 0;
        return (await gate.answers("references", document.languageId, key, others)) ? next(document, position, options, token) : null;
      },
      provideHover: async (document, position, token, next) => {
        const key = place("hover", document, position);
        const others = async (): Promise<number> =>
          (await vscode.commands.executeCommand<vscode.Hover[]>("vscode.executeHoverProvider", document.uri, position))?.filter(
            (hover) => hover.contents.length > 0,
          ).length ?? 0;
        return (await gate.answers("hover", document.languageId, key, others)) ? next(document, position, token) : null;
      },
    },
  };
  statusBar ??= new IndexStatusBar("ided.status");
  const lsp = new LanguageClient("ided", "ided", serverOptions, clientOptions);
  lsp.registerFeature(new StatusBarProgress(lsp, statusBar));
  lsp.onNotification("ided/index/changed", () => void refreshStatus());
  runs?.attach(lsp);
  client = lsp;
  try {
    await lsp.start();
  } catch (error) {
    statusBar.onError(`could not start \`${command} ${args.join(" ")}\`: ${String(error)}`);
    throw error;
  }
  poll ??= setInterval(() => void refreshStatus(), STATUS_POLL_MS);
  context.subscriptions.push({ dispose: () => poll && clearInterval(poll) });
  await refreshStatus();
}

async function search(): Promise<void> {
  if (!client) {
    return;
  }
  const lsp = client;
  const query = await vscode.window.showInputBox({ prompt: "ided: search the workspace index", placeHolder: "words, identifiers or a question" });
  if (!query || !query.trim()) {
    return;
  }
  const params = searchParams(query, settings().get<number>("search.maxResults", 30), settings().get<string>("search.mode", "hybrid"));
  let result: IndexSearchResult;
  try {
    result = await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Window, title: "ided: searching" },
      () => lsp.sendRequest<IndexSearchResult>("ided/index/search", params),
    );
  } catch (error) {
    void vscode.window.showErrorMessage(refusalText("ided/index/search", error));
    return;
  }
  if (result.hits.length === 0) {
    void vscode.window.showInformationMessage(`ided: nothing found for "${query}"`);
    return;
  }
  const picked = await vscode.window.showQuickPick<HitItem & vscode.QuickPickItem>(result.hits.map(hitToItem), {
    title: `ided: ${result.hits.length} hit(s) for "${query}" (${result.mode})`,
    matchOnDescription: true,
    matchOnDetail: true,
  });
  if (picked) {
    const position = new vscode.Position(picked.line, 0);
    const document = await vscode.workspace.openTextDocument(vscode.Uri.parse(picked.uri));
    await vscode.window.showTextDocument(document, { selection: new vscode.Range(position, position) });
  }
}

async function showStatus(): Promise<void> {
  if (!client) {
    return;
  }
  let status: IndexStatus;
  try {
    status = await client.sendRequest<IndexStatus>("ided/index/status", {});
  } catch (error) {
    void vscode.window.showErrorMessage(refusalText("ided/index/status", error));
    return;
  }
  statusBar?.onStatus(status);
  const embedded = Math.round(100 * status.embeddedFraction);
  const state = status.busy ? `busy: ${status.busy}` : status.ready ? "ready" : `not ready: ${status.reason ?? "?"}`;
  void vscode.window.showInformationMessage(
    `ided: ${status.filesIndexed} files, ${status.chunks} chunks, ${embedded}% embedded — ${state} (daemon pid ${status.daemonPid})`,
  );
}

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  runs = new RunController(() => client);
  context.subscriptions.push(
    runs,
    vscode.commands.registerCommand("ided.search", search),
    vscode.commands.registerCommand("ided.status", showStatus),
    vscode.commands.registerCommand("ided.restart", async () => {
      await client?.stop();
      await startClient(context);
    }),
    { dispose: () => statusBar?.dispose() },
  );
  await startClient(context);
}

export async function deactivate(): Promise<void> {
  if (poll) {
    clearInterval(poll);
  }
  await client?.stop();
}
