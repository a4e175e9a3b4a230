// The graph's ledger (src/state/ledger.ts): where each record lives (the files earlier versions wrote, and the
// engine's contract), and the unfinished-run note through each way a run can settle. The real
// runs that leave these notes behind are in test/integration/freshness.test.ts (a sync stopped by its
// budget) and test/reliability/faults.test.ts (pi killed mid-sync, a session replaced mid-sync).
import { spawn, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { ENGINE_WRITTEN_ELSEWHERE, graphLedger } from "../../src/state/ledger.ts";
import { PROJECT_ROOT } from "../helpers/cgc-env.ts";
import { removeAgentDirs, scratchAgentEnv } from "../helpers/env.ts";

const ROOT = "/work/repo";
/** The record's name for ROOT in a scratch agent directory, as earlier versions named it: a user's records carry over. */
const RECORD_OF = (env: NodeJS.ProcessEnv) => graphLedger(env, ROOT).engineCacheDir.split("/").at(-1) as string;

afterEach(removeAgentDirs);

describe("where the ledger keeps a graph's records", () => {
  it("in the files earlier versions wrote, named by the workspace and the database", () => {
    const env: NodeJS.ProcessEnv = { ...scratchAgentEnv(), DEFAULT_DATABASE: "", FALKORDB_HOST: "", NEO4J_URI: "" };
    delete env.FALKORDB_PORT;
    const agent = env.PI_CODING_AGENT_DIR as string;
    // sha256 of the root and HOME, DEFAULT_DATABASE, FALKORDB_HOST, FALKORDB_PORT, NEO4J_URI, NUL-joined: 24 hex digits.
    const name = createHash("sha256").update([ROOT, env.HOME, "", "", "", ""].join("\0")).digest("hex").slice(0, 24);
    const ledger = graphLedger(env, ROOT);
    expect(ledger.engineCacheDir).toBe(join(agent, "pi-cgc", "engine", name));
    expect(ledger.treeFile).toBe(join(agent, "pi-cgc", "trees", `${name}.json`));
    ledger.runStarted("sync");
    expect(existsSync(join(agent, "pi-cgc", "runs", `${name}.json`))).toBe(true);
    expect(existsSync(join(agent, "pi-cgc", "writes", `${name}.json`))).toBe(true);
  });

  it("marks the engine's cache with the file the engine reads (engine/pi_cgc_engine/cache.py WRITTEN_ELSEWHERE)", () => {
    const env = scratchAgentEnv();
    const ledger = graphLedger(env, ROOT);
    ledger.writtenElsewhere();
    expect(existsSync(join(ledger.engineCacheDir, ENGINE_WRITTEN_ELSEWHERE))).toBe(true);
    const engine = readFileSync(join(PROJECT_ROOT, "engine", "pi_cgc_engine", "cache.py"), "utf8");
    expect(engine).toMatch(new RegExp(`WRITTEN_ELSEWHERE\\s*=\\s*["']${ENGINE_WRITTEN_ELSEWHERE}["']`));
  });

  it("reads a note an earlier version left", () => {
    const env = scratchAgentEnv();
    const path = join(env.PI_CODING_AGENT_DIR as string, "pi-cgc", "runs", `${RECORD_OF(env)}.json`);
    mkdirSync(dirname(path), { recursive: true });
    const note = { root: ROOT, what: "sync", startedAt: "2026-01-01T00:00:00.000Z", pid: 1, timedOutAfterMs: 9_000 };
    writeFileSync(path, `${JSON.stringify(note)}\n`);
    expect(graphLedger(env, ROOT).runNote()).toEqual(note);
  });
});

describe("the unfinished-run note", () => {
  it("is there while a run goes on, and an OK run removes it", () => {
    const env = scratchAgentEnv();
    const settle = graphLedger(env, ROOT).runStarted("sync");
    expect(graphLedger(env, ROOT).runNote()).toMatchObject({ root: ROOT, what: "sync" });
    expect(graphLedger(env, ROOT).runNote()?.timedOutAfterMs).toBeUndefined();
    settle("OK");
    expect(graphLedger(env, ROOT).runNote()).toBeUndefined();
  });

  it("a run stopped by its budget stays noted, with how long it ran", () => {
    const env = scratchAgentEnv();
    graphLedger(env, ROOT).runStarted("sync")("TIMEOUT", 1_800_412);
    expect(graphLedger(env, ROOT).runNote()).toMatchObject({ what: "sync", timedOutAfterMs: 1_800_412 });
  });

  it("a run that never opened the database puts back the note of the stopped run before it", () => {
    const env = scratchAgentEnv();
    graphLedger(env, ROOT).runStarted("index")("TIMEOUT", 5_000);
    graphLedger(env, ROOT).runStarted("sync")("BUSY");
    expect(graphLedger(env, ROOT).runNote()).toMatchObject({ what: "index", timedOutAfterMs: 5_000 });
  });

  it("an index cgc skipped wrote nothing: a stamp in its time is another writer's, and the note before it comes back", () => {
    // Seen in the soak (seed 20261407): a user's cgc watch indexed the workspace just before /cgc index, whose cgc
    // found that graph and skipped; taken for pi-cgc's own, the watcher's graph was called fresh.
    const env = scratchAgentEnv();
    const skipped = graphLedger(env, ROOT).runStarted("index");
    const stampedMeanwhile = Date.now();
    skipped("SKIPPED");
    expect(graphLedger(env, ROOT).writtenByPiCgc(stampedMeanwhile)).toBe(false);
    const wrote = graphLedger(env, ROOT).runStarted("index");
    const stampedByIt = Date.now();
    wrote("OK");
    expect(graphLedger(env, ROOT).writtenByPiCgc(stampedByIt)).toBe(true);
    const other = scratchAgentEnv();
    graphLedger(other, ROOT).runStarted("index")("TIMEOUT", 5_000);
    graphLedger(other, ROOT).runStarted("index")("SKIPPED");
    expect(graphLedger(other, ROOT).runNote()).toMatchObject({ what: "index", timedOutAfterMs: 5_000 });
  });

  it("a failed run stays noted without a budget, so nothing is held back for it", () => {
    const env = scratchAgentEnv();
    graphLedger(env, ROOT).runStarted("index")("TIMEOUT", 5_000);
    graphLedger(env, ROOT).runStarted("sync")("FAILED");
    expect(graphLedger(env, ROOT).runNote()).toMatchObject({ what: "sync" });
    expect(graphLedger(env, ROOT).runNote()?.timedOutAfterMs).toBeUndefined();
  });

  it("is kept per database: another HOME or server is another graph", () => {
    const env = scratchAgentEnv();
    graphLedger(env, ROOT).runStarted("sync")("TIMEOUT", 5_000);
    expect(
      graphLedger({ ...env, DEFAULT_DATABASE: "falkordb-remote", FALKORDB_PORT: "6390" }, ROOT).runNote(),
    ).toBeUndefined();
  });

  it("a run of another live process is in progress, not abandoned; one whose process is gone is abandoned", () => {
    const env = scratchAgentEnv();
    const path = join(env.PI_CODING_AGENT_DIR as string, "pi-cgc", "runs", `${RECORD_OF(env)}.json`);
    mkdirSync(dirname(path), { recursive: true });
    const note = (pid: number) =>
      writeFileSync(path, JSON.stringify({ root: ROOT, what: "update", startedAt: "2026-12-01T00:00:00Z", pid }));
    // A second pi session of the same user: its own process, alive while it writes.
    const other = spawn(process.execPath, ["-e", "setTimeout(() => {}, 30000)"], { stdio: "ignore" });
    try {
      note(other.pid as number);
      expect(graphLedger(env, ROOT).abandonedRunNote()).toBeUndefined();
    } finally {
      other.kill("SIGKILL");
    }
    const gone = spawnSync(process.execPath, ["-e", "process.stdout.write(String(process.pid))"], { encoding: "utf8" });
    note(Number(gone.stdout));
    expect(graphLedger(env, ROOT).abandonedRunNote()).toMatchObject({ what: "update" });
    note(process.pid); // this session's own note is its own business: kept
    expect(graphLedger(env, ROOT).abandonedRunNote()).toMatchObject({ pid: process.pid });
  });
});
