// Layers, lowest first: defaults ← global cgc.json in pi's agent dir ← project .pi/cgc.json ← environment.
// A bad value is skipped with a warning naming key, value and source; the layers below still apply.
import { existsSync, readFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { CONFIG_KEY_NAMES, CONFIG_KEYS, type Config, type ConfigKey, defaultConfig } from "./keys.ts";

export type Source =
  | { kind: "default" }
  | { kind: "global"; path: string }
  | { kind: "project"; path: string }
  | { kind: "env"; variable: string };

export interface LoadedConfig {
  values: Config;
  sources: Record<ConfigKey, Source>;
  warnings: string[];
  globalPath: string;
  projectPath: string;
}

export interface ConfigLocations {
  /** The workspace root: the project file is `<cwd>/.pi/cgc.json`. */
  cwd: string;
  env?: NodeJS.ProcessEnv;
}

/**
 * pi's agent directory, expanded the way pi expands it (a leading ~ is the home directory). Not pi's own
 * `getAgentDir` (exported on 0.73 and 1.x alike) because that reads only `process.env`, and this one reads
 * the environment it is given: the session's (`createCgcSession`'s `env` option), which tests set per session.
 */
export function agentDir(env: NodeJS.ProcessEnv = process.env): string {
  const configured = env.PI_CODING_AGENT_DIR?.trim();
  if (!configured) return join(homedir(), ".pi", "agent");
  return configured === "~" || configured.startsWith("~/") ? join(homedir(), configured.slice(1)) : configured;
}

export function configPaths({ cwd, env = process.env }: ConfigLocations) {
  return { globalPath: join(agentDir(env), "cgc.json"), projectPath: join(cwd, ".pi", "cgc.json") };
}

export function loadConfig(locations: ConfigLocations): LoadedConfig {
  const env = locations.env ?? process.env;
  const { globalPath, projectPath } = configPaths(locations);
  const values = defaultConfig() as Record<ConfigKey, unknown>;
  const sources = Object.fromEntries(CONFIG_KEY_NAMES.map((name) => [name, { kind: "default" }])) as Record<
    ConfigKey,
    Source
  >;
  const warnings: string[] = [];

  const apply = (name: string, raw: unknown, source: Source, where: string) => {
    if (!isConfigKey(name)) {
      warnings.push(`pi-cgc: unknown config key "${name}" in ${where} ignored`);
      return;
    }
    const parsed = CONFIG_KEYS[name].type.parse(raw);
    if (!parsed.ok) {
      warnings.push(`pi-cgc: ${name} = ${showValue(raw)} from ${where} skipped: ${parsed.error}`);
      return;
    }
    values[name] = parsed.value;
    sources[name] = source;
  };

  for (const [kind, path] of [
    ["global", globalPath],
    ["project", projectPath],
  ] as const) {
    const file = readConfigFile(path);
    if (file.error) warnings.push(`pi-cgc: ${file.error}`);
    for (const [name, raw] of Object.entries(file.values)) apply(name, raw, { kind, path }, path);
  }
  for (const name of CONFIG_KEY_NAMES) {
    const variable = CONFIG_KEYS[name].env;
    const raw = env[variable];
    if (raw !== undefined) apply(name, raw, { kind: "env", variable }, `environment variable ${variable}`);
  }
  return { values: values as Config, sources, warnings, globalPath, projectPath };
}

/** A config file's keys, flattened (nested objects and dotted names are both accepted). */
export function readConfigFile(path: string): { values: Record<string, unknown>; error?: string } {
  if (!existsSync(path)) return { values: {} };
  let data: unknown;
  try {
    data = JSON.parse(readFileSync(path, "utf8"));
  } catch (error) {
    return { values: {}, error: `${path} is not valid JSON (${(error as Error).message}); its settings were skipped` };
  }
  if (!isPlainObject(data)) return { values: {}, error: `${path} must hold a JSON object; its settings were skipped` };
  return { values: flatten(data) };
}

function flatten(data: Record<string, unknown>, prefix = ""): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(data)) {
    const full = prefix ? `${prefix}.${name}` : name;
    const entries = isPlainObject(value) && !isConfigKey(full) ? Object.entries(flatten(value, full)) : [[full, value]];
    // Defined, not assigned: a key named __proto__ is a key like any other (ignored with its warning), not
    // a change of the object's prototype that would drop it without a word.
    for (const [key, item] of entries) {
      Object.defineProperty(out, key as string, { value: item, enumerable: true, writable: true, configurable: true });
    }
  }
  return out;
}

export function isConfigKey(name: string): name is ConfigKey {
  return Object.hasOwn(CONFIG_KEYS, name);
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function showValue(raw: unknown): string {
  const text = JSON.stringify(raw) ?? String(raw);
  return text.length > 80 ? `${text.slice(0, 77)}…` : text;
}

export function describeSource(source: Source): string {
  switch (source.kind) {
    case "default":
      return "default";
    case "global":
      return `global (${source.path})`;
    case "project":
      return `project (${source.path})`;
    case "env":
      return `env ${source.variable}`;
  }
}
