// The randomized soak: scripted sessions with the real pi (SDK, faux model) and the real cgc, each in its own
// CGC home on a fresh fixture repository. A seeded generator picks the steps: edits through pi's own edit,
// write and bash tools, edits made outside pi, plain prompts, graph tool calls, /cgc commands (confirmations
// answered yes or no at random), and injected faults (a second cgc holding the database lock, the running
// cgc child SIGKILLed, the session replaced mid-sync, the user's `cgc delete` of the graph). Each run checks at
// its end, and the fresh claim after every prompt:
//   - no orphaned process: no cgc process of the run's home once the session has ended;
//   - no false fresh claim: whenever the chip says fresh, the graph's functions per file are the files' own,
//     and at the end of a run the whole graph equals a full index of the same tree (canonical dumps);
//   - no unconfirmed destructive action: every rebuild, index and report follows a yes to its confirmation,
//     and no file appears in the workspace that neither the agent nor a confirmed step wrote;
//   - no lost user file: every file holds what the user, the agent and the run wrote, nothing else;
//   - config intact: the project settings file is byte-identical.
//
//   npm run soak -- --runs 20 --seed 7 [--steps 10] [--first-run 0] [--actions v6]
//
// Prints the figures (runs, steps, faults injected by kind, invariant violations) and exits 1 on a violation.

import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  renameSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { fauxAssistantMessage, fauxToolCall } from "@mariozechner/pi-ai";
import { liveGroups, signalGroup } from "../../src/cgc/children.ts";
import {
  BACKEND_NAMES,
  type BackendName,
  startBackend,
  type TestBackend,
  useBackendInProcess,
} from "../helpers/backends.ts";
import { type CgcHome, cgcExec, cgcStart, type LongLivedCgc } from "../helpers/cgc-env.ts";
import { scopedEnv } from "../helpers/env.ts";
import { compareWithFullIndex } from "../helpers/graph-parity.ts";
import { type PiHarness, type RecordingUi, recordingUi, startPi } from "../helpers/pi-sdk.ts";
import { poll, waitFor } from "../helpers/poll.ts";
import { type TinyRepo, tinyRepo } from "../helpers/repos.ts";
import {
  cgcProcesses,
  kuzuPath,
  processActivity,
  processesOf,
  pythonStacks,
  stopOwnCgc,
  writeSlowToIndexFile,
} from "./support.ts";

export interface SoakOptions {
  runs: number;
  seed: number;
  /** The index of the first run (a run's steps depend on the seed, its index and the action table only). */
  firstRun?: number;
  /** The action table (default: the newest); a failed seed is replayed with the table it failed with. */
  actions?: ActionTable;
  /** Steps per run. */
  steps: number;
  /**
   * The backends the runs' graphs live on, taken in turn (run i on backends[i % n]); KùzuDB when unset. Each
   * run starts its own (a server on 127.0.0.1 for the server backends), and a second for its parity index.
   */
  backends?: readonly BackendName[];
  log?: (line: string) => void;
}

export interface SoakReport {
  runs: number;
  steps: number;
  seed: number;
  actions: Record<string, number>;
  faults: Record<string, number>;
  /** Fresh claims checked against the graph. */
  freshChecks: number;
  /** Ends of runs whose graph was compared line for line with a full index of the same tree. */
  parityChecks: number;
  /** Runs per backend. */
  backends: Record<string, number>;
  violations: string[];
  durationMs: number;
}

/** mulberry32: small, fast, and the same sequence for the same seed everywhere. */
function generator(seed: number) {
  let state = seed >>> 0;
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return {
    next,
    pick<T>(items: readonly T[]): T {
      return items[Math.floor(next() * items.length)] as T;
    },
    weighted<T extends string>(weights: Partial<Record<T, number>>): T {
      const entries = Object.entries(weights) as Array<[T, number]>;
      let roll = next() * entries.reduce((sum, [, weight]) => sum + weight, 0);
      for (const [item, weight] of entries) {
        roll -= weight;
        if (roll < 0) return item;
      }
      return entries[entries.length - 1]?.[0] as T;
    },
  };
}
type Rng = ReturnType<typeof generator>;

const ACTION_NAMES = [
  "edit-tool",
  "write-tool",
  "bash-append",
  "bash-new-file",
  "bash-delete",
  "bash-rename",
  "bash-restore-old-time",
  "bash-new-folder",
  "bash-ignore",
  "bash-unparsed",
  "bash-replace-folder",
  "outside-edit",
  "outside-delete",
  "outside-rename",
  "prompt",
  "graph-tool",
  "command",
  "fault:lock",
  "fault:kill-child",
  "fault:replace-session",
  "fault:graph-deleted",
] as const;
type Action = (typeof ACTION_NAMES)[number];

