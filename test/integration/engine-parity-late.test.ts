// Parity when the engine starts after the change (see engine-parity.test.ts for the harness): a session's
// engine starts at its first change, so what it holds of a changed file is already the new content, and it
// cannot tell from its own rows which files linked into the old one. For such ("unsure") paths it asks the
// graph and rewrites those files' links. Here the engine is stopped before every change and started after
// it (warm, from its cache), through the small replay (wsgiref 3.10 → 3.13, renames, a move, deletions, a
// colliding file, .cgcignore, JS, TS) on a FalkorDB server, each step compared with a fresh full index. It
// found a deleted first importer of a module leaving its metadata on the module.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { expectParity, runParity } from "../helpers/engine.ts";
import { startFalkorDB } from "../helpers/falkordb.ts";

describe("engine parity when the engine starts after each change", () => {
  it("FalkorDB server: every step leaves the graph a full index would build, though the engine never held the old content", async () => {
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
      // The path under test was taken: a path changed while the engine was down is one it never held.
      const unsure = run.steps.filter((step) => step.unsure > 0);
      expect(unsure.length, JSON.stringify(run.steps, null, 1)).toBeGreaterThanOrEqual(run.steps.length - 2);
      expectParity(run);
    } finally {
      await falkor.stop();
    }
  }, 1_200_000);
});
