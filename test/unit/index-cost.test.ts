// The cost stated before an index (src/cgc/index-cost.ts) and shown while it runs (the chip): the count comes
// from cgc's own discovery (test/e2e/index-progress.test.ts, against the real cgc); here the arithmetic and
// the wording a user reads, and the measured check of the estimate is bench/index-cost.ts.
import { describe, expect, it } from "vitest";
import { describeIndexCost, estimateIndex, INDEX_RATES, roughly } from "../../src/cgc/index-cost.ts";
import { progressOf } from "../../src/lifecycle/maintenance.ts";
import { initialState, maintenanceProgress, maintenanceStarted } from "../../src/state/model.ts";
import { chipText } from "../../src/ui/chip.ts";

describe("the index estimate", () => {
  it("is start-up plus a per-KiB rate of the backend cgc reports; an unmeasured backend gets KùzuDB's, and says so", () => {
    const kuzu = INDEX_RATES.kuzudb as { startMs: number; perKiBMs: number };
    const found = { files: 29, bytes: 300 * 1024 };
    expect(estimateIndex(found, "kuzudb")).toEqual({
      files: 29,
      bytes: 300 * 1024,
      indexer: "cgc",
      backend: "kuzudb",
      estimateMs: kuzu.startMs + 300 * kuzu.perKiBMs,
    });
    expect(estimateIndex(found, "ladybugdb")).toMatchObject({
      backend: undefined,
      estimateMs: kuzu.startMs + 300 * kuzu.perKiBMs,
    });
    expect(describeIndexCost(estimateIndex(found, undefined))).toMatch(/its rate not measured: KùzuDB's used/);
    // The same count of files, ten times the bytes: the time grows with what cgc parses.
    expect(estimateIndex({ files: 29, bytes: 3000 * 1024 }, "kuzudb").estimateMs).toBeGreaterThan(
      5 * estimateIndex(found, "kuzudb").estimateMs,
    );
    // A FalkorDB server is measured about ten times faster per KiB than KùzuDB (bench/RESULTS.md).
    const ratio = kuzu.perKiBMs / (INDEX_RATES["falkordb-remote"]?.perKiBMs ?? 0);
    expect(ratio).toBeGreaterThan(8);
    expect(ratio).toBeLessThan(16);
  });

  it("is said rounded, as a person would", () => {
    expect(roughly(23_400)).toBe("about 25s");
    expect(roughly(64_000)).toBe("about 1m00s");
    expect(roughly(1_000)).toBe("about 5s");
    expect(roughly(31 * 60_000)).toBe("about 30m00s");
  });

  it("names FalkorDB, and how to choose it, only where KùzuDB would take long", () => {
    expect(describeIndexCost(estimateIndex({ files: 12, bytes: 300 * 1024 }, "kuzudb"))).toBe(
      "cgc will read 12 files, 300 KiB: about 30s on kuzudb, at the rates pi-cgc measured (machines differ).",
    );
    const large = describeIndexCost(estimateIndex({ files: 1_000, bytes: 15 * 1024 * 1024 }, "kuzudb"));
    expect(large).toMatch(/^cgc will read 1000 files, 15\.0 MiB: about 20m00s on kuzudb/);
    expect(large).toMatch(
      /A FalkorDB server indexes about ten times faster \(about 1m30s here\): .*DEFAULT_DATABASE=falkordb-remote/,
    );
    expect(describeIndexCost(estimateIndex({ files: 1_000, bytes: 15 * 1024 * 1024 }, "falkordb"))).not.toMatch(
      /ten times/,
    );
  });

  it("pi-cgc's own index is estimated at its own rates, and says whose index reads the files", () => {
    const found = { files: 1_000, bytes: 15 * 1024 * 1024 };
    const own = estimateIndex(found, "kuzudb", "pi-cgc");
    expect(own.indexer).toBe("pi-cgc");
    // Measured beside cgc's own on KùzuDB (bench/RESULTS.md, "Full index"): tens of times faster.
    expect(estimateIndex(found, "kuzudb").estimateMs / own.estimateMs).toBeGreaterThan(20);
    expect(describeIndexCost(own)).toMatch(/^pi-cgc's index will read 1000 files, 15\.0 MiB: about \d+s on kuzudb/);
    expect(describeIndexCost(own)).not.toMatch(/ten times/);
  });

  it("the run's own re-estimate replaces the estimate, and its phase shows beside it", () => {
    const started = maintenanceStarted(initialState(), "indexing", "index", 1_000_000, { ms: 65_000, files: 1_000 });
    const line = progressOf("pi-cgc index: parsing 353/998 files · ~19s in all");
    expect(line).toEqual({ text: "parsing 353/998 files", totalMs: 19_000 });
    const moved = maintenanceProgress(started, line?.text as string, line?.totalMs);
    expect(chipText(moved, 1_000_000 + 7_000)).toBe("cgc indexing… 7s of ~19s · 1000 files · parsing 353/998 files");
    // A phase without its own estimate keeps the last one; cgc's own lines carry none.
    expect(progressOf("pi-cgc index: discovering files")).toEqual({ text: "discovering files" });
    expect(progressOf("Total scanned files | 12")).toEqual({ text: "12 files written" });
    expect(maintenanceProgress(moved, "discovering files").estimate).toEqual({ ms: 19_000, files: 1_000 });
  });

  it("the chip shows the elapsed time against the estimate while an index runs", () => {
    const started = maintenanceStarted(initialState(), "indexing", "index", 1_000_000, { ms: 65_000, files: 29 });
    const now = 1_000_000 + 42_000;
    expect(chipText(started, now)).toBe("cgc indexing… 42s of ~1m05s · 29 files");
    expect(chipText({ ...started, progress: "reading and writing files" }, now)).toBe(
      "cgc indexing… 42s of ~1m05s · 29 files · reading and writing files",
    );
  });
});
