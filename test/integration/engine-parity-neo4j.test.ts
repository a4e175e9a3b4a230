// Engine parity on Neo4j (see engine-parity.test.ts for the harness): the small replay, each step compared
// with a fresh full index. Neo4j Community holds one database per server, so the engine's graph and the
// fresh index get a server each, started here on 127.0.0.1.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { expectParity, runParity } from "../helpers/engine.ts";
import { type Neo4jServer, startNeo4j } from "../helpers/neo4j.ts";

describe("engine parity with a fresh full index, on Neo4j", () => {
  it("Neo4j server: every step of the replay leaves the graph a full index would build", async () => {
    const servers: Neo4jServer[] = [];
    try {
      servers.push(await startNeo4j(), await startNeo4j());
      const work = mkdtempSync(join(tmpdir(), "pi-cgc-parity-neo4j-"));
      const uris = servers.map((server) => server.uri).join(",");
      const run = await runParity(["--scenario", "small", "--work", work, "--neo4j-uris", uris]);
      expect(run.ready).toMatchObject({ backend: "neo4j", cgcVersion: "0.6.13" });
      expect(run.steps.length, run.stderr.slice(-4000)).toBeGreaterThanOrEqual(15);
      expectParity(run);
    } finally {
      await Promise.all(servers.map((server) => server.stop()));
    }
  }, 1_800_000);
});
