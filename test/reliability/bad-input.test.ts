// Bad input: every configuration key with wrong types, out-of-range numbers and huge strings, in every layer;
// malformed JSON in either file; tool parameters that are missing, wrong or hostile (rejected before cgc
// sees them: the process-wide spawn counter does not move); workspace paths with spaces, brackets and
// non-ASCII letters, through the real pi and the real cgc.
import { mkdirSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fauxAssistantMessage, fauxToolCall } from "@mariozechner/pi-ai";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { totalSpawns } from "../../src/cgc/children.ts";
import { CONFIG_KEY_NAMES, CONFIG_KEYS, type ConfigKey, defaultConfig } from "../../src/config/keys.ts";
import { loadConfig } from "../../src/config/load.ts";
import { type CgcHome, cgcBinary, makeCgcHome } from "../helpers/cgc-env.ts";
import { restoreEnv, restoreSuiteEnv, suiteEnv, withEnv } from "../helpers/env.ts";
import { type PiHarness, type RecordingUi, recordingUi, startPi, toolResults, waitFor } from "../helpers/pi-sdk.ts";
import { caseRepos, commitAll } from "../helpers/repos.ts";
import { expectNoCgcLeft, graphRecord } from "./support.ts";

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
  await expectNoCgcLeft(home.home);
  repos.cleanup();
});
afterAll(() => {
  restoreSuiteEnv();
  home.cleanup();
});

async function startSession(cwd: string, ui: RecordingUi = recordingUi()) {
  const h = await startPi({ cwd, ui });
  harnesses.push(h);
  return { h, ui, chip: () => ui.statuses.get("cgc") };
}

/** The agent makes these tool calls in one run (faux model), then stops. */
async function agentCalls(h: PiHarness, calls: Array<[string, Record<string, unknown>]>): Promise<void> {
  h.faux.setResponses([
    fauxAssistantMessage(
      calls.map(([name, args]) => fauxToolCall(name, args)),
      { stopReason: "toolUse" },
    ),
    fauxAssistantMessage("done"),
  ]);
  await h.session.prompt("go");
}

// ---------------------------------------------------------------------------------------------------
// Configuration

const HUGE = "x".repeat(1024 * 1024);

/** Values no key accepts, whatever its type (the unit tests hold what each accepts). */
const WRONG_FOR_EVERY_KEY: unknown[] = [null, [], {}, [1, 2], { nested: true }, Number.NaN, "", "   "];

/** Values wrong for a key of this type: wrong JSON types, numbers out of range or not whole, huge strings. */
function wrongValues(name: ConfigKey): unknown[] {
  const type = CONFIG_KEYS[name].type;
  const label = type.label;
  if (label.includes("integer")) {
    const range = /from (\d+) to (\d+)/.exec((type.parse(1.5) as { error: string }).error) ?? [];
    const [min, max] = [Number(range[1] ?? 0), Number(range[2] ?? 0)];
    return [true, "ten", 1.5, "1e3", -1, min - 1, max + 1, 2 ** 53, "9".repeat(400), HUGE];
  }
  if (label === "boolean") return [1, 0, "maybe", "2", HUGE];
  if (label === "string") return [42, true, "y".repeat(4097), HUGE];
  if (name === "freshness.watch") return [1, "sometimes", "yes please", HUGE]; // booleans are on/off (ADR 0010)
  return [true, 1, "sometimes", HUGE]; // enums
}

interface Workspace {
  cwd: string;
  agentDir: string;
}

function workspace(project?: string, global?: string): Workspace {
  const cwd = mkdtempSync(join(tmpdir(), "pi-cgc-badcfg-"));
  const agentDir = mkdtempSync(join(tmpdir(), "pi-cgc-agent-"));
  if (project !== undefined) {
    mkdirSync(join(cwd, ".pi"));
    writeFileSync(join(cwd, ".pi", "cgc.json"), project);
  }
  if (global !== undefined) writeFileSync(join(agentDir, "cgc.json"), global);
  return { cwd, agentDir };
}

