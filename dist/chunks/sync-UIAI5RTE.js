import {
  UNCONTAINED_REASON,
  cypherString,
  isIndexedPath,
  readBack,
  uncontainedCount
} from "./chunk-2BF5XBZP.js";
import {
  changesObserved,
  freshnessVerified,
  graphNeedsRebuild
} from "./chunk-E2TQSZPH.js";
import {
  parseQueryJson,
  richPrinted
} from "./chunk-BNPLH5UU.js";

// src/freshness/sync.ts
import { existsSync, statSync } from "node:fs";
var CLOCK_SLACK_MS = 1e3;
var MAX_VERIFIED_PATHS = 200;
function lastTouched(path) {
  const stats = statSync(path);
  return Math.max(stats.mtimeMs, stats.ctimeMs);
}
function verificationQuery(root, paths) {
  const list = paths.map(cypherString).join(", ");
  return `MATCH (r:Repository) WHERE r.path = ${cypherString(root)} OPTIONAL MATCH (f:File) WHERE f.path IN [${list}] RETURN r.indexed_at AS indexed_at, collect(DISTINCT f.path) AS present`;
}
async function syncAndVerify(session) {
  const seen = session.tracker.check();
  if (seen.length > 0) session.store.apply((state) => changesObserved(state, seen));
  const paths = session.store.get().changedPaths.slice(0, MAX_VERIFIED_PATHS);
  const startedAt = Date.now();
  const result = await session.runMaintenance("syncing", ["index", "--force", session.root], "sync");
  if (result.code !== "OK" || session.disposed) return { result, verified: [], unverified: result.reason };
  const check = await session.runner.run(["query", verificationQuery(session.root, paths)], {
    kind: "query",
    cwd: session.root
  });
  const rows = check.code === "OK" ? parseQueryJson(check.stdout) : void 0;
  if (rows?.kind !== "ok" || rows.value.length === 0) {
    return { result, verified: [], unverified: `the graph could not be read back (${check.code}: ${check.reason})` };
  }
  const row = rows.value[0];
  const indexedAt = typeof row.indexed_at === "string" ? Date.parse(row.indexed_at) : Number.NaN;
  if (!(indexedAt >= startedAt - CLOCK_SLACK_MS)) {
    return { result, verified: [], unverified: "the graph's index time did not advance: the rebuild did not happen" };
  }
  const vanished = await filesNotOnDisk(session);
  if (vanished === void 0 || vanished.length > 0) {
    if (vanished?.length) session.store.apply((state) => changesObserved(state, vanished));
    return {
      result,
      verified: [],
      unverified: vanished === void 0 ? "the graph's files could not be read back" : `the graph holds ${vanished.length} file(s) no longer on disk (${vanished.slice(0, 3).join(", ")})`
    };
  }
  const unlinked = await uncontainedCount(session.runner, session.root);
  if (unlinked) session.store.apply((state) => graphNeedsRebuild(state, UNCONTAINED_REASON(unlinked)));
  if (unlinked !== 0) {
    return {
      result,
      verified: [],
      unverified: unlinked === void 0 ? "the graph's structure could not be read back" : UNCONTAINED_REASON(unlinked)
    };
  }
  const present = new Set(Array.isArray(row.present) ? row.present : []);
  const walked = session.tracker.walkedByCgc();
  const verified = paths.filter((path) => {
    const exists = existsSync(path);
    if (exists && lastTouched(path) > indexedAt + CLOCK_SLACK_MS) return false;
    if (!isIndexedPath(path)) return true;
    return (exists && walked(path)) === (present.has(path) || present.has(richPrinted(path)));
  });
  session.store.apply((state, now) => freshnessVerified(state, verified, now));
  const missing = paths.length - verified.length;
  return { result, verified, unverified: missing > 0 ? `${missing} changed file(s) are not reflected yet` : "" };
}
async function filesNotOnDisk(session) {
  const rows = await readBack(
    session.runner,
    session.root,
    `MATCH (f:File) WHERE f.path STARTS WITH ${cypherString(`${session.root}/`)} RETURN f.path AS path`
  );
  return rows?.map((row) => String(row.path ?? "")).filter((path) => path && !path.includes("//") && !existsSync(path));
}
export {
  syncAndVerify,
  verificationQuery
};
