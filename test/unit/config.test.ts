// The config layer: freshness.watch as off/on/auto with booleans mapped (ADR 0010) in both layers, sources,
// warnings, saving.
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { CONFIG_KEY_NAMES, CONFIG_KEYS, defaultConfig, parseWatchMode } from "../../src/config/keys.ts";
import { loadConfig } from "../../src/config/load.ts";
import { saveConfigValue } from "../../src/config/save.ts";

const created: string[] = [];
afterAll(() => {
  for (const dir of created) rmSync(dir, { recursive: true, force: true });
});

function workspace(files: { global?: unknown; project?: unknown; rawGlobal?: string; rawProject?: string } = {}) {
  const root = mkdtempSync(join(tmpdir(), "pi-cgc-config-"));
  created.push(root);
  const agentDir = join(root, "agent");
  const cwd = join(root, "repo");
  mkdirSync(agentDir, { recursive: true });
  mkdirSync(join(cwd, ".pi"), { recursive: true });
  const globalText = files.rawGlobal ?? (files.global === undefined ? undefined : JSON.stringify(files.global));
  const projectText = files.rawProject ?? (files.project === undefined ? undefined : JSON.stringify(files.project));
  if (globalText !== undefined) writeFileSync(join(agentDir, "cgc.json"), globalText);
  if (projectText !== undefined) writeFileSync(join(cwd, ".pi", "cgc.json"), projectText);
  return { cwd, agentDir, env: (extra: Record<string, string> = {}) => ({ PI_CODING_AGENT_DIR: agentDir, ...extra }) };
}

describe("parseWatchMode (ADR 0010)", () => {
  it.each([
    [true, "on"],
    [false, "off"],
    ["true", "on"],
    ["YES", "on"],
    [" on ", "on"],
    ["1", "on"],
    ["false", "off"],
    ["No", "off"],
    ["off", "off"],
    ["0", "off"],
    ["auto", "auto"],
    [" AUTO ", "auto"],
  ])("%j → %s", (raw, expected) => {
    expect(parseWatchMode(raw)).toEqual({ ok: true, value: expected });
  });

  it.each([["sometimes"], [""], [1], [null], [{}], ["autox"]])("%j is invalid", (raw) => {
    expect(parseWatchMode(raw).ok).toBe(false);
  });

  it("auto never comes from a boolean", () => {
    fc.assert(
      fc.property(fc.boolean(), (value) => {
        const parsed = parseWatchMode(value);
        return parsed.ok && parsed.value !== "auto";
      }),
    );
  });
});