describe("configuration: wrong values in every key and layer", () => {
  it.each(CONFIG_KEY_NAMES)(
    "%s: every wrong value is skipped with one warning naming it; the default stays",
    (name) => {
      const values = [...WRONG_FOR_EVERY_KEY, ...wrongValues(name)];
      for (const value of values) {
        for (const layer of ["global", "project", "env"] as const) {
          if (layer === "env" && typeof value !== "string") continue; // the environment holds strings only
          const file = JSON.stringify({ [name]: value });
          const ws =
            layer === "project" ? workspace(file) : layer === "global" ? workspace(undefined, file) : workspace();
          const env = {
            PI_CODING_AGENT_DIR: ws.agentDir,
            ...(layer === "env" ? { [CONFIG_KEYS[name].env]: value as string } : {}),
          };
          const loaded = loadConfig({ cwd: ws.cwd, env });
          const what = `${name} = ${JSON.stringify(value)?.slice(0, 40)} in ${layer}`;
          expect(loaded.values[name], what).toEqual(defaultConfig()[name]);
          expect(loaded.sources[name], what).toEqual({ kind: "default" });
          expect(loaded.warnings, what).toHaveLength(1);
          expect(loaded.warnings[0], what).toContain(name);
          // A huge value is named, not copied: the warning stays one readable line.
          expect(loaded.warnings[0]?.length, what).toBeLessThan(600);
        }
      }
    },
  );

  it("one bad key does not cost the others: a file with one wrong and one right value applies the right one", () => {
    const ws = workspace(JSON.stringify({ timeouts: { probeMs: "soon", queryMs: 5000 } }));
    const loaded = loadConfig({ cwd: ws.cwd, env: { PI_CODING_AGENT_DIR: ws.agentDir } });
    expect(loaded.values["timeouts.queryMs"]).toBe(5000);
    expect(loaded.values["timeouts.probeMs"]).toBe(defaultConfig()["timeouts.probeMs"]);
    expect(loaded.warnings).toEqual([expect.stringContaining("timeouts.probeMs")]);
  });

  it.each([
    ["not JSON", "{ freshness: on"],
    ["truncated", '{"freshness": {"watch": "on"'],
    ["an array", "[1, 2]"],
    ["a string", '"on"'],
    ["binary", "\u0000\u0001\u00ff"],
    ["empty", ""],
  ])("a project file that is %s: one warning naming the file; global and environment still apply", (_what, raw) => {
    const ws = workspace(raw, JSON.stringify({ lifecycle: { autoCreate: true } }));
    const loaded = loadConfig({
      cwd: ws.cwd,
      env: { PI_CODING_AGENT_DIR: ws.agentDir, CGC_FRESHNESS_AUTO_SYNC: "false" },
    });
    expect(loaded.values["lifecycle.autoCreate"]).toBe(true);
    expect(loaded.values["freshness.autoSync"]).toBe(false);
    expect(loaded.warnings).toEqual([expect.stringContaining(join(ws.cwd, ".pi", "cgc.json"))]);
  });

  it("both files malformed, bad environment values, through the real pi and cgc: the session works, one notice each", async () => {
    const repo = await repos.indexed(home.env);
    const agentDir = mkdtempSync(join(tmpdir(), "pi-cgc-agent-"));
    mkdirSync(join(repo.path, ".pi"));
    writeFileSync(join(repo.path, ".pi", "cgc.json"), "{ not json");
    writeFileSync(join(agentDir, "cgc.json"), '{"timeouts": ');
    withEnv({ PI_CODING_AGENT_DIR: agentDir, CGC_TIMEOUTS_PROBE_MS: "-5", CGC_FRESHNESS_WATCH: HUGE.slice(0, 10_000) });
    const { ui, chip } = await startSession(repo.path);
    await waitFor(() => chip() === "cgc ready · fresh", "a ready graph despite the bad settings");
    const warnings = ui.notices.filter((notice) => notice.level === "warning").map((notice) => notice.message);
    expect(warnings).toHaveLength(4);
    expect(warnings).toContainEqual(expect.stringContaining(join(repo.path, ".pi", "cgc.json")));
    expect(warnings).toContainEqual(expect.stringContaining(join(agentDir, "cgc.json")));
    expect(warnings).toContainEqual(expect.stringContaining("timeouts.probeMs"));
    expect(warnings).toContainEqual(expect.stringContaining("freshness.watch"));
    expect(Math.max(...warnings.map((text) => text.length))).toBeLessThan(600);
    // Nothing rewrote the user's broken files.
    expect(readFileSync(join(repo.path, ".pi", "cgc.json"), "utf8")).toBe("{ not json");
  });
});

