// Memory: pi-cgc's own footprint inside pi. The V8 heap in use (after a full GC) held by a
// live pi session with pi-cgc — settled on `cgc ready · fresh` — against a live pi session without it,
// and against pi-cgc's modules loaded with nothing registered, interleaved in one process.

import { join } from "node:path";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { cgcBinary, makeCgcHome } from "../test/helpers/cgc-env.ts";
import { EXTENSION_PATH, recordingUi, startPi, waitFor } from "../test/helpers/pi-sdk.ts";
import { tinyRepo } from "../test/helpers/repos.ts";
import { type BenchOptions, type BenchReport, cgc, interleave, log, spread, stats, table } from "./harness.ts";

const ROUNDS = 6;
const IMPORT_ONLY = join(import.meta.dirname, "import-only-extension.ts");

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
    type Kind = "with" | "modules" | "without";
    const extensions: Record<Kind, string[]> = { with: [EXTENSION_PATH], modules: [IMPORT_ONLY], without: [] };
    const left: Record<Kind, number[]> = { with: [], modules: [], without: [] };
    const session = (kind: Kind) => async () => {
      const before = heapUsed();
      const ui = recordingUi();
      const h = await startPi({ cwd: repo.path, ui, extensionPaths: extensions[kind] });
      let held: number;
      try {
        if (kind === "with") await waitFor(() => ui.statuses.get("cgc") === "cgc ready · fresh", "ready", 120_000);
        held = heapUsed() - before;
      } finally {
        await h.dispose();
      }
      left[kind].push(heapUsed() - before);
      return held;
    };
    log("memory: one warm-up of each, then interleaved rounds");
    for (const kind of ["with", "modules", "without"] as const) {
      await session(kind)();
      left[kind].length = 0;
    }
    const samples = await interleave(
      { with: session("with"), modules: session("modules"), without: session("without") },
      ROUNDS,
    );
    const footprint = stats(samples.with).median - stats(samples.without).median;
    const markdown = [
      `${ROUNDS} interleaved rounds in one process: V8 heap in use after a forced full GC, taken before a pi session`,
      "starts and again while it is live (pi's SDK, faux model, tiny indexed repository; with pi-cgc, after the chip",
      "settled on `cgc ready · fresh`), and once more after it ended (`session_shutdown`, `dispose()`): what is left then",
      "is what a session leaks into the process. Median (min–max, n).",
      "",
      table(
        ["pi session", "heap held by the live session", "heap left after it ended"],
        [
          ["with pi-cgc", spread(samples.with, kib), spread(left.with, kib)],
          [
            "pi-cgc's modules only (bench/import-only-extension.ts)",
            spread(samples.modules, kib),
            spread(left.modules, kib),
          ],
          ["without pi-cgc", spread(samples.without, kib), spread(left.without, kib)],
        ],
      ),
      "",
      `- pi-cgc's own footprint inside pi: about ${kib(footprint)} of V8 heap per live session (median difference).`,
      `- After a session ends, what it added stays: with pi-cgc ${kib(stats(left.with).median)} per session, pi-cgc's` +
        ` modules alone ${kib(stats(left.modules).median)}, pi alone ${kib(stats(left.without).median)} (pi evaluates` +
        " extension modules anew for every session).",
    ].join("\n");
    return { title: "Memory: pi-cgc inside pi", markdown };
  } finally {
    process.env.HOME = previousHome;
    repo.cleanup();
    home.cleanup();
  }
}
