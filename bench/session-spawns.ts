// cgc spawns per session (ADR 0001: every call is a spawn): every spawn costs a Python start-up (see spawn-cost) and, on the
// embedded backend, the exclusive lock. Counts them over one scripted session with the real pi and the
// faux model: start, three edits through pi's edit tool across two prompts, one bash command, the
// quiet-time sync, end.
import { fauxAssistantMessage, fauxToolCall } from "@mariozechner/pi-ai";
import { totalSpawns } from "../src/cgc/children.ts";
import { cgcBinary, makeCgcHome } from "../test/helpers/cgc-env.ts";
import { startPi, waitFor } from "../test/helpers/pi-sdk.ts";
import { tinyRepo } from "../test/helpers/repos.ts";
import { type BenchOptions, type BenchReport, cgc, log, ms, queryRows, table } from "./harness.ts";
import { stampedUi } from "./session-start.ts";

const RUNS = 3;

function addFunction(path: string, anchor: string, name: string) {
  return fauxToolCall("edit", {
    path,
    edits: [{ oldText: anchor, newText: `def ${name}(value):\n    return value\n\n\n${anchor}` }],
  });
}

interface Phase {
  name: string;
  spawns: number;
  ms: number;
}

async function scriptedSession(): Promise<Phase[]> {
  const home = makeCgcHome();
  const previousHome = process.env.HOME;
  process.env.HOME = home.home;
  process.env.CGC_EXECUTABLE = cgcBinary();
  const repo = tinyRepo();
  const phases: Phase[] = [];
  let mark = { spawns: totalSpawns(), at: performance.now() };
  const phase = (name: string) => {
    const now = { spawns: totalSpawns(), at: performance.now() };
    phases.push({ name, spawns: now.spawns - mark.spawns, ms: now.at - mark.at });
    mark = now;
  };
  try {
    await cgc(["index", repo.path], repo.path, home.env);
    const { ui, chips } = stampedUi();
    const chip = () => chips.at(-1)?.text;
    mark = { spawns: totalSpawns(), at: performance.now() };
    const h = await startPi({ cwd: repo.path, ui });
    try {
      await waitFor(() => chip() === "cgc ready · fresh", "ready and fresh", 120_000).catch((error) => {
        throw new Error(
          `${error}; chips: ${chips.map((c) => c.text).join(" | ")}; notices: ${JSON.stringify(ui.notices)}`,
        );
      });
      phase("session start → `cgc ready · fresh`");
      h.faux.setResponses([
        fauxAssistantMessage(addFunction("pkg/text.py", "def orphan(value):", "first_added"), {
          stopReason: "toolUse",
        }),
        fauxAssistantMessage(addFunction("pkg/alpha.py", "def alpha(value):", "second_added"), {
          stopReason: "toolUse",
        }),
        fauxAssistantMessage("first prompt done"),
        fauxAssistantMessage(addFunction("pkg/beta.py", "def beta(value):", "third_added"), {
          stopReason: "toolUse",
        }),
        fauxAssistantMessage(fauxToolCall("bash", { command: "grep -rn normalize pkg | wc -l" }), {
          stopReason: "toolUse",
        }),
        fauxAssistantMessage("second prompt done"),
      ]);
      await h.session.prompt("add two helpers");
      phase("prompt 1: two edits");
      await h.session.prompt("add a third helper and count the callers");
      if (chip() !== "cgc ready · possibly stale") throw new Error(`expected possibly stale, chip is ${chip()}`);
      phase("prompt 2: one edit, one bash command");
      await waitFor(() => chip() === "cgc ready · fresh", "fresh after the quiet-time sync", 300_000);
      phase("quiet-time sync → `cgc ready · fresh`");
    } finally {
      await h.dispose();
      phase("session end");
    }
    const rows = queryRows(
      (
        await cgc(
          ["query", "MATCH (f:Function) WHERE f.name ENDS WITH '_added' RETURN f.name AS name"],
          repo.path,
          home.env,
        )
      ).stdout,
    );
    const names = rows.map((row) => row.name).sort();
    if (names.join() !== "first_added,second_added,third_added") {
      throw new Error(`the synced graph holds ${names.join()}, not the three added functions`);
    }
    return phases;
  } finally {
    process.env.HOME = previousHome;
    repo.cleanup();
    home.cleanup();
  }
}

export async function run(_options: BenchOptions): Promise<BenchReport> {
  const runs: Phase[][] = [];
  for (let i = 0; i < RUNS; i++) {
    log(`session spawns: scripted session ${i + 1}/${RUNS}`);
    runs.push(await scriptedSession());
  }
  const first = runs[0] as Phase[];
  const rows = first.map((phase, index) => [
    phase.name,
    runs.map((r) => String(r[index]?.spawns)).join(", "),
    runs.map((r) => ms(r[index]?.ms ?? Number.NaN)).join(", "),
  ]);
  const totals = runs.map((r) => r.reduce((sum, p) => sum + p.spawns, 0));
  rows.push(["**whole session**", totals.join(", "), runs.map((r) => ms(r.reduce((s, p) => s + p.ms, 0))).join(", ")]);
  const markdown = [
    `${RUNS} runs of one scripted session on the tiny fixture repository (indexed first), real pi with the faux`,
    "model: prompt 1 makes two edits through pi's `edit` tool, prompt 2 (sent right after, inside the quiet time)",
    "makes one more and runs one `bash` command; then the session stays quiet until the automatic sync has",
    "made the chip fresh again, and ends. Spawns are `totalSpawns()` differences (src/cgc/children.ts); a",
    "query afterwards checks that the graph holds the three added functions.",
    "",
    table(["phase", "cgc spawns (each run)", "wall time (each run)"], rows),
  ].join("\n");
  return { title: "cgc spawns over a scripted session", markdown };
}
