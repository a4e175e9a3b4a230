// Concurrency: several processes saving the same settings file at once, and two real pi processes (the CLI
// in RPC mode) on one workspace and one embedded database. One works, the other reports busy; neither
// breaks the graph (queried afterwards) or the settings file.
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { type CgcHome, cgcBinary, cgcExec, makeCgcHome, PROJECT_ROOT } from "../helpers/cgc-env.ts";
import { type PiRpc, startPiRpc } from "../helpers/pi-rpc.ts";
import { waitFor } from "../helpers/pi-sdk.ts";
import { type TinyRepo, tinyRepo } from "../helpers/repos.ts";
import { chipOf, EXTENSION, expectNoCgcLeft, type GraphRecord, graphRecord, PI_CLI } from "./support.ts";

const SAVER = join(PROJECT_ROOT, "test", "reliability", "saver.ts");

describe("concurrent saves of one settings file", () => {
  it("seven processes saving their own key, two fighting over one: never a broken file, no key lost", async () => {
    const dir = mkdtempSync(join(tmpdir(), "pi-cgc-saves-"));
    const path = join(dir, ".pi", "cgc.json");
    mkdirSync(join(dir, ".pi"));
    writeFileSync(path, `${JSON.stringify({ theirs: { keep: [1, 2] }, "lifecycle.autoCreate": true }, null, 2)}\n`);
    const own = [
      "timeouts.probeMs",
      "timeouts.queryMs",
      "timeouts.maintenanceMs",
      "timeouts.longLivedMs",
      "freshness.watcherLivenessMs",
      "freshness.maxSyncsPerSession",
      "output.maxBytes",
    ] as const;
    const rounds = 25;
    const run = (key: string, first: number) =>
      new Promise<number | null>((resolve) => {
        const child = spawn(process.execPath, ["--import", "tsx", SAVER, path, key, String(rounds), String(first)], {
          cwd: PROJECT_ROOT,
          stdio: ["ignore", "ignore", "inherit"],
        });
        child.on("close", resolve);
      });
    // A reader the whole time: every read is a whole JSON object.
    let reads = 0;
    let broken: string | undefined;
    let done = false;
    const reader = (async () => {
      while (!done) {
        const text = readFileSync(path, "utf8");
        try {
          const data = JSON.parse(text) as unknown;
          if (typeof data !== "object" || data === null || Array.isArray(data)) broken = text;
        } catch {
          broken = text;
        }
        reads++;
        await new Promise((resolve) => setImmediate(resolve));
      }
    })();
    const codes = await Promise.all([
      ...own.map((key) => run(key, 2_000)),
      // Two processes fighting over one key: the file ends with one of their last values.
      run("output.maxLines", 5_000),
      run("output.maxLines", 7_000),
    ]);
    done = true;
    await reader;
    expect(codes.every((code) => code === 0)).toBe(true);
    expect(broken).toBeUndefined();
    expect(reads).toBeGreaterThan(10);
    const data = JSON.parse(readFileSync(path, "utf8")) as Record<string, Record<string, unknown>>;
    for (const key of own) {
      const [group, name] = key.split(".") as [string, string];
      expect(data[group]?.[name], key).toBe(2_000 + rounds - 1);
    }
    expect([5_000 + rounds - 1, 7_000 + rounds - 1]).toContain(data.output?.maxLines);
    expect(data.theirs).toEqual({ keep: [1, 2] });
    expect(data["lifecycle.autoCreate"]).toBe(true);
    expect(readdirSync(join(dir, ".pi"))).toEqual(["cgc.json"]); // no temp file, no lock left behind
  });
});
