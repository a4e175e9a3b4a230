// Read-back queries that check what a cgc run left in the graph, beyond what cgc itself reports.
import { parseQueryJson } from "./parse.ts";
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
  `cgc left ${count} function(s) and class(es) that no file contains, which a full index does not (on FalkorDB Lite this is a known fault of cgc 0.6.13's index after the first: see pi-cgc's docs/cgc-compat.md)`;

/** One read-back query's rows, or undefined when cgc did not answer it. */
export async function readBack(
  runner: Pick<Runner, "run">,
  root: string,
  query: string,
): Promise<Record<string, unknown>[] | undefined> {
  const check = await runner.run(["query", query], { kind: "query", cwd: root });
  const rows = check.code === "OK" ? parseQueryJson(check.stdout) : undefined;
  return rows?.kind === "ok" ? (rows.value as Record<string, unknown>[]) : undefined;
}

/** How many functions and classes under the root nothing contains; undefined when the graph could not be read. */
export async function uncontainedCount(runner: Pick<Runner, "run">, root: string): Promise<number | undefined> {
  const rows = await readBack(runner, root, uncontainedQuery(root));
  if (rows === undefined) return undefined;
  return rows.reduce((sum: number, row) => sum + Number((row as { functions?: unknown }).functions ?? 0), 0);
}
