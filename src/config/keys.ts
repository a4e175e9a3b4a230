// The one table of configuration keys. The loader, the validators, the environment mapping, the
// settings modal, docs/configuration.md and the README table are all derived from it.

export type Parsed<T> = { ok: true; value: T } | { ok: false; error: string };

export interface ValueType<T> {
  /** How the type reads in the docs. */
  label: string;
  /** The choices a settings UI cycles through (booleans and enums). */
  options?: readonly string[];
  /** One validator for every layer: file values arrive as JSON values, environment values as strings. */
  parse(raw: unknown): Parsed<T>;
  format(value: T): string;
}

export type WatchMode = "off" | "on" | "auto";
export type WorktreeMode = "off" | "isolate";

const TRUE_WORDS = new Set(["true", "yes", "on", "1"]);
const FALSE_WORDS = new Set(["false", "no", "off", "0"]);

/**
 * ADR 0010: native booleans map to on/off; strings are trimmed and lowercased, true/yes/on/1 → on,
 * false/no/off/0 → off, the literal `auto` → auto. `auto` never comes from a boolean.
 */
export function parseWatchMode(raw: unknown): Parsed<WatchMode> {
  if (typeof raw === "boolean") return { ok: true, value: raw ? "on" : "off" };
  if (typeof raw === "string") {
    const word = raw.trim().toLowerCase();
    if (TRUE_WORDS.has(word)) return { ok: true, value: "on" };
    if (FALSE_WORDS.has(word)) return { ok: true, value: "off" };
    if (word === "auto") return { ok: true, value: "auto" };
  }
  return { ok: false, error: "expected off, on or auto (or a boolean)" };
}

export const booleanType: ValueType<boolean> = {
  label: "boolean",
  options: ["true", "false"],
  parse(raw) {
    if (typeof raw === "boolean") return { ok: true, value: raw };
    if (typeof raw === "string") {
      const word = raw.trim().toLowerCase();
      if (TRUE_WORDS.has(word)) return { ok: true, value: true };
      if (FALSE_WORDS.has(word)) return { ok: true, value: false };
    }
    return { ok: false, error: "expected true or false" };
  },
  format: String,
};

/** Integers given as JSON numbers or as digit strings; the same rule in every layer. */
export function integerType(min: number, max: number): ValueType<number> {
  return {
    label: min > 0 ? "positive integer" : "integer ≥ 0",
    parse(raw) {
      const value =
        typeof raw === "number" ? raw : typeof raw === "string" && /^\s*\d+\s*$/.test(raw) ? Number(raw) : NaN;
      if (!Number.isSafeInteger(value)) return { ok: false, error: `expected a whole number from ${min} to ${max}` };
      if (value < min || value > max) return { ok: false, error: `out of range (${min}–${max})` };
      return { ok: true, value };
    },
    format: String,
  };
}

export function stringType(maxLength: number): ValueType<string> {
  return {
    label: "string",
    parse(raw) {
      if (typeof raw !== "string" || raw.trim() === "") return { ok: false, error: "expected a non-empty string" };
      if (raw.length > maxLength) return { ok: false, error: `longer than ${maxLength} characters` };
      return { ok: true, value: raw.trim() };
    },
    format: (value) => value,
  };
}

export function enumType<T extends string>(options: readonly T[]): ValueType<T> {
  return {
    label: options.join(" \\| "),
    options,
    parse(raw) {
      const word = typeof raw === "string" ? raw.trim().toLowerCase() : undefined;
      const match = options.find((option) => option === word);
      return match ? { ok: true, value: match } : { ok: false, error: `expected one of ${options.join(", ")}` };
    },
    format: (value) => value,
  };
}

export const watchModeType: ValueType<WatchMode> = {
  label: "off \\| on \\| auto",
  options: ["off", "on", "auto"],
  parse: parseWatchMode,
  format: (value) => value,
};

export interface KeyDef<T> {
  type: ValueType<T>;
  default: T;
  env: string;
  doc: string;
}

function key<T>(def: KeyDef<T>): KeyDef<T> {
  return def;
}

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

