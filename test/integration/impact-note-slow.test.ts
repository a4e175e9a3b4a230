// The impact note when the engine's update outlasts the edit's wait, with the real pi (faux model) and the real
// cgc. The edit changes a file of thousands of functions, which the update writes again, longer than
// SETTLE_BOUND_MS. The graph is written by `cgc index` outside pi, so the session adopts it first (ADR 0011); the
// edit comes once that is done.
// The note must reach the first model call after the update is read back, whether that call comes in the same run
// or with the next prompt.

import { appendFileSync } from "node:fs";
import { join } from "node:path";
import type { Context } from "@mariozechner/pi-ai";
import { fauxAssistantMessage, fauxToolCall } from "@mariozechner/pi-ai";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { IMPACT_NOTE_TYPE } from "../../src/agent/impact-note.ts";
import { SETTLE_BOUND_MS } from "../../src/freshness/updates.ts";
import { type CgcHome, cgcBinary, cgcExec, makeCgcHome } from "../helpers/cgc-env.ts";
import { restoreEnv, restoreSuiteEnv, suiteEnv, withEnv } from "../helpers/env.ts";
import { cgcStatus, type PiHarness, recordingUi, startPi, waitFor } from "../helpers/pi-sdk.ts";
import { type FixtureRepo, tinyRepo } from "../helpers/repos.ts";

/**
 * Functions appended to pkg/text.py, the file the case's edit changes, each calling eight others: the update
 * resolves the file's calls again, and cgc finds each call's enclosing function by reading every function of the
 * file (40 000 calls times 5 000 functions: 20 s of a 27 s update alone on an idle 2-core machine, where writing
 * the file's rows, in bulk, took 3 s). None calls `normalize`, whose callers the note lists.
 */
function generatedFunctions(count: number): string {
  const calls = (i: number) =>
    Array.from({ length: 8 }, (_, k) => `    generated_${(i + k + 1) % count}(value - 1)\n`).join("");
  return Array.from(
    { length: count },
    (_, i) => `def generated_${i}(value):\n    if not value:\n        return ${i}\n${calls(i)}    return value\n`,
  ).join("\n\n");
}

const SIGNATURE = fauxAssistantMessage(
  fauxToolCall("edit", {
    path: "pkg/text.py",
    edits: [{ oldText: "def normalize(value):", newText: "def normalize(value, sep):" }],
  }),
  { stopReason: "toolUse" },
);
const NOTE_START = "Impact of your last edit";
/** Generous: the engine's cold start and first update, beside whatever else the machine runs. */
const READ_BACK_MS = 600_000;
/** A case: the session's start and probe, the read-back, then the model calls and the queries of the note. */
const CASE_MS = 1_200_000;

/** One case's graph: its own cgc home (two indexes run side by side, each with its own database) and tree. */
interface Graph {
  home: CgcHome;
  repo: FixtureRepo;
}
let graphs: Graph[] = [];
const harnesses: PiHarness[] = [];

beforeAll(async () => {
  suiteEnv({ CGC_EXECUTABLE: cgcBinary() });
  graphs = [0, 1].map(() => ({ home: makeCgcHome(), repo: tinyRepo() }));
  for (const { repo } of graphs) appendFileSync(join(repo.path, "pkg", "text.py"), `\n\n${generatedFunctions(5_000)}`);
  await Promise.all(
    graphs.map(async ({ home, repo }) => {
      const result = await cgcExec(["index", repo.path], { cwd: repo.path, env: home.env, timeoutMs: 900_000 });
      if (result.code !== 0) throw new Error(`cgc index failed: ${result.stderr.slice(-800)}`);
    }),
  );
}, 900_000);
afterEach(async () => {
  for (const h of harnesses.splice(0)) await h.dispose();
  restoreEnv();
});
afterAll(() => {
  restoreSuiteEnv();
  for (const { home, repo } of graphs) {
    repo.cleanup();
    home.cleanup();
  }
});

