// The unfinished-run note (src/lifecycle/interrupted.ts) through each way a run can settle. The real
// runs that leave these notes behind are in test/integration/freshness.test.ts (a sync stopped by its
// budget) and test/reliability/faults.test.ts (pi killed mid-sync, a session replaced mid-sync).
import { spawn, spawnSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { abandonedRunNote, noteRunStarted, readRunNote } from "../../src/lifecycle/interrupted.ts";
import { writtenByPiCgc } from "../../src/lifecycle/provenance.ts";
import { graphRecordPath } from "../../src/state/records.ts";
import { removeAgentDirs, scratchAgentEnv } from "../helpers/env.ts";

const ROOT = "/work/repo";

afterEach(removeAgentDirs);

describe("the unfinished-run note", () => {
  it("is there while a run goes on, and an OK run removes it", () => {
    const env = scratchAgentEnv();
    const settle = noteRunStarted(env, ROOT, "sync");
    expect(readRunNote(env, ROOT)).toMatchObject({ root: ROOT, what: "sync" });
    expect(readRunNote(env, ROOT)?.timedOutAfterMs).toBeUndefined();
    settle("OK");
    expect(readRunNote(env, ROOT)).toBeUndefined();
  });

  it("a run stopped by its budget stays noted, with how long it ran", () => {
    const env = scratchAgentEnv();
    noteRunStarted(env, ROOT, "sync")("TIMEOUT", 1_800_412);
    expect(readRunNote(env, ROOT)).toMatchObject({ what: "sync", timedOutAfterMs: 1_800_412 });
  });

  it("a run that never opened the database puts back the note of the stopped run before it", () => {
    const env = scratchAgentEnv();
    noteRunStarted(env, ROOT, "index")("TIMEOUT", 5_000);
    noteRunStarted(env, ROOT, "sync")("BUSY");
    expect(readRunNote(env, ROOT)).toMatchObject({ what: "index", timedOutAfterMs: 5_000 });
  });

  it("an index cgc skipped wrote nothing: a stamp in its time is another writer's, and the note before it comes back", () => {
    // Seen in the soak (seed 20261407): a user's cgc watch indexed the workspace just before /cgc index, whose cgc
    // found that graph and skipped; taken for pi-cgc's own, the watcher's graph was called fresh.
    const env = scratchAgentEnv();
    const skipped = noteRunStarted(env, ROOT, "index");
    const stampedMeanwhile = Date.now();
    skipped("SKIPPED");
    expect(writtenByPiCgc(env, ROOT, stampedMeanwhile)).toBe(false);
    const wrote = noteRunStarted(env, ROOT, "index");
    const stampedByIt = Date.now();
    wrote("OK");
    expect(writtenByPiCgc(env, ROOT, stampedByIt)).toBe(true);
    const other = scratchAgentEnv();
    noteRunStarted(other, ROOT, "index")("TIMEOUT", 5_000);
    noteRunStarted(other, ROOT, "index")("SKIPPED");
    expect(readRunNote(other, ROOT)).toMatchObject({ what: "index", timedOutAfterMs: 5_000 });
  });

  it("a failed run stays noted without a budget, so nothing is held back for it", () => {
    const env = scratchAgentEnv();
    noteRunStarted(env, ROOT, "index")("TIMEOUT", 5_000);
    noteRunStarted(env, ROOT, "sync")("FAILED");
    expect(readRunNote(env, ROOT)).toMatchObject({ what: "sync" });
    expect(readRunNote(env, ROOT)?.timedOutAfterMs).toBeUndefined();
  });

  it("is kept per database: another HOME or server is another graph", () => {
    const env = scratchAgentEnv();
    noteRunStarted(env, ROOT, "sync")("TIMEOUT", 5_000);
    expect(readRunNote({ ...env, DEFAULT_DATABASE: "falkordb-remote", FALKORDB_PORT: "6390" }, ROOT)).toBeUndefined();
  });

  it("a run of another live process is in progress, not abandoned; one whose process is gone is abandoned", () => {
    const env = scratchAgentEnv();
    const path = graphRecordPath(env, ROOT, "runs");
    mkdirSync(dirname(path), { recursive: true });
    const note = (pid: number) =>
      writeFileSync(path, JSON.stringify({ root: ROOT, what: "update", startedAt: "2026-12-01T00:00:00Z", pid }));
    // A second pi session of the same user: its own process, alive while it writes.
    const other = spawn(process.execPath, ["-e", "setTimeout(() => {}, 30000)"], { stdio: "ignore" });
    try {
      note(other.pid as number);
      expect(abandonedRunNote(env, ROOT)).toBeUndefined();
    } finally {
      other.kill("SIGKILL");
    }
    const gone = spawnSync(process.execPath, ["-e", "process.stdout.write(String(process.pid))"], { encoding: "utf8" });
    note(Number(gone.stdout));
    expect(abandonedRunNote(env, ROOT)).toMatchObject({ what: "update" });
    note(process.pid); // this session's own note is its own business: kept
    expect(abandonedRunNote(env, ROOT)).toMatchObject({ pid: process.pid });
  });
});
