// DESIGN.md "Memory": pi-cgc's own footprint inside pi. The V8 heap in use (after a full GC) held by a
// live pi session with pi-cgc — settled on `cgc ready · fresh` — against a live pi session without it,
// the two interleaved in one process.
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { cgcBinary, makeCgcHome } from "../test/helpers/cgc-env.ts";
import { EXTENSION_PATH, recordingUi, startPi, waitFor } from "../test/helpers/pi-sdk.ts";
import { tinyRepo } from "../test/helpers/repos.ts";
import { type BenchOptions, type BenchReport, cgc, interleave, log, spread, stats, table } from "./harness.ts";

const ROUNDS = 6;

setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc") as () => void;

function heapUsed(): number {
  gc();
  gc();
  return process.memoryUsage().heapUsed;
}

const kib = (bytes: number) => `${Math.round(bytes / 1024)} KiB`;

export async function run(_options: BenchOptions): Promise<BenchReport> {
  const home = makeCgcHome();
  const previousHome = process.env.HOME;
  process.env.HOME = home.home;
  process.env.CGC_EXECUTABLE = cgcBinary();
  const repo = tinyRepo();
  try {
    await cgc(["index", repo.path], repo.path, home.env);
    const left = { with: [] as number[], without: [] as number[] };
    const session = (withPiCgc: boolean) => async () => {
      const before = heapUsed();
      const ui = recordingUi();
      const h = await startPi({ cwd: repo.path, ui, extensionPaths: withPiCgc ? [EXTENSION_PATH] : [] });
      let held: number;
      try {
        if (withPiCgc) await waitFor(() => ui.statuses.get("cgc") === "cgc ready · fresh", "ready", 120_000);
        held = heapUsed() - before;
      } finally {
        await h.dispose();
      }
      left[withPiCgc ? "with" : "without"].push(heapUsed() - before);
      return held;
    };
    log("memory: one cold pair (modules loaded for the first time), then interleaved rounds");
    const cold = { with: await session(true)(), without: await session(false)() };
    left.with.length = 0;
    left.without.length = 0;
    const samples = await interleave({ with: session(true), without: session(false) }, ROUNDS);
    const footprint = stats(samples.with).median - stats(samples.without).median;
    const markdown = [
      `${ROUNDS} interleaved rounds in one process: V8 heap in use after a forced full GC, taken before a pi session`,
      "starts and again while it is live (pi's SDK, faux model, tiny indexed repository; with pi-cgc, after the chip",
      "settled on `cgc ready · fresh`), and once more after it ended (`session_shutdown`, `dispose()`): what is left then",
      "is what a session leaks into the process. Median (min–max, n).",
      "",
      table(
        ["pi session", "heap held by the live session", "heap left after it ended", "first session in the process"],
        [
          ["with pi-cgc", spread(samples.with, kib), spread(left.with, kib), kib(cold.with)],
          ["without pi-cgc", spread(samples.without, kib), spread(left.without, kib), kib(cold.without)],
        ],
      ),
      "",
      `- pi-cgc's own footprint inside pi: about ${kib(footprint)} of V8 heap per live session (median difference).`,
      "  pi evaluates extension modules anew for every session, so this includes pi-cgc's compiled modules.",
    ].join("\n");
    return { title: "Memory: pi-cgc inside pi", markdown };
  } finally {
    process.env.HOME = previousHome;
    repo.cleanup();
    home.cleanup();
  }
}