describe("loadConfig layers", () => {
  it("defaults are unchanged: watch off, liveness 15000, autoCreate false, tiers as ADR 0009 says", () => {
    const ws = workspace();
    const loaded = loadConfig({ cwd: ws.cwd, env: ws.env() });
    expect(loaded.values).toEqual(defaultConfig());
    expect(loaded.values["freshness.watch"]).toBe("off");
    expect(loaded.values["freshness.watcherLivenessMs"]).toBe(15_000);
    expect(loaded.values["lifecycle.autoCreate"]).toBe(false);
    expect(loaded.values["proactive.sessionNote"]).toBe(true);
    expect(loaded.values["proactive.driftSteers"]).toBe(false);
    expect(loaded.values["proactive.resultAnnotations"]).toBe(false);
    expect(loaded.sources["freshness.watch"]).toEqual({ kind: "default" });
    expect(loaded.warnings).toEqual([]);
  });

  it.each([
    [true, "on"],
    [false, "off"],
    ["on", "on"],
    ["off", "off"],
    ["auto", "auto"],
  ])("freshness.watch = %j in the project file → %s, source recorded", (raw, expected) => {
    const ws = workspace({ project: { freshness: { watch: raw } } });
    const loaded = loadConfig({ cwd: ws.cwd, env: ws.env() });
    expect(loaded.values["freshness.watch"]).toBe(expected);
    expect(loaded.sources["freshness.watch"]).toEqual({ kind: "project", path: join(ws.cwd, ".pi", "cgc.json") });
  });

  it.each([
    ["true", "on"],
    ["false", "off"],
    ["on", "on"],
    ["off", "off"],
    ["auto", "auto"],
  ])("CGC_FRESHNESS_WATCH=%s → %s, source env", (raw, expected) => {
    const ws = workspace({ project: { freshness: { watch: "off" } } });
    const loaded = loadConfig({ cwd: ws.cwd, env: ws.env({ CGC_FRESHNESS_WATCH: raw }) });
    expect(loaded.values["freshness.watch"]).toBe(expected);
    expect(loaded.sources["freshness.watch"]).toEqual({ kind: "env", variable: "CGC_FRESHNESS_WATCH" });
  });

  it("an invalid watch value is skipped with a warning naming key, value and source; lower layers apply", () => {
    const ws = workspace({ global: { freshness: { watch: "auto" } }, project: { "freshness.watch": "sometimes" } });
    const loaded = loadConfig({ cwd: ws.cwd, env: ws.env({ CGC_FRESHNESS_WATCH: "perhaps" }) });
    expect(loaded.values["freshness.watch"]).toBe("auto");
    expect(loaded.sources["freshness.watch"]).toEqual({ kind: "global", path: join(ws.agentDir, "cgc.json") });
    expect(loaded.warnings).toHaveLength(2);
    expect(loaded.warnings[0]).toMatch(/freshness\.watch = "sometimes" from .*\.pi\/cgc\.json/);
    expect(loaded.warnings[1]).toMatch(/freshness\.watch = "perhaps" from environment variable CGC_FRESHNESS_WATCH/);
  });

  it.each([[0], [-5], [1.5], ["abc"], ["12ms"], [""], [true]])(
    "freshness.watcherLivenessMs = %j is skipped with a warning in the file layer",
    (raw) => {
      const ws = workspace({ project: { freshness: { watcherLivenessMs: raw } } });
      const loaded = loadConfig({ cwd: ws.cwd, env: ws.env() });
      expect(loaded.values["freshness.watcherLivenessMs"]).toBe(15_000);
      expect(loaded.warnings.join("\n")).toContain("freshness.watcherLivenessMs");
    },
  );

  it.each([["0"], ["-5"], ["1.5"], ["abc"], [""]])(
    "CGC_FRESHNESS_WATCHER_LIVENESS_MS=%j is skipped with a warning in the env layer",
    (raw) => {
      const ws = workspace();
      const loaded = loadConfig({ cwd: ws.cwd, env: ws.env({ CGC_FRESHNESS_WATCHER_LIVENESS_MS: raw }) });
      expect(loaded.values["freshness.watcherLivenessMs"]).toBe(15_000);
      expect(loaded.warnings.join("\n")).toContain("CGC_FRESHNESS_WATCHER_LIVENESS_MS");
    },
  );

  it("a valid liveness value in each layer, the higher layer winning", () => {
    const ws = workspace({
      global: { freshness: { watcherLivenessMs: 500 } },
      project: { freshness: { watcherLivenessMs: "750" } },
    });
    expect(loadConfig({ cwd: ws.cwd, env: ws.env() }).values["freshness.watcherLivenessMs"]).toBe(750);
    const fromEnv = loadConfig({ cwd: ws.cwd, env: ws.env({ CGC_FRESHNESS_WATCHER_LIVENESS_MS: "900" }) });
    expect(fromEnv.values["freshness.watcherLivenessMs"]).toBe(900);
    expect(fromEnv.sources["freshness.watcherLivenessMs"]).toEqual({
      kind: "env",
      variable: "CGC_FRESHNESS_WATCHER_LIVENESS_MS",
    });
  });

  it("malformed JSON in one file: one warning names the file, the other layers still apply", () => {
    const ws = workspace({ rawGlobal: "{ not json", project: { lifecycle: { autoCreate: true } } });
    const loaded = loadConfig({ cwd: ws.cwd, env: ws.env({ CGC_WORKTREE_MODE: "isolate" }) });
    expect(loaded.values["lifecycle.autoCreate"]).toBe(true);
    expect(loaded.values["worktree.mode"]).toBe("isolate");
    expect(loaded.warnings).toHaveLength(1);
    expect(loaded.warnings[0]).toContain(join(ws.agentDir, "cgc.json"));
  });

  it("unknown keys are reported, not applied", () => {
    const ws = workspace({ project: { freshness: { wacth: "on" } } });
    const loaded = loadConfig({ cwd: ws.cwd, env: ws.env() });
    expect(loaded.warnings).toEqual([expect.stringContaining('unknown config key "freshness.wacth"')]);
  });

  it("every key has an environment variable and parses its own default", () => {
    const variables = new Set(CONFIG_KEY_NAMES.map((name) => CONFIG_KEYS[name].env));
    expect(variables.size).toBe(CONFIG_KEY_NAMES.length);
    for (const name of CONFIG_KEY_NAMES) {
      const def = CONFIG_KEYS[name];
      const formatted = (def.type.format as (value: unknown) => string)(def.default);
      expect(def.type.parse(formatted)).toEqual({ ok: true, value: def.default });
    }
  });

  it("no file value makes the loader throw (random JSON in both files)", () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.jsonValue(), (global, project) => {
        const ws = workspace({ global, project });
        const loaded = loadConfig({ cwd: ws.cwd, env: ws.env() });
        for (const name of CONFIG_KEY_NAMES) expect(CONFIG_KEYS[name].type.parse(loaded.values[name]).ok).toBe(true);
      }),
      { numRuns: 60 },
    );
  });
});

