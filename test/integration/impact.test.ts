// Issue 35 with the real pi (faux model) and the real cgc (its engine keeping the graph fresh): cgc_impact
// against the source on Python and TypeScript, the opt-in impact note on the very next model call, and the
// first prompt of a `pi -p` run offered the graph tools and the card.
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Context } from "@mariozechner/pi-ai";
import { fauxAssistantMessage, fauxToolCall } from "@mariozechner/pi-ai";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { CARD_HEADING } from "../../src/agent/card.ts";
import { IMPACT_NOTE_TYPE } from "../../src/agent/impact-note.ts";
import { type CgcHome, cgcBinary, cgcExec, EXTENSION_ENTRY, makeCgcHome, PROJECT_ROOT } from "../helpers/cgc-env.ts";
import { restoreEnv, restoreSuiteEnv, suiteEnv, withEnv } from "../helpers/env.ts";
import { type PiHarness, recordingUi, startPi, toolResults, waitFor } from "../helpers/pi-sdk.ts";
import { caseRepos, type FixtureRepo, tinyRepo } from "../helpers/repos.ts";

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

/** A private helper called only from its own file, beside the tiny repository's known call graph. */
const PRIVATE_HELPER = {
  "pkg/util.py": `def _squash(value):
    return value.replace(" ", "")


def tidy(value):
    return _squash(value)
`,
};

/** A TypeScript project: `helper` called from two other files, `Base.run` overridden by `Kid.run`. */
const TS_FILES: Record<string, string> = {
  "src/util.ts": `export function helper(x: number, y: number): number {
  return x + y;
}

export function unused(z: string): string {
  return z;
}
`,
  "src/main.ts": `import { helper } from "./util";

export function main(): number {
  return helper(1, 2);
}
`,
  "src/other.ts": `import { helper } from "./util";

export function twice(n: number): number {
  return helper(n, n) * 2;
}

export function outer(): number {
  return twice(3);
}
`,
};

async function indexed(repo: FixtureRepo): Promise<FixtureRepo> {
  const result = await cgcExec(["index", repo.path], { cwd: repo.path, env: home.env });
  if (result.code !== 0) throw new Error(`cgc index failed: ${result.stderr.slice(-800)}`);
  return repo;
}

async function ready(repo: FixtureRepo, env: Record<string, string> = {}) {
  withEnv(env);
  const ui = recordingUi();
  const h = await startPi({ cwd: repo.path, ui });
  harnesses.push(h);
  await waitFor(() => ui.statuses.get("cgc") === "cgc ready · fresh", "a ready, fresh graph");
  await waitFor(() => h.session.getActiveToolNames().includes("cgc_impact"), "cgc_impact");
  return { h, ui, chip: () => ui.statuses.get("cgc") };
}

const edit = (path: string, oldText: string, newText: string) =>
  fauxAssistantMessage(fauxToolCall("edit", { path, edits: [{ oldText, newText }] }), { stopReason: "toolUse" });
const callTool = (name: string, args: Record<string, unknown>) =>
  fauxAssistantMessage(fauxToolCall(name, args), { stopReason: "toolUse" });

/** The lines of a result naming a `path:line` dependent. */
const dependentLines = (text: string) => text.split("\n").filter((line) => /^\s+- \S+:\d+/.test(line));
const sourceLine = (repo: FixtureRepo, file: string, n: number) =>
  readFileSync(join(repo.path, file), "utf8").split("\n")[n - 1] ?? "";

