// Drives a real VS Code (code-server, served to Debian's Chromium through Playwright) with the ided
// extension installed, through ided's whole loop: search, go to definition / hover / references
// through ided, index status, a dry run and its plan graph (a webview), a run, its review in the
// diff editor, feedback (from the notification), the second review with one hunk dropped, accept
// of the rest (from the notification), rollback, a refused second rollback, and a second run that
// is rejected. Writes a JSON report (what the UI showed at each step) and a screenshot of each
// step; tests/e2e/test_vscode_code_server.py checks them and the repository.
//
//   node drive.mjs SETTINGS.json
//   settings: { url, chromium, out, shots, timeoutMs, searchQuery, dryRequest, request, feedback,
//               fixedMarker, acceptedMarker, usage: { line, column }, dropHunk }
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { chromium } from "playwright-core";

const settings = JSON.parse(readFileSync(process.argv[2], "utf8"));
const WAIT = settings.timeoutMs;
const report = { steps: [], notifications: [], errors: [] };

function step(name, data = {}) {
  report.steps.push({ name, at: Date.now(), ...data });
}

function save() {
  writeFileSync(settings.out, JSON.stringify(report, null, 2));
}

// Every notification message that ever shows, in order (toasts hide themselves after a while).
const RECORD_NOTIFICATIONS = () => {
  window.__idedSeen = [];
  const seen = new Set();
  const scan = () => {
    for (const node of document.querySelectorAll(".notification-list-item-message")) {
      const text = node.textContent.trim();
      if (text && !seen.has(text)) {
        seen.add(text);
        window.__idedSeen.push(text);
      }
    }
  };
  // ...and every text the ided status bar items show (a run's progress passes through them).
  window.__idedStatus = [];
  const scanStatus = () => {
    for (const item of document.querySelectorAll("#workbench\\.parts\\.statusbar .statusbar-item")) {
      const text = item.textContent.trim();
      const last = window.__idedStatus[window.__idedStatus.length - 1];
      if (text.includes("ided") && text !== last && !window.__idedStatus.includes(text)) {
        window.__idedStatus.push(text);
      }
    }
  };
  new MutationObserver(() => {
    scan();
    scanStatus();
  }).observe(document, { childList: true, subtree: true, characterData: true });
};

async function notifications(page) {
  report.statusTexts = await page.evaluate(() => window.__idedStatus ?? []);
  report.notifications = await page.evaluate(() => window.__idedSeen ?? []);
  return report.notifications;
}

async function waitForNotification(page, pattern, what) {
  const source = pattern.source;
  const flags = pattern.flags;
  try {
    await page.waitForFunction(
      ([s, f]) => (window.__idedSeen ?? []).some((m) => new RegExp(s, f).test(m)),
      [source, flags],
      { timeout: WAIT, polling: 200 },
    );
  } catch (error) {
    await notifications(page);
    throw new Error(`no notification ${pattern} (${what}); seen: ${JSON.stringify(report.notifications)}`);
  }
  const all = await notifications(page);
  return all.filter((m) => pattern.test(m)).pop();
}

// A list row's text, its parts (label, description, detail) separated by one space.
const ROW_TEXT = `(row) => {
  const parts = [];
  const walk = document.createTreeWalker(row, NodeFilter.SHOW_TEXT);
  while (walk.nextNode()) {
    const text = walk.currentNode.textContent.replace(/\\s+/g, " ").trim();
    if (text) parts.push(text);
  }
  return parts.join(" ");
}`;

async function statusBar(page) {
  return page.$$eval("#workbench\\.parts\\.statusbar .statusbar-item", (items) =>
    items.map((i) => i.textContent.trim()).filter((t) => t.includes("ided")),
  );
}

async function panes(page) {
  return page.$$eval(
    ".part.sidebar .pane",
    (all, rowText) => {
      const text = eval(rowText);
      return all.map((pane) => ({
        title: pane.querySelector(".pane-header .title")?.textContent?.trim() ?? "",
        rows: [...pane.querySelectorAll(".monaco-list-row")]
          .sort((a, b) => parseFloat(a.style.top || "0") - parseFloat(b.style.top || "0"))
          .map(text),
      }));
    },
    ROW_TEXT,
  );
}

async function waitForRow(page, text, what) {
  try {
    await page.waitForFunction(
      (t) => [...document.querySelectorAll(".part.sidebar .monaco-list-row")].some((r) => r.textContent.includes(t)),
      text,
      { timeout: WAIT, polling: 200 },
    );
  } catch {
    throw new Error(`no row with ${JSON.stringify(text)} (${what}); panes: ${JSON.stringify(await panes(page))}`);
  }
}

async function pane(page, title) {
  return (await panes(page)).find((p) => p.title.toLowerCase() === title.toLowerCase());
}

