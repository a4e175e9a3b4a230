// Read-only Cypher: writes are refused before cgc sees them; reads, including ones that mention
// write words as names, strings or comments, pass.
import { describe, expect, it } from "vitest";
import { checkReadOnlyCypher } from "../../src/agent/cypher.ts";

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
];

describe("read-only Cypher", () => {
  it.each(writes)("refuses %j", (query) => {
    const verdict = checkReadOnlyCypher(query);
    expect(verdict.readOnly).toBe(false);
  });

  it.each(reads)("allows %j", (query) => {
    expect(checkReadOnlyCypher(query)).toEqual({ readOnly: true });
  });

  it("names the clause it refused", () => {
    expect(checkReadOnlyCypher("MATCH (n) DETACH DELETE n")).toEqual({
      readOnly: false,
      reason: "`DETACH` changes the graph",
    });
  });
});
