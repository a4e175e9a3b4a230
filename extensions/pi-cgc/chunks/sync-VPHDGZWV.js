import {
  CLOCK_SLACK_MS,
  UNCONTAINED_REASON,
  cypherString,
  isIndexedPath,
  lastTouched,
  readBack,
  uncontainedCount
} from "./chunk-DTPGEOPV.js";
import {
  count
} from "./chunk-U43P4R4X.js";
import {
  changesObserved,
  freshnessVerified,
  graphNeedsRebuild
} from "./chunk-K7T5KA4E.js";
import {
  richPrinted
} from "./chunk-AN223M6Q.js";

// src/freshness/sync.ts
import { existsSync } from "node:fs";
var MAX_VERIFIED_PATHS = 200;
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
  const rows = await readBack(session.runner, session.root, verificationQuery(session.root, paths));
  if (rows.kind !== "ok" || rows.value.length === 0) {
    const why = rows.kind === "ok" ? "no row" : rows.reason;
    return { result, verified: [], unverified: `the graph could not be read back (${why})` };
  }
  const row = rows.value[0];
  const indexedAt = typeof row.indexed_at === "string" ? Date.parse(row.indexed_at) : Number.NaN;
  if (!(indexedAt >= startedAt - CLOCK_SLACK_MS)) {
    return { result, verified: [], unverified: "the graph's index time did not advance: the rebuild did not happen" };
  }
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
      unverified: `the graph holds ${count(vanished.value.length, "file")} no longer on disk (${some})`
    };
  }
  const unlinked = await uncontainedCount(session.runner, session.root);
  if (unlinked.kind !== "ok") {
    return { result, verified: [], unverified: `the graph's structure could not be read back (${unlinked.reason})` };
  }
  if (unlinked.value > 0) {
    const reason = UNCONTAINED_REASON(unlinked.value);
    session.store.apply((state) => graphNeedsRebuild(state, reason));
    return { result, verified: [], unverified: reason };
  }
  const present = new Set(Array.isArray(row.present) ? row.present : []);
  const walked = session.tracker.walkedByCgc();
  const verified = paths.filter((path) => {
    const exists = existsSync(path);
    if (exists && (lastTouched(path) ?? 0) > indexedAt + CLOCK_SLACK_MS) return false;
    if (!isIndexedPath(path)) return true;
    return (exists && walked(path)) === (present.has(path) || present.has(richPrinted(path)));
  });
  session.store.apply((state, now) => freshnessVerified(state, verified, now));
  const missing = paths.length - verified.length;
  return {
    result,
    verified,
    unverified: missing > 0 ? `${count(missing, "changed file")} ${missing === 1 ? "is" : "are"} not reflected yet` : ""
  };
}
async function filesNotOnDisk(session) {
  const rows = await readBack(
    session.runner,
    session.root,
    `MATCH (f:File) WHERE f.path STARTS WITH ${cypherString(`${session.root}/`)} RETURN f.path AS path`
  );
  if (rows.kind !== "ok") return rows;
  const paths = rows.value.map((row) => String(row.path ?? ""));
  return { kind: "ok", value: paths.filter((path) => path && !path.includes("//") && !existsSync(path)) };
}
export {
  syncAndVerify,
  verificationQuery
};
