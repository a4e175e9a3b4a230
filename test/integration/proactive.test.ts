// Proactive injection (ADR 0009) with the real pi and the real cgc, asserting on what the model received.
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Context } from "@mariozechner/pi-ai";
import { fauxAssistantMessage, fauxToolCall } from "@mariozechner/pi-ai";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { CARD_HEADING } from "../../src/agent/card.ts";
import { ANNOTATION_PREFIX, NOTE_MAX_CHARS, STEER_TYPE } from "../../src/agent/inject.ts";
import { totalSpawns } from "../../src/cgc/children.ts";
import { type CgcHome, cgcBinary, cgcExec, makeCgcHome } from "../helpers/cgc-env.ts";
import { restoreEnv, restoreSuiteEnv, suiteEnv, withEnv } from "../helpers/env.ts";
import { EXTENSION_PATH, type PiHarness, recordingUi, startPi, waitFor } from "../helpers/pi-sdk.ts";
import { indexedTinyRepo, type TinyRepo, tinyRepo } from "../helpers/repos.ts";

let home: CgcHome;
const harnesses: PiHarness[] = [];

beforeAll(() => {
  home = makeCgcHome();
  suiteEnv({ HOME: home.home });
});
afterEach(async () => {
  for (const h of harnesses.splice(0)) await h.dispose();
  restoreEnv();
});
afterAll(() => {
  restoreSuiteEnv();
  home.cleanup();
});

/** A test-only extension standing for any other extension's tool (an MCP adapter's, say). */
function otherToolExtension(): string {
  const dir = mkdtempSync(join(tmpdir(), "pi-cgc-other-"));
  const path = join(dir, "other.ts");
  writeFileSync(
    path,
    `import { Type } from "typebox";
export default function (pi) {
  pi.registerTool({ name: "other_tool", label: "other", description: "another extension's tool",
    parameters: Type.Object({}), execute: async () => ({ content: [{ type: "text", text: "other result" }], details: {} }) });
}
`,
  );
  return path;
}

async function session(repo: TinyRepo, env: Record<string, string> = {}, extraExtensions: string[] = []) {
  withEnv({ CGC_EXECUTABLE: cgcBinary(), ...env });
  const ui = recordingUi();
  const h = await startPi({ cwd: repo.path, ui, extensionPaths: [EXTENSION_PATH, ...extraExtensions] });
  harnesses.push(h);
  const seen: Context[] = [];
  const capture = (text: string) => (context: Context) => {
    seen.push({ systemPrompt: context.systemPrompt, messages: JSON.parse(JSON.stringify(context.messages)) });
    return fauxAssistantMessage(text);
  };
  return { h, ui, seen, capture, chip: () => ui.statuses.get("cgc") };
}

const steersIn = (context: Context | undefined) =>
  (context?.messages ?? []).filter((message) =>
    JSON.stringify(message).includes("The code graph is now possibly stale"),
  ).length;

describe("tier 1: the coverage note", () => {
  it("default config: in the model's context on prompts 1 and 3, capped, counts equal to the graph's, zero spawns", async () => {
    const repo = await indexedTinyRepo(home.env);
    const { h, seen, capture, chip } = await session(repo);
    await waitFor(() => chip() === "cgc ready · fresh", "ready");
    const spawns = totalSpawns();
    h.faux.setResponses([capture("1"), capture("2"), capture("3")]);
    for (const prompt of ["one", "two", "three"]) await h.session.prompt(prompt);
    expect(totalSpawns()).toBe(spawns);
    const notes = seen.map((context) => /Code graph coverage: .*$/m.exec(context.systemPrompt ?? "")?.[0]);
    expect(notes[0]).toBeDefined();
    expect(notes[2]).toBe(notes[0]);
    expect((notes[0] as string).length).toBeLessThanOrEqual(NOTE_MAX_CHARS);
    const counted = await cgcExec(
      [
        "query",
        `MATCH (r:Repository {path: '${repo.path}'})-[:CONTAINS*1..]->(f:File) OPTIONAL MATCH (f)-[:CONTAINS]->(fn:Function) RETURN count(DISTINCT f) AS files, count(DISTINCT fn) AS functions`,
      ],
      { cwd: repo.path, env: home.env },
    );
    const files = /"files": (\d+)/.exec(counted.stdout)?.[1];
    const functions = /"functions": (\d+)/.exec(counted.stdout)?.[1];
    expect(notes[0]).toContain(`${files} files (python), ${functions} functions`);
    expect(notes[0]).toMatch(/CodeGraphContext 0\.6\.13/);
  });

  it("not ready (unindexed, cgc missing): no note, no steer, no annotation", async () => {
    for (const env of [{}, { CGC_EXECUTABLE: "/nonexistent/cgc" }] as Array<Record<string, string>>) {
      const repo = tinyRepo();
      const { h, ui, seen, capture, chip } = await session(repo, {
        CGC_PROACTIVE_DRIFT_STEERS: "true",
        CGC_PROACTIVE_RESULT_ANNOTATIONS: "true",
        ...env,
      });
      await waitFor(() => ["cgc unindexed", "cgc unavailable"].includes(chip() ?? ""), "not ready");
      h.faux.setResponses([
        fauxAssistantMessage(fauxToolCall("write", { path: "pkg/x.py", content: "def x():\n    return 1\n" }), {
          stopReason: "toolUse",
        }),
        capture("done"),
      ]);
      await h.session.prompt("go");
      await h.session.prompt("/cgc status");
      expect(seen[0]?.systemPrompt).not.toContain("Code graph coverage");
      expect(seen[0]?.systemPrompt).not.toContain("A code graph of");
      expect(steersIn(seen[0])).toBe(0);
      expect(ui.notices.map((n) => n.message).join("\n")).not.toContain(ANNOTATION_PREFIX);
      await harnesses.pop()?.dispose();
    }
  });
});

