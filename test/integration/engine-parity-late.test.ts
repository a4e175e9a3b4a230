// Parity when the engine starts after the change (see engine-parity.test.ts for the harness): a session's
// engine starts at its first change. From a cache that is the graph's model (saved after its last update,
// nothing else wrote the graph since) it still holds each changed file's old content; told that something
// else wrote the graph (pi-cgc says so before every full index), it reads the tree from the disk, after the
// change, and its first update compares the graph with a full index of the tree and writes what differs. The
// harness stops the engine before every change and starts it after, in turn in those two ways, a third (a full
// index just before the change, then the engine told the graph was rebuilt with the changed paths unknown, as
// pi-cgc tells it after its own index) and a fourth (`cgc index` just before the change, then the engine asked to
// adopt that graph), through the small replay (wsgiref 3.10 → 3.13, renames, a move, deletions, a colliding file,
// .cgcignore, JS, TS) on a FalkorDB server, each step compared with a fresh full index. It found a deleted first
// importer leaving a module's metadata behind, and a new file that changed how another file's call resolves
// leaving that file's old edge in the graph.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { expectParity, runParity } from "../helpers/engine.ts";
import { startFalkorDB } from "../helpers/falkordb.ts";

describe("engine parity when the engine starts after each change", () => {
  it("FalkorDB server: every step leaves the graph a full index would build, the engine started after each change", async () => {
    const falkor = await startFalkorDB();
    try {
      const work = mkdtempSync(join(tmpdir(), "pi-cgc-parity-late-"));
      const run = await runParity([
        "--scenario",
        "small",
        "--work",
        work,
        "--falkor-port",
        String(falkor.port),
        "--late-start",
      ]);
      expect(run.ready).toMatchObject({ backend: "falkordb-remote", cgcVersion: "0.6.13" });
      expect(run.steps.length, run.stderr.slice(-4000)).toBeGreaterThanOrEqual(15);
      // Both paths were taken: started from its cache it held every changed file; told otherwise, none.
      const steps = JSON.stringify(run.steps, null, 1);
      const trusted = run.steps.filter((step) => step.trusted === true);
      const untrusted = run.steps.filter((step) => step.trusted === false && step.mode !== "adopt");
      expect(trusted.length, steps).toBeGreaterThanOrEqual(7);
      expect(untrusted.length, steps).toBeGreaterThanOrEqual(7);
      expect(
        trusted.filter((step) => step.unsure > 0),
        steps,
      ).toEqual([]);
      expect(
        untrusted.filter((step) => step.unsure === 0),
        steps,
      ).toEqual([]);
      // A quarter of them after pi-cgc's own full index just before the change, told so with the paths unknown.
      expect(run.steps.filter((step) => step.mode === "rebuilt").length, steps).toBeGreaterThanOrEqual(4);
      // Told that something else wrote the graph, the engine compared it with the tree at its first update: the
      // changed file differed, and only what differed was written.
      const elsewhere = run.steps.filter((step) => step.mode === "elsewhere");
      expect(
        elsewhere.filter((step) => !step.adopted),
        steps,
      ).toEqual([]);
      // A quarter on a graph cgc's own index wrote before the change, adopted by difference after it: the step's
      // files written again, and the update after it an ordinary one (nothing unsure).
      const adopted = run.steps.filter((step) => step.mode === "adopt");
      expect(adopted.length, steps).toBeGreaterThanOrEqual(4);
      expect(
        adopted.filter((step) => !step.adopted || step.unsure > 0),
        steps,
      ).toEqual([]);
      expect(
        adopted.filter((step) => step.adopted && step.adopted.files + step.adopted.links + step.adopted.stale > 0)
          .length,
        steps,
      ).toBeGreaterThanOrEqual(3);
      expectParity(run);
    } finally {
      await falkor.stop();
    }
  }, 1_200_000);
});
