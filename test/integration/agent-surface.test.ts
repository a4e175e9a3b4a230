// The agent surface with the real pi (SDK, faux model) and the real cgc on tinyRepo(): the graph tools
// answer with real callers at real path:line, the routing card is in the system prompt on every prompt
// while the graph is ready and never before, and big results go through the output policy.
import { readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { type Context, fauxAssistantMessage, fauxToolCall } from "@mariozechner/pi-ai";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { CARD_HEADING } from "../../src/agent/card.ts";
import { type CgcHome, cgcBinary, cgcExec, makeCgcHome, PROJECT_ROOT } from "../helpers/cgc-env.ts";
import { restoreEnv, restoreSuiteEnv, suiteEnv, withEnv } from "../helpers/env.ts";
import { EXTENSION_PATH, type PiHarness, recordingUi, startPi, toolResults, waitFor } from "../helpers/pi-sdk.ts";
import { caseRepos, type TinyRepo } from "../helpers/repos.ts";

let home: CgcHome;
const harnesses: PiHarness[] = [];
const repos = caseRepos();

beforeAll(() => {
  home = makeCgcHome();
  suiteEnv({ HOME: home.home });
});
afterEach(async () => {
  for (const h of harnesses.splice(0)) await h.dispose();
  repos.cleanup();
  restoreEnv();
});
afterAll(() => {
  restoreSuiteEnv();
  home.cleanup();
});

async function repo(indexed: boolean): Promise<TinyRepo> {
  return indexed ? await repos.indexed(home.env) : repos.tiny();
}

async function session(cwd: string, chip: RegExp, extensionPaths?: string[]) {
  const ui = recordingUi();
  const h = await startPi({ cwd, ui, extensionPaths });
  harnesses.push(h);
  await waitFor(() => chip.test(ui.statuses.get("cgc") ?? ""), `chip ${chip}`);
  return { h, ui };
}

/** Tool result texts of the session, in order. */

/** A faux step that records the system prompt it was given. */
function capture(prompts: string[], reply = "ok") {
  return (context: Context) => {
    prompts.push(context.systemPrompt ?? "");
    return fauxAssistantMessage(reply);
  };
}

function lineOf(repoPath: string, file: string, line: number): string {
  return readFileSync(join(repoPath, file), "utf8").split("\n")[line - 1] ?? "";
}

beforeAll(() => {
  suiteEnv({ CGC_EXECUTABLE: cgcBinary() });
});

describe("graph tools through the faux model", () => {
  it("callers of normalize are alpha, beta and main at their call sites; orphan has none", async () => {
    const tiny = await repo(true);
    const { h } = await session(tiny.path, /^cgc ready/);
    h.faux.setResponses([
      fauxAssistantMessage(fauxToolCall("cgc_relations", { relation: "callers", target: "normalize" }), {
        stopReason: "toolUse",
      }),
      fauxAssistantMessage(fauxToolCall("cgc_relations", { relation: "callers", target: "orphan" }), {
        stopReason: "toolUse",
      }),
      fauxAssistantMessage(fauxToolCall("cgc_relations", { relation: "callers", target: "no_such_function" }), {
        stopReason: "toolUse",
      }),
      fauxAssistantMessage("done"),
    ]);
    await h.session.prompt("who calls normalize, and orphan?");
    const [normalize, orphan, missing] = toolResults(h);

    expect(normalize?.isError).toBe(false);
    const callers = [
      ...(normalize?.text ?? "").matchAll(
        /^- (\w+) {2}(\S+):(\d+) {2}\(calls normalize; \w+ defined at line (\d+)\)$/gm,
      ),
    ];
    expect(callers.map((m) => m[1]).sort()).toEqual(tiny.facts.callers.normalize);
    for (const [, name, file, callLine, defLine] of callers) {
      expect(lineOf(tiny.path, file as string, Number(callLine))).toContain("normalize(");
      expect(lineOf(tiny.path, file as string, Number(defLine))).toMatch(new RegExp(`^def ${name}\\(`));
    }

    expect(orphan?.isError).toBe(false);
    expect(orphan?.text).toBe(
      "No callers of orphan: none in the graph, and no call of that name that pi-cgc could not rule out.",
    );
    expect(missing?.isError).toBe(true);
    expect(missing?.text).toMatch(/^NOT_FOUND: no function or class named "no_such_function"/);
    expect(missing?.text).toMatch(/\nRemedy: .+/);
  });
});

describe("the routing card", () => {
  it("is in the system prompt of prompts 1, 2 and 3 while ready, byte-identical, naming the session's tools", async () => {
    const tiny = await repo(true);
    const { h } = await session(tiny.path, /^cgc ready/);
    const prompts: string[] = [];
    h.faux.setResponses([capture(prompts), capture(prompts), capture(prompts)]);
    for (const text of ["one", "two", "three"]) await h.session.prompt(text);
    expect(prompts).toHaveLength(3);
    const cards = prompts.map((prompt) => prompt.slice(prompt.indexOf(CARD_HEADING)));
    for (const card of cards) {
      expect(card.startsWith(CARD_HEADING)).toBe(true);
      expect(card).toBe(cards[0]);
    }
    const card = cards[0] as string;
    expect(card).toContain("callers, callees, call chains, importers");
    expect(card).toContain(
      "- what will this change break (changed signatures of uncommitted edits, their callers) → cgc_impact",
    );
    const named = [...card.matchAll(/\b(cgc_\w+|grep|read|bash)\b/g)].map((m) => m[1] as string);
    const tools = new Set(h.session.getActiveToolNames());
    for (const name of named) expect(tools.has(name), `${name} is active`).toBe(true);
    expect(named).toContain("cgc_relations");
    expect(named).toContain("cgc_impact");
    expect(card).toMatch(/Exact text.*keep using read/);
  });

  it("is absent while cgc is missing", async () => {
    const tiny = await repo(true);
    withEnv({ CGC_EXECUTABLE: "/nonexistent/cgc" });
    const { h } = await session(tiny.path, /^cgc unavailable/);
    const prompts: string[] = [];
    h.faux.setResponses([capture(prompts), capture(prompts)]);
    await h.session.prompt("one");
    await h.session.prompt("two");
    for (const prompt of prompts) expect(prompt).not.toContain(CARD_HEADING);
    expect(h.session.getActiveToolNames().filter((name) => name.startsWith("cgc_"))).toEqual([]);
  });

  it("is absent while the workspace is unindexed, and present from the first prompt after /cgc index", async () => {
    const tiny = await repo(false);
    const { h, ui } = await session(tiny.path, /^cgc unindexed/);
    const prompts: string[] = [];
    h.faux.setResponses([capture(prompts), capture(prompts)]);
    await h.session.prompt("before");
    expect(prompts[0]).not.toContain(CARD_HEADING);
    expect(h.session.getActiveToolNames().filter((name) => name.startsWith("cgc_relations"))).toEqual([]);

    ui.confirmAnswer = true;
    await h.session.prompt("/cgc index");
    expect(ui.confirms.at(-1)?.message).toContain(tiny.path);
    await h.session.prompt("after");
    expect(prompts[1]).toContain(CARD_HEADING);
    expect(h.session.getActiveToolNames()).toContain("cgc_relations");
  });
});

describe("tool output through the output policy", () => {
  it("caps an oversized result with a marker and a private spill file outside the workspace, gone after quit", async () => {
    withEnv({ CGC_OUTPUT_MAX_BYTES: "2048", CGC_OUTPUT_MAX_LINES: "40" });
    const tiny = await repo(true);
    const { h } = await session(tiny.path, /^cgc ready/);
    h.faux.setResponses([
      fauxAssistantMessage(
        fauxToolCall("cgc_cypher", {
          query: "MATCH (f:Function) RETURN f.name AS name, f.path AS path, f.source AS source ORDER BY path, name",
        }),
        { stopReason: "toolUse" },
      ),
      fauxAssistantMessage("done"),
    ]);
    await h.session.prompt("dump the functions");
    const [result] = toolResults(h);
    expect(result?.isError).toBe(false);
    const marker = /\[… output capped: (\S+) \((\d+) lines\) in all, .* omitted here; full text: (\S+) …\]/.exec(
      result?.text ?? "",
    );
    expect(marker, result?.text).not.toBeNull();
    const spill = marker?.[3] as string;
    expect(spill.startsWith(tiny.path)).toBe(false);
    expect(statSync(spill).mode & 0o777).toBe(0o600);
    expect(readFileSync(spill, "utf8")).toContain("def orphan(value):");
    harnesses.splice(harnesses.indexOf(h), 1);
    await h.dispose();
    expect(() => statSync(spill)).toThrow();
  });

  it("keeps a 40-hex git SHA and a long path intact", async () => {
    const tiny = await repo(true);
    const { h } = await session(tiny.path, /^cgc ready/);
    const longPath = `/${Array.from({ length: 12 }, (_, i) => `segment-${i}-${"x".repeat(20)}`).join("/")}/file.py`;
    h.faux.setResponses([
      fauxAssistantMessage(
        fauxToolCall("cgc_cypher", {
          query: "RETURN $sha AS sha, $path AS path",
          params: { sha: tiny.head, path: longPath },
        }),
        { stopReason: "toolUse" },
      ),
      fauxAssistantMessage("done"),
    ]);
    await h.session.prompt("echo");
    const [result] = toolResults(h);
    expect(tiny.head).toMatch(/^[0-9a-f]{40}$/);
    expect(result?.text).toContain(tiny.head);
    expect(result?.text).toContain(longPath);
  });

  it("refuses a write query before cgc sees it", async () => {
    const tiny = await repo(true);
    const { h } = await session(tiny.path, /^cgc ready/);
    h.faux.setResponses([
      fauxAssistantMessage(fauxToolCall("cgc_cypher", { query: "MATCH (f:Function) DETACH DELETE f" }), {
        stopReason: "toolUse",
      }),
      fauxAssistantMessage("done"),
    ]);
    await h.session.prompt("delete everything");
    const [result] = toolResults(h);
    expect(result?.isError).toBe(true);
    expect(result?.text).toMatch(/^NOT_ALLOWED: not a read-only query/);
    const count = await cgcExec(["query", "MATCH (f:Function) RETURN count(f) AS n"], {
      cwd: tiny.path,
      env: home.env,
    });
    expect(count.stdout).toMatch(/"n": [1-9]/);
  });
});

describe("beside CGC's MCP tools", () => {
  it("registers none of its duplicates when the catalog's tools are present (stand-in adapter, pi 0.73)", async () => {
    const tiny = await repo(true);
    const standIn = join(PROJECT_ROOT, "test", "fixtures", "pi", "catalog-tools.ts");
    const { h } = await session(tiny.path, /^cgc ready/, [standIn, EXTENSION_PATH]);
    const prompts: string[] = [];
    h.faux.setResponses([capture(prompts)]);
    await h.session.prompt("one");
    const registered = h.session.getAllTools().map((tool) => tool.name);
    for (const name of [
      "cgc_find",
      "cgc_relations",
      "cgc_dead_code",
      "cgc_complex_functions",
      "cgc_cypher",
      "cgc_stats",
    ]) {
      expect(registered).not.toContain(name);
    }
    expect(h.session.getActiveToolNames()).toEqual(
      expect.arrayContaining(["cgc_doctor", "cgc_contexts", "cgc_bundle_export"]),
    );
    const card = prompts[0]?.slice(prompts[0].indexOf(CARD_HEADING)) ?? "";
    expect(card.startsWith(CARD_HEADING)).toBe(true);
    expect(card).toContain("→ mcp__cgc__analyze_code_relationships");
    expect(card).toContain("→ mcp__cgc__find_code");
  });
});
