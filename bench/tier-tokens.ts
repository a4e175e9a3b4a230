// Issue 6: the prompt tokens each proactive tier adds (and the routing card beside them), taken from what
// the real pi sent the faux model in a real session on indexed fixture repositories. Tokens are counted
// as characters / 4, the estimate the card's cap uses (src/agent/card.ts).

import type { Context } from "@mariozechner/pi-ai";
import { fauxAssistantMessage, fauxToolCall } from "@mariozechner/pi-ai";
import { CARD_HEADING, estimateTextTokens } from "../src/agent/card.ts";
import { fileChanges } from "../src/agent/impact.ts";
import { IMPACT_NOTE_TYPE, impactLine, impactNote, NOTE_CALLERS } from "../src/agent/impact-note.ts";
import { ANNOTATION_PREFIX, STEER_TYPE } from "../src/agent/inject.ts";
import { cgcBinary, cgcExec, makeCgcHome } from "../test/helpers/cgc-env.ts";
import { recordingUi, startPi, waitFor } from "../test/helpers/pi-sdk.ts";
import { type FixtureRepo, stdlibRepo, tinyRepo } from "../test/helpers/repos.ts";
import { type BenchOptions, type BenchReport, log, table } from "./harness.ts";

interface Measured {
  repo: string;
  card: string;
  note: string;
  steer: string;
  annotation: string;
}

