// The working tree's uncommitted changes against HEAD, from git itself: which files differ, which of their
// lines changed, and a file's text at HEAD. git is not cgc: it does not pass cgc's runner (whose failure
// classification reads cgc's messages), but runs the same way — an argv array, no shell, the workspace as
// cwd, a time budget, bounded output, an AbortSignal.
import { execFile } from "node:child_process";
import { join } from "node:path";

const GIT_BUDGET_MS = 10_000;
const MAX_BUFFER = 32 * 1024 * 1024;

export interface ChangedFile {
  /** Absolute path. */
  path: string;
  status: "added" | "modified" | "deleted";
  /** New-side line ranges that changed, 1-based and inclusive (empty for a deleted file). */
  lines: Array<[number, number]>;
}

export type GitAnswer<T> = { ok: true; value: T } | { ok: false; reason: string };

function git(root: string, args: string[], signal?: AbortSignal): Promise<GitAnswer<string>> {
  return new Promise((resolve) => {
    execFile(
      "git",
      ["-c", "core.quotePath=false", ...args],
      { cwd: root, timeout: GIT_BUDGET_MS, maxBuffer: MAX_BUFFER, signal, encoding: "utf8" },
      (error, stdout, stderr) => {
        if (error) resolve({ ok: false, reason: (stderr || error.message).trim().split("\n")[0] ?? "git failed" });
        else resolve({ ok: true, value: stdout });
      },
    );
  });
}

/** New-side changed ranges per file from `git diff -U0` output (keys: paths relative to the root). */
export function parseHunks(diff: string): Map<string, Array<[number, number]>> {
  const hunks = new Map<string, Array<[number, number]>>();
  let current: Array<[number, number]> | undefined;
  for (const line of diff.split("\n")) {
    if (line.startsWith("+++ ")) {
      const target = line.slice(4).replace(/\t$/, "");
      current = target === "/dev/null" ? undefined : [];
      if (current) hunks.set(target.replace(/^b\//, ""), current);
    } else if (line.startsWith("@@") && current) {
      const match = /^@@ -\d+(?:,\d+)? \+(\d+)(?:,(\d+))? @@/.exec(line);
      if (!match) continue;
      const start = Number(match[1]);
      const count = match[2] === undefined ? 1 : Number(match[2]);
      // A pure deletion (count 0) changed the line it sits after: the lines around it are its place.
      current.push(count === 0 ? [Math.max(1, start), start + 1] : [start, start + count - 1]);
    }
  }
  return hunks;
}

/** Files that differ from HEAD (tracked) or are new and not ignored (untracked), with their changed lines. */
export async function workingChanges(root: string, signal?: AbortSignal): Promise<GitAnswer<ChangedFile[]>> {
  const head = await git(root, ["rev-parse", "--verify", "-q", "HEAD"], signal);
  if (!head.ok) return { ok: false, reason: `no commit to compare with (${head.reason || "HEAD is unborn"})` };
  const [status, diff, untracked] = await Promise.all([
    git(root, ["diff", "HEAD", "--no-renames", "--name-status", "-z", "--", "."], signal),
    git(root, ["diff", "HEAD", "--no-renames", "-U0", "--no-color", "--no-ext-diff", "--", "."], signal),
    git(root, ["ls-files", "--others", "--exclude-standard", "-z", "--", "."], signal),
  ]);
  for (const answer of [status, diff, untracked]) if (!answer.ok) return answer;
  if (!status.ok || !diff.ok || !untracked.ok) return { ok: false, reason: "git failed" };
  // Paths git prints are relative to the top of the repository, which may lie above the root.
  const top = await git(root, ["rev-parse", "--show-toplevel"], signal);
  if (!top.ok) return top;
  const base = top.value.trim();
  const hunks = parseHunks(diff.value);
  const files: ChangedFile[] = [];
  const fields = status.value.split("\0").filter(Boolean);
  for (let i = 0; i + 1 < fields.length; i += 2) {
    const code = (fields[i] as string)[0];
    const rel = fields[i + 1] as string;
    const kind = code === "A" ? "added" : code === "D" ? "deleted" : "modified";
    files.push({ path: join(base, rel), status: kind, lines: hunks.get(rel) ?? [] });
  }
  for (const rel of untracked.value.split("\0").filter(Boolean)) {
    // ls-files prints paths relative to the cwd (the root).
    files.push({ path: join(root, rel), status: "added", lines: [[1, Number.MAX_SAFE_INTEGER]] });
  }
  return { ok: true, value: files };
}

/** A file's text at HEAD; undefined when HEAD does not hold it. */
export async function headText(root: string, path: string, signal?: AbortSignal): Promise<string | undefined> {
  const answer = await git(root, ["show", `HEAD:./${relativeTo(root, path)}`], signal);
  return answer.ok ? answer.value : undefined;
}

function relativeTo(root: string, path: string): string {
  const prefix = root.endsWith("/") ? root : `${root}/`;
  return path.startsWith(prefix) ? path.slice(prefix.length) : path;
}
