// The Cypher gate lists what it allows (src/agent/cypher.ts; issue 36, point 4). Here its verdicts meet the real
// databases, on every backend of the matrix, through the real pi's cgc_cypher tool (faux model) and the real cgc
// behind it: each query the gate refuses is answered NOT_ALLOWED; each it passes reaches cgc; each procedure of its
// table runs on the backends it is listed for; and no query the gate passes changes the graph — the canonical
// dump of the repository's subgraph (engine/pi-cgc-engine.py dump) and the count of every label and relationship
// type in the whole database are the same before and after, on every backend. Servers start on 127.0.0.1 and
// are stopped here.
import { fauxAssistantMessage, fauxToolCall } from "@mariozechner/pi-ai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkReadOnlyCypher, READ_PROCEDURES } from "../../src/agent/cypher.ts";
import {
  BACKEND_NAMES,
  type BackendName,
  startBackend,
  type TestBackend,
  useBackendInProcess,
} from "../helpers/backends.ts";
import { cgcExec } from "../helpers/cgc-env.ts";
import { removeAgentDirs, restoreEnv } from "../helpers/env.ts";
import { graphDump } from "../helpers/graph-parity.ts";
import { type PiHarness, recordingUi, startPi, toolResults, waitFor } from "../helpers/pi-sdk.ts";
import { indexedTinyRepo, type TinyRepo } from "../helpers/repos.ts";

/** Queries that only read, in the dialects the backends share, that the gate passes. */
const READS = [
  "MATCH (f:Function) RETURN f.name AS name ORDER BY name LIMIT 5",
  "MATCH (f:Function) WHERE f.name = 'delete_repository' RETURN f.path",
  "MATCH (f:Function) WHERE f.name CONTAINS 'SET' RETURN f.name",
  "MATCH (f:Function) RETURN f.name AS load LIMIT 3",
  "MATCH (n:Function) /* CREATE nothing */ RETURN count(n) AS c",
  "MATCH (a:Function)-[:CALLS]->(b:Function) RETURN a.name, b.name ORDER BY a.name, b.name",
  "MATCH (a:Function)-[:CALLS*1..3]->(b:Function) RETURN count(*) AS paths",
  "OPTIONAL MATCH (f:Function) WHERE f.name = 'nothing' RETURN count(f) AS c",
  "MATCH (f:File) WITH f ORDER BY f.path SKIP 1 LIMIT 2 RETURN f.path",
  "UNWIND [1, 2, 3] AS x RETURN x * 2 AS y",
  "MATCH (f:Function) RETURN f.name AS name UNION MATCH (c:Class) RETURN c.name AS name",
  "MATCH (f:Function) RETURN f.name AS name UNION ALL MATCH (c:Class) RETURN c.name AS name",
  "MATCH (f:Function) WHERE f.name STARTS WITH 'norm' AND NOT f.path IS NULL RETURN f.name",
  "MATCH (f:Function) RETURN CASE WHEN f.name = 'normalize' THEN 1 ELSE 0 END AS hit ORDER BY hit DESC LIMIT 1",
  "MATCH (f:Function) WHERE f.name IN ['normalize', 'orphan'] RETURN f.name ORDER BY f.name",
  "MATCH (r:Repository)-[:CONTAINS]->(f:File) RETURN count(f) AS files",
  "MATCH (`DELETE`:Function) RETURN `DELETE`.name LIMIT 1",
  "MATCH (n) WHERE n.name = 'x' RETURN n.set AS value",
  "CALL { MATCH (f:Function) RETURN f.name AS name } RETURN count(name) AS c",
];

