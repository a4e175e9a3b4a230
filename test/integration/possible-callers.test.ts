// Possible callers with the real pi (faux model), the real cgc and pi-cgc's engine: a call cgc's graph misses
// (`self.load()` in a subclass of a generic base defined in another module: cgc 0.6.13's parser drops the base
// `Base[T]`) is listed apart as a possible caller, with why, by cgc_relations, cgc_impact and the impact note,
// and keeps the function out of cgc_dead_code; a function nothing calls says "No callers"; a function reached
// only through one of cgc's guesses is listed apart by the transitive answers; where the engine does not run,
// the answers say that possible callers are unknown.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fauxAssistantMessage, fauxToolCall } from "@mariozechner/pi-ai";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { IMPACT_NOTE_TYPE } from "../../src/agent/impact-note.ts";
import { type CgcHome, cgcBinary, cgcExec, makeCgcHome } from "../helpers/cgc-env.ts";
import { restoreEnv, restoreSuiteEnv, suiteEnv, withEnv } from "../helpers/env.ts";
import { type PiHarness, recordingUi, startPi, toolResults, waitFor } from "../helpers/pi-sdk.ts";
import { caseRepos, type FixtureRepo, POSSIBLE_CALLS_FILES } from "../helpers/repos.ts";

let home: CgcHome;
const harnesses: PiHarness[] = [];
const repos = caseRepos();

beforeAll(() => {
  home = makeCgcHome();
  suiteEnv({ HOME: home.home, CGC_EXECUTABLE: cgcBinary() });
});
afterEach(async () => {
  for (const h of harnesses.splice(0)) await h.dispose();
  restoreEnv();
  repos.cleanup();
});
afterAll(() => {
  restoreSuiteEnv();
  home.cleanup();
});

async function indexed(): Promise<FixtureRepo> {
  const repo = repos.tiny({ name: "possible", extraFiles: POSSIBLE_CALLS_FILES });
  const result = await cgcExec(["index", repo.path], { cwd: repo.path, env: home.env });
  if (result.code !== 0) throw new Error(`cgc index failed: ${result.stderr.slice(-800)}`);
  return repo;
}

async function ready(repo: FixtureRepo, env: Record<string, string> = {}): Promise<PiHarness> {
  withEnv(env);
  const ui = recordingUi();
  const h = await startPi({ cwd: repo.path, ui });
  harnesses.push(h);
  await waitFor(() => ui.statuses.get("cgc") === "cgc ready · fresh", "a ready, fresh graph");
  await waitFor(() => h.session.getActiveToolNames().includes("cgc_impact"), "the graph tools");
  return h;
}

const callTool = (name: string, args: Record<string, unknown>) =>
  fauxAssistantMessage(fauxToolCall(name, args), { stopReason: "toolUse" });
const edit = (path: string, oldText: string, newText: string) =>
  fauxAssistantMessage(fauxToolCall("edit", { path, edits: [{ oldText, newText }] }), { stopReason: "toolUse" });

/** Runs the steps in one prompt and returns each tool result's text and error flag. */
async function run(h: PiHarness, steps: ReturnType<typeof callTool>[]) {
  const before = h.session.messages.length;
  h.faux.setResponses([...steps, fauxAssistantMessage("done")]);
  await h.session.prompt("go");
  return toolResults(h, before);
}

const sourceLine = (repo: FixtureRepo, file: string, n: number) =>
  readFileSync(join(repo.path, file), "utf8").split("\n")[n - 1] ?? "";

const NOT_CONFIRMED =
  "(not confirmed: cgc linked these by name or by inference, or pi-cgc could not rule the call out; each says why";

