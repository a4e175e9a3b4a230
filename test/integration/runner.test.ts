// The runner against the real cgc: every result code, process groups gone after a stop, the lock.
import { spawnSync } from "node:child_process";
import { chmodSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { liveGroups } from "../../src/cgc/children.ts";
import { createRunner, type Runner } from "../../src/cgc/runner.ts";
import { type CgcHome, cgcBinary, cgcStart, makeCgcHome } from "../helpers/cgc-env.ts";
import { waitFor } from "../helpers/pi-sdk.ts";
import { indexedTinyRepo, type TinyRepo, tinyRepo } from "../helpers/repos.ts";

let home: CgcHome;
let repo: TinyRepo;

const budgets = { probe: 20_000, query: 60_000, maintenance: 120_000, longLived: 0 };

function runnerFor(overrides: Partial<Parameters<typeof createRunner>[0]> = {}): Runner {
  return createRunner({ executable: cgcBinary(), budgets, env: { ...process.env, ...home.env }, ...overrides });
}

/** Running (non-zombie) processes of a process group, from the process table. */
function groupAlive(pgid: number): boolean {
  const table = spawnSync("ps", ["-eo", "pgid=,stat="], { encoding: "utf8" }).stdout;
  return table
    .split("\n")
    .map((line) => line.trim().split(/\s+/))
    .some(([group, stat]) => Number(group) === pgid && !stat?.startsWith("Z"));
}

beforeAll(async () => {
  home = makeCgcHome();
  repo = await indexedTinyRepo(home.env);
});
afterAll(() => {
  home.cleanup();
  repo.cleanup();
});

describe("runner with the real cgc", () => {
  it("OK: a query answers, the spawn is counted", async () => {
    const runner = runnerFor();
    const result = await runner.run(["query", "MATCH (r:Repository) RETURN r.path AS path"], {
      kind: "query",
      cwd: repo.path,
    });
    expect(result.code).toBe("OK");
    expect(result.stdout).toContain(repo.path);
    expect(runner.spawnCount).toBe(1);
  });

  it("UNAVAILABLE: a missing executable and a missing working directory", async () => {
    const missing = await runnerFor({ executable: "/nonexistent/cgc" }).run(["--version"], {
      kind: "probe",
      cwd: repo.path,
    });
    expect(missing.code).toBe("UNAVAILABLE");
    expect(missing.reason).toContain("/nonexistent/cgc");
    const noCwd = await runnerFor().run(["--version"], { kind: "probe", cwd: join(repo.path, "gone") });
    expect(noCwd.code).toBe("UNAVAILABLE");
  });

  it("TIMEOUT: a cgc that outlives its budget is stopped with its whole process group", async () => {
    const runner = runnerFor();
    const before = new Set(liveGroups());
    const pending = runner.run(["watch", repo.path], { kind: "query", cwd: repo.path, budgetMs: 3_000 });
    const pgid = await waitFor(() => liveGroups().find((pid) => !before.has(pid)), "the watch child");
    const result = await pending;
    expect(result.code).toBe("TIMEOUT");
    expect(groupAlive(pgid)).toBe(false);
    expect(runner.liveCount).toBe(0);
  });

  it("CANCELLED: an aborted call leaves no process of its group", async () => {
    const runner = runnerFor();
    const controller = new AbortController();
    const before = new Set(liveGroups());
    const pending = runner.run(["watch", repo.path], { kind: "query", cwd: repo.path, signal: controller.signal });
    const pgid = await waitFor(() => liveGroups().find((pid) => !before.has(pid)), "the watch child");
    controller.abort();
    const result = await pending;
    expect(result.code).toBe("CANCELLED");
    expect(groupAlive(pgid)).toBe(false);
  });

  it("BUSY: a second real cgc process holding the embedded database", async () => {
    const holder = cgcStart(["watch", repo.path], { cwd: repo.path, env: home.env });
    try {
      await holder.waitForLine("stdout", /Monitoring for file changes|Watching/);
      const result = await runnerFor().run(["query", "MATCH (r:Repository) RETURN r.path AS path"], {
        kind: "query",
        cwd: repo.path,
      });
      expect(result.code).toBe("BUSY");
    } finally {
      await holder.stop();
    }
  });

  it("identical concurrent calls share one child; lock-taking calls are serialised", async () => {
    const runner = runnerFor();
    const query = ["query", "MATCH (f:Function) RETURN count(f) AS n"];
    const [a, b] = await Promise.all([
      runner.run(query, { kind: "query", cwd: repo.path }),
      runner.run(query, { kind: "query", cwd: repo.path }),
    ]);
    expect(a.code).toBe("OK");
    expect(b.stdout).toBe(a.stdout);
    expect(runner.spawnCount).toBe(1);
    // Two different lock-taking calls at once would collide on the embedded lock; serialised, both succeed.
    const [c, d] = await Promise.all([
      runner.run(["query", "MATCH (c:Class) RETURN count(c) AS n"], { kind: "query", cwd: repo.path }),
      runner.run(["query", "MATCH (f:File) RETURN count(f) AS n"], { kind: "query", cwd: repo.path }),
    ]);
    expect([c.code, d.code]).toEqual(["OK", "OK"]);
  });

  it("ENABLE_AUTO_WATCH=true in the parent environment does not turn an index into a watch", async () => {
    const runner = runnerFor({ env: { ...process.env, ...home.env, ENABLE_AUTO_WATCH: "true" } });
    const other = tinyRepo({ name: "autowatch" });
    const result = await runner.run(["index", other.path], { kind: "maintenance", cwd: other.path, budgetMs: 90_000 });
    expect(result.code).toBe("OK");
    other.cleanup();
  });

  it("a cgc that ignores SIGINT is escalated to SIGKILL", async () => {
    // Stands in for a cgc stuck in native code that does not react to SIGINT (seen with hung database opens).
    const dir = mkdtempSync(join(tmpdir(), "pi-cgc-fake-"));
    const fake = join(dir, "cgc");
    writeFileSync(fake, "#!/bin/sh\ntrap '' INT TERM\nwhile :; do sleep 1; done\n");
    chmodSync(fake, 0o755);
    const runner = runnerFor({ executable: fake, killGraceMs: 200 });
    const before = new Set(liveGroups());
    const pending = runner.run(["index"], { kind: "query", cwd: repo.path, budgetMs: 500 });
    const pgid = await waitFor(() => liveGroups().find((pid) => !before.has(pid)), "the fake child");
    expect((await pending).code).toBe("TIMEOUT");
    expect(groupAlive(pgid)).toBe(false);
  });
});