describe("cgc_impact, exact against the source", () => {
  it("Python: a parameter added names every call site outside the edited file and nothing else; a body edit and a private helper name nothing", async () => {
    const repo = await indexed(repos.tiny({ extraFiles: PRIVATE_HELPER }));
    const { h } = await ready(repo);
    const before = h.session.messages.length;
    h.faux.setResponses([
      edit("pkg/text.py", "    return value.strip().lower()", "    return value.strip().casefold()"),
      callTool("cgc_impact", {}),
      edit("pkg/text.py", "def normalize(value):", "def normalize(value, sep=' '):"),
      edit("pkg/util.py", "def _squash(value):", "def _squash(value, keep=''):"),
      edit("pkg/util.py", "    return _squash(value)", "    return _squash(value, '')"),
      callTool("cgc_impact", {}),
      callTool("cgc_impact", { target: "normalize", depth: 1 }),
      fauxAssistantMessage("done"),
    ]);
    await h.session.prompt("change normalize");
    const results = toolResults(h, before).filter((result) => result.name === "cgc_impact");
    const [bodyOnly, all, one] = results;
    expect(bodyOnly?.isError, bodyOnly?.text).toBe(false);
    expect(bodyOnly?.text).toContain("No definition was added, removed, renamed or given other parameters");
    expect(dependentLines(bodyOnly?.text ?? "")).toEqual([]);

    expect(all?.isError, all?.text).toBe(false);
    expect(all?.text).toContain("pkg/text.py:1  parameters changed: normalize(value) → normalize(value, sep=' ')");
    expect(all?.text).toContain("pkg/util.py:1  parameters changed: _squash(value) → _squash(value, keep='')");
    // _squash's one call is in the changed lines: nothing depends on it outside them.
    expect(all?.text).toMatch(/_squash\(value, keep=''\)\n {2}nothing outside the changed lines depends on it/);
    const direct = dependentLines(one?.text ?? "");
    expect(direct.map((line) => line.trim().split(/\s+/)[1])).toEqual(["app.py:8", "pkg/alpha.py:5", "pkg/beta.py:5"]);
    for (const site of direct.map((line) => line.trim().split(/\s+/)[1] as string)) {
      const [file, n] = site.split(":") as [string, string];
      expect(sourceLine(repo, file, Number(n))).toContain("normalize(");
    }
    // Depth 2 adds main, which reaches normalize through alpha and beta too (and already calls it itself).
    expect(dependentLines(all?.text ?? "").filter((line) => line.includes("pkg/util.py"))).toEqual([]);
  });

  it("Python: a rename names every caller of the old name", async () => {
    const repo = await indexed(repos.tiny());
    const { h } = await ready(repo);
    const before = h.session.messages.length;
    h.faux.setResponses([
      edit("pkg/text.py", "def normalize(value):", "def canonical(value):"),
      callTool("cgc_impact", { target: "pkg/text.py", depth: 1 }),
      fauxAssistantMessage("done"),
    ]);
    await h.session.prompt("rename");
    const [result] = toolResults(h, before).filter((r) => r.name === "cgc_impact");
    expect(result?.isError, result?.text).toBe(false);
    expect(result?.text).toContain("renamed: normalize(value) → canonical(value)");
    const sites = dependentLines(result?.text ?? "").map((line) => line.trim().split(/\s+/).slice(1, 3).join(" "));
    expect(sites).toEqual(["app.py:8 main", "pkg/alpha.py:5 alpha", "pkg/beta.py:5 beta"]);
  });

  it("TypeScript: changed parameters name the callers in other files, a rename the old name's callers, depth follows callers of callers", async () => {
    const repo = await indexed(repos.tiny({ extraFiles: TS_FILES }));
    const { h } = await ready(repo);
    const before = h.session.messages.length;
    h.faux.setResponses([
      edit("src/util.ts", "helper(x: number, y: number)", "helper(x: number, y: string)"),
      edit("src/util.ts", "export function unused(z: string)", "export function unusedToo(z: string)"),
      callTool("cgc_impact", { target: "helper", depth: 2 }),
      callTool("cgc_impact", { target: "unused" }),
      fauxAssistantMessage("done"),
    ]);
    await h.session.prompt("change helper");
    const [helper, unused] = toolResults(h, before).filter((r) => r.name === "cgc_impact");
    expect(helper?.isError, helper?.text).toBe(false);
    expect(helper?.text).toContain("parameters changed: helper(x: number, y: number) → helper(x: number, y: string)");
    const lines = dependentLines(helper?.text ?? "").map((line) => line.trim());
    expect(lines).toEqual([
      "- src/main.ts:4  main",
      "- src/other.ts:4  twice",
      expect.stringMatching(/^- src\/other\.ts:7 {2}outer {2}\(2 calls away\)$/),
    ]);
    expect(sourceLine(repo, "src/other.ts", 4)).toContain("helper(n, n)");
    expect(unused?.text).toContain("renamed: unused(z: string) → unusedToo(z: string)");
    expect(unused?.text).toContain("nothing outside the changed lines depends on it");
  });

  it("checks its parameters and answers an unknown symbol clearly", async () => {
    const repo = await indexed(repos.tiny());
    const { h } = await ready(repo);
    const before = h.session.messages.length;
    h.faux.setResponses([
      callTool("cgc_impact", { depth: 9 }),
      callTool("cgc_impact", { target: 42 }),
      callTool("cgc_impact", { target: "no_such_symbol" }),
      callTool("cgc_impact", { target: "orphan" }),
      callTool("cgc_impact", { target: "../outside.py" }),
      fauxAssistantMessage("done"),
    ]);
    await h.session.prompt("bad inputs");
    const [deep, typed, unknown, unchanged, outside] = toolResults(h, before);
    expect(deep?.isError).toBe(true);
    expect(deep?.text).toMatch(/depth/);
    expect(typed?.isError).toBe(true);
    expect(typed?.text).toMatch(/target/);
    expect(unknown?.isError).toBe(true);
    expect(unknown?.text).toContain('NOT_FOUND: no function, class or method named "no_such_symbol"');
    expect(unchanged?.isError).toBe(false);
    expect(unchanged?.text).toContain("orphan has no uncommitted change to its name or parameters");
    expect(outside?.isError).toBe(true);
    expect(outside?.text).toContain("NOT_ALLOWED");
  });
});