// A seed replays the same session only with the same table: each table a failed seed was found with
// stays, and new actions go into a new table.
const CHANGE_KINDS_V2: Partial<Record<Action, number>> = {
  "edit-tool": 4,
  "write-tool": 2,
  "bash-append": 2,
  "bash-new-file": 2,
  "bash-delete": 1,
  "bash-rename": 1,
  "bash-restore-old-time": 1,
  "bash-new-folder": 1,
  "outside-edit": 2,
  "outside-delete": 1,
  "outside-rename": 1,
  prompt: 2,
  "graph-tool": 2,
  command: 4,
  "fault:lock": 1,
  "fault:kill-child": 1,
  "fault:replace-session": 1,
};
const ACTION_TABLES: Record<"v1" | "v2" | "v3" | "v4" | "v5" | "v6", Partial<Record<Action, number>>> = {
  v1: {
    "edit-tool": 4,
    "write-tool": 2,
    "bash-append": 2,
    "bash-new-file": 2,
    "bash-delete": 1,
    "outside-edit": 2,
    prompt: 2,
    "graph-tool": 2,
    command: 4,
    "fault:lock": 1,
    "fault:kill-child": 1,
    "fault:replace-session": 1,
  },
  // Every kind of change the tracker must see (issue 15).
  v2: CHANGE_KINDS_V2,
  // And a line in .cgcignore that takes a file out of the graph while it stays on disk.
  v3: { ...CHANGE_KINDS_V2, "bash-ignore": 1 },
  // And files cgc indexes without parsing them (a File node each), also in hidden folders: made, moved, deleted.
  v4: { ...CHANGE_KINDS_V2, "bash-ignore": 1, "bash-unparsed": 2 },
  // And the user's own `cgc delete` of the workspace's graph while the session runs.
  v5: { ...CHANGE_KINDS_V2, "bash-ignore": 1, "bash-unparsed": 2, "fault:graph-deleted": 1 },
  // And a folder moved out of the tree with another of its name made in its place, a subfolder of the same name in both.
  v6: { ...CHANGE_KINDS_V2, "bash-ignore": 1, "bash-unparsed": 2, "fault:graph-deleted": 1, "bash-replace-folder": 1 },
};
export type ActionTable = keyof typeof ACTION_TABLES;
const LATEST_TABLE: ActionTable = "v6";
/** The faults a table injects (its middle step picks one): those it names, in ACTION_NAMES' order. */
const faultsOf = (table: ActionTable) =>
  ACTION_NAMES.filter((action) => action.startsWith("fault:") && ACTION_TABLES[table][action] !== undefined);

const COMMANDS = ["/cgc status", "/cgc sync", "/cgc doctor", "/cgc index", "/cgc index --force", "/cgc report"];
const SETTINGS = `${JSON.stringify({ lifecycle: { syncOnStart: true }, freshness: { maxSyncsPerSession: 50 }, theirs: { kept: true } }, null, 2)}\n`;
const BUSY_CHIP = /^cgc (syncing|indexing|rebuilding|updating|checking)…/;

interface Run {
  index: number;
  rng: Rng;
  /** The backend of this run's graph: its cgc, HOME and variables. */
  backend: TestBackend;
  home: CgcHome;
  repo: TinyRepo;
  /** What every file should hold: relative path → content (undefined: deleted by the agent). */
  files: Map<string, string | undefined>;
  /** Files the user had before the run. */
  original: Set<string>;
  /** Files the agent's .cgcignore lines took out of the graph: on disk as `files` says, in no graph. */
  ignored: Set<string>;
  /** Files the run allows beyond `files` (cgc's own .cgcignore, a confirmed report). */
  allowedExtra: Set<string>;
  h: PiHarness;
  ui: RecordingUi;
  /** Every chip and every confirmation, in order, across replaced sessions. */
  timeline: Array<{ kind: "chip"; text: string | undefined } | { kind: "confirm"; title: string; yes: boolean }>;
  counter: number;
  report: SoakReport;
  violations: string[];
}

export async function runSoak(options: SoakOptions): Promise<SoakReport> {
  const started = Date.now();
  const report: SoakReport = {
    runs: options.runs,
    steps: 0,
    seed: options.seed,
    actions: {},
    faults: {},
    freshChecks: 0,
    parityChecks: 0,
    backends: {},
    violations: [],
    durationMs: 0,
  };
  // What the runs set (HOME, pi's agent directory, the executable) is put back when the soak ends.
  const restoreOwnEnv = scopedEnv({
    HOME: process.env.HOME,
    PI_CODING_AGENT_DIR: process.env.PI_CODING_AGENT_DIR,
    CGC_EXECUTABLE: process.env.CGC_EXECUTABLE,
  });
  // pi's own process stays alive (its terminal, its output); this one must too, or a timer pi-cgc rightly
  // unrefs (the bounded wait of a graph tool) is all that is left and Node ends the soak mid-run, exit 0.
  const alive = setInterval(() => {}, 60_000);
  try {
    const first = options.firstRun ?? 0;
    for (let index = first; index < first + options.runs; index++) {
      await soakRun(index, generator(options.seed * 1_000_003 + index), options, report);
    }
  } finally {
    clearInterval(alive);
    restoreOwnEnv();
  }
  report.durationMs = Date.now() - started;
  return report;
}