/** Queries that write, administer or call what the gate does not know, in every backend's dialect. */
const REFUSED = [
  "CREATE (n:Function {name: 'gate_x'})",
  "MATCH (f:Function) DETACH DELETE f",
  "MATCH (f:Function) SET f.name = 'gate_y' RETURN f",
  "MATCH (f:Function) REMOVE f.name",
  "MERGE (n:File {path: '/gate'})",
  "match (f) merge (g:X) return g",
  "MATCH (f) RETURN f; MATCH (g) DELETE g",
  "MATCH (f) WHERE f.name = 'x RETURN f",
  "MATCH (f) /* RETURN */ DELETE f",
  "MATCH (f) // it's a comment\nDELETE f",
  "DROP TABLE Function",
  "COPY Function FROM '/tmp/gate.csv'",
  "LOAD CSV FROM 'file:///tmp/gate.csv' AS row RETURN row",
  "MATCH (f:Function) FOREACH (x IN [1] | SET f.gate = x)",
  "CALL { MATCH (f:Function) SET f.gate = 1 RETURN f } RETURN f",
  "MATCH (f) RETURN f.name AS n UNION CREATE (m:Function {name: 'gate_u'}) RETURN m.name AS n",
  "MATCH (f) WHERE f.name = 'x' CREATE (m:Function {name: 'gate_z'})",
  "CALL apoc.create.node(['X'], {})",
  "CALL db.idx.fulltext.drop('File')",
  "CALL db.idx.fulltext.createNodeIndex('File', 'name')",
  "CALL db.createLabel('Gate')",
  "CALL dbms.setConfigValue('x', 'y')",
  "CALL drop_projected_graph('g')",
  "CALL project_graph('g', ['Function'], ['CALLS'])",
  "CALL threads = 1",
  "INSTALL httpfs",
  "ATTACH '/tmp/other.kuzu' AS other",
  "EXPORT DATABASE '/tmp/gate-export'",
  "BEGIN TRANSACTION",
  "CHECKPOINT",
  "PROFILE MATCH (n) RETURN n",
  "SHOW INDEXES",
  "GRAPH.DELETE codegraph",
  "   ",
];

/** The procedures of the gate's table with arguments where they need one, as the agent would call them. */
const PROCEDURE_CALLS: Record<string, string> = {
  table_info: "CALL table_info('Function') RETURN *",
  show_connection: "CALL show_connection('CALLS') RETURN *",
  current_setting: "CALL current_setting('threads') RETURN *",
};
/** pi-cgc's gate's refusal (src/agent/tools.ts cypherRows); cgc's own is NOT_ALLOWED with cgc's words. */
const GATE_REFUSED = /^NOT_ALLOWED: not a read-only query: /;
// KùzuDB's table functions need a RETURN; FalkorDB's and Neo4j's procedures stand alone.
const procedureQuery = (name: string) =>
  PROCEDURE_CALLS[name] ?? (READ_PROCEDURES[name]?.includes("kuzudb") ? `CALL ${name}() RETURN *` : `CALL ${name}()`);
const DIALECT: Record<BackendName, "kuzudb" | "falkordb" | "neo4j"> = {
  kuzudb: "kuzudb",
  falkordb: "falkordb",
  "falkordb-remote": "falkordb",
  neo4j: "neo4j",
};
// The table is written in each backend's spelling of the name (Neo4j's are case-sensitive).
const SPELLING: Record<string, string> = {
  "db.relationshiptypes": "db.relationshipTypes",
  "db.propertykeys": "db.propertyKeys",
  "db.schema.nodetypeproperties": "db.schema.nodeTypeProperties",
  "db.schema.reltypeproperties": "db.schema.relTypeProperties",
};
const PROCEDURES = Object.keys(READ_PROCEDURES).map((name) => SPELLING[name] ?? name);

it("the suite holds at least 40 queries, read and write, and the gate's verdict on each is the one listed", () => {
  const reads = [...READS, ...PROCEDURES.map(procedureQuery)];
  expect(reads.length + REFUSED.length).toBeGreaterThanOrEqual(40);
  for (const query of reads) expect(checkReadOnlyCypher(query), query).toEqual({ readOnly: true });
  for (const query of REFUSED) expect(checkReadOnlyCypher(query).readOnly, query).toBe(false);
});

