// A graph written by another process (src/lifecycle/provenance.ts over the windows of src/state/ledger.ts, the state's rebuildNeeded): pi-cgc tells
// its own writes — this session's, another pi session's — from a cgc watch's or a user's cgc command by
// the windows it records, and such a graph is not fresh again before a full rebuild. The real case runs in
// the soak's fixed seed 1 run 0 (test/reliability/soak-seeds.json): a cgc watch stopped half-way through its
// first index, a plain cgc index resuming over it.
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { createGraphProvenance } from "../../src/lifecycle/provenance.ts";
import { graphLedger } from "../../src/state/ledger.ts";
import {
  changesObserved,
  freshnessVerified,
  graphWrittenOutside,
  initialState,
  maintenanceSettled,
  maintenanceStarted,
  type State,
} from "../../src/state/model.ts";
import { removeAgentDirs, scratchAgentEnv } from "../helpers/env.ts";

const ROOT = "/work/repo";

const stamp = (ms: number) => new Date(ms).toISOString();

afterEach(removeAgentDirs);

describe("who wrote the graph", () => {
  it("the graph the session starts with is taken as its dates say; a later stamp outside pi-cgc's writes is named", () => {
    const env = scratchAgentEnv();
    const provenance = createGraphProvenance(() => graphLedger(env, ROOT));
    const found = stamp(Date.now() - 60_000);
    expect(provenance.check(found, true)).toBeUndefined();
    expect(provenance.check(found, true)).toBeUndefined();
    const watcher = stamp(Date.now() - 10_000);
    expect(provenance.check(watcher, true)).toMatch(/written at .* by another cgc process, not by pi-cgc/);
    // Said once per write: the same stamp again is no news.
    expect(provenance.check(watcher, true)).toBeUndefined();
  });

  it("a graph that appears mid-session without pi-cgc writing it is another process's", () => {
    const env = scratchAgentEnv();
    const provenance = createGraphProvenance(() => graphLedger(env, ROOT));
    expect(provenance.check(undefined, false)).toBeUndefined();
    expect(provenance.check(stamp(Date.now()), true)).toMatch(/another cgc process/);
  });

  it("a stamp inside this session's own write is pi-cgc's", () => {
    const env = scratchAgentEnv();
    const provenance = createGraphProvenance(() => graphLedger(env, ROOT));
    provenance.check(undefined, false);
    const close = graphLedger(env, ROOT).openWriteWindow();
    const written = stamp(Date.now());
    close();
    expect(provenance.check(written, true)).toBeUndefined();
  });

  it("a stamp inside another pi session's write (another process) is pi-cgc's too", () => {
    const env = scratchAgentEnv();
    const before = Date.now();
    // A second pi process writing the same graph: its window is on disk, not in this process's memory.
    execFileSync(
      process.execPath,
      [
        "--import",
        "tsx",
        "-e",
        `import("${join(process.cwd(), "src/state/ledger.ts")}").then((m) => m.graphLedger(process.env, "${ROOT}").openWriteWindow()())`,
      ],
      { env: { ...process.env, ...env } },
    );
    const after = Date.now();
    expect(graphLedger(env, ROOT).writtenByPiCgc(Math.round((before + after) / 2))).toBe(true);
    expect(graphLedger(env, ROOT).writtenByPiCgc(before - 60_000)).toBe(false);
    expect(graphLedger(env, ROOT).writtenByPiCgc(after + 60_000)).toBe(false);
  });

  it("a run that met the lock wrote nothing: a stamp in its time is another writer's", () => {
    const env = scratchAgentEnv();
    const close = graphLedger(env, ROOT).openWriteWindow();
    const theirs = Date.now(); // a user's cgc watch wrote while pi-cgc's update waited for the lock
    expect(graphLedger(env, ROOT).writtenByPiCgc(theirs)).toBe(true);
    close(false);
    expect(graphLedger(env, ROOT).writtenByPiCgc(theirs)).toBe(false);
  });

  it("the engine's own write found a stamp nobody in pi-cgc left since the last one it knew: named", () => {
    const env = scratchAgentEnv();
    const t = Date.now();
    vi.useFakeTimers({ toFake: ["Date"], now: t });
    try {
      const provenance = createGraphProvenance(() => graphLedger(env, ROOT));
      const known = stamp(t - 60_000);
      provenance.check(known, true);
      // An update in its window found the graph as the session last knew it: its own stamp is known next.
      let close = graphLedger(env, ROOT).openWriteWindow();
      expect(provenance.ownWrite(known, stamp(t + 500), close.id)).toBeUndefined();
      vi.setSystemTime(t + 1_000);
      close();
      // The next update's first attempt met the lock, a cgc watch wrote meanwhile, the second attempt wrote:
      // the watcher's stamp lies in this update's own window, which wrote nothing before it read the stamp.
      vi.setSystemTime(t + 10_000);
      close = graphLedger(env, ROOT).openWriteWindow();
      vi.setSystemTime(t + 12_000);
      expect(provenance.ownWrite(stamp(t + 11_000), stamp(t + 12_500), close.id)).toMatch(
        /written at .* by another cgc process/,
      );
      close();
      // Another pi session's write (a window that closed before this update's opened) is pi-cgc's.
      vi.setSystemTime(t + 20_000);
      const other = graphLedger(env, ROOT).openWriteWindow();
      vi.setSystemTime(t + 21_000);
      other();
      vi.setSystemTime(t + 30_000);
      close = graphLedger(env, ROOT).openWriteWindow();
      expect(provenance.ownWrite(stamp(t + 20_500), stamp(t + 30_500), close.id)).toBeUndefined();
      close();
    } finally {
      vi.useRealTimers();
    }
  });

  it("a window still open reaches to now while its process lives", () => {
    const env = scratchAgentEnv();
    graphLedger(env, ROOT).openWriteWindow(); // a long write of this (live) process, not closed yet
    expect(graphLedger(env, ROOT).writtenByPiCgc(Date.now() + 1_000)).toBe(true);
  });
});

