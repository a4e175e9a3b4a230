// Each backend of the matrix (test/helpers/backends.ts) with the real cgc: `cgc index` and `cgc query` work,
// every call names the backend on stderr, and what FalkorDB Lite leaves running is what
// docs/cgc-compat.md says. Servers (FalkorDB, Neo4j) are started here on 127.0.0.1 and stopped here.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  BACKEND_NAMES,
  falkordbLiteDaemons,
  startBackend,
  stopFalkordbLiteDaemons,
  type TestBackend,
} from "../helpers/backends.ts";
import { cgcExec, cgcStart, type LongLivedCgc } from "../helpers/cgc-env.ts";
import { indexedTinyRepo, tinyRepo } from "../helpers/repos.ts";

const FUNCTIONS = "MATCH (f:Function) WHERE f.name <> '<module>' RETURN f.name AS name ORDER BY name";

/** One JSON-RPC request to a `cgc mcp start` child; resolves with the response line. */
async function rpc(server: LongLivedCgc, id: number, method: string, params: Record<string, unknown>): Promise<string> {
  server.child.stdin?.write(`${JSON.stringify({ jsonrpc: "2.0", id, method, params })}\n`);
  return server.waitForLine("stdout", new RegExp(`^\\{"jsonrpc": "2.0", "id": ${id}[,}]`));
}

async function mcpServer(options: { cwd: string; env: Record<string, string>; cgc: string }): Promise<LongLivedCgc> {
  const server = cgcStart(["mcp", "start"], options);
  await server.waitForLine("stderr", /MCP Server is running/);
  await rpc(server, 1, "initialize", {
    protocolVersion: "2025-03-26",
    capabilities: {},
    clientInfo: { name: "pi-cgc-tests", version: "0" },
  });
  server.child.stdin?.write(`${JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" })}\n`);
  return server;
}

function names(stdout: string): string[] {
  return [...stdout.matchAll(/"name": "([^"]+)"/g)].map((match) => match[1] as string);
}

describe.each(BACKEND_NAMES)("backend %s", (name) => {
  let backend: TestBackend;
  beforeAll(async () => {
    backend = await startBackend(name);
  }, 300_000);
  afterAll(async () => {
    await backend?.stop();
  }, 120_000);

  it("cgc index and cgc query work, and every call names the backend", async () => {
    const repo = tinyRepo();
    const run = (args: string[]) =>
      cgcExec(args, { cwd: repo.path, env: backend.env, cgc: backend.cgc, timeoutMs: 240_000 });
    const index = await run(["index", repo.path]);
    expect(index.code, index.stdout + index.stderr).toBe(0);
    const query = await run(["query", FUNCTIONS]);
    expect(query.code, query.stderr).toBe(0);
    expect(names(query.stdout)).toEqual(expect.arrayContaining(["alpha", "beta", "main", "normalize", "orphan"]));
    expect(index.stderr.split("\n")).toContain(backend.banner);
    expect(query.stderr.split("\n")).toContain(backend.banner);
  });

  if (name === "falkordb") {
    it("the daemon lives as long as the cgc that started it; one killed leaves redis-server, stopped with a save", async () => {
      const repo = await indexedTinyRepo(backend.env, { cgc: backend.cgc, timeoutMs: 240_000 });
      const options = { cwd: repo.path, env: backend.env, cgc: backend.cgc, timeoutMs: 240_000 };
      // A short call started the daemon and stopped it at its exit (SHUTDOWN SAVE, then the worker).
      expect(falkordbLiteDaemons(backend.home.home)).toEqual([]);

      const watch = cgcStart(["watch", repo.path], options);
      await watch.waitForLine("stdout", /Monitoring for file changes/);
      const running = falkordbLiteDaemons(backend.home.home);
      expect(running.map((daemon) => daemon.kind).sort()).toEqual(["falkor_worker", "redis-server"]);
      // FALKORDB_PORT=0: the redis-server names only its unix socket, no TCP address.
      expect(running.find((daemon) => daemon.kind === "redis-server")?.command).toMatch(/ unixsocket:/);

      // SIGKILL to the watcher's process group: the worker dies with it, redis-server (daemonized into its
      // own session) is left behind, and later cgc calls use it without owning it.
      await watch.stop("SIGKILL");
      expect(falkordbLiteDaemons(backend.home.home).map((daemon) => daemon.kind)).toEqual(["redis-server"]);
      const query = await cgcExec(["query", FUNCTIONS], options);
      expect(names(query.stdout)).toContain("alpha");
      expect(falkordbLiteDaemons(backend.home.home).map((daemon) => daemon.kind)).toEqual(["redis-server"]);

      // The helper's stop (SIGTERM: redis saves and exits) ends it; the graph survives in the dump.
      const stopped = await stopFalkordbLiteDaemons(backend.home.home);
      expect(stopped.map((daemon) => daemon.kind)).toEqual(["redis-server"]);
      expect(falkordbLiteDaemons(backend.home.home)).toEqual([]);
      const after = await cgcExec(["query", FUNCTIONS], options);
      expect(names(after.stdout)).toContain("alpha");
      expect(falkordbLiteDaemons(backend.home.home)).toEqual([]);
    });

    it("the daemon belongs to the cgc that started it: when that one ends, a cgc that only connected loses the graph", async () => {
      const repo = await indexedTinyRepo(backend.env, { cgc: backend.cgc, timeoutMs: 240_000 });
      const options = { cwd: repo.path, env: backend.env, cgc: backend.cgc, timeoutMs: 240_000 };
      const query = { name: "execute_cypher_query", arguments: { cypher_query: FUNCTIONS } };

      const owner = await mcpServer(options);
      const guest = await mcpServer(options);
      // One daemon: the second server connected to the first one's socket.
      expect(
        falkordbLiteDaemons(backend.home.home)
          .map((daemon) => daemon.kind)
          .sort(),
      ).toEqual(["falkor_worker", "redis-server"]);
      expect(await rpc(guest, 2, "tools/call", query)).toContain("alpha");

      // The owner ends cleanly (stdin closed): its exit handler saves and stops the daemon under the guest.
      owner.child.stdin?.end();
      await owner.exited;
      expect(falkordbLiteDaemons(backend.home.home)).toEqual([]);
      const orphaned = await rpc(guest, 3, "tools/call", query);
      expect(orphaned).not.toContain("alpha");
      expect(orphaned).toMatch(/error/i);
      guest.child.stdin?.end();
      await guest.exited;
      expect(falkordbLiteDaemons(backend.home.home)).toEqual([]);
    });
  }
});
