// The parsers against the cgc installed now, on a repository whose call graph is known by
// construction. The unit tests hold the parsers to the captured fixtures; this suite holds the
// fixtures to the binary, so an upgrade that changes a format (or the version) fails here.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  detectBusy,
  detectCgcFailure,
  indexSkipped,
  type Parsed,
  parseQueryJson,
  parseVersion,
} from "../../src/cgc/parse.ts";
import { type CgcHome, cgcExec, cgcStart, makeCgcHome, PROJECT_ROOT } from "../helpers/cgc-env.ts";
import { TINY_FACTS, type TinyRepo, tinyRepo } from "../helpers/repos.ts";

function value<T>(parsed: Parsed<T>): T {
  if (parsed.kind !== "ok") throw new Error(`expected ok, got unknown: ${parsed.reason}`);
  return parsed.value;
}

let home: CgcHome;
let repo: TinyRepo;

const cgc = (args: string[]) => cgcExec(args, { cwd: repo.path, env: home.env, timeoutMs: 120_000 });
const query = async (cypher: string) => {
  const result = await cgc(["query", cypher]);
  expect(result.code, result.stderr).toBe(0);
  return value(parseQueryJson(result.stdout));
};

beforeAll(async () => {
  home = makeCgcHome();
  repo = tinyRepo();
  const indexed = await cgc(["index", repo.path]);
  expect(indexed.code, indexed.stdout + indexed.stderr).toBe(0);
});

afterAll(() => {
  repo?.cleanup();
  home?.cleanup();
});

describe("cgc on tinyRepo(), read through src/cgc/parse.ts", () => {
  it("is the version the fixtures were captured from", async () => {
    const version = await cgcExec(["--version"], { cwd: repo.path, env: home.env });
    const fixture = JSON.parse(readFileSync(join(PROJECT_ROOT, "test/fixtures/cgc/version.json"), "utf8"));
    expect(value(parseVersion(version.stderr)).version).toBe(fixture.cgcVersion);
  });

  it("stores the repository with its HEAD", async () => {
    const rows = await query(
      "MATCH (r:Repository) RETURN r.path AS path, r.name AS name, r.commit_hash AS commit_hash",
    );
    expect(rows).toEqual([{ path: repo.path, name: "tiny", commit_hash: repo.head }]);
  });

  it("finds the known callers of each function, and none for the orphan", async () => {
    const rows = await query("MATCH (a:Function)-[:CALLS]->(b:Function) RETURN a.name AS caller, b.name AS callee");
    for (const [callee, callers] of Object.entries(TINY_FACTS.callers)) {
      const found = [...new Set(rows.filter((row) => row.callee === callee).map((row) => String(row.caller)))].sort();
      expect(found, callee).toEqual(callers);
    }
  });

  it("finds the class hierarchy", async () => {
    const rows = await query("MATCH (a:Class)-[:INHERITS]->(b:Class) RETURN a.name AS child, b.name AS parent");
    expect(rows.map((row) => [row.child, row.parent]).sort()).toEqual(TINY_FACTS.inherits);
  });

  it("stores every function written, plus one `<module>` per file", async () => {
    const rows = await query("MATCH (f:Function) RETURN f.name AS name");
    const names = rows.map((row) => String(row.name));
    expect(names.filter((name) => name !== "<module>").sort()).toEqual(TINY_FACTS.functions);
    expect(names.filter((name) => name === "<module>")).toHaveLength(TINY_FACTS.pythonFiles.length);
  });

  it("skips a second index and says so", async () => {
    const again = await cgc(["index", repo.path]);
    expect(again.code).toBe(0);
    expect(indexSkipped(again.stdout)).toBe(true);
  });

  it("reports an unknown repository with exit code 0, which detectCgcFailure catches", async () => {
    const missing = await cgc(["stats", join(repo.path, "nowhere")]);
    expect(missing.code).toBe(0);
    expect(detectCgcFailure(missing.stdout)).toBe(`Repository not found: ${join(repo.path, "nowhere")}`);
  });

  it("is busy, not failed, while a watcher holds the database", async () => {
    const watch = cgcStart(["watch", repo.path], { cwd: repo.path, env: home.env });
    await watch.waitForLine("stdout", /Monitoring for file changes/);
    const blocked = await cgc(["list"]);
    const stopped = await watch.stop("SIGINT");
    expect(blocked.code).toBe(1);
    expect(detectBusy(`${blocked.stdout}\n${blocked.stderr}`)).toBe(true);
    expect(stopped.stdout).toContain("✓ Watcher stopped.");
  });
});