async function soakRun(index: number, rng: Rng, options: SoakOptions, report: SoakReport): Promise<void> {
  const log = options.log ?? (() => {});
  const backends = options.backends?.length ? options.backends : (["kuzudb"] as const);
  const backend = await startBackend(backends[index % backends.length] as BackendName);
  report.backends[backend.name] = (report.backends[backend.name] ?? 0) + 1;
  const restoreBackend = useBackendInProcess(backend); // HOME, CGC_EXECUTABLE and the backend's variables
  try {
    await soakRunOn(backend, index, rng, options, report, log);
  } finally {
    restoreBackend();
    await backend.stop(); // a server, or FalkorDB Lite's daemons, never outlive their run
  }
}

async function soakRunOn(
  backend: TestBackend,
  index: number,
  rng: Rng,
  options: SoakOptions,
  report: SoakReport,
  log: (line: string) => void,
): Promise<void> {
  const home = backend.home;
  const repo = tinyRepo({ name: `soak-${index}` });
  mkdirSync(join(repo.path, ".pi"));
  writeFileSync(join(repo.path, ".pi", "cgc.json"), SETTINGS);
  const indexedFirst = rng.next() < 0.85;
  if (indexedFirst) {
    const indexed = await cgcExec(["index", repo.path], { cwd: repo.path, env: backend.env, cgc: backend.cgc });
    if (indexed.code !== 0) throw new Error(`soak setup: the index failed: ${indexed.stderr}`);
  }
  const agentDir = mkdtempSync(join(tmpdir(), "pi-cgc-soak-agent-"));
  scopedEnv({ PI_CODING_AGENT_DIR: agentDir }); // put back as the soak ends
  const files = new Map<string, string | undefined>();
  for (const file of listFiles(repo.path)) files.set(file, readFileSync(join(repo.path, file), "utf8"));
  const run: Run = {
    index,
    rng,
    backend,
    home,
    repo,
    files,
    original: new Set(files.keys()),
    ignored: new Set(),
    allowedExtra: new Set(),
    h: undefined as unknown as PiHarness,
    ui: undefined as unknown as RecordingUi,
    timeline: [],
    counter: 0,
    report,
    violations: [],
  };
  let holder: LongLivedCgc | undefined;
  try {
    await startSession(run);
    // Every run injects at least one fault: the middle step is one, of a kind picked at random.
    const faultStep = Math.floor(options.steps / 2);
    for (let step = 0; step < options.steps; step++) {
      const action =
        step === faultStep
          ? rng.pick(faultsOf(options.actions ?? LATEST_TABLE))
          : rng.weighted(ACTION_TABLES[options.actions ?? LATEST_TABLE]);
      report.steps++;
      if (!action.startsWith("fault:")) report.actions[action] = (report.actions[action] ?? 0) + 1;
      const throughPrompt = await perform(run, action, (started) => {
        holder = started;
      });
      if (holder) {
        await stopOwnCgc(holder);
        holder = undefined;
      }
      await quiet(run, throughPrompt);
      log(
        `run ${index} step ${step}: ${action} → ${chip(run)} ${JSON.stringify(run.ui.notices.slice(-2).map((n) => n.message.slice(0, 160)))}`,
      );
      if (throughPrompt) await checkFreshClaim(run, `after step ${step} (${action})`);
    }
    // The end of the run: one last prompt observes everything, and its claim is checked too.
    await prompt(run, [fauxAssistantMessage("all done")], "wrap up");
    await quiet(run, true);
    await checkFreshClaim(run, "at the end");
    await checkParity(run);
  } finally {
    if (holder) await stopOwnCgc(holder);
    await run.h?.dispose();
  }
  await checkEnd(run);
  report.violations.push(...run.violations.map((violation) => `run ${index} (seed ${options.seed}): ${violation}`));
  rmSync(agentDir, { recursive: true, force: true });
  repo.cleanup();
}

async function startSession(run: Run): Promise<void> {
  const ui = recordingUi();
  const setStatus = ui.context.setStatus.bind(ui.context);
  const confirm = ui.context.confirm.bind(ui.context);
  const context = Object.create(ui.context) as typeof ui.context;
  context.setStatus = (key, text) => {
    if (key === "cgc") run.timeline.push({ kind: "chip", text });
    setStatus(key, text);
  };
  context.confirm = async (title, message, opts) => {
    const yes = await confirm(title, message, opts);
    run.timeline.push({ kind: "confirm", title, yes });
    if (yes && title === "Write a report?") run.allowedExtra.add("CGC_REPORT.md");
    return yes;
  };
  ui.context = context;
  run.ui = ui;
  run.h = await startPi({ cwd: run.repo.path, ui });
  await waitFor(() => /^cgc (ready|unindexed|busy|unknown)/.test(chip(run) ?? ""), "the first verdict", 90_000);
}

const chip = (run: Run) => run.ui.statuses.get("cgc");

/**
 * Waits until no work runs: no busy chip and no live cgc child of this process for a moment (a settled
 * sync chains its probe and its read-back within one turn of the event loop, so a gap means it is done).
 * After an agent's run, the quiet timer (1.5 s) may start an automatic sync first: give it that chance.
 */
