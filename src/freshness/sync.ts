// A sync that really refreshes: `cgc index --force` on the workspace root (cgc's plain `index` skips an
// indexed repository whose file count has not grown, and indexing a single file neither removes its old
// symbols nor keeps it in its repository — both measured with cgc 0.6.13, see docs/adr/0007), then a
// read-back query: the graph is called fresh only for the changed files it verifiably reflects.
import { existsSync } from "node:fs";
import { cypherString, readBack, UNCONTAINED_REASON, uncontainedCount } from "../cgc/graph-checks.ts";
import { type Parsed, richPrinted } from "../cgc/parse.ts";
import type { RunResult } from "../cgc/runner.ts";
import type { CgcSession } from "../lifecycle/session.ts";
import { changesObserved, freshnessVerified, graphNeedsRebuild } from "../state/model.ts";
import { count } from "../state/words.ts";
import { CLOCK_SLACK_MS, isIndexedPath, lastTouched } from "../workspace/tree.ts";

const MAX_VERIFIED_PATHS = 200;

export function verificationQuery(root: string, paths: string[]): string {
  const list = paths.map(cypherString).join(", ");
  return (
    `MATCH (r:Repository) WHERE r.path = ${cypherString(root)} ` +
    `OPTIONAL MATCH (f:File) WHERE f.path IN [${list}] ` +
    "RETURN r.indexed_at AS indexed_at, collect(DISTINCT f.path) AS present"
  );
}

export interface SyncOutcome {
  result: RunResult;
  /** Changed paths the graph now verifiably reflects. */
  verified: string[];
  /** Why the rest could not be verified (empty when everything was). */
  unverified: string;
}

/** What a sync needs of a session. */
export type SyncingSession = Pick<CgcSession, "store" | "root" | "runMaintenance" | "runner" | "disposed" | "tracker">;

export async function syncAndVerify(session: SyncingSession): Promise<SyncOutcome> {
  // The rebuild reads the tree as it is now: what changed up to here is verified with the rest.
  const seen = session.tracker.check();
  if (seen.length > 0) session.store.apply((state) => changesObserved(state, seen));
  const paths = session.store.get().changedPaths.slice(0, MAX_VERIFIED_PATHS);
  const startedAt = Date.now();
  const result = await session.runMaintenance("syncing", ["index", "--force", session.root], "sync");
  if (result.code !== "OK" || session.disposed) return { result, verified: [], unverified: result.reason };

  const rows = await readBack(session.runner, session.root, verificationQuery(session.root, paths));
  if (rows.kind !== "ok" || rows.value.length === 0) {
    const why = rows.kind === "ok" ? "no row" : rows.reason;
    return { result, verified: [], unverified: `the graph could not be read back (${why})` };
  }
  const row = rows.value[0] as { indexed_at?: unknown; present?: unknown };
  const indexedAt = typeof row.indexed_at === "string" ? Date.parse(row.indexed_at) : Number.NaN;
  if (!(indexedAt >= startedAt - CLOCK_SLACK_MS)) {
    return { result, verified: [], unverified: "the graph's index time did not advance: the rebuild did not happen" };
  }
  // A rebuild reads whatever is on disk while it runs: a file there only for a moment (written and removed
  // between two looks of the tracker) can stay in the graph without ever being a changed path.
  const vanished = await filesNotOnDisk(session);
  if (vanished.kind !== "ok") {
    return { result, verified: [], unverified: `the graph's files could not be read back (${vanished.reason})` };
  }
  if (vanished.value.length > 0) {
    session.store.apply((state) => changesObserved(state, vanished.value));
    const some = vanished.value.slice(0, 3).join(", ");
    return {
      result,
      verified: [],
      unverified: `the graph holds ${count(vanished.value.length, "file")} no longer on disk (${some})`,
    };
  }
  const unlinked = await uncontainedCount(session.runner, session.root);
  if (unlinked.kind !== "ok") {
    return { result, verified: [], unverified: `the graph's structure could not be read back (${unlinked.reason})` };
  }
  // Functions and classes no file contains (cgc's index on FalkorDB Lite): an update of changed paths does not
  // mend them, so they are no changed paths' matter; only a full rebuild that leaves none ends it.
  if (unlinked.value > 0) {
    const reason = UNCONTAINED_REASON(unlinked.value);
    session.store.apply((state) => graphNeedsRebuild(state, reason));
    return { result, verified: [], unverified: reason };
  }
  const present = new Set(Array.isArray(row.present) ? row.present : []);
  const walked = session.tracker.walkedByCgc();
  const verified = paths.filter((path) => {
    const exists = existsSync(path);
    // A file changed again (or restored with old times: the status-change time still moves) while cgc was
    // reading it is not reflected yet; it stays possibly stale.
    if (exists && (lastTouched(path) ?? 0) > indexedAt + CLOCK_SLACK_MS) return false;
    // .cgcignore is no node of the graph: a rebuild that read it after its change applied it.
    if (!isIndexedPath(path)) return true;
    // A file an ignore rule now leaves out is on disk, not in the graph. The CLI prints paths through Rich
    // markup, so `app/[id]/x.py` comes back as `app//x.py`.
    return (exists && walked(path)) === (present.has(path) || present.has(richPrinted(path)));
  });
  session.store.apply((state, now) => freshnessVerified(state, verified, now));
  const missing = paths.length - verified.length;
  return {
    result,
    verified,
    unverified:
      missing > 0 ? `${count(missing, "changed file")} ${missing === 1 ? "is" : "are"} not reflected yet` : "",
  };
}

/** Files the graph holds under the root that are not on disk. */
async function filesNotOnDisk(session: SyncingSession): Promise<Parsed<string[]>> {
  const rows = await readBack(
    session.runner,
    session.root,
    `MATCH (f:File) WHERE f.path STARTS WITH ${cypherString(`${session.root}/`)} RETURN f.path AS path`,
  );
  if (rows.kind !== "ok") return rows;
  const paths = rows.value.map((row) => String(row.path ?? ""));
  // A path the CLI printed through Rich markup (`app/[id]/x.py` as `app//x.py`) cannot be looked up: left out.
  return { kind: "ok", value: paths.filter((path) => path && !path.includes("//") && !existsSync(path)) };
}