describe("a graph written outside pi-cgc, in the state", () => {
  const fresh = (): State => freshnessVerified({ ...initialState(), readiness: "ready", probed: true }, [], 0);

  it("stays possibly stale while changed paths are updated, and a completed sync (a full rebuild) clears it", () => {
    let state = graphWrittenOutside(fresh(), "the graph was written at T by another cgc process");
    state = changesObserved(state, ["/work/repo/a.py"]);
    expect(state).toMatchObject({ freshness: "possibly-stale", staleReason: expect.stringMatching(/another cgc/) });
    // The engine updated a.py: that path is reconciled, the graph is still not known to be whole.
    state = freshnessVerified(state, ["/work/repo/a.py"], 1);
    expect(state.freshness).toBe("possibly-stale");
    expect(state.changedPaths).toEqual([]);
    state = maintenanceSettled(maintenanceStarted(state, "syncing", "sync", 2), "OK", 3);
    expect(state.rebuildNeeded).toBeUndefined();
    expect(freshnessVerified(state, [], 4).freshness).toBe("fresh");
  });

  it("a failed sync or a skipped index leaves it in place", () => {
    const outside = graphWrittenOutside(fresh(), "written by another cgc process");
    const failed = maintenanceSettled(maintenanceStarted(outside, "syncing", "sync", 1), "FAILED", 2, "sync: boom");
    expect(failed.rebuildNeeded).toBeDefined();
    const skipped = maintenanceSettled(maintenanceStarted(outside, "indexing", "index", 1), "SKIPPED", 2);
    expect(skipped.rebuildNeeded).toBeDefined();
    expect(freshnessVerified(skipped, [], 3).freshness).toBe("possibly-stale");
  });
});