describe("the impact note (proactive.impactNotes)", () => {
  /** One prompt: the edit, then the model call that records what it received. */
  async function editThenLook(repo: FixtureRepo, env: Record<string, string>, edits: ReturnType<typeof edit>[]) {
    const { h } = await ready(repo, env);
    const seen: Context[] = [];
    h.faux.setResponses([
      ...edits,
      (context: Context) => {
        seen.push({ systemPrompt: context.systemPrompt, messages: JSON.parse(JSON.stringify(context.messages)) });
        return fauxAssistantMessage("done");
      },
    ]);
    await h.session.prompt("edit");
    const notes = h.session.messages.filter((m) => (m as { customType?: string }).customType === IMPACT_NOTE_TYPE);
    return {
      h,
      root: repo.path,
      context: seen[0] as Context,
      notes: notes.map((m) => String((m as { content: unknown }).content)),
    };
  }

  /**
   * What the model is told, as far as pi-cgc's setting could change it: the system prompt and each message's
   * role and content, the repository's path as `<repo>`. Left out: what differs between any two sessions on two
   * repositories (message times, the faux provider's ids and token counts, the coverage line, which counts the
   * repositories the shared graph holds by then).
   */
  const told = (context: Context, root: string) =>
    JSON.stringify({
      systemPrompt: (context.systemPrompt ?? "").replace(/\nCode graph coverage: [^\n]*/, ""),
      messages: context.messages.map((m) => ({ role: m.role, content: m.content })),
    }).replaceAll(root, "<repo>");

  it("on: arrives on the very next model call naming the callers outside the changed files; off: adds nothing", async () => {
    const signature = edit("pkg/text.py", "def normalize(value):", "def normalize(value, sep):");
    const on = await editThenLook(await indexed(repos.tiny()), { CGC_PROACTIVE_IMPACT_NOTES: "true" }, [signature]);
    expect(on.notes).toHaveLength(1);
    const note = on.notes[0] as string;
    expect(note).toContain("`normalize(value)` in pkg/text.py now takes `normalize(value, sep)`");
    expect(note).toContain(
      "3 call sites in files not edited in this session still call it as before: app.py:8, pkg/alpha.py:5, pkg/beta.py:5.",
    );
    expect(JSON.stringify(on.context.messages)).toContain("now takes `normalize(value, sep)`");
    await harnesses.pop()?.dispose();

    restoreEnv();
    const off = await editThenLook(await indexed(repos.tiny()), { CGC_PROACTIVE_IMPACT_NOTES: "false" }, [signature]);
    expect(off.notes).toEqual([]);
    const noteMessage = on.context.messages.find((m) => JSON.stringify(m).includes("Impact of your last edit"));
    expect(noteMessage).toBeDefined();
    // The prompts differ by the note and nothing else: with the setting off, pi-cgc added nothing for it.
    const withoutNote = { ...on.context, messages: on.context.messages.filter((m) => m !== noteMessage) };
    expect(told(off.context, off.root)).toBe(told(withoutNote, on.root));
  });

  it("stays quiet for a body edit, when every caller was already edited, and for a symbol already noted", async () => {
    const env = { CGC_PROACTIVE_IMPACT_NOTES: "true" };
    const body = await editThenLook(await indexed(repos.tiny()), env, [
      edit("pkg/text.py", "    return value.strip().lower()", "    return value.lower().strip()"),
    ]);
    expect(body.notes).toEqual([]);
    await harnesses.pop()?.dispose();

    const allEdited = await editThenLook(await indexed(repos.tiny()), env, [
      edit("app.py", 'normalize(" C ")', 'normalize(" C ", " ")'),
      edit("pkg/alpha.py", "normalize(value)", 'normalize(value, " ")'),
      edit("pkg/beta.py", "normalize(value)", 'normalize(value, " ")'),
      edit("pkg/text.py", "def normalize(value):", "def normalize(value, sep):"),
    ]);
    expect(allEdited.notes).toEqual([]);
    await harnesses.pop()?.dispose();

    const twice = await editThenLook(await indexed(repos.tiny()), env, [
      edit("pkg/text.py", "def normalize(value):", "def normalize(value, sep):"),
      edit("pkg/text.py", "def normalize(value, sep):", "def normalize(value, sep, end):"),
    ]);
    expect(twice.notes).toHaveLength(1);
  });

  it("beside the drift steer (pi delivers one steer per turn), still on the very next model call, once", async () => {
    const both = { CGC_PROACTIVE_IMPACT_NOTES: "true", CGC_PROACTIVE_DRIFT_STEERS: "true" };
    const { context, notes } = await editThenLook(await indexed(repos.tiny()), both, [
      edit("pkg/text.py", "def normalize(value):", "def normalize(value, sep):"),
    ]);
    expect(notes).toHaveLength(1);
    const sent = context.messages.map((message) => JSON.stringify(message));
    expect(sent.filter((text) => text.includes("Impact of your last edit"))).toHaveLength(1);
    expect(sent.some((text) => text.includes("The code graph is now possibly stale"))).toBe(true);
  });

  it("a rename through bash is noted with the old name's callers", async () => {
    const repo = await indexed(repos.tiny());
    const { notes } = await editThenLook(repo, { CGC_PROACTIVE_IMPACT_NOTES: "true" }, [
      callTool("bash", { command: "sed -i 's/^def normalize(/def canonical(/' pkg/text.py" }),
    ]);
    expect(notes).toHaveLength(1);
    expect(notes[0]).toContain("`normalize(value)` in pkg/text.py was renamed to `canonical(value)`");
    expect(notes[0]).toContain("app.py:8, pkg/alpha.py:5, pkg/beta.py:5");
  });
});

