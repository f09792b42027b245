// Pure model of the per-hunk review: the hunks of a changed file (the `@@` headers of its unified
// diff), what the person keeps of them, and the `keep` of `ided/run/accept` that follows
// (docs/lsp.md, "ided/run/accept"). No `vscode` import, so it runs under node's test runner.
import { DiffFile, RunDiff } from "./runModel";

export interface Hunk {
  /** 0-based among the file's `@@` headers: what `keep[].hunks` names. */
  index: number;
  /** The `@@ -a,b +c,d @@ context` line. */
  header: string;
  /** The hunk's first changed line that is not blank (with its + or -), or "". */
  first: string;
  /** 1-based line of the hunk's start in the run's version of the file. */
  newStart: number;
}

/** `ided/run/accept`'s `keep` entry. */
export interface KeptFile {
  path: string;
  hunks?: number[];
}

/** The hunks of a file's unified diff (none for a binary file or one without a text diff). */
export function hunksOf(file: DiffFile): Hunk[] {
  const hunks: Hunk[] = [];
  if (file.binary || !file.diff) {
    return hunks;
  }
  for (const line of file.diff.split("\n")) {
    if (line.startsWith("@@")) {
      const start = /^@@ -\d+(?:,\d+)? \+(\d+)/.exec(line);
      hunks.push({ index: hunks.length, header: line, first: "", newStart: start ? Number(start[1]) : 1 });
    } else if (hunks.length > 0 && hunks[hunks.length - 1].first === "" && /^[+-]\s*\S/.test(line)) {
      hunks[hunks.length - 1].first = line;
    }
  }
  return hunks;
}

/** How much of a file is kept. */
export type FileKept = "all" | "some" | "none";

/** What the person keeps of a run's change set: per file, per hunk (every hunk kept to start with). */
export class ReviewMarks {
  /** path -> one flag per hunk; a file without hunks has a single flag for the whole file. */
  private readonly kept = new Map<string, boolean[]>();

  constructor(readonly diff: RunDiff) {
    for (const file of diff.files) {
      this.kept.set(file.path, Array.from({ length: Math.max(1, hunksOf(file).length) }, () => true));
    }
  }

  /** Whether the hunk (or, without `hunk`, the file as a whole: all of it) is kept. */
  isKept(path: string, hunk?: number): boolean {
    const flags = this.kept.get(path) ?? [];
    return hunk === undefined ? flags.every(Boolean) : (flags[hunk] ?? false);
  }

  fileKept(path: string): FileKept {
    const flags = this.kept.get(path) ?? [];
    const n = flags.filter(Boolean).length;
    return n === flags.length ? "all" : n === 0 ? "none" : "some";
  }

  /** Keep or drop a hunk, or (without `hunk`) every hunk of the file. */
  set(path: string, keep: boolean, hunk?: number): void {
    const flags = this.kept.get(path);
    if (!flags) {
      return;
    }
    if (hunk === undefined) {
      flags.fill(keep);
    } else if (hunk >= 0 && hunk < flags.length) {
      flags[hunk] = keep;
    }
  }

  /** The `keep` of `ided/run/accept`: undefined when everything is kept (a plain accept), [] when
   * nothing is, else one entry per file kept whole or in part. */
  keepParam(): KeptFile[] | undefined {
    const keep: KeptFile[] = [];
    let everything = true;
    for (const file of this.diff.files) {
      const state = this.fileKept(file.path);
      everything &&= state === "all";
      if (state === "all") {
        keep.push({ path: file.path });
      } else if (state === "some") {
        const flags = this.kept.get(file.path) ?? [];
        keep.push({ path: file.path, hunks: flags.flatMap((on, i) => (on ? [i] : [])) });
      }
    }
    return everything ? undefined : keep;
  }

  /** One line about what is kept, for the Review view's description ("" when everything is). */
  summary(): string {
    const keep = this.keepParam();
    if (keep === undefined) {
      return "";
    }
    if (keep.length === 0) {
      return "nothing kept";
    }
    const dropped = this.diff.files.filter((f) => this.fileKept(f.path) === "none").length;
    const partial = keep.filter((k) => k.hunks !== undefined).length;
    return [partial > 0 ? `${partial} in part` : "", dropped > 0 ? `${dropped} dropped` : ""].filter(Boolean).join(", ");
  }
}

/** A hunk's row in the Review view. */
export function hunkRow(hunk: Hunk): { label: string; description: string } {
  const header = /^(@@ [^@]* @@)(.*)$/.exec(hunk.header);
  return {
    label: header ? header[1] : hunk.header,
    description: [header ? header[2].trim() : "", hunk.first.trim()].filter(Boolean).join("  "),
  };
}

/** The accept's message: whole, or in part (`partial` and `dropped` of the accept's result). */
export function acceptedText(
  runId: string,
  result: { commits: string[]; files: string[]; branch: string; partial?: string[]; dropped?: string[] },
  branch: string,
): string {
  const partial = result.partial ?? [];
  const dropped = result.dropped ?? [];
  const part = partial.length > 0 || dropped.length > 0 ? " in part" : "";
  let text = `ided: accepted run ${runId}${part}: ${result.commits.length} commit(s), ${result.files.length} file(s) on ${branch}`;
  if (partial.length > 0) {
    text += `; kept in part: ${partial.join(", ")}`;
  }
  if (dropped.length > 0) {
    text += `; dropped: ${dropped.join(", ")}`;
  }
  return text;
}