describe("possible callers", () => {
  it("callers lists a call the graph misses apart, with why; a function nothing calls says No callers; dead code leaves the possibly called one out", async () => {
    const repo = await indexed();
    const h = await ready(repo);
    const [load, lonely, dead] = await run(h, [
      callTool("cgc_relations", { relation: "callers", target: "load" }),
      callTool("cgc_relations", { relation: "callers", target: "lonely" }),
      callTool("cgc_dead_code", {}),
    ]);
    for (const result of [load, lonely, dead]) expect(result?.isError, result?.text).toBe(false);
    const lines = (load?.text ?? "").split("\n");
    expect(lines[0]).toBe(`No confirmed callers of load; 1 possible ${NOT_CONFIRMED}; path:line is the call site):`);
    expect(lines[1]).toMatch(
      /^- fetch {2}pkg\/store\.py:6 {2}\(calls load; fetch defined at line 5\) {2}\[possible: [^\]]*self\.load\(\)[^\]]*Base[^\]]*\]$/,
    );
    expect(lines).toHaveLength(2);
    expect(sourceLine(repo, "pkg/store.py", 6)).toBe("        return self.load(key)");
    expect(sourceLine(repo, "pkg/store.py", 5)).toBe("    def fetch(self, key):");

    expect(lonely?.text).toBe(
      "No callers of lonely: none in the graph, and no call of that name that pi-cgc could not rule out.",
    );

    expect(dead?.text).toContain("- lonely  pkg/base.py:11");
    expect(sourceLine(repo, "pkg/base.py", 11)).toBe("def lonely():");
    expect(dead?.text).not.toContain("pkg/base.py:7");
    expect(dead?.text).toMatch(
      /\n\n\d+ more functions? left out: (it has|they have) possible callers \(calls of (its|their) name pi-cgc could not rule out; relation callers lists them\)\.$/,
    );
  });

  it("callers_transitive and call_chain list what is reached only through a possible call apart, and say the engine's are not followed", async () => {
    const repo = await indexed();
    const h = await ready(repo);
    const [transitive, chain, sure] = await run(h, [
      callTool("cgc_relations", { relation: "callers_transitive", target: "process", file: "pkg/a.py", depth: 2 }),
      callTool("cgc_relations", { relation: "call_chain", target: "top", to: "process" }),
      callTool("cgc_relations", { relation: "call_chain", target: "main", to: "normalize" }),
    ]);
    for (const result of [transitive, chain, sure]) expect(result?.isError, result?.text).toBe(false);
    const ambiguous = "several functions have this name; cgc picked one by name";
    const notFollowed =
      "Only the graph's calls are followed here: pi-cgc's own possible callers (calls the graph does not link) are not; ask relation callers of a function for them.";
    expect(transitive?.text).toBe(
      [
        "1 function reaches process within 2 calls (path:line is the definition):",
        "- go  pkg/a.py:5  (1 hop)",
        "",
        "2 functions reach process only through a possible call (not confirmed; each names the call and why):",
        `- both  pkg/use.py:4  (1 hop)  [possible: through both → process: ${ambiguous}]`,
        `- top  pkg/use.py:8  (2 hops)  [possible: through both → process: ${ambiguous}]`,
        "",
        notFollowed,
      ].join("\n"),
    );
    expect(chain?.text).toBe(
      [
        "1 call chain from top to process, shortest first (1 through a possible call, marked):",
        `1. top (pkg/use.py:8) → both (pkg/use.py:4) → process (pkg/a.py:2)  [through a possible call: both → process: ${ambiguous}]`,
        "",
        "Only the graph's calls are followed: a link the graph does not hold (pi-cgc's own possible callers) is not; ask relation callers of a function for them.",
      ].join("\n"),
    );
    // Confirmed links only: no mark.
    expect(sure?.text).toContain("main (app.py:7) → normalize (pkg/text.py:1)\n");
    expect(sure?.text).toMatch(/^3 call chains from main to normalize, shortest first:/);
    expect(sure?.text).not.toContain("[through a possible call");
  });

  it("cgc_impact and the impact note list a possible caller apart, marked with why", async () => {
    const repo = await indexed();
    const h = await ready(repo, { CGC_PROACTIVE_IMPACT_NOTES: "true" });
    const [, impact] = await run(h, [
      edit("pkg/base.py", "    def load(self, key):", "    def load(self, key, default):"),
      callTool("cgc_impact", { target: "load", depth: 1 }),
    ]);
    expect(impact?.isError, impact?.text).toBe(false);
    const lines = (impact?.text ?? "").split("\n");
    expect(lines[0]).toBe(
      "1 changed definition in 1 file against HEAD (1 that can break callers; 0 dependents and 1 possible caller within 1 link):",
    );
    expect(lines.slice(1, 4)).toEqual([
      "",
      "pkg/base.py:7  parameters changed: Base.load(self, key) → Base.load(self, key, default)",
      "  possible callers (1; not confirmed, each says why):",
    ]);
    expect(lines[4]).toMatch(/^ {2}- pkg\/store\.py:6 {2}fetch {2}\[possible: [^\]]*self\.load\(\)[^\]]*\]$/);
    expect(lines).toHaveLength(5);
    const notes = h.session.messages
      .filter((m) => (m as { customType?: string }).customType === IMPACT_NOTE_TYPE)
      .map((m) => String((m as { content: unknown }).content));
    expect(notes).toHaveLength(1);
    expect(notes[0]).toContain(
      "1 possible call site in files not edited in this session (not confirmed; `cgc_impact` says why): pkg/store.py:6.",
    );
  });

  it("with pi-cgc's engine off, callers, dead code and cgc_impact say possible callers are unknown, never a plain No callers", async () => {
    const repo = await indexed();
    const h = await ready(repo, { CGC_FRESHNESS_ENGINE: "false" });
    const [load, normalize, dead, , impact] = await run(h, [
      callTool("cgc_relations", { relation: "callers", target: "load" }),
      callTool("cgc_relations", { relation: "callers", target: "normalize" }),
      callTool("cgc_dead_code", {}),
      edit("pkg/base.py", "    def load(self, key):", "    def load(self, key, default):"),
      callTool("cgc_impact", { target: "load", depth: 1 }),
    ]);
    for (const result of [load, normalize, dead, impact]) expect(result?.isError, result?.text).toBe(false);
    const unknown =
      "Possible callers the graph does not link: unknown (pi-cgc's engine is off (freshness.engine is false)). Before changing a signature, also grep for calls of the name.";
    expect(load?.text).toBe(["The graph links no callers of load.", unknown].join("\n"));
    expect(load?.text).not.toMatch(/No callers/);
    expect(normalize?.text).toMatch(/^3 callers of normalize \(path:line is the call site\):\n/);
    expect(normalize?.text?.endsWith(`\n\n${unknown}`)).toBe(true);
    // Without the engine, load stays in the list, and the list says what it may include.
    expect(dead?.text).toContain("- Base.load  pkg/base.py:7");
    expect(dead?.text).toMatch(
      /\n\nThis list may include functions with possible callers the graph does not link: they are unknown \(pi-cgc's engine is off \(freshness\.engine is false\)\)\.$/,
    );
    expect(impact?.text).toBe(
      [
        "1 changed definition in 1 file against HEAD (1 that can break callers; 0 dependents within 1 link):",
        "",
        "pkg/base.py:7  parameters changed: Base.load(self, key) → Base.load(self, key, default)",
        "  the graph links nothing outside the changed lines to it (within 1 link); possible callers unknown (below).",
        "",
        unknown,
      ].join("\n"),
    );
  });
});
