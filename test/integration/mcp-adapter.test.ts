// With the real pi-mcp-adapter serving the real `cgc mcp start`, pi-cgc registers none of the tools the
// adapter already gives the agent, keeps its gap tools, and the routing card names the adapter's tools.
// The adapter imports @earendil-works/* at run time, which pi 0.73 cannot resolve ("Cannot find module
// '@earendil-works/pi-coding-agent'"), so this runs on the newest pi line (Node 22, pi 1.6.0, installed
// by scripts/setup.mjs under .cache/compat) over RPC, with a scripted model (test/fixtures/pi/faux-provider.ts).
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CARD_HEADING } from "../../src/agent/card.ts";
import { type CgcHome, cgcBinary, EXTENSION_ENTRY, makeCgcHome, PROJECT_ROOT } from "../helpers/cgc-env.ts";
import { type Frame, type PiRpc, startPiRpc } from "../helpers/pi-rpc.ts";
import { waitFor } from "../helpers/pi-sdk.ts";
import { indexedTinyRepo, type TinyRepo } from "../helpers/repos.ts";

const COMPAT = join(PROJECT_ROOT, ".cache", "compat", "node_modules");
const NODE = join(COMPAT, "node", "bin", "node");
const CLI = join(COMPAT, "@earendil-works", "pi-coding-agent", "dist", "cli.js");
const ADAPTER = join(PROJECT_ROOT, "node_modules", "pi-mcp-adapter", "index.ts");
const FAUX = join(PROJECT_ROOT, "test", "fixtures", "pi", "faux-provider.ts");
const EXTENSION = EXTENSION_ENTRY;

/** pi-cgc's own tools that answer what the CGC catalog answers; the adapter's versions must win. */
const DUPLICATES = ["cgc_find", "cgc_relations", "cgc_dead_code", "cgc_complex_functions", "cgc_cypher", "cgc_stats"];
const GAP_TOOLS = ["cgc_doctor", "cgc_contexts", "cgc_bundle_export"];

interface Report {
  systemPrompt: string;
  tools: string[];
  registered: string[];
}

let home: CgcHome;
let repo: TinyRepo;
let work: string;
let pi: PiRpc | undefined;

beforeAll(async () => {
  expect(existsSync(NODE) && existsSync(CLI), "compat runtime missing: run node scripts/setup.mjs").toBe(true);
  expect(existsSync(ADAPTER), "pi-mcp-adapter missing: run npm install").toBe(true);
  home = makeCgcHome();
  repo = await indexedTinyRepo(home.env);
  work = mkdtempSync(join(tmpdir(), "pi-cgc-adapter-"));
  // The adapter's user-global config (HOME is the throw-away CGC home): one stdio server named cgc,
  // its tools registered directly (`cgc_<tool>`), connected only when a tool is called.
  mkdirSync(join(home.home, ".config", "mcp"), { recursive: true });
  writeFileSync(
    join(home.home, ".config", "mcp", "mcp.json"),
    JSON.stringify({
      settings: { toolPrefix: "server", notifyOnStartupConnect: false },
      mcpServers: {
        cgc: { command: cgcBinary(), args: ["mcp", "start"], cwd: repo.path, directTools: true, lifecycle: "lazy" },
      },
    }),
  );
});

afterAll(async () => {
  await pi?.stop();
  repo?.cleanup();
  home?.cleanup();
  if (work) rmSync(work, { recursive: true, force: true });
});

function start(agentDir: string, script: unknown[]): PiRpc {
  const scriptPath = join(work, `script-${Date.now()}.json`);
  writeFileSync(scriptPath, JSON.stringify(script));
  return startPiRpc({
    node: NODE,
    cli: CLI,
    cwd: repo.path,
    env: {
      HOME: home.home,
      PI_CODING_AGENT_DIR: agentDir,
      PI_OFFLINE: "1",
      CGC_EXECUTABLE: cgcBinary(),
      PI_CGC_FAUX_SCRIPT: scriptPath,
    },
    args: [
      "--no-session",
      "--no-extensions",
      "-e",
      FAUX,
      "-e",
      ADAPTER,
      "-e",
      EXTENSION,
      "--provider",
      "faux",
      "--model",
      "faux-1",
    ],
  });
}