describe("saveConfigValue", () => {
  it("writes the validated value, keeps every other key (known or not), and leaves no temp file", async () => {
    const ws = workspace({
      project: { theirs: { keep: [1, 2] }, "lifecycle.autoCreate": true, freshness: { watch: "off" } },
    });
    const path = join(ws.cwd, ".pi", "cgc.json");
    expect(await saveConfigValue(path, "freshness.watch", "auto")).toEqual({ ok: true, path });
    expect(JSON.parse(readFileSync(path, "utf8"))).toEqual({
      theirs: { keep: [1, 2] },
      "lifecycle.autoCreate": true,
      freshness: { watch: "auto" },
    });
    expect(readdirSync(join(ws.cwd, ".pi"))).toEqual(["cgc.json"]);
  });

  it("refuses an invalid value and a broken file, changing nothing", async () => {
    const ws = workspace({ rawProject: "{ broken" });
    const path = join(ws.cwd, ".pi", "cgc.json");
    expect((await saveConfigValue(path, "freshness.watcherLivenessMs", "0")).ok).toBe(false);
    expect((await saveConfigValue(path, "freshness.watch", "on")).ok).toBe(false);
    expect(readFileSync(path, "utf8")).toBe("{ broken");
  });

  it("waits for another saver's lock without stopping this process, and saves once it is released", async () => {
    const ws = workspace({ project: { theirs: 1 } });
    const path = join(ws.cwd, ".pi", "cgc.json");
    mkdirSync(`${path}.lock`); // another process is saving
    // Released from a timer: a save that blocked the event loop would wait out its 5 s and give up.
    const release = setTimeout(() => rmSync(`${path}.lock`, { recursive: true }), 50);
    expect(await saveConfigValue(path, "freshness.watch", "auto")).toEqual({ ok: true, path });
    clearTimeout(release);
    expect(JSON.parse(readFileSync(path, "utf8"))).toEqual({ theirs: 1, freshness: { watch: "auto" } });
    expect(readdirSync(join(ws.cwd, ".pi"))).toEqual(["cgc.json"]);
  });
});
