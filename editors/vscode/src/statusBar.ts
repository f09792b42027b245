// The status bar item: index progress from `$/progress`, and the index status between passes.
import * as vscode from "vscode";

import { IndexStatus, ProgressValue, progressView, StatusView, statusView } from "./format";

export class IndexStatusBar implements vscode.Disposable {
  private readonly item: vscode.StatusBarItem;
  private title = "ided: indexing";
  private openPeriods = 0;

  constructor(command: string) {
    this.item = vscode.window.createStatusBarItem(vscode.StatusBarAlignment.Left, 10);
    this.item.command = command;
    this.show({ text: "$(sync~spin) ided", tooltip: "ided: starting", busy: true });
  }

  /** A `$/progress` value for one of the server's tokens. */
  onProgress(value: ProgressValue): void {
    if (value.kind === "begin") {
      this.openPeriods += 1;
      this.title = value.title ?? this.title;
    } else if (value.kind === "end") {
      this.openPeriods = Math.max(0, this.openPeriods - 1);
    }
    this.show(progressView(value, this.title));
  }

  /** An `ided/index/status` answer (shown unless a progress period is open). */
  onStatus(status: IndexStatus): void {
    if (this.openPeriods === 0) {
      this.show(statusView(status));
    }
  }

  onError(message: string): void {
    this.show({ text: "$(error) ided", tooltip: `ided: ${message}`, busy: false });
  }

  get busy(): boolean {
    return this.openPeriods > 0;
  }

  private show(view: StatusView): void {
    this.item.text = view.text;
    this.item.tooltip = view.tooltip;
    this.item.show();
  }

  dispose(): void {
    this.item.dispose();
  }
}