async function quiet(run: Run, afterAgentRun: boolean): Promise<void> {
  // The engine lives as long as the session: idle means no other child of pi-cgc's runs.
  const working = () => {
    const engines = new Set(
      processesOf(run.home.home, /pi-cgc-engine\.py (--\S+ \S+ )*serve /).map((engine) => engine.pid),
    );
    return liveGroups().filter((group) => !engines.has(group));
  };
  const idle = () => !BUSY_CHIP.test(chip(run) ?? "") && working().length === 0;
  if (afterAgentRun && chip(run) === "cgc ready · possibly stale") {
    // Possibly stale at the end of a run: the automatic sync is due once the quiet timer fires.
    const armedUntil = Date.now() + 3_000;
    await waitFor(() => Date.now() > armedUntil || BUSY_CHIP.test(chip(run) ?? ""), "a sync that may start", 60_000);
  }
  let idleSince: number | undefined;
  await waitFor(
    () => {
      if (!idle()) idleSince = undefined;
      else idleSince ??= Date.now();
      return idleSince !== undefined && Date.now() - idleSince >= 300;
    },
    "no work running",
    180_000,
  ).catch((error: Error) => {
    // What still ran, for whoever replays it: the chip, the last notices and every process of the run's HOME.
    const running = processesOf(run.home.home, /./).map(
      (process_) => `${process_.pid} (${processActivity(process_.pid)}) ${process_.args.slice(0, 200)}`,
    );
    // The Python stacks of pi-cgc's own work that still runs (the engine's index, a cgc child): where it hangs.
    const stacks = processesOf(run.home.home, /python/)
      .filter((process_) => working().includes(process_.pgid))
      .map((process_) => `stacks of ${process_.pid}:\n${pythonStacks(process_.pid)}`);
    const notices = run.ui.notices.slice(-3).map((notice) => notice.message.slice(0, 300));
    throw new Error(
      `${error.message}; chip ${JSON.stringify(chip(run))}, pi-cgc's groups [${working()}], last notices ` +
        `${JSON.stringify(notices)}, processes of the run's HOME:\n${running.join("\n")}\n${stacks.join("\n")}`,
    );
  });
}

async function prompt(run: Run, replies: ReturnType<typeof fauxAssistantMessage>[], text: string): Promise<void> {
  run.h.faux.setResponses(replies);
  await run.h.session.prompt(text);
}

function toolStep(name: string, args: Record<string, unknown>) {
  return [fauxAssistantMessage(fauxToolCall(name, args), { stopReason: "toolUse" }), fauxAssistantMessage("done")];
}

const liveFiles = (run: Run) =>
  [...run.files]
    .filter(([path, content]) => content !== undefined && path.endsWith(".py") && !run.ignored.has(path))
    .map(([path]) => path);

/** Python files made during the run (by the agent or the user), which the run may delete or move. */
const madeFiles = (run: Run) => liveFiles(run).filter((path) => !run.original.has(path));

/**
 * Kinds of file cgc 0.6.13 indexes as a bare File node (its discovery's generic extensions): the soak makes these,
 * and a fresh graph holds exactly the live ones.
 */
const UNPARSED = /\.(md|toml|json|txt|yml)$/;
const madeUnparsed = (run: Run) =>
  [...run.files]
    .filter(([path, content]) => content !== undefined && UNPARSED.test(path) && !run.original.has(path))
    .map(([path]) => path);

function newFunction(run: Run): string {
  run.counter++;
  return `soak_${run.index}_${run.counter}`;
}

function injected(run: Run, fault: string): void {
  run.report.faults[fault] = (run.report.faults[fault] ?? 0) + 1;
}