describe("tier 2: steers and annotations (opt-in)", () => {
  it("steers on: two episodes give exactly two steers; many edits within one episode give one", async () => {
    const repo = await indexedTinyRepo(home.env);
    const { h, seen, capture, chip } = await session(repo, { CGC_PROACTIVE_DRIFT_STEERS: "true" });
    await waitFor(() => chip() === "cgc ready · fresh", "ready");
    const write = (name: string) =>
      fauxAssistantMessage(
        fauxToolCall("write", { path: `pkg/${name}.py`, content: `def ${name}():\n    return 1\n` }),
        {
          stopReason: "toolUse",
        },
      );
    h.faux.setResponses([write("a1"), write("a2"), write("a3"), capture("first run done")]);
    await h.session.prompt("episode one");
    expect(steersIn(seen[0])).toBe(1);
    await waitFor(() => chip() === "cgc ready · fresh", "synced after the first run", 120_000);
    h.faux.setResponses([write("b1"), capture("second run done"), capture("third")]);
    await h.session.prompt("episode two");
    expect(steersIn(seen[1])).toBe(2);
    await waitFor(() => chip() === "cgc ready · fresh", "synced after the second run", 120_000);
    await h.session.prompt("no episode");
    expect(steersIn(seen[2])).toBe(2);
    const types = h.session.messages.filter((m) => (m as { customType?: string }).customType === STEER_TYPE);
    expect(types).toHaveLength(2);
  });

  it("annotations on: pi-cgc's tool results and command renders carry the line while possibly stale; another extension's tool does not", async () => {
    const repo = await indexedTinyRepo(home.env);
    const { h, ui, seen, capture, chip } = await session(
      repo,
      { CGC_PROACTIVE_RESULT_ANNOTATIONS: "true", CGC_FRESHNESS_AUTO_SYNC: "false" },
      [otherToolExtension()],
    );
    await waitFor(() => chip() === "cgc ready · fresh", "ready");
    await h.session.prompt("/cgc status");
    expect(ui.notices.at(-1)?.message).not.toContain(ANNOTATION_PREFIX);
    h.faux.setResponses([
      fauxAssistantMessage(fauxToolCall("write", { path: "pkg/new.py", content: "def new():\n    return 1\n" }), {
        stopReason: "toolUse",
      }),
      fauxAssistantMessage(fauxToolCall("other_tool", {}), { stopReason: "toolUse" }),
      fauxAssistantMessage(fauxToolCall("cgc_stats", {}), { stopReason: "toolUse" }),
      capture("done"),
    ]);
    await h.session.prompt("go");
    expect(chip()).toBe("cgc ready · possibly stale");
    const results = (seen[0]?.messages ?? []).filter((m) => m.role === "toolResult").map((m) => JSON.stringify(m));
    const otherResult = results.find((text) => text.includes("other result"));
    const ownResult = results.find((text) => text.includes("cgc_stats"));
    expect(otherResult).toBeDefined();
    expect(otherResult).not.toContain(ANNOTATION_PREFIX);
    expect(ownResult).toContain(ANNOTATION_PREFIX);
    await h.session.prompt("/cgc status");
    expect(ui.notices.at(-1)?.message).toContain(`${ANNOTATION_PREFIX} 1 changed file not yet`);
  });

  it("all three keys off: the model sees none of the tiers; the routing card is unaffected", async () => {
    const repo = await indexedTinyRepo(home.env);
    const { h, seen, capture, chip } = await session(repo, {
      CGC_PROACTIVE_SESSION_NOTE: "false",
      CGC_PROACTIVE_DRIFT_STEERS: "false",
      CGC_PROACTIVE_RESULT_ANNOTATIONS: "false",
    });
    await waitFor(() => chip() === "cgc ready · fresh", "ready");
    h.faux.setResponses([
      fauxAssistantMessage(fauxToolCall("write", { path: "pkg/off.py", content: "def off():\n    return 1\n" }), {
        stopReason: "toolUse",
      }),
      capture("done"),
    ]);
    await h.session.prompt("go");
    expect(seen[0]?.systemPrompt).not.toContain("Code graph coverage");
    expect(steersIn(seen[0])).toBe(0);
    expect(JSON.stringify(seen[0]?.messages)).not.toContain(ANNOTATION_PREFIX);
    expect(seen[0]?.systemPrompt).toContain(CARD_HEADING); // the routing card is not a tier: unaffected
  });
});