// ---------------------------------------------------------------------------------------------------
// Tool parameters

describe("tool parameters: missing, wrong or hostile", () => {
  it("are refused before cgc sees them: no spawn, an error naming the problem, no confirmation asked", async () => {
    const repo = await repos.indexed(home.env);
    const outside = mkdtempSync(join(tmpdir(), "pi-cgc-outside-"));
    writeFileSync(join(outside, "secret.py"), "def secret():\n    return 1\n");
    symlinkSync(outside, join(repo.path, "link-out"));
    commitAll(repo.path, "a symlink leading out");
    const { h, ui, chip } = await startSession(repo.path);
    await waitFor(() => chip() === "cgc ready · fresh", "a ready graph", 300_000);
    const spawns = totalSpawns();
    const hostile: Array<[string, Record<string, unknown>, RegExp]> = [
      // Missing or wrong: pi's own schema validation, before the tool runs.
      ["cgc_relations", { relation: "callers" }, /Validation failed .*target/s],
      ["cgc_relations", { relation: "everything", target: "normalize" }, /Validation failed .*relation/s],
      [
        "cgc_relations",
        { relation: "callers_transitive", target: "normalize", depth: 99 },
        /Validation failed .*depth/s,
      ],
      ["cgc_relations", { relation: "callers", target: "normalize", depth: "deep" }, /Validation failed .*depth/s],
      ["cgc_find", {}, /Validation failed .*query/s],
      ["cgc_complex_functions", { limit: -3 }, /Validation failed .*limit/s],
      ["cgc_bundle_export", {}, /Validation failed .*output/s],
      // Paths that leave the workspace: .., absolute, through a symlink.
      ["cgc_relations", { relation: "callers", target: "normalize", file: "../../etc/passwd" }, /^NOT_ALLOWED: .*\.\./],
      ["cgc_relations", { relation: "callers", target: "normalize", file: "pkg/../../x.py" }, /^NOT_ALLOWED: /],
      ["cgc_relations", { relation: "callers", target: "normalize", file: "/etc/passwd" }, /^NOT_ALLOWED: .*outside/],
      [
        "cgc_relations",
        { relation: "callers", target: "secret", file: "link-out/secret.py" },
        /^NOT_ALLOWED: .*outside/,
      ],
      ["cgc_bundle_export", { output: "../graph.cgc" }, /^NOT_ALLOWED: /],
      ["cgc_bundle_export", { output: "link-out/graph.cgc" }, /^NOT_ALLOWED: .*outside/],
      ["cgc_bundle_export", { output: join(outside, "graph.cgc") }, /^NOT_ALLOWED: .*outside/],
      // Cypher that writes, however it is dressed.
      ["cgc_cypher", { query: "CREATE (n:Function {name: 'x'})" }, /^NOT_ALLOWED: .*CREATE/],
      ["cgc_cypher", { query: "MATCH (f:Function) DETACH DELETE f" }, /^NOT_ALLOWED: .*DETACH/],
      ["cgc_cypher", { query: "MATCH (f:Function) SET f.name = 'x' RETURN f" }, /^NOT_ALLOWED: .*SET/],
      ["cgc_cypher", { query: "match (f) merge (g:X) return g" }, /^NOT_ALLOWED: .*MERGE/],
      ["cgc_cypher", { query: "MATCH (f) RETURN f; MATCH (g) DELETE g" }, /^NOT_ALLOWED: .*one statement/],
      ["cgc_cypher", { query: "MATCH (f) WHERE f.name = 'x RETURN f" }, /^NOT_ALLOWED: .*unterminated/],
      ["cgc_cypher", { query: "MATCH (f) /* RETURN */ DELETE f" }, /^NOT_ALLOWED: .*DELETE/],
      ["cgc_cypher", { query: "CALL db.idx.fulltext.drop('File')" }, /^NOT_ALLOWED: /],
      ["cgc_cypher", { query: "COPY Function FROM '/tmp/x.csv'" }, /^NOT_ALLOWED: .*COPY/],
      ["cgc_cypher", { query: "   " }, /^NOT_ALLOWED: .*empty/],
      // Names that could reach a shell or a path.
      ["cgc_contexts", { action: "create", name: "../evil" }, /^NOT_ALLOWED: /],
      ["cgc_contexts", { action: "create", name: "x; rm -rf ~" }, /^NOT_ALLOWED: /],
      ["cgc_contexts", { action: "set_default", name: "$(reboot)" }, /^NOT_ALLOWED: /],
    ];
    await agentCalls(
      h,
      hostile.map(([name, args]) => [name, args]),
    );
    const results = toolResults(h);
    expect(results).toHaveLength(hostile.length);
    for (const [index, [name, args, expected]] of hostile.entries()) {
      const result = results[index];
      expect(result?.isError, `${name} ${JSON.stringify(args)}`).toBe(true);
      expect(result?.text, `${name} ${JSON.stringify(args)}`).toMatch(expected);
    }
    expect(totalSpawns()).toBe(spawns);
    expect(ui.confirms).toEqual([]);
    expect((await graphRecord(home.env, repo.path)).files).toBe(6); // the graph is untouched
  });
});