const chip = (frame: Frame) =>
  frame.type === "extension_ui_request" && frame.method === "setStatus" && frame.statusKey === "cgc"
    ? String(frame.statusText)
    : undefined;

async function prompt(rpc: PiRpc, message: string): Promise<void> {
  const settled = rpc.frames.filter((frame) => frame.type === "agent_settled").length;
  const response = await rpc.request({ type: "prompt", message });
  expect(response.success, JSON.stringify(response)).toBe(true);
  await rpc.waitFor(() => rpc.frames.filter((frame) => frame.type === "agent_settled").length > settled, 120_000);
}

function reports(rpc: PiRpc): Report[] {
  return rpc.frames.flatMap((frame) => {
    const message =
      frame.type === "message_end"
        ? (frame.message as { role: string; content: Array<{ type: string; text?: string }> })
        : undefined;
    const text = message?.role === "assistant" ? message.content.find((part) => part.type === "text")?.text : undefined;
    return text?.startsWith("{") ? [JSON.parse(text) as Report] : [];
  });
}

describe("pi-cgc beside pi-mcp-adapter serving cgc mcp start (pi 1.6.0, Node 22)", () => {
  it("registers none of the adapter's tools, keeps its gap tools, and the card names the adapter's tools", async () => {
    const agentDir = join(work, "agent");
    mkdirSync(agentDir);
    // First session: the adapter has no tool metadata yet and fetches it from cgc (its documented first
    // run). Wait for its cache, then end that session so the next one starts from the cache.
    pi = start(agentDir, []);
    const cache = join(agentDir, "mcp-cache.json");
    await waitFor(
      () => existsSync(cache) && readFileSync(cache, "utf8").includes("analyze_code_relationships"),
      "the adapter's tool cache",
      90_000,
    );
    await pi.stop();

    pi = start(agentDir, [
      { report: true },
      { tool: "cgc_analyze_code_relationships", args: { query_type: "find_callers", target: "normalize" } },
      { report: true },
    ]);
    await pi.waitFor((frame) => /^cgc ready/.test(chip(frame) ?? ""), 90_000);
    await prompt(pi, "what is in this workspace?");
    await prompt(pi, "who calls normalize?");

    const seen = reports(pi);
    expect(seen).toHaveLength(2);
    for (const report of seen) {
      for (const name of DUPLICATES) {
        expect(report.registered, `${name} registered`).not.toContain(name);
        expect(report.tools).not.toContain(name);
      }
      for (const name of GAP_TOOLS) expect(report.tools).toContain(name);
      expect(report.tools).toContain("cgc_analyze_code_relationships");
      const card = report.systemPrompt.slice(report.systemPrompt.indexOf(CARD_HEADING));
      expect(card.startsWith(CARD_HEADING), report.systemPrompt.slice(-2000)).toBe(true);
      expect(card).toContain(
        "impact of a change, importers, class hierarchy, overrides → cgc_analyze_code_relationships",
      );
      expect(card).toContain("→ cgc_find_code");
      expect(card).not.toMatch(/→ cgc_(find|relations|dead_code|complex_functions|cypher|stats)\b/);
    }

    const result = pi.frames.find(
      (frame) => frame.type === "tool_execution_end" && frame.toolName === "cgc_analyze_code_relationships",
    );
    const text = JSON.stringify(result?.result);
    for (const caller of repo.facts.callers.normalize ?? [])
      expect(text).toContain(`\\"caller_function\\": \\"${caller}\\"`);
    expect(pi.frames.filter((frame) => frame.type === "extension_error")).toEqual([]);
  });
});