/** Every label and relationship type of the whole database, counted (a write anywhere shows). */
async function census(backend: TestBackend, cwd: string): Promise<string> {
  const queries =
    backend.name === "kuzudb"
      ? [
          "MATCH (n) RETURN label(n) AS kind, count(*) AS c ORDER BY kind",
          "MATCH ()-[r]->() RETURN label(r) AS kind, count(*) AS c ORDER BY kind",
        ]
      : [
          "MATCH (n) UNWIND labels(n) AS kind RETURN kind, count(*) AS c ORDER BY kind",
          "MATCH ()-[r]->() RETURN type(r) AS kind, count(*) AS c ORDER BY kind",
        ];
  const out: string[] = [];
  for (const query of queries) {
    const result = await cgcExec(["query", query], { cwd, env: backend.env, cgc: backend.cgc, timeoutMs: 180_000 });
    expect(result.code, result.stderr).toBe(0);
    out.push(result.stdout.slice(result.stdout.indexOf("[")));
  }
  return out.join("\n");
}

describe.each(BACKEND_NAMES)("the Cypher gate against %s", (name) => {
  let backend: TestBackend;
  let repo: TinyRepo;
  let restore: () => void = () => {};
  let h: PiHarness | undefined;

  beforeAll(async () => {
    backend = await startBackend(name);
    restore = useBackendInProcess({ ...backend, env: { ...backend.env, CGC_TIMEOUTS_PROBE_MS: "90000" } });
    repo = await indexedTinyRepo(backend.env, { cgc: backend.cgc, timeoutMs: 240_000 });
  }, 400_000);
  afterAll(async () => {
    await h?.dispose();
    restoreEnv();
    removeAgentDirs();
    restore();
    repo?.cleanup();
    await backend?.stop();
  }, 120_000);

  it("refused queries never reach cgc; passed ones and the backend's read procedures run; the graph is unchanged", async () => {
    const graph = { cgc: backend.cgc, env: backend.env, name };
    const dumpBefore = await graphDump(repo.path, graph);
    const censusBefore = await census(backend, repo.path);
    expect(dumpBefore.length).toBeGreaterThan(10);

    const ui = recordingUi();
    h = await startPi({ cwd: repo.path, ui });
    await waitFor(() => /^cgc ready/.test(ui.statuses.get("cgc") ?? ""), `ready on ${name}`, 150_000);
    const ownProcedures = PROCEDURES.filter((p) => READ_PROCEDURES[p.toLowerCase()]?.includes(DIALECT[name]));
    const otherProcedures = PROCEDURES.filter((p) => !ownProcedures.includes(p));
    const queries = [
      ...REFUSED,
      ...READS,
      ...ownProcedures.map(procedureQuery),
      ...otherProcedures.map(procedureQuery),
    ];
    h.faux.setResponses([
      fauxAssistantMessage(
        queries.map((query) => fauxToolCall("cgc_cypher", { query })),
        { stopReason: "toolUse" },
      ),
      fauxAssistantMessage("done"),
    ]);
    await h.session.prompt("query the graph");
    const results = toolResults(h);
    expect(results).toHaveLength(queries.length);
    const seen = new Map(queries.map((query, index) => [query, results[index]]));
    for (const query of REFUSED) {
      expect(seen.get(query)?.text, query).toMatch(GATE_REFUSED);
    }
    for (const query of [...READS, ...otherProcedures.map(procedureQuery)]) {
      // Passed by the gate: cgc answers, or refuses or fails by its own rules (cgc's own check refuses
      // CALL { … }; a dialect may not know a procedure), never pi-cgc's gate.
      expect(seen.get(query)?.text, query).not.toMatch(GATE_REFUSED);
    }
    for (const query of ownProcedures.map(procedureQuery)) {
      const result = seen.get(query);
      expect(result?.isError, `${query} on ${name}: ${result?.text}`).toBe(false);
      expect(result?.text, query).toMatch(/^\d+ rows?:/);
    }
    // The plain reads ran on this backend (the graph answered them).
    expect(seen.get(READS[5] as string)?.text).toMatch(/normalize/);
    await h.dispose();
    h = undefined;

    expect(await graphDump(repo.path, graph)).toEqual(dumpBefore);
    expect(await census(backend, repo.path)).toBe(censusBefore);
  }, 600_000);
});
