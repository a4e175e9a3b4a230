// Parity of the incremental engine with a full index (issue 12, ADR 0001): real changes nobody here
// wrote are replayed into a workspace, the engine applies each one, and after every step its graph's
// canonical dump must equal that of a fresh `cgc index --force` of an identical copy: 0 lines apart.
// KùzuDB full indexes are slow (about 2 s per file), so its tree is small (wsgiref, 3.10 → 3.13, and
// mechanical renames, moves, deletions, a colliding file, .cgcignore, JS and TS); the long replay
// (importlib 3.10 → 3.12, a new folder, JS, TS, Rust, C, C++, Go) runs on a FalkorDB server
// (engine-parity-falkor.test.ts); the small one also runs on Neo4j (engine-parity-neo4j.test.ts), and the
// engine started after each change has engine-parity-late.test.ts: files of their own so they run side by side.
// `python engine/parity.py --scenario long-3.13 …` replays 3.13 too. The time limits are guards for a
// loaded machine (each step runs a real cgc index --force); unloaded, each case takes a few minutes.
// The harness runs the engine with PI_CGC_ENGINE_CHECK=1: each update's narrowed resolution (only the
// files the change can affect) is compared with a resolution of the whole tree, and any difference
// fails the step even where the graphs would not show it; a planted fault shows that check at work.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectParity, type ParityStep, runParity } from "../helpers/engine.ts";
import { type FalkorServer, startFalkorDB } from "../helpers/falkordb.ts";

describe("engine parity with a fresh full index", () => {
  let falkor: FalkorServer;
  beforeAll(async () => {
    falkor = await startFalkorDB();
  });
  afterAll(async () => {
    await falkor?.stop();
  });

  it("KùzuDB: every step of the replay, its rows loaded in bulk, and then a linked worktree's graph from it, leave the graph a full index would build", async () => {
    const work = mkdtempSync(join(tmpdir(), "pi-cgc-parity-kuzu-"));
    const run = await runParity(["--scenario", "small", "--work", work, "--bulk", "always"]);
    expect(run.ready).toMatchObject({ backend: "kuzudb", cgcVersion: "0.6.13" });
    const replay = run.steps.filter((step) => !step.worktree);
    expect(replay.length, run.stderr.slice(-4000)).toBeGreaterThanOrEqual(15);
    expect(replay.every((step) => step.bulk === true)).toBe(true);
    // The worktree's graph came from the main checkout's (the engine's last line), not from a full index.
    expect(run.steps.at(-1)).toMatchObject({
      worktree: true,
      taken: expect.stringMatching(/\d+ files from the main checkout's graph in [\d.]+ s/),
    });
    expectParity(run);
  }, 1_800_000);

  it("KùzuDB: the first steps written through cgc's writer leave the graph a full index would build", async () => {
    // (an update of a few files on a large tree goes through cgc's writer; this tree is small, so it is asked for)
    const work = mkdtempSync(join(tmpdir(), "pi-cgc-parity-kuzu-writer-"));
    const run = await runParity([
      "--scenario",
      "small",
      "--work",
      work,
      "--bulk",
      "never",
      "--max-steps",
      "12",
      "--no-worktree",
    ]);
    expect(run.steps.length, run.stderr.slice(-4000)).toBe(12);
    expect(run.steps.every((step) => step.bulk === false)).toBe(true);
    expectParity(run);
  }, 1_800_000);

  it("the engine's check refuses a narrowed resolution that leaves out a file the change reaches (a planted fault)", async () => {
    // --narrow-fault re-resolves only the changed files; the second step deletes a file
    // others import, so their rows change too, and the check (on in the harness) must refuse it.
    const work = mkdtempSync(join(tmpdir(), "pi-cgc-parity-fault-"));
    const run = await runParity([
      "--scenario",
      "long",
      "--work",
      work,
      "--falkor-port",
      String(falkor.port),
      "--max-steps",
      "2",
      "--narrow-fault",
    ]);
    const refused = run.steps.filter((step) => !step.ok) as Array<ParityStep & { reason?: string }>;
    expect(refused.length, `${JSON.stringify(run.steps, null, 1)}\n${run.stderr.slice(-4000)}`).toBeGreaterThan(0);
    expect(refused[0]?.code).toBe("FAILED");
    expect(refused[0]?.reason).toContain("narrowed resolution differs from the full one");
    expect(run.stderr).toContain("check: ");
  }, 600_000);
});
