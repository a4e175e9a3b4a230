// Engine parity on a FalkorDB server (see engine-parity.test.ts for the harness): the long replay, importlib
// 3.10 → 3.12, a new folder, JS, TS, Rust, C, C++ and Go, each step compared with a fresh full index.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { expectParity, runParity } from "../helpers/engine.ts";
import { startFalkorDB } from "../helpers/falkordb.ts";

describe("engine parity with a fresh full index, on a FalkorDB server", () => {
  it("FalkorDB server: every step of the long replay leaves the graph a full index would build", async () => {
    const falkor = await startFalkorDB();
    try {
      const work = mkdtempSync(join(tmpdir(), "pi-cgc-parity-falkor-"));
      const run = await runParity(["--scenario", "long", "--work", work, "--falkor-port", String(falkor.port)]);
      expect(run.ready).toMatchObject({ backend: "falkordb-remote", cgcVersion: "0.6.13" });
      expect(run.steps.length, run.stderr.slice(-4000)).toBeGreaterThanOrEqual(50);
      expectParity(run);
    } finally {
      await falkor.stop();
    }
    // 50+ steps of 25–55 s each (a fresh `cgc index --force` of the copy is most of a step): 1 500 s on a quiet
    // machine, past 1 800 s beside other work.
  }, 2_700_000);
});