async function tabs(page) {
  return page.$$eval(".tabs-container .tab", (all) => all.map((t) => t.getAttribute("aria-label") ?? t.textContent.trim()));
}

/** The lines an editor shows, in line order (`.view-line`s are positioned absolutely). */
async function editorLines(page, selector) {
  return page.$$eval(`${selector} .view-line`, (lines) =>
    lines
      .sort((a, b) => parseFloat(a.style.top || "0") - parseFloat(b.style.top || "0"))
      .map((l) => l.textContent.replace(/\u00a0/g, " ")),
  );
}

async function command(page, title) {
  await page.keyboard.press("F1");
  const input = page.locator(".quick-input-widget .quick-input-box input");
  await input.waitFor({ state: "visible", timeout: WAIT });
  await input.fill(`>${title}`);
  const row = page.locator(".quick-input-widget .monaco-list-row", { hasText: title }).first();
  await row.waitFor({ state: "visible", timeout: WAIT });
  await page.keyboard.press("Enter");
}

async function answerInput(page, text) {
  const input = page.locator(".quick-input-widget .quick-input-box input");
  await input.waitFor({ state: "visible", timeout: WAIT });
  await input.fill(text);
  await page.keyboard.press("Enter");
}

/** Click a button of the notification toast that shows `message`. */
async function toastButton(page, message, label) {
  const toast = page.locator(".notification-toast", { hasText: message }).first();
  await toast.waitFor({ state: "visible", timeout: WAIT });
  await toast.locator(".monaco-button", { hasText: label }).first().click();
}

/** The review as shown: the diff editor (waiting until its right side has `marker`), both views. */
async function reviewState(page, marker, row = "· waiting for your review") {
  await page.waitForFunction(
    (text) =>
      [...document.querySelectorAll(".monaco-diff-editor .editor.modified .view-line")].some((l) =>
        l.textContent.replace(/\u00a0/g, " ").includes(text),
      ),
    marker,
    { timeout: WAIT, polling: 250 },
  );
  await page.locator(".part.sidebar .pane", { hasText: "calc.py" }).first().waitFor({ timeout: WAIT });
  // The tree views follow a moment later than the editor (VS Code batches their refreshes).
  await waitForRow(page, "· waiting for your review", "the Run view's header in review");
  await waitForRow(page, row, "the Run view in review");
  return {
    run: await pane(page, "Run"),
    review: await pane(page, "Review"),
    tabs: await tabs(page),
    before: await editorLines(page, ".monaco-diff-editor .editor.original"),
    after: await editorLines(page, ".monaco-diff-editor .editor.modified"),
    statusBar: await statusBar(page),
  };
}

async function shot(page, name) {
  const path = join(settings.shots, `${name}.png`);
  await page.screenshot({ path });
  step(`screenshot ${name}`, { path });
}

/** The frame of the plan webview (webviews are nested iframes), once it shows its SVG. */
async function planFrame(page) {
  const deadline = Date.now() + WAIT;
  while (Date.now() < deadline) {
    for (const frame of page.frames()) {
      const found = await frame.$("svg.ided-plan").catch(() => null);
      if (found) {
        return frame;
      }
    }
    await page.waitForTimeout(250);
  }
  throw new Error("the plan webview did not show its graph");
}

/** What the plan graph shows: box labels, route labels (by outcome), the skipped list. */
async function planState(frame) {
  return frame.evaluate(() => ({
    title: document.querySelector("h1")?.textContent ?? "",
    meta: document.querySelector(".meta")?.textContent ?? "",
    nodes: [...document.querySelectorAll("svg.ided-plan .node text")].map((t) => t.textContent),
    edges: [...document.querySelectorAll("svg.ided-plan .edge")].map(
      (g) => `${g.getAttribute("data-source")} -${g.querySelector(".edge-label").textContent}-> ${g.getAttribute("data-target")}`,
    ),
    skipped: [...document.querySelectorAll(".skipped li")].map((li) => li.textContent),
  }));
}

/** The line and column the editor's status bar shows ("Ln 6, Col 12"). */
async function cursorAt(page) {
  const item = page.locator("#workbench\\.parts\\.statusbar .statusbar-item", { hasText: /^Ln \d+, Col \d+/ }).first();
  return (await item.textContent()).trim();
}

