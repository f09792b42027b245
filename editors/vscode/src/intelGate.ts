// Whether ided answers go to definition, find references and hover for a request (the `ided.intel`
// setting): "on" always, "off" never (the server is not even asked to offer them), "auto" only
// where no other extension answers them. "auto" finds out by asking VS Code for the other
// providers' answers at the same place (`vscode.execute*Provider`), which also reaches ided's
// provider: that nested call is recognised by its key and answered with nothing. Once another
// provider answered a method for a language, ided stays out of it for that language (no second
// round of asking). No `vscode` import, so it runs under node's test runner.

export type IntelMode = "auto" | "on" | "off";

/** The setting's value as a mode ("auto" for anything unknown). */
export function intelMode(value: unknown): IntelMode {
  return value === "on" || value === "off" ? value : "auto";
}

export class IntelGate {
  private readonly probing = new Set<string>();
  private readonly elsewhere = new Set<string>();

  constructor(readonly mode: IntelMode) {}

  /** Whether the server is asked to offer the standard methods (`initializationOptions.standardIntel`). */
  get offered(): boolean {
    return this.mode !== "off";
  }

  /** Whether ided answers `method` at `key` (method, document and position) for a document of
   * `language`; `others` counts what the other providers answer there (ided's own, asked again
   * through it, answers nothing). */
  async answers(method: string, language: string, key: string, others: () => Thenable<number>): Promise<boolean> {
    if (this.mode !== "auto") {
      return this.mode === "on";
    }
    if (this.probing.has(key) || this.elsewhere.has(`${language}\n${method}`)) {
      return false;
    }
    this.probing.add(key);
    try {
      if ((await others()) > 0) {
        this.elsewhere.add(`${language}\n${method}`);
        return false;
      }
      return true;
    } finally {
      this.probing.delete(key);
    }
  }
}