describe("the first prompt sees the graph", () => {
  it("SDK: a prompt sent the moment the session starts is offered the graph tools and the card", async () => {
    const repo = await indexed(repos.tiny());
    const h = await startPi({ cwd: repo.path });
    harnesses.push(h);
    const seen: Context[] = [];
    h.faux.setResponses([
      (context: Context) => {
        seen.push({ systemPrompt: context.systemPrompt, messages: [], tools: context.tools });
        return fauxAssistantMessage("done");
      },
    ]);
    await h.session.prompt("who calls normalize?");
    const tools = (seen[0]?.tools ?? []).map((tool) => tool.name);
    expect(tools).toEqual(expect.arrayContaining(["cgc_relations", "cgc_impact", "cgc_find"]));
    expect(seen[0]?.systemPrompt).toContain(CARD_HEADING);
    expect(seen[0]?.systemPrompt).toContain("→ cgc_impact");
  });

  it("pi -p on an indexed repository: the first model call carries the card and the graph tools", () => {
    const repo = tinyRepo();
    const agentDir = mkdtempSync(join(tmpdir(), "pi-cgc-agent-"));
    const script = join(agentDir, "script.json");
    writeFileSync(script, JSON.stringify([{ report: true }]));
    try {
      execFileSync(cgcBinary(), ["index", repo.path], { cwd: repo.path, env: { ...process.env, HOME: home.home } });
      const cli = join(PROJECT_ROOT, "node_modules", "@mariozechner", "pi-coding-agent", "dist", "cli.js");
      const faux = join(PROJECT_ROOT, "test", "fixtures", "pi", "faux-provider.ts");
      const out = execFileSync(
        process.execPath,
        [
          cli,
          "--no-session",
          "--no-extensions",
          "-e",
          faux,
          "-e",
          EXTENSION_ENTRY,
          "--provider",
          "faux",
          "--model",
          "faux-1",
          "-p",
          "who calls normalize?",
        ],
        {
          cwd: repo.path,
          env: {
            ...process.env,
            HOME: home.home,
            PI_CODING_AGENT_DIR: agentDir,
            PI_OFFLINE: "1",
            PI_CGC_FAUX_SCRIPT: script,
          },
          encoding: "utf8",
          timeout: 120_000,
        },
      );
      const report = JSON.parse(out.trim().split("\n").at(-1) as string) as { systemPrompt: string; tools: string[] };
      expect(report.tools).toEqual(expect.arrayContaining(["cgc_relations", "cgc_impact", "cgc_find", "cgc_stats"]));
      expect(report.systemPrompt).toContain(CARD_HEADING);
    } finally {
      rmSync(agentDir, { recursive: true, force: true });
      repo.cleanup();
    }
  });
});