async function main() {
  const browser = await chromium.launch({
    executablePath: settings.chromium,
    headless: true,
    args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"],
  });
  const context = await browser.newContext({ viewport: { width: 1500, height: 900 } });
  await context.addInitScript(RECORD_NOTIFICATIONS);
  const page = await context.newPage();
  page.on("pageerror", (error) => report.errors.push(`page error: ${error.message}`));
  try {
    await page.goto(settings.url, { waitUntil: "domcontentloaded", timeout: WAIT });
    await page.locator(".monaco-workbench").waitFor({ timeout: WAIT });
    // The index status item: "ided N" once the first pass is done (a spinner with a percentage before).
    await page.waitForFunction(
      () =>
        [...document.querySelectorAll("#workbench\\.parts\\.statusbar .statusbar-item")].some((i) =>
          /^ided \d+$/.test(i.textContent.trim()),
        ),
      undefined,
      { timeout: WAIT, polling: 250 },
    );
    step("indexed", { statusBar: await statusBar(page) });

    // Search: the QuickPick lists the hits; Enter opens the first one in an editor.
    await command(page, "ided: Search the workspace index");
    await answerInput(page, settings.searchQuery);
    const hitRows = page.locator(".quick-input-widget .quick-input-list .monaco-list-row");
    await hitRows.first().waitFor({ state: "visible", timeout: WAIT });
    const hits = await hitRows.evaluateAll((rows, rowText) => rows.map(eval(rowText)), ROW_TEXT);
    const title = await page.locator(".quick-input-widget .quick-input-title").textContent();
    await shot(page, "search");
    await page.keyboard.press("Enter");
    await page.locator(".tabs-container .tab.active", { hasText: "calc.py" }).waitFor({ timeout: WAIT });
    await command(page, "View: Keep Editor"); // not a preview tab: it stays open beside the review
    step("search", { hits, title, tabs: await tabs(page), editor: await editorLines(page, ".editor-instance .monaco-editor") });

    // Go to definition, hover and references through ided (no other extension answers for Python).
    const usage = `${settings.usage.line}:${settings.usage.column}`;
    const cursorIs = (pattern) =>
      page.waitForFunction(
        (source) =>
          [...document.querySelectorAll("#workbench\\.parts\\.statusbar .statusbar-item")].some((i) =>
            new RegExp(source).test(i.textContent.trim()),
          ),
        pattern.source,
        { timeout: WAIT, polling: 250 },
      );
    const goTo = async () => {
      await command(page, "Go to Line/Column");
      await answerInput(page, `:${usage}`);
      await cursorIs(new RegExp(`^Ln ${settings.usage.line}, Col ${settings.usage.column}`));
    };
    await goTo();
    await page.keyboard.press("F12");
    await cursorIs(/^Ln 1, Col 5/); // `add` of `def add(a, b)`
    const definition = await cursorAt(page);
    await goTo();
    await command(page, "Show or Focus Hover");
    const hover = page.locator(".monaco-hover:not(.hidden) .hover-contents").first();
    await hover.waitFor({ state: "visible", timeout: WAIT });
    await page.waitForFunction(() => /def add/.test(document.querySelector(".monaco-hover:not(.hidden)")?.textContent ?? ""), undefined, {
      timeout: WAIT,
      polling: 250,
    });
    const hoverText = await page.locator(".monaco-hover:not(.hidden)").first().textContent();
    await shot(page, "hover");
    await page.keyboard.press("Escape");
    await command(page, "Peek References");
    const peek = page.locator(".peekview-widget .peekview-title");
    await peek.waitFor({ state: "visible", timeout: WAIT });
    await page.waitForFunction(() => /References \(\d+\)/.test(document.querySelector(".peekview-widget .peekview-title")?.textContent ?? ""), undefined, {
      timeout: WAIT,
      polling: 250,
    });
    const references = (await peek.textContent()).trim();
    await shot(page, "references");
    await page.keyboard.press("Escape");
    step("intel", { definition, hover: hoverText, references });

    // Index status as a notification.
    await command(page, "ided: Show index status");
    const status = await waitForNotification(page, /^ided: \d+ files/, "index status");
    step("status", { message: status });

    // A dry run: plan only; the Run view shows the planned stages.
    await command(page, "ided: Dry run (plan only)");
    await answerInput(page, settings.dryRequest);
    const dry = await waitForNotification(page, /^ided: dry run /, "dry run");
    await page.waitForFunction(() => document.querySelector(".part.sidebar .pane") !== null, undefined, { timeout: WAIT });
    const plan = await planState(await planFrame(page));
    step("dry run", { message: dry, run: await pane(page, "Run"), statusBar: await statusBar(page), plan, tabs: await tabs(page) });
    await shot(page, "plan");
    // Close the plan (its editor group goes with it): the diff editor has the width for both sides.
    await page.locator('.tabs-container .tab[aria-label^="ided plan: "]').first().click({ button: "middle" });
    await page.locator('.tabs-container .tab[aria-label^="ided plan: "]').waitFor({ state: "detached", timeout: WAIT });

    // A run: progress in the status bar and the plan tree; the review opens in the diff editor.
    await command(page, "ided: Start a run");
    await answerInput(page, settings.request);
    try {
      // the run's progress in the status bar and the Run view (the scripted coder takes a second)
      await page.waitForFunction(
        () => (window.__idedStatus ?? []).some((t) => /ided \d+\/\d+ [Ff]ix/.test(t)),
        undefined,
        { timeout: 20_000, polling: 100 },
      );
      await shot(page, "running");
    } catch {
      step("running: the Fix stage passed before a screenshot");
    }
    const ready = await waitForNotification(page, /is ready for review: /, "review");
    step("review", { message: ready, ...(await reviewState(page, settings.fixedMarker)) });
    await shot(page, "review");

    // Every changed file in one multi-diff editor.
    await command(page, "ided: Open all changes of the run");
    const first = /run (\S+) is ready/.exec(ready)[1];
    await page.locator(`.tabs-container .tab[aria-label^="ided run ${first}"]`).first().waitFor({ timeout: WAIT });
    step("all changes", { tabs: await tabs(page) });

    // Feedback from the notification's button: the run goes again and comes back for review.
    await toastButton(page, ready, "Feedback");
    await answerInput(page, settings.feedback);
    const again = await waitForNotification(page, /is ready for review \(round 2\): /, "review after feedback");
    const round2 = await reviewState(page, settings.acceptedMarker, "completed · attempt 2");
    // Drop one hunk: its checkbox in the Review view; the file's box clears, the view says "in part".
    const hunkRow = page.locator(".part.sidebar .monaco-list-row", { hasText: settings.dropHunk }).first();
    await hunkRow.waitFor({ state: "visible", timeout: WAIT });
    await hunkRow.locator(".custom-view-tree-node-item-checkbox").click();
    await waitForRow(page, "· in part", "the Review view's file row after a hunk was dropped");
    step("review 2", { message: again, ...round2, marked: await pane(page, "Review") });
    await shot(page, "review-hunks");

    // Accept from the notification: the change lands on the branch; the open calc.py editor
    // follows the file on disk.
    await toastButton(page, again, "Accept");
    const accepted = await waitForNotification(page, /^ided: accepted run /, "accept");
    await page.locator(".tabs-container .tab", { hasText: "calc.py" }).first().click();
    await page.waitForFunction(
      (text) =>
        [...document.querySelectorAll(".editor-instance .monaco-editor .view-line")].some((l) =>
          l.textContent.replace(/\u00a0/g, " ").includes(text),
        ),
      settings.acceptedMarker,
      { timeout: WAIT, polling: 250 },
    );
    await waitForRow(page, "· accepted", "the Run view's header after the accept");
    step("accepted", {
      message: accepted,
      tabs: await tabs(page),
      editor: await editorLines(page, ".editor-instance .monaco-editor"),
      run: await pane(page, "Run"),
      review: await pane(page, "Review"),
      statusBar: await statusBar(page),
    });
    await shot(page, "accepted");

    // Roll back: the file is back as it was, and the editor with it.
    await command(page, "ided: Roll back the accepted run");
    const rolled = await waitForNotification(page, /^ided: rolled back run /, "rollback");
    await page.waitForFunction(
      (text) => ![...document.querySelectorAll(".editor-instance .monaco-editor .view-line")].some((l) => l.textContent.replace(/\u00a0/g, " ").includes(text)),
      settings.acceptedMarker,
      { timeout: WAIT, polling: 250 },
    );
    await waitForRow(page, "· rolled back", "the Run view's header after the rollback");
    step("rolled back", {
      message: rolled,
      editor: await editorLines(page, ".editor-instance .monaco-editor"),
      run: await pane(page, "Run"),
      statusBar: await statusBar(page),
    });
    await shot(page, "rolled-back");

    // A second rollback is refused: one line with the ided code, no stack.
    await command(page, "ided: Roll back the accepted run");
    const refused = await waitForNotification(page, /^ided: rollback refused: /, "second rollback");
    step("refused", { message: refused });

    // A second run, rejected: the review closes and the files stay as they are.
    await command(page, "ided: Start a run");
    await answerInput(page, settings.request);
    const ready2 = await waitForNotification(page, new RegExp(`run (?!${first})\\S+ is ready for review: `), "second run's review");
    await reviewState(page, settings.fixedMarker);
    await command(page, "ided: Reject the run");
    const rejected = await waitForNotification(page, /^ided: rejected run /, "reject");
    await waitForRow(page, "· rejected", "the Run view's header after the reject");
    step("rejected", {
      ready: ready2,
      message: rejected,
      tabs: await tabs(page),
      run: await pane(page, "Run"),
      statusBar: await statusBar(page),
    });
    await shot(page, "rejected");
  } catch (error) {
    report.error = String(error && error.stack ? error.stack : error);
    try {
      await shot(page, "failure");
      report.panes = await panes(page);
      await notifications(page);
    } catch {
      // the page is gone: the error above says why
    }
  } finally {
    await notifications(page).catch(() => undefined);
    save();
    await browser.close();
  }
}

await main();