export const CONFIG_KEYS = {
  "cgc.executable": key({
    type: stringType(4096),
    default: "cgc",
    env: "CGC_EXECUTABLE",
    doc: "The cgc executable: a name on PATH or an absolute path.",
  }),
  "timeouts.probeMs": key({
    type: integerType(100, HOUR),
    default: 15_000,
    env: "CGC_TIMEOUTS_PROBE_MS",
    doc: "Time budget of a probe (version, doctor, the readiness query).",
  }),
  "timeouts.queryMs": key({
    type: integerType(100, HOUR),
    default: 60_000,
    env: "CGC_TIMEOUTS_QUERY_MS",
    doc: "Time budget of a graph query made for the agent or a command.",
  }),
  "timeouts.maintenanceMs": key({
    type: integerType(1_000, 24 * HOUR),
    default: 30 * MINUTE,
    env: "CGC_TIMEOUTS_MAINTENANCE_MS",
    doc: "Time budget of an index, a rebuild or a sync. Once it stops one, no automatic index or sync starts until it is raised.",
  }),
  "timeouts.longLivedMs": key({
    type: integerType(0, 7 * 24 * HOUR),
    default: 0,
    env: "CGC_TIMEOUTS_LONG_LIVED_MS",
    doc: "Longest life of a long-lived child (watcher, MCP server); 0 means until the session ends.",
  }),
  "lifecycle.autoCreate": key({
    type: booleanType,
    default: false,
    env: "CGC_LIFECYCLE_AUTO_CREATE",
    doc: "Index an unindexed workspace in the background without asking.",
  }),
  "lifecycle.syncOnStart": key({
    type: booleanType,
    default: true,
    env: "CGC_LIFECYCLE_SYNC_ON_START",
    doc: "At session start, sync when the graph's recorded commit or time differs from the repository.",
  }),
  "worktree.mode": key({
    type: enumType<WorktreeMode>(["off", "isolate"]),
    default: "off" as WorktreeMode,
    env: "CGC_WORKTREE_MODE",
    doc: "`isolate` gives each linked git worktree its own CGC named context (`wt-<name>-<hash>`), created with the same consent as an index; on KùzuDB its first index starts from the main checkout's graph where that one is current.",
  }),
  "freshness.watch": key({
    type: watchModeType,
    default: "off" as WatchMode,
    env: "CGC_FRESHNESS_WATCH",
    doc: "Run `cgc watch`: `off`, `on` (always), `auto` (server backends with an indexed workspace). Booleans map to on/off.",
  }),
  "freshness.watcherLivenessMs": key({
    type: integerType(1, HOUR),
    default: 15_000,
    env: "CGC_FRESHNESS_WATCHER_LIVENESS_MS",
    doc: "How long a watcher must survive before pi-cgc leaves the graph to it (the chip then says `watched`).",
  }),
  "freshness.autoSync": key({
    type: booleanType,
    default: true,
    env: "CGC_FRESHNESS_AUTO_SYNC",
    doc: "Sync the graph at quiet moments after edits (the lazy path).",
  }),
  "freshness.engine": key({
    type: booleanType,
    default: true,
    env: "CGC_FRESHNESS_ENGINE",
    doc: "Apply edits to the graph with pi-cgc's incremental engine (cgc's own library, on the cgc versions it was proven on), about a second per edit; `false`: every sync is a full rebuild.",
  }),
  "freshness.maxSyncsPerSession": key({
    type: integerType(1, 10_000),
    default: 20,
    env: "CGC_FRESHNESS_MAX_SYNCS_PER_SESSION",
    doc: "Most automatic full-rebuild syncs in one session; engine updates and `/cgc sync` are not counted.",
  }),
  "engine.parseStoreMb": key({
    type: integerType(0, 1024 * 1024),
    default: 1024,
    env: "CGC_ENGINE_PARSE_STORE_MB",
    doc: "Most megabytes the engine's parse store keeps (each file's parse by its content, shared by every workspace and worktree); the least recently used go first; 0 keeps none.",
  }),
  "proactive.sessionNote": key({
    type: booleanType,
    default: true,
    env: "CGC_PROACTIVE_SESSION_NOTE",
    doc: "Give the agent one short paragraph of coverage facts while the graph is ready.",
  }),
  "proactive.driftSteers": key({
    type: booleanType,
    default: false,
    env: "CGC_PROACTIVE_DRIFT_STEERS",
    doc: "Tell the agent once per possibly-stale episode that the graph lags its edits.",
  }),
  "proactive.resultAnnotations": key({
    type: booleanType,
    default: false,
    env: "CGC_PROACTIVE_RESULT_ANNOTATIONS",
    doc: "Append a staleness line to pi-cgc's own tool results and command output while possibly stale.",
  }),
  "proactive.impactNotes": key({
    type: booleanType,
    default: false,
    env: "CGC_PROACTIVE_IMPACT_NOTES",
    doc: "After an edit changes the parameters of a function or method that other files call (or removes or renames it), name those callers (path:line) to the agent once, before its next model call.",
  }),
  "output.maxBytes": key({
    type: integerType(1_024, 10 * 1024 * 1024),
    default: 24 * 1024,
    env: "CGC_OUTPUT_MAX_BYTES",
    doc: "Most bytes of cgc output shown to the agent or the user; the rest is spilled to a private file.",
  }),
  "output.maxLines": key({
    type: integerType(10, 100_000),
    default: 400,
    env: "CGC_OUTPUT_MAX_LINES",
    doc: "Most lines of cgc output shown to the agent or the user; the rest is spilled to a private file.",
  }),
};

export type ConfigKey = keyof typeof CONFIG_KEYS;
type ValueOf<D> = D extends KeyDef<infer T> ? T : never;
export type Config = { [K in ConfigKey]: ValueOf<(typeof CONFIG_KEYS)[K]> };

export const CONFIG_KEY_NAMES = Object.keys(CONFIG_KEYS) as ConfigKey[];

export function defaultConfig(): Config {
  return Object.fromEntries(CONFIG_KEY_NAMES.map((name) => [name, CONFIG_KEYS[name].default])) as Config;
}