// ---------------------------------------------------------------------------------------------------
// Awkward workspace paths

describe("a workspace under spaces, brackets and non-ASCII letters, with app/[id]/page.tsx", () => {
  it("indexes, answers, observes an edit and verifies the sync, all with the real path", async () => {
    const repo = repos.tiny({ awkwardPath: true });
    mkdirSync(join(repo.path, "app", "[id]"), { recursive: true });
    writeFileSync(
      join(repo.path, "app", "[id]", "page.tsx"),
      "export function renderPage(id: string) {\n  return 'page ' + id;\n}\n",
    );
    commitAll(repo.path, "a Next.js-style route");
    expect(repo.path).toMatch(/dir with spaces\/\[id\] ünïcødé \(x\)/);
    const { h, ui, chip } = await startSession(repo.path);
    await waitFor(() => chip() === "cgc unindexed", "the unindexed verdict");
    ui.confirmAnswer = true;
    await h.session.prompt("/cgc index");
    await waitFor(() => chip() === "cgc ready · fresh", "ready after /cgc index", 120_000);

    await agentCalls(h, [["cgc_find", { query: "renderPage" }]]);
    expect(toolResults(h).at(-1)?.text).toContain("app/[id]/page.tsx:1");

    h.faux.setResponses([
      fauxAssistantMessage(
        fauxToolCall("edit", {
          path: "app/[id]/page.tsx",
          edits: [
            {
              oldText: "export function renderPage",
              newText: 'export function renderLayout(): string {\n  return "layout";\n}\n\nexport function renderPage',
            },
          ],
        }),
        { stopReason: "toolUse" },
      ),
      fauxAssistantMessage("done"),
    ]);
    await h.session.prompt("add a layout");
    expect(chip()).toBe("cgc ready · possibly stale");
    await waitFor(() => chip() === "cgc ready · fresh", "fresh after the verified sync", 120_000);
    expect((await graphRecord(home.env, repo.path)).functions).toContain("renderLayout");
  });
});
