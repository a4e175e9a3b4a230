// A new linked worktree's graph from its main checkout's (engine/pi_cgc_engine/relocate.py): whether the main
// checkout's graph is current enough to start from, and how many files differ, for the confirmation. The engine
// checks the same markers again and falls back to the full index on its own; this only decides what to ask for
// and what to say.
import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { ENGINE_WRITTEN_ELSEWHERE, graphLedger } from "../state/ledger.ts";
import type { WorktreeIdentity } from "./worktree.ts";

export interface MainGraph {
  /** The main checkout's root. */
  root: string;
  /** Its engine cache folder (its ledger's). */
  cacheDir: string;
}

/** The main checkout of a linked worktree: the folder holding the repository's `.git` (none for a bare repository). */
export function mainCheckoutOf(identity: WorktreeIdentity): string | undefined {
  if (basename(identity.commonDir) !== ".git") return undefined;
  const root = dirname(identity.commonDir);
  return existsSync(root) ? root : undefined;
}

/**
 * The main checkout's graph when it is current: no run of it left unfinished, and its engine cache the graph's
 * model (saved, with no untrusted or dirty marker, and nothing wrote the graph since). Else why not.
 */
export function currentMainGraph(env: NodeJS.ProcessEnv, mainRoot: string): MainGraph | { why: string } {
  const ledger = graphLedger(env, mainRoot);
  if (ledger.runNote()) return { why: "an index or sync of the main checkout's graph did not finish" };
  const cache = join(ledger.engineCacheDir, `${createHash("sha1").update(mainRoot).digest("hex")}.pickle`);
  if (!existsSync(cache)) return { why: "the main checkout's graph has no engine cache" };
  for (const [marker, meaning] of [
    [cache.replace(/\.pickle$/, ".untrusted"), "may not be what its graph holds"],
    [cache.replace(/\.pickle$/, ".dirty"), "has an update of unknown outcome"],
    [join(ledger.engineCacheDir, ENGINE_WRITTEN_ELSEWHERE), "was written by something else"],
  ] as const) {
    if (existsSync(marker)) return { why: `the main checkout's graph ${meaning}` };
  }
  return { root: mainRoot, cacheDir: ledger.engineCacheDir };
}

/**
 * How many files differ between the two checkouts, as git sees them: the commits' difference, and each checkout's
 * uncommitted and untracked files. Undefined when git cannot say in time (the engine compares every file anyway).
 */
export async function differingFiles(mainRoot: string, root: string, budgetMs = 5_000): Promise<number | undefined> {
  const git = (cwd: string, args: string[]) =>
    new Promise<string | undefined>((settle) => {
      execFile("git", args, { cwd, timeout: budgetMs, maxBuffer: 16 << 20 }, (error, stdout) =>
        settle(error ? undefined : stdout),
      );
    });
  const [mainHead, committed, mainStatus, status] = await Promise.all([
    git(mainRoot, ["rev-parse", "HEAD"]),
    git(root, ["rev-parse", "HEAD"]),
    git(mainRoot, ["status", "--porcelain", "-z", "--untracked-files=all"]),
    git(root, ["status", "--porcelain", "-z", "--untracked-files=all"]),
  ]);
  if (!mainHead || !committed || mainStatus === undefined || status === undefined) return undefined;
  const diff = await git(root, ["diff", "--name-only", "-z", mainHead.trim(), committed.trim()]);
  if (diff === undefined) return undefined;
  const paths = new Set(diff.split("\0").filter(Boolean));
  for (const listing of [mainStatus, status])
    for (const entry of listing.split("\0")) if (entry.length > 3) paths.add(entry.slice(3));
  return paths.size;
}