async function measure(repo: FixtureRepo, home: string): Promise<Measured> {
  Object.assign(process.env, {
    HOME: home,
    CGC_EXECUTABLE: cgcBinary(),
    CGC_PROACTIVE_DRIFT_STEERS: "true",
    CGC_PROACTIVE_RESULT_ANNOTATIONS: "true",
    CGC_FRESHNESS_AUTO_SYNC: "false",
  });
  const ui = recordingUi();
  const h = await startPi({ cwd: repo.path, ui });
  try {
    await waitFor(() => ui.statuses.get("cgc") === "cgc ready · fresh", "a ready graph", 120_000);
    const seen: Context[] = [];
    const capture = (context: Context) => {
      seen.push({ systemPrompt: context.systemPrompt, messages: JSON.parse(JSON.stringify(context.messages)) });
      return fauxAssistantMessage("ok");
    };
    h.faux.setResponses([
      fauxAssistantMessage(
        fauxToolCall("write", { path: "bench_tier_probe.py", content: "def probe():\n    return 1\n" }),
        {
          stopReason: "toolUse",
        },
      ),
      fauxAssistantMessage(fauxToolCall("cgc_stats", {}), { stopReason: "toolUse" }),
      capture,
    ]);
    await h.session.prompt("measure");
    const context = seen[0] as Context;
    const prompt = context.systemPrompt ?? "";
    const card = prompt.slice(prompt.indexOf(CARD_HEADING)).split("\n\n")[0] ?? "";
    const note = /^(Code graph coverage: |A code graph of ).*$/m.exec(prompt)?.[0] ?? "";
    const steer = JSON.stringify(
      h.session.messages.find((m) => (m as { customType?: string }).customType === STEER_TYPE) ?? "",
    );
    const steerText = /The code graph is now possibly stale[^"]*/.exec(steer)?.[0] ?? "";
    const annotation = new RegExp(`\\${ANNOTATION_PREFIX}[^\\]]*\\]`).exec(JSON.stringify(context.messages))?.[0] ?? "";
    return { repo: `${repo.name} (${repo.files.length} files)`, card, note, steer: steerText, annotation };
  } finally {
    await h.dispose();
  }
}

/**
 * Tier 3, the impact note: a real session on the tiny repository with `proactive.impactNotes` on; the model's
 * call after an edit that adds a parameter to `normalize` (3 callers in 3 other files) carries it.
 */
async function measureImpactNote(repo: FixtureRepo, home: string): Promise<string> {
  Object.assign(process.env, {
    HOME: home,
    CGC_EXECUTABLE: cgcBinary(),
    CGC_PROACTIVE_IMPACT_NOTES: "true",
    CGC_FRESHNESS_AUTO_SYNC: "true",
  });
  const ui = recordingUi();
  const h = await startPi({ cwd: repo.path, ui });
  try {
    await waitFor(() => ui.statuses.get("cgc") === "cgc ready · fresh", "a ready graph", 120_000);
    let received = "";
    h.faux.setResponses([
      fauxAssistantMessage(
        fauxToolCall("edit", {
          path: "pkg/text.py",
          edits: [{ oldText: "def normalize(value):", newText: "def normalize(value, sep):" }],
        }),
        { stopReason: "toolUse" },
      ),
      (context: Context) => {
        received = JSON.stringify(context.messages);
        return fauxAssistantMessage("ok");
      },
    ]);
    await h.session.prompt("measure");
    const note = h.session.messages.find((m) => (m as { customType?: string }).customType === IMPACT_NOTE_TYPE);
    const text = String((note as { content?: unknown } | undefined)?.content ?? "");
    if (!text || !received.includes(JSON.stringify(text).slice(1, 60)))
      throw new Error(
        `the model did not receive the impact note: ${JSON.stringify(h.session.messages).slice(0, 3000)}`,
      );
    return text;
  } finally {
    await h.dispose();
    delete process.env.CGC_PROACTIVE_IMPACT_NOTES;
  }
}

/**
 * What a `cgc_relations` callers answer with possible callers costs: a real session on the json package asks for
 * the callers of JSONDecoder.decode (called through objects in json/__init__.py, which the graph does not link and
 * pi-cgc's engine lists as possible). Returns the whole answer and its lines marked possible.
 */
async function measurePossible(repo: FixtureRepo, home: string): Promise<{ answer: string; possible: string[] }> {
  Object.assign(process.env, { HOME: home, CGC_EXECUTABLE: cgcBinary(), CGC_FRESHNESS_AUTO_SYNC: "false" });
  const ui = recordingUi();
  const h = await startPi({ cwd: repo.path, ui });
  try {
    // Ready, and possibly stale: the session before this one wrote a file the graph does not hold (sync off).
    await waitFor(() => ui.statuses.get("cgc")?.startsWith("cgc ready") === true, "a ready graph", 120_000);
    let received: Context | undefined;
    h.faux.setResponses([
      fauxAssistantMessage(
        fauxToolCall("cgc_relations", { relation: "callers", target: "decode", file: "json/decoder.py" }),
        { stopReason: "toolUse" },
      ),
      (context: Context) => {
        received = context;
        return fauxAssistantMessage("ok");
      },
    ]);
    await h.session.prompt("measure");
    const result = [...(received?.messages ?? [])].reverse().find((m) => m.role === "toolResult");
    const answer = (result?.content ?? []).map((part) => ("text" in part ? part.text : "")).join("\n");
    const possible = answer.split("\n").filter((line) => line.includes("[possible: "));
    if (possible.length === 0) throw new Error(`no possible callers in the answer: ${answer.slice(0, 2000)}`);
    return { answer, possible };
  } finally {
    await h.dispose();
  }
}

/** The longest line one symbol adds: NOTE_CALLERS sites named at the repository's longest paths, then "and N more". */
function impactNoteBound(repo: FixtureRepo): string {
  const [change] = fileChanges(`${repo.path}/m.py`, "def normalize(value):\n", "def normalize(value, sep):\n");
  const longest = [...repo.files].sort((a, b) => b.length - a.length);
  const callers = Array.from({ length: NOTE_CALLERS + 5 }, (_, i) => ({
    relation: "caller" as const,
    name: "f",
    path: `${repo.path}/${longest[i % longest.length]}`,
    line: 1000 + i,
    hops: 1,
  }));
  return impactNote([
    impactLine(repo.path, `${repo.path}/${longest[0]}`, change as NonNullable<typeof change>, callers),
  ]);
}

export async function run(_options: BenchOptions): Promise<BenchReport> {
  const home = makeCgcHome();
  const repos = [tinyRepo(), stdlibRepo("json")];
  try {
    const rows: string[][] = [];
    for (const repo of repos) {
      log(`tier tokens: indexing ${repo.name}`);
      const indexed = await cgcExec(["index", repo.path], { cwd: repo.path, env: home.env, timeoutMs: 600_000 });
      if (indexed.code !== 0) throw new Error(`cgc index failed on ${repo.name}: ${indexed.stderr.slice(-400)}`);
      const m = await measure(repo, home.home);
      for (const [tier, text] of [
        ["routing card (not a tier; always on while ready)", m.card],
        ["tier 1: coverage note (default on)", m.note],
        ["tier 2a: drift steer (opt-in, once per episode)", m.steer],
        ["tier 2b: result annotation (opt-in, per pi-cgc result while stale)", m.annotation],
      ] as const) {
        if (!text) throw new Error(`${tier} was not found in what the model received on ${repo.name}`);
        rows.push([m.repo, tier, String(text.length), String(estimateTextTokens(text))]);
      }
      if (repo.name === "tiny") {
        log("tier tokens: the impact note");
        const fresh = tinyRepo({ name: "tiny-impact" });
        try {
          const indexedAgain = await cgcExec(["index", fresh.path], { cwd: fresh.path, env: home.env });
          if (indexedAgain.code !== 0) throw new Error(`cgc index failed: ${indexedAgain.stderr.slice(-400)}`);
          const note = await measureImpactNote(fresh, home.home);
          rows.push([
            m.repo,
            "tier 3: impact note (opt-in, once per changed symbol; 3 sites named)",
            String(note.length),
            String(estimateTextTokens(note)),
          ]);
        } finally {
          fresh.cleanup();
        }
      }
      if (repo.name === "json") {
        log("tier tokens: a callers answer with possible callers");
        const { answer, possible } = await measurePossible(repo, home.home);
        const marked = possible.join("\n");
        const confirmed = answer.split("\n").filter((line) => line.startsWith("- ")).length - possible.length;
        rows.push([
          m.repo,
          `cgc_relations callers of JSONDecoder.decode: the whole answer (${confirmed} confirmed and ${possible.length} possible call sites)`,
          String(answer.length),
          String(estimateTextTokens(answer)),
        ]);
        rows.push([
          m.repo,
          "the same answer: one possible caller's line, marked with why (mean)",
          String(Math.round(marked.length / possible.length)),
          String(Math.round(estimateTextTokens(marked) / possible.length)),
        ]);
      }
      const bound = impactNoteBound(repo);
      rows.push([
        m.repo,
        `tier 3: impact note, one symbol at its cap (${NOTE_CALLERS} sites at the longest paths, then "and N more"; computed)`,
        String(bound.length),
        String(estimateTextTokens(bound)),
      ]);
    }
    const markdown = [
      "One real session per repository (pi's SDK, the faux model, pi-cgc with every tier on and automatic sync off),",
      "indexed into an isolated CGC home. The model's first call is recorded: its system prompt carries the card",
      "and the note; the write that opens a possibly-stale episode brings the steer; pi-cgc's own `cgc_stats`",
      "result carries the annotation. Tokens are characters / 4.",
      "",
      table(["repository", "what the model received", "characters", "tokens"], rows),
      "",
      "- Per prompt while ready and fresh, with the defaults: the card plus the note. The steer is added once per",
      "  episode, the annotation once per pi-cgc tool result while possibly stale, and only when enabled.",
      "- The impact note comes from a second session with `proactive.impactNotes` on, after an edit adding a",
      "  parameter to `normalize`; its message is added once per changed symbol per session, and nothing when off.",
      "- A callers answer is a tool result, not a tier: it costs only when the agent asks. Its possible callers are",
      "  capped (ten lines, then how many more).",
    ].join("\n");
    return { title: "Prompt tokens of the proactive tiers", markdown };
  } finally {
    for (const repo of repos) repo.cleanup();
    home.cleanup();
  }
}
