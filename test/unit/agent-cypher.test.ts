// Read-only Cypher: the gate lists what it allows (issue 36). Writes, and every clause or procedure it does not
// know to read, are refused before cgc sees them, with a reason naming the clause or procedure and how to ask
// instead; reads, including ones that mention write words as names, strings or comments, pass. What the real
// databases do with the same queries: test/reliability/cypher-gate.test.ts.
import { describe, expect, it } from "vitest";
import { checkReadOnlyCypher, READ_PROCEDURES } from "../../src/agent/cypher.ts";

const writes = [
  "CREATE (n:Function {name: 'x'})",
  "MATCH (n) DETACH DELETE n",
  "MATCH (n:Function) SET n.name = 'y'",
  "MATCH (n) REMOVE n.name",
  "MERGE (n:File {path: '/x'})",
  "match (n) delete n",
  "MATCH (n) RETURN n; MATCH (m) DELETE m",
  "DROP TABLE Function",
  "COPY Function FROM 'x.csv'",
  "LOAD CSV FROM 'file:///x' AS row RETURN row",
  "CALL apoc.create.node(['X'], {})",
  "CALL { MATCH (n) DELETE n }",
  "MATCH (n) // it's a comment\nDELETE n",
  "MATCH (n) WHERE n.name = 'unterminated RETURN n",
  "INSTALL httpfs",
  "ATTACH 'other.kuzu' AS other",
  "EXPORT DATABASE '/tmp/x'",
  "CALL threads = 1",
  "BEGIN TRANSACTION",
  "",
  // Not on the list, so refused, whatever they do on one backend or another.
  "CALL db.idx.fulltext.drop('File')",
  "CALL db.idx.fulltext.createNodeIndex('File', 'name')",
  "CALL dbms.killQuery('1')",
  "CALL some.unknown.procedure()",
  "CALL db.clearQueryCaches()",
  "PROFILE MATCH (n) RETURN n",
  "EXPLAIN MATCH (n) RETURN n",
  "SHOW INDEXES",
  "USE other MATCH (n) RETURN n",
  "MATCH (n) FINISH",
  "MATCH (n) WITH n FOREACH (x IN [1] | SET n.x = x)",
  "CALL { MATCH (n) SET n.name = 'x' }",
  "CALL { CREATE (n:X) RETURN n } RETURN n",
  "MATCH (n) RETURN n UNION CREATE (m:X) RETURN m",
  "MATCH (n) WHERE EXISTS { CREATE (m:X) } RETURN n",
  "MATCH (n) RETURN n, create(n)",
  "MATCH (n) WHERE n.name = 'x' CREATE (m:X)",
  "MATCH (n) RETURN n AS x DELETE n",
  "CALL (n) { RETURN 1 }",
  "(n) RETURN n",
  "WHERE true RETURN 1",
];

const reads = [
  "MATCH (f:Function) RETURN f.name LIMIT 10",
  "MATCH (f:Function) WHERE f.name = 'delete_repository' RETURN f.path",
  'MATCH (f:Function) WHERE f.name CONTAINS "SET" RETURN f',
  "MATCH (n) RETURN n.set AS value",
  "MATCH (n:Update) RETURN n",
  "MATCH (n) WHERE n.name = $delete RETURN n",
  "MATCH (n) RETURN n.name AS load",
  "MATCH (n) /* CREATE nothing */ RETURN count(n)",
  "MATCH (a:Function)-[:CALLS*1..3]->(b:Function) RETURN a.name, b.name",
  "CALL show_tables() RETURN *",
  "MATCH (`DELETE`:Function) RETURN `DELETE`.name",
  "CALL table_info('Function') RETURN *",
  "CALL db.labels() YIELD label RETURN label ORDER BY label",
  "CALL db.relationshipTypes()",
  "MATCH (n) RETURN n UNION ALL MATCH (m) RETURN m",
  "CALL { MATCH (f:Function) RETURN f } RETURN count(f) AS c",
  "MATCH (start:Function) WHERE start.name STARTS WITH 'x' AND NOT start.path IS NULL RETURN start",
  "UNWIND [1, 2, 3] AS x RETURN x SKIP 1 LIMIT 1",
  "MATCH (n) WHERE EXISTS { MATCH (n)-[:CALLS]->() } RETURN n",
  "RETURN [x IN range(1, 3) WHERE x > 1 | x * 2] AS l",
  "MATCH (n) RETURN CASE WHEN n.x THEN 1 ELSE 2 END AS v",
  "MATCH (n:Function) RETURN n {.name, .path} ORDER BY n.name DESC",
  "MATCH (a)-[:CALLS*1..3]->(b) RETURN a.name, count(*) AS c ORDER BY c DESC LIMIT 5",
  "OPTIONAL MATCH (f:Function) WHERE f.name = $name AND ($file = '' OR f.path = $file) WITH count(f) AS functions RETURN functions",
];

describe("read-only Cypher", () => {
  it.each(writes)("refuses %j", (query) => {
    const verdict = checkReadOnlyCypher(query);
    expect(verdict.readOnly).toBe(false);
  });

  it.each(reads)("allows %j", (query) => {
    expect(checkReadOnlyCypher(query)).toEqual({ readOnly: true });
  });

  it("names the clause it refused and says how to ask instead", () => {
    const verdict = checkReadOnlyCypher("MATCH (n) DETACH DELETE n");
    expect(verdict.readOnly).toBe(false);
    expect(!verdict.readOnly && verdict.reason).toMatch(/^`DETACH` is not a clause that only reads; ask with .*MATCH/);
  });

  it("names the procedure it refused and the ones it knows", () => {
    const verdict = checkReadOnlyCypher("CALL apoc.create.node(['X'], {})");
    expect(!verdict.readOnly && verdict.reason).toMatch(
      /^`CALL apoc\.create\.node` is not a procedure pi-cgc knows to read \(it knows show_tables, .*db\.labels.*\); ask with/,
    );
  });

  it("a clause it does not know is refused, not let through (the list is of what it allows)", () => {
    const verdict = checkReadOnlyCypher("MATCH (n) VACUUM n");
    expect(!verdict.readOnly && verdict.reason).toMatch(/^`VACUUM` is not a clause that only reads/);
  });

  it.each(Object.keys(READ_PROCEDURES))("allows the read procedure %s", (name) => {
    expect(checkReadOnlyCypher(`CALL ${name}() RETURN *`)).toEqual({ readOnly: true });
  });
});
