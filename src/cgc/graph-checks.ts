// Read-back queries that check what a cgc run left in the graph, beyond what cgc itself reports.
import { type Parsed, parseQueryJson } from "./parse.ts";
import type { Runner } from "./runner.ts";

export function cypherString(value: string): string {
  return `'${value.replace(/\\/g, "\\\\").replace(/'/g, "\\'")}'`;
}

/**
 * Functions and classes under the root that nothing contains. A full index links every one of them to its
 * file, class or enclosing function; cgc 0.6.13 on FalkorDB Lite writes them unlinked on every index after
 * the database's first (docs/cgc-compat.md), which no count of files would show.
 */
export function uncontainedQuery(root: string): string {
  const under = cypherString(`${root}/`);
  return (
    `MATCH (n:Function) WHERE n.path STARTS WITH ${under} AND NOT ()-[:CONTAINS]->(n) RETURN count(n) AS functions ` +
    `UNION ALL MATCH (n:Class) WHERE n.path STARTS WITH ${under} AND NOT ()-[:CONTAINS]->(n) RETURN count(n) AS functions`
  );
}

export const UNCONTAINED_REASON = (count: number) =>
  `cgc left ${count === 1 ? "1 function or class" : `${count} functions and classes`} that no file contains, which a full index does not (on FalkorDB Lite this is a known fault of cgc 0.6.13's index after the first: see pi-cgc's docs/cgc-compat.md)`;

/** One read-back query's rows, or why cgc did not answer it (the call's code and reason, for the user). */
export async function readBack(
  runner: Pick<Runner, "run">,
  root: string,
  query: string,
): Promise<Parsed<Record<string, unknown>[]>> {
  const check = await runner.run(["query", query], { kind: "query", cwd: root });
  if (check.code !== "OK") return { kind: "unknown", reason: `${check.code}: ${check.reason}` };
  const rows = parseQueryJson(check.stdout);
  if (rows.kind !== "ok") return { kind: "unknown", reason: `cgc's answer could not be read: ${rows.reason}` };
  return { kind: "ok", value: rows.value as Record<string, unknown>[] };
}

/** How many functions and classes under the root nothing contains. */
export async function uncontainedCount(runner: Pick<Runner, "run">, root: string): Promise<Parsed<number>> {
  const rows = await readBack(runner, root, uncontainedQuery(root));
  if (rows.kind !== "ok") return rows;
  const count = rows.value.reduce((sum: number, row) => sum + Number(row.functions ?? 0), 0);
  return { kind: "ok", value: count };
}