/** Performs one step; returns whether it went through a prompt (so outside changes were looked for). */
async function perform(run: Run, action: Action, holding: (holder: LongLivedCgc) => void): Promise<boolean> {
  const { rng } = run;
  switch (action) {
    case "edit-tool": {
      const path = rng.pick(liveFiles(run));
      const content = run.files.get(path) as string;
      const firstLine = content.split("\n")[0] as string;
      const name = newFunction(run);
      const added = `def ${name}(value):\n    return value\n\n\n`;
      await prompt(
        run,
        toolStep("edit", { path, edits: [{ oldText: firstLine, newText: `${added}${firstLine}` }] }),
        "edit",
      );
      run.files.set(path, `${added}${content}`);
      return true;
    }
    case "write-tool": {
      const path = rng.pick(liveFiles(run));
      const content = `${run.files.get(path)}\n\ndef ${newFunction(run)}(value):\n    return value\n`;
      await prompt(run, toolStep("write", { path, content }), "write");
      run.files.set(path, content);
      return true;
    }
    case "bash-append": {
      const path = rng.pick(liveFiles(run));
      const name = newFunction(run);
      await prompt(
        run,
        toolStep("bash", { command: `printf '\\n\\ndef ${name}():\\n    return 1\\n' >> ${path}` }),
        "bash",
      );
      run.files.set(path, `${run.files.get(path)}\n\ndef ${name}():\n    return 1\n`);
      return true;
    }
    case "bash-new-file": {
      const name = newFunction(run);
      const path = `pkg/${name}.py`;
      await prompt(run, toolStep("bash", { command: `printf 'def ${name}():\\n    return 2\\n' > ${path}` }), "bash");
      run.files.set(path, `def ${name}():\n    return 2\n`);
      return true;
    }
    case "bash-delete": {
      // Only files the agent made: the user's own files are never the agent's to delete here.
      const made = madeFiles(run);
      if (made.length === 0) return perform(run, "bash-new-file", holding);
      const path = rng.pick(made);
      await prompt(run, toolStep("bash", { command: `rm ${path}` }), "bash");
      run.files.set(path, undefined);
      return true;
    }
    case "bash-rename": {
      // mv keeps the modification time: neither side shows to a check of times alone.
      const made = madeFiles(run);
      if (made.length === 0) return perform(run, "bash-new-file", holding);
      const path = rng.pick(made);
      const target = `pkg/${newFunction(run)}_moved.py`;
      await prompt(run, toolStep("bash", { command: `mv ${path} ${target}` }), "bash");
      run.files.set(target, run.files.get(path));
      run.files.set(path, undefined);
      return true;
    }
    case "bash-restore-old-time": {
      // As tar x, cp -p and rsync -t do: new content, an old modification time.
      const path = rng.pick(liveFiles(run));
      const name = newFunction(run);
      const content = `${run.files.get(path)}\n\ndef ${name}():\n    return 3\n`;
      await prompt(
        run,
        toolStep("bash", {
          command: `printf '\\n\\ndef ${name}():\\n    return 3\\n' >> ${path} && touch -d '2001-02-03 04:05:06' ${path}`,
        }),
        "bash",
      );
      run.files.set(path, content);
      return true;
    }
    case "bash-new-folder": {
      const name = newFunction(run);
      const path = `pkg/${name}_dir/inner/${name}.py`;
      await prompt(
        run,
        toolStep("bash", {
          command: `mkdir -p pkg/${name}_dir/inner && printf 'def ${name}():\\n    return 4\\n' > ${path}`,
        }),
        "bash",
      );
      run.files.set(path, `def ${name}():\n    return 4\n`);
      return true;
    }
    case "bash-replace-folder": {
      // A folder bash-new-folder made (pkg/<name>_dir/inner/…) moved out of the tree whole, and one of its name made
      // with an inner/ again: the old inner/ went with its parent, so nothing is said of it where it was.
      const folders = [...new Set(madeFiles(run).map((path) => /^(pkg\/[^/]+_dir)\/inner\//.exec(path)?.[1]))].filter(
        (folder): folder is string => folder !== undefined,
      );
      if (folders.length === 0) {
        // None yet: one is made and left to settle first (the engine must have walked it for the move to matter).
        await perform(run, "bash-new-folder", holding);
        await quiet(run, true);
        return perform(run, "bash-replace-folder", holding);
      }
      const folder = rng.pick(folders);
      const name = newFunction(run);
      const path = `${folder}/inner/${name}.py`;
      await prompt(
        run,
        toolStep("bash", {
          command: `mv ${folder} ../moved_${name} && mkdir -p ${folder}/inner && printf 'def ${name}():\\n    return 6\\n' > ${path}`,
        }),
        "bash",
      );
      for (const [file, content] of run.files)
        if (content !== undefined && file.startsWith(`${folder}/`)) run.files.set(file, undefined);
      run.files.set(path, `def ${name}():\n    return 6\n`);
      return true;
    }
    case "bash-ignore": {
      // Only files the agent made; the file stays on disk, and no graph may hold it from here on.
      const made = madeFiles(run);
      if (made.length === 0) return perform(run, "bash-new-file", holding);
      const path = rng.pick(made);
      await prompt(run, toolStep("bash", { command: `printf '%s\\n' ${path} >> .cgcignore` }), "bash");
      run.ignored.add(path);
      // A .cgcignore the run started with (cgc wrote it at the fixture's index) now holds the line too.
      const ignoreFile = run.files.get(".cgcignore");
      if (ignoreFile !== undefined) run.files.set(".cgcignore", `${ignoreFile}${path}\n`);
      return true;
    }
    case "bash-unparsed": {
      // A note at the root, a setting in a hidden folder, data beside the code; or one made before, moved or gone.
      const made = madeUnparsed(run);
      const kind = made.length === 0 ? "new" : rng.pick(["new", "new", "move", "delete"] as const);
      const name = newFunction(run);
      if (kind === "new") {
        const path = rng.pick([`${name}.md`, `.${name}/settings.toml`, `pkg/${name}.json`]);
        const folder = path.includes("/") ? `mkdir -p ${path.slice(0, path.lastIndexOf("/"))} && ` : "";
        await prompt(run, toolStep("bash", { command: `${folder}printf 'x = 1\\n' > ${path}` }), "bash");
        run.files.set(path, "x = 1\n");
      } else {
        const path = rng.pick(made);
        const target = `.${name}_moved/${path.slice(path.lastIndexOf("/") + 1)}`;
        const command = kind === "move" ? `mkdir -p .${name}_moved && mv ${path} ${target}` : `rm ${path}`;
        await prompt(run, toolStep("bash", { command }), "bash");
        if (kind === "move") run.files.set(target, run.files.get(path));
        run.files.set(path, undefined);
      }
      return true;
    }
    case "outside-edit": {
      const path = rng.pick(liveFiles(run));
      const content = `${run.files.get(path)}\n\ndef ${newFunction(run)}(value):\n    return value\n`;
      writeFileSync(join(run.repo.path, path), content);
      run.files.set(path, content);
      return false;
    }
    case "outside-delete":
    case "outside-rename": {
      // The user, outside pi, between prompts: only files made during the run, so the fixture's stay.
      const made = madeFiles(run);
      if (made.length === 0) return perform(run, "outside-edit", holding);
      const path = rng.pick(made);
      if (action === "outside-rename") {
        const target = `pkg/${newFunction(run)}_renamed.py`;
        renameSync(join(run.repo.path, path), join(run.repo.path, target));
        run.files.set(target, run.files.get(path));
      } else {
        rmSync(join(run.repo.path, path));
      }
      run.files.set(path, undefined);
      return false;
    }
    case "prompt":
      await prompt(run, [fauxAssistantMessage("nothing to do")], "hello");
      return true;
    case "graph-tool": {
      const call = rng.pick([
        ["cgc_find", { query: "normalize" }],
        ["cgc_relations", { relation: "callers", target: "normalize" }],
        ["cgc_cypher", { query: "MATCH (f:Function) RETURN count(f) AS n" }],
        ["cgc_stats", {}],
      ] as const);
      await prompt(run, toolStep(call[0], call[1]), "ask the graph");
      return true;
    }
    case "command": {
      run.ui.confirmAnswer = rng.next() < 0.5;
      const unindexed = chip(run) === "cgc unindexed" && rng.next() < 0.5;
      await run.h.session.prompt(unindexed ? "/cgc index" : rng.pick(COMMANDS));
      return false;
    }
    case "fault:lock": {
      // pi-cgc may hold the database itself at that moment (the second cgc then exits): tried again once its
      // work is done, so that every run injects its fault.
      for (let attempt = 1; ; attempt++) {
        const holder = cgcStart(["watch", run.repo.path], {
          cwd: run.repo.path,
          env: run.backend.env,
          cgc: run.backend.cgc,
        });
        holding(holder);
        const holds = await holder.waitForLine("stdout", /Monitoring for file changes/).then(
          () => true,
          () => false,
        );
        if (holds) break;
        if (attempt === 3) return false;
        await quiet(run, false);
      }
      // While another process holds the database: an edit, and the sync it brings.
      injected(run, "lock held by a second cgc");
      return perform(run, "edit-tool", holding);
    }
    case "fault:kill-child": {
      run.ui.confirmAnswer = true;
      // A sync goes through the engine, done before its writer can be caught, so the fault is a full index's
      // child; the pick stays so that a seed replays the same sequence as when it was kept.
      rng.pick(["/cgc sync", "/cgc index --force"]);
      const command = "/cgc index --force";
      // A file cgc needs seconds for (the user's, removed again after) keeps the run long enough to catch.
      const slow = join(run.repo.path, "generated_slow.py");
      writeSlowToIndexFile(slow);
      const running = run.h.session.prompt(command);
      const writer = await firstWriter(run, 15_000);
      rmSync(slow);
      if (writer) {
        process.kill(writer.pid, "SIGKILL");
        injected(run, `${writer.what} SIGKILLed (${command})`);
      }
      await running;
      return false;
    }
    case "fault:graph-deleted": {
      // The user deletes the workspace's graph (`cgc delete --yes`; cgc asks for ALLOW_DB_DELETION), then the
      // agent edits: whatever pi-cgc does next, no fresh claim may rest on a graph holding only the edit.
      const deleted = await cgcExec(["delete", "--yes", realpathSync(run.repo.path)], {
        cwd: run.repo.path,
        env: { ...run.backend.env, ALLOW_DB_DELETION: "true" },
        cgc: run.backend.cgc,
      });
      // Nothing to delete (a run that started unindexed, a graph deleted before) or pi-cgc held an embedded
      // database at that moment: another fault instead, so that every run injects one.
      if (!/Successfully deleted repository/.test(`${deleted.stdout}${deleted.stderr}`))
        return perform(run, "fault:lock", holding);
      injected(run, "graph deleted by the user's cgc delete");
      return perform(run, "edit-tool", holding);
    }
    case "fault:replace-session": {
      run.ui.confirmAnswer = true;
      const slow = join(run.repo.path, "generated_slow.py");
      writeSlowToIndexFile(slow);
      const running = run.h.session.prompt("/cgc sync").catch(() => undefined);
      const writing = await firstWriter(run, 10_000);
      rmSync(slow);
      injected(run, writing ? `session replaced while the ${writing.what} wrote` : "session replaced");
      await run.h.dispose();
      await running;
      await startSession(run);
      return false;
    }
  }
}

/**
 * What writes the graph once it has begun to: a cgc index child (on KùzuDB, once its WAL exists), pi-cgc's own
 * index child once it reports a phase, or the engine while the chip says it is updating. Undefined if neither shows in time.
 */
async function firstWriter(run: Run, timeoutMs: number): Promise<{ pid: number; what: string } | undefined> {
  const wal = `${kuzuPath(run.home.home)}.wal`;
  return poll(() => {
    const child = cgcProcesses(run.home.home).find((process_) => / index /.test(process_.args));
    // KùzuDB shows the first write (its WAL); elsewhere the running index child is the best sign there is.
    if (child && (run.backend.name !== "kuzudb" || existsSync(wal))) return { pid: child.pid, what: "cgc child" };
    // pi-cgc's own full index (the engine script's index command) once the chip names its phase.
    const indexer = processesOf(run.home.home, /pi-cgc-engine\.py .*\bindex\b/)[0];
    if (indexer && / · (discovering|parsing|resolving|writing|deleting) /.test(chip(run) ?? ""))
      return { pid: indexer.pid, what: "pi-cgc index child" };
    const engine = processesOf(run.home.home, /pi-cgc-engine\.py (--\S+ \S+ )*serve /)[0];
    if (engine && /^cgc updating…/.test(chip(run) ?? "")) return { pid: engine.pid, what: "engine" };
    return undefined;
  }, timeoutMs);
}

/**
 * When the chip says fresh, the graph must hold each Python file's functions exactly, and no file that is not
 * on disk.
 */
async function checkFreshClaim(run: Run, when: string): Promise<void> {
  if (chip(run) !== "cgc ready · fresh") return;
  run.report.freshChecks++;
  // The user's last word on freshness must agree with the chip.
  const lastWord = run.ui.notices
    .map((notice) => notice.message)
    .findLast((m) => /^The graph of .* is (possibly stale|fresh again):/.test(m));
  if (lastWord?.includes("is possibly stale"))
    run.violations.push(`fresh ${when}, yet the last notice says: ${lastWord}`);
  const graph = await graphFunctions(run);
  // Files the run does not track (the faults' slow file, removed while an index may be reading it) count too.
  for (const path of graph.keys()) {
    const inRepo = relative(run.repo.path, path);
    if (!run.files.has(inRepo) && !existsSync(path))
      run.violations.push(`fresh ${when}, yet the graph holds ${inRepo}, which is not on disk`);
  }
  for (const [path, content] of run.files) {
    if (UNPARSED.test(path) && !run.original.has(path)) {
      const inGraph = graph.has(join(run.repo.path, path));
      if (inGraph !== (content !== undefined))
        run.violations.push(`fresh ${when}, yet the graph ${inGraph ? "still holds the deleted" : "lacks"} ${path}`);
      continue;
    }
    if (!path.endsWith(".py")) continue;
    const inGraph = graph.get(join(run.repo.path, path));
    if (run.ignored.has(path)) {
      if (inGraph) run.violations.push(`fresh ${when}, yet the graph still holds ${path}, which .cgcignore ignores`);
      continue;
    }
    if (content === undefined) {
      if (inGraph) run.violations.push(`fresh ${when}, yet the graph still holds the deleted ${path}`);
      continue;
    }
    const expected = [
      ...new Set(["<module>", ...[...content.matchAll(/^\s*def (\w+)\(/gm)].map((m) => m[1] as string)]),
    ].sort();
    if (inGraph === undefined) {
      run.violations.push(`fresh ${when}, yet the graph lacks ${path}, which holds [${expected}]`);
      continue;
    }
    const actual = [...new Set(inGraph)].sort();
    if (expected.join(",") !== actual.join(",")) {
      run.violations.push(`fresh ${when}, yet ${path} holds [${expected}] and the graph [${actual}]`);
    }
  }
}

/**
 * At the end of a run whose chip says fresh: the graph equals, line for line, what a full index of the same
 * tree holds (the engine's canonical dump of both: every node and every edge).
 */
async function checkParity(run: Run): Promise<void> {
  if (chip(run) !== "cgc ready · fresh") return;
  run.report.parityChecks++;
  const copyBackend = await startBackend(run.backend.name);
  try {
    const { missing, extra, keptIn } = await compareWithFullIndex(run.repo.path, run.backend, copyBackend);
    if (missing.length + extra.length > 0) {
      run.violations.push(
        `fresh at the end, yet the graph differs from a full index: ${missing.length} ${missing.length === 1 ? "line" : "lines"} missing ` +
          `(${missing.slice(0, 3).join(" | ")}), ${extra.length} extra (${extra.slice(0, 3).join(" | ")}); both dumps in ${keptIn}`,
      );
    }
  } finally {
    await copyBackend.stop();
  }
}

/** Functions per file, every file, from the real graph (retried while another process holds the database). */
async function graphFunctions(run: Run): Promise<Map<string, string[]>> {
  const query =
    `MATCH (f:File) WHERE f.path STARTS WITH '${run.repo.path}/' OPTIONAL MATCH (f)-[:CONTAINS]->(fn:Function) ` +
    "RETURN f.path AS path, collect(fn.name) AS names";
  for (let attempt = 0; ; attempt++) {
    const result = await cgcExec(["query", query], { cwd: run.repo.path, env: run.backend.env, cgc: run.backend.cgc });
    if (result.code === 0 && result.stdout.includes("[")) {
      const rows = JSON.parse(result.stdout.slice(result.stdout.indexOf("["))) as Array<{
        path: string;
        names: string[] | null;
      }>;
      // KùzuDB collects no function of a file as null.
      return new Map(rows.map((row) => [row.path, (row.names ?? []).filter((name) => name !== null)]));
    }
    if (attempt >= 3) throw new Error(`the soak's ground-truth query failed: ${result.stdout}${result.stderr}`);
  }
}

async function checkEnd(run: Run): Promise<void> {
  // No orphaned process: the session ended, so no cgc of this home may be left once its stop has run.
  try {
    await waitFor(() => cgcProcesses(run.home.home).length === 0, "no cgc process left", 15_000);
  } catch {
    const left = cgcProcesses(run.home.home);
    run.violations.push(`cgc processes left after the session ended: ${left.map((p) => p.args).join("; ")}`);
    for (const process_ of left) signalGroup(process_.pgid, "SIGKILL");
  }
  // No unconfirmed destructive action: each rebuild, index and report follows a yes to its confirmation.
  const needs: Array<[RegExp, string]> = [
    [/^cgc rebuilding…/, "Replace the code graph?"],
    [/^cgc indexing…/, "Build a code graph?"],
  ];
  for (const [pattern, title] of needs) {
    let confirmed = false;
    let inEpisode = false;
    for (const event of run.timeline) {
      if (event.kind === "confirm" && event.title === title) confirmed = event.yes;
      if (event.kind !== "chip") continue;
      const matches = pattern.test(event.text ?? "");
      if (matches && !inEpisode && !confirmed) run.violations.push(`'${event.text}' without a yes to '${title}'`);
      if (matches && !inEpisode) confirmed = false; // one yes, one run
      inEpisode = matches;
    }
  }
  // No lost user file, nothing written that nobody asked for.
  const present = new Set(listFiles(run.repo.path));
  for (const [path, content] of run.files) {
    if (content === undefined) {
      if (present.has(path)) run.violations.push(`${path} was deleted by the agent, yet it is there`);
    } else if (!present.has(path)) {
      run.violations.push(`${path} is lost`);
    } else if (readFileSync(join(run.repo.path, path), "utf8") !== content) {
      run.violations.push(`${path} does not hold what was written`);
    }
  }
  for (const path of present) {
    // cgc writes a default .cgcignore into a repository that has none on every index (docs/cgc-compat.md):
    // cgc's own file, left to cgc.
    if (!run.files.has(path) && !run.allowedExtra.has(path) && path !== ".cgcignore") {
      run.violations.push(`${path} appeared unasked`);
    }
  }
  // Config intact.
  if (readFileSync(join(run.repo.path, ".pi", "cgc.json"), "utf8") !== SETTINGS) {
    run.violations.push(".pi/cgc.json changed");
  }
  // Honest to the end: never corrupt without damage (none was injected).
  if (run.timeline.some((event) => event.kind === "chip" && event.text === "cgc corrupt")) {
    run.violations.push("the chip said corrupt, with no damage injected");
  }
}

/** Files of the repository (relative), without git's own. */
function listFiles(root: string): string[] {
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (entry.name === ".git") continue;
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else out.push(relative(root, path));
    }
  };
  walk(root);
  return out.sort();
}

function argument(name: string, fallback: number): number {
  const at = process.argv.indexOf(`--${name}`);
  const value = at >= 0 ? Number(process.argv[at + 1]) : fallback;
  if (!Number.isSafeInteger(value) || value < 0) throw new Error(`--${name} must be a whole number`);
  return value;
}

function backendsArgument(): BackendName[] {
  const at = process.argv.indexOf("--backend");
  const value = at >= 0 ? (process.argv[at + 1] ?? "") : "kuzudb";
  const names = value === "all" ? [...BACKEND_NAMES] : value.split(",");
  for (const name of names)
    if (!BACKEND_NAMES.includes(name as BackendName))
      throw new Error(`--backend must be all or a comma-separated list of ${BACKEND_NAMES.join(", ")}`);
  return names as BackendName[];
}

function tableArgument(): ActionTable {
  const at = process.argv.indexOf("--actions");
  const value = at >= 0 ? process.argv[at + 1] : LATEST_TABLE;
  if (!Object.hasOwn(ACTION_TABLES, value ?? ""))
    throw new Error(`--actions must be one of ${Object.keys(ACTION_TABLES).join(", ")}`);
  return value as ActionTable;
}

if (process.argv[1]?.endsWith("soak.ts")) {
  const options = {
    runs: argument("runs", 5),
    seed: argument("seed", 1),
    steps: argument("steps", 10),
    firstRun: argument("first-run", 0),
    actions: tableArgument(),
    backends: backendsArgument(),
  };
  const report = await runSoak({ ...options, log: (line) => console.error(line) });
  console.log(JSON.stringify(report, null, 2));
  console.log(
    `soak: ${report.runs} runs, ${report.steps} steps, ${Object.values(report.faults).reduce((a, b) => a + b, 0)} faults injected, ` +
      `${report.freshChecks} fresh claims checked, ${report.parityChecks} parity checks, ${report.violations.length} invariant violations, ${Math.round(report.durationMs / 1000)} s ` +
      `per backend ${JSON.stringify(report.backends)}, ${Math.round(report.durationMs / 1000 / Math.max(1, report.runs))} s per session ` +
      `(npm run soak -- --runs ${options.runs} --seed ${options.seed} --steps ${options.steps} --first-run ${options.firstRun} --actions ${options.actions} --backend ${options.backends.join(",")})`,
  );
  process.exit(report.violations.length === 0 ? 0 : 1);
}
