import {
  parseQueryJson
} from "./chunk-AN223M6Q.js";

// src/cgc/graph-checks.ts
function cypherString(value) {
  return `'${value.replace(/\\/g, "\\\\").replace(/'/g, "\\'")}'`;
}
function uncontainedQuery(root) {
  const under = cypherString(`${root}/`);
  return `MATCH (n:Function) WHERE n.path STARTS WITH ${under} AND NOT ()-[:CONTAINS]->(n) RETURN count(n) AS functions UNION ALL MATCH (n:Class) WHERE n.path STARTS WITH ${under} AND NOT ()-[:CONTAINS]->(n) RETURN count(n) AS functions`;
}
var UNCONTAINED_REASON = (count) => `cgc left ${count === 1 ? "1 function or class" : `${count} functions and classes`} that no file contains, which a full index does not (on FalkorDB Lite this is a known fault of cgc 0.6.13's index after the first: see pi-cgc's docs/cgc-compat.md)`;
async function readBack(runner, root, query) {
  const check = await runner.run(["query", query], { kind: "query", cwd: root });
  if (check.code !== "OK") return { kind: "unknown", reason: `${check.code}: ${check.reason}` };
  const rows = parseQueryJson(check.stdout);
  if (rows.kind !== "ok") return { kind: "unknown", reason: `cgc's answer could not be read: ${rows.reason}` };
  return { kind: "ok", value: rows.value };
}
async function uncontainedCount(runner, root) {
  const rows = await readBack(runner, root, uncontainedQuery(root));
  if (rows.kind !== "ok") return rows;
  const count = rows.value.reduce((sum, row) => sum + Number(row.functions ?? 0), 0);
  return { kind: "ok", value: count };
}

export {
  cypherString,
  UNCONTAINED_REASON,
  readBack,
  uncontainedCount
};