/** A new pi session on `graph`, the note on; the messages of each model call, and the chip when it was made. */
async function session(graph: Graph) {
  withEnv({ HOME: graph.home.home, CGC_PROACTIVE_IMPACT_NOTES: "true" });
  const ui = recordingUi();
  const h = await startPi({ cwd: graph.repo.path, ui });
  harnesses.push(h);
  const chip = () => ui.statuses.get("cgc");
  await waitFor(() => chip() === "cgc ready · fresh", "a ready, fresh graph", 300_000);
  // The engine's start and its adoption of the graph cgc wrote (the file's calls resolved once already).
  await waitFor(
    async () => /graph adopted in \d+ ms/.test(await cgcStatus(h)),
    "the graph cgc wrote adopted",
    READ_BACK_MS,
    500,
  );
  const calls: Array<{ messages: string[]; chip: string | undefined }> = [];
  const look = (context: Context) => {
    calls.push({ messages: context.messages.map((message) => JSON.stringify(message)), chip: chip() });
  };
  /** The model call right after the edit: it is still "thinking" when the update is read back. */
  const thinkUntilReadBack = (reply: ReturnType<typeof fauxAssistantMessage>) => async (context: Context) => {
    look(context);
    await waitFor(() => chip() === "cgc ready · fresh", "the update's read-back", READ_BACK_MS, 50);
    return reply;
  };
  const reply = (text: string) => (context: Context) => {
    look(context);
    return fauxAssistantMessage(text);
  };
  const notes = () =>
    h.session.messages
      .filter((message) => (message as { customType?: string }).customType === IMPACT_NOTE_TYPE)
      .map((message) => String((message as { content: unknown }).content));
  return { h, calls, thinkUntilReadBack, reply, notes };
}

const notesIn = (messages: string[]) => messages.filter((text) => text.includes(NOTE_START));

/** The edit's wait gave up on an update still running, which then took longer than that wait. */
async function firstUpdateWasSlow(h: PiHarness, chipAfterEdit: string | undefined): Promise<void> {
  const premise = "the case's premise: the engine's first update outlasted the edit's wait";
  expect(chipAfterEdit, premise).toMatch(/^cgc updating…/);
  const status = await cgcStatus(h);
  const ms = Number(/last update: 1 file in (\d+) ms/.exec(status)?.[1]);
  expect(ms, `${premise}\n${status}`).toBeGreaterThan(SETTLE_BOUND_MS);
}

describe("the impact note after a first update slower than the edit's wait", () => {
  it(
    "reaches the first model call after the read-back, in the same run",
    async () => {
      const { h, calls, thinkUntilReadBack, reply, notes } = await session(graphs[0] as Graph);
      h.faux.setResponses([
        SIGNATURE,
        thinkUntilReadBack(
          fauxAssistantMessage(fauxToolCall("read", { path: "pkg/alpha.py" }), { stopReason: "toolUse" }),
        ),
        reply("done"),
        // Only if the note's steer landed after that reply: pi runs one more turn for it.
        reply("done again"),
      ]);
      await h.session.prompt("add a parameter to normalize");
      await firstUpdateWasSlow(h, calls[0]?.chip);

      expect(notesIn(calls[0]?.messages ?? [])).toEqual([]); // made before the read-back
      const [note] = notesIn(calls[1]?.messages ?? []);
      expect(notesIn(calls[1]?.messages ?? [])).toHaveLength(1);
      expect(note).toContain("`normalize(value)` in pkg/text.py now takes `normalize(value, sep)`");
      for (const site of ["app.py:8", "pkg/alpha.py:5", "pkg/beta.py:5"]) expect(note).toContain(site);
      expect(notes()).toHaveLength(1);
      // A turn run for the steer sees the note once, after the reply it came after, not its own reply last.
      const extra = calls[2]?.messages;
      if (extra) {
        expect(notesIn(extra)).toHaveLength(1);
        expect(extra.at(-1)).toContain(NOTE_START);
      }
    },
    CASE_MS,
  );

  it(
    "reaches the next prompt's first model call when the run ended as the update was read back",
    async () => {
      const { h, calls, thinkUntilReadBack, reply, notes } = await session(graphs[1] as Graph);
      h.faux.setResponses([SIGNATURE, thinkUntilReadBack(fauxAssistantMessage("done")), reply("done again")]);
      await h.session.prompt("add a parameter to normalize");
      await firstUpdateWasSlow(h, calls[0]?.chip);
      const inRun = calls.length; // 2 when pi ran a turn for a note steered before the run ended
      h.faux.setResponses([reply("next")]);
      await h.session.prompt("anything else?");

      expect(notesIn(calls[0]?.messages ?? [])).toEqual([]);
      // The first model call made after the read-back: the next prompt's, unless the run took one more turn.
      const first = calls[1]?.messages ?? [];
      expect(notesIn(first)).toHaveLength(1);
      expect(notesIn(first)[0]).toContain("now takes `normalize(value, sep)`");
      expect(notes()).toHaveLength(1);
      expect(notesIn(calls.at(-1)?.messages ?? [])).toHaveLength(1);
      expect(calls).toHaveLength(inRun + 1);
    },
    CASE_MS,
  );
});
