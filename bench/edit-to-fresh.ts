// From an edit to the moment a graph query reflects it, on `scaledRepo` code bases, for
//   engine   pi-cgc's incremental engine (src/freshness/engine.ts, engine/pi-cgc-engine.py) already running:
//            edit → `update` → `verify` read-back, the product's own path; ENGINE_EDITS edits of three kinds
//            per round (a function replaced, a new file calling it, that file deleted);
//   sync     the full-rebuild sync: src/freshness/sync.ts `syncAndVerify` on a real session core
//            (`cgc index --force <root>`, the re-probe that every maintenance run ends with, the read-back);
//   rebuild  a full index into an empty graph (a fresh CGC home; on falkordb-remote a fresh server too) and one query;
//   watch    `cgc watch` already running: edit → the watcher's update is over (its CPU time stops moving;
//            cgc logs nothing at its default level) → SIGINT → exit → one query (the embedded database
//            admits no second process while the watcher lives, so no query can run earlier);
//   mcp      `cgc mcp start` already running with `watch_directory` on the root: edit → polling
//            `execute_cypher_query` through the same server until the answer reflects it — one lock
//            holder that watches and answers queries;
//   file     `cgc index <file>` and one query (for comparison: it adds the new function but leaves the
//            removed one in the graph).
// Every edit replaces the function the previous edit added (`bench_fresh_<k-1>` → `bench_fresh_<k>`)
// in one file, so each variant is checked for the new symbol present AND the old one gone.
import { type ChildProcess, spawn } from "node:child_process";
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import type { ExtensionContext } from "@mariozechner/pi-coding-agent";
import { cgcInterpreter } from "../src/cgc/interpreter.ts";
import { type Engine, startEngine } from "../src/freshness/engine.ts";
import { syncAndVerify } from "../src/freshness/sync.ts";
import { createCgcSession } from "../src/lifecycle/session.ts";
import { changesObserved } from "../src/state/model.ts";
import { cgcBinary, childEnv, makeCgcHome } from "../test/helpers/cgc-env.ts";
import { type FalkorServer, startFalkorDB } from "../test/helpers/falkordb.ts";
import { type FixtureRepo, scaledRepo } from "../test/helpers/repos.ts";
import {
  BACKENDS,
  type Backend,
  type BenchOptions,
  type BenchReport,
  cgc,
  log,
  ms,
  queryRows,
  spread,
  table,
} from "./harness.ts";

export const backends = BACKENDS;

const DEFAULT_SIZES = [10, 100];
const TARGET = "_compression.py";
const VARIANTS = ["engine", "sync", "rebuild", "watch", "mcp", "file"] as const;
/** Edits per round for the engine, a third of each kind. Each takes milliseconds, so the median is of many: with 12,
 * it fell on the second slowest of the 8 quick ones, and one slow pair of a busy machine moved it by half (23.6 ms
 * at 100 files where its neighbours took 14-17). */
const ENGINE_EDITS = 36;
type Variant = (typeof VARIANTS)[number];

const marker = (k: number) => `bench_fresh_${k}`;
const definition = (k: number) => `\n\ndef ${marker(k)}():\n    return ${k}\n`;
const pause = (milliseconds: number) => new Promise((resolve) => setTimeout(resolve, milliseconds));

interface Sample {
  /** Edit → fresh, as defined per variant. */
  ms: number;
  /** What else was measured on the way (named durations). */
  parts: Record<string, number>;
  /** The new function is in the graph. */
  added: boolean;
  /** The replaced function is gone from the graph. */
  removed: boolean;
}

/** The functions named bench_fresh_* in the target file, as the graph that `env` points cgc at holds them. */
async function markersInGraph(repo: FixtureRepo, env: Record<string, string>): Promise<string[]> {
  const path = join(repo.path, TARGET);
  const query = `MATCH (f:Function) WHERE f.path = '${path}' AND f.name STARTS WITH 'bench_fresh_' RETURN f.name AS name`;
  const rows = queryRows((await cgc(["query", query], repo.path, env)).stdout);
  return rows.map((row) => String(row.name));
}

/** Replaces bench_fresh_<from> with bench_fresh_<to> in the target file; returns a function that undoes it. */
function edit(repo: FixtureRepo, from: number, to: number): () => void {
  const path = join(repo.path, TARGET);
  const before = readFileSync(path, "utf8");
  const after = before.replace(definition(from), definition(to));
  if (after === before) throw new Error(`${marker(from)} is not in ${TARGET}`);
  writeFileSync(path, after);
  return () => writeFileSync(path, before);
}

/** A process's resident memory in MB (VmRSS). */
function residentMb(pid: number | undefined): number {
  if (pid === undefined) return Number.NaN;
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? Number.NaN) / 1024;
}

/** User + system CPU ticks of one process (all its threads). */
function cpuTicks(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return Number(fields[11]) + Number(fields[12]);
}

/**
 * Waits until the process has used CPU after `since` and then stayed idle for `quietMs`; resolves with
 * the time of its last CPU use (performance.now()).
 */
async function cpuSettled(pid: number, quietMs: number, timeoutMs: number): Promise<number> {
  const deadline = performance.now() + timeoutMs;
  let ticks = cpuTicks(pid);
  const baseline = ticks;
  let lastBusy = 0;
  while (performance.now() < deadline) {
    await pause(25);
    const now = cpuTicks(pid);
    if (now !== ticks) lastBusy = performance.now();
    ticks = now;
    if (ticks - baseline >= 3 && lastBusy > 0 && performance.now() - lastBusy >= quietMs) return lastBusy;
  }
  throw new Error(`the watcher did not settle within ${timeoutMs} ms`);
}

function startCgc(
  args: string[],
  cwd: string,
  env: Record<string, string>,
): { child: ChildProcess; output: () => string } {
  const child = spawn(cgcBinary(), args, {
    cwd,
    env: childEnv(env),
    detached: true,
    stdio: ["pipe", "pipe", "pipe"],
  });
  let text = "";
  child.stdout?.on("data", (chunk: Buffer) => {
    text += chunk.toString("utf8");
  });
  child.stderr?.on("data", (chunk: Buffer) => {
    text += chunk.toString("utf8");
  });
  return { child, output: () => text };
}

function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once("close", () => resolve()));
}

/** SIGINT to the group (cgc's own cleanup runs), SIGKILL if it is still there after 30 s. */
async function stop(child: ChildProcess): Promise<void> {
  if (child.pid === undefined) return;
  const group = -child.pid;
  const kill = (signal: NodeJS.Signals) => {
    try {
      process.kill(group, signal);
    } catch {
      // already gone
    }
  };
  kill("SIGINT");
  const timer = setTimeout(() => kill("SIGKILL"), 30_000);
  await exited(child);
  clearTimeout(timer);
}

async function waitForText(output: () => string, child: ChildProcess, pattern: RegExp, timeoutMs: number) {
  const deadline = performance.now() + timeoutMs;
  while (!pattern.test(output())) {
    if (child.exitCode !== null) throw new Error(`cgc exited before ${pattern}:\n${output()}`);
    if (performance.now() > deadline) throw new Error(`no ${pattern} within ${timeoutMs} ms:\n${output()}`);
    await pause(25);
  }
}

/** A minimal MCP client over a `cgc mcp start` child's stdio (newline-delimited JSON-RPC). */
function mcpClient(child: ChildProcess) {
  let buffer = "";
  let nextId = 1;
  const waiting = new Map<number, (message: { result?: unknown; error?: unknown }) => void>();
  child.stdout?.on("data", (chunk: Buffer) => {
    buffer += chunk.toString("utf8");
    const lines = buffer.split("\n");
    buffer = lines.pop() ?? "";
    for (const line of lines) {
      if (!line.startsWith("{")) continue;
      const message = JSON.parse(line) as { id?: number; result?: unknown; error?: unknown };
      if (message.id !== undefined) waiting.get(message.id)?.(message);
    }
  });
  const request = (method: string, params: unknown) =>
    new Promise<unknown>((resolve, reject) => {
      const id = nextId++;
      waiting.set(id, (message) => {
        waiting.delete(id);
        if (message.error) reject(new Error(JSON.stringify(message.error)));
        else resolve(message.result);
      });
      child.stdin?.write(`${JSON.stringify({ jsonrpc: "2.0", id, method, params })}\n`);
    });
  return {
    async initialize() {
      await request("initialize", {
        protocolVersion: "2024-11-05",
        capabilities: {},
        clientInfo: { name: "pi-cgc-bench", version: "0" },
      });
      child.stdin?.write(`${JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" })}\n`);
    },
    /** The tool's JSON answer (cgc puts it in the first text content). */
    async call(name: string, args: Record<string, unknown>): Promise<Record<string, unknown>> {
      const result = (await request("tools/call", { name, arguments: args })) as { content?: Array<{ text?: string }> };
      return JSON.parse(result.content?.[0]?.text ?? "{}") as Record<string, unknown>;
    },
  };
}

type McpClient = ReturnType<typeof mcpClient>;

interface SizeResult {
  size: number;
  functions: number;
  initialIndexMs: number;
  samples: Record<Variant, Sample[]>;
  watchStartMs: number[];
  mcpStartMs: number[];
  /** The engine's start: cold (parse the tree), then warm (from its cache), and its resident memory. */
  engineStart: { coldMs: number; warmMs: number; rssMb: number } | undefined;
}

/** The variants to run: those asked for, of those the backend can run (`file` copies the embedded database). */
function variantsOn(backend: Backend, asked?: string[]): Variant[] {
  const unknown = asked?.filter((name) => !(VARIANTS as readonly string[]).includes(name)) ?? [];
  if (unknown.length > 0) throw new Error(`no variant ${unknown.join(", ")}; known: ${VARIANTS.join(", ")}`);
  return VARIANTS.filter((v) => (v !== "file" || backend === "embedded") && (asked?.includes(v) ?? true));
}

/** What points cgc at a graph: its home, plus the server's address on falkordb-remote. */
async function graphOn(
  backend: Backend,
): Promise<{ env: Record<string, string>; home: string; stop(): Promise<void> }> {
  const home = makeCgcHome();
  const server: FalkorServer | undefined = backend === "falkordb-remote" ? await startFalkorDB() : undefined;
  return {
    env: { ...home.env, ...server?.env },
    home: home.home,
    async stop() {
      await server?.stop();
      home.cleanup();
    },
  };
}

async function measureSize(size: number, rounds: number, backend: Backend, variants: Variant[]): Promise<SizeResult> {
  log(`edit-to-fresh: ${size} files on ${backend} — creating and indexing`);
  const repo = scaledRepo(size);
  const graph = await graphOn(backend);
  const previousEnv = { ...process.env };
  // The product's session core reads the process environment, as it would inside pi.
  Object.assign(process.env, graph.env, { CGC_EXECUTABLE: cgcBinary() });
  const target = join(repo.path, TARGET);
  writeFileSync(target, readFileSync(target, "utf8") + definition(0));
  // `onDisk` is the marker in the file now; `k` numbers the edits. Variants that work on the shared
  // graph keep their edit; the others (their own graph) undo it afterwards, so the shared graph and
  // the file stay in step.
  let onDisk = 0;
  let k = 0;
  const next = () => {
    const from = onDisk;
    const to = ++k;
    return { from, to, undo: edit(repo, from, to) };
  };
  try {
    const initial = await cgc(["index", repo.path], repo.path, graph.env);
    log(`edit-to-fresh: ${size} files indexed in ${ms(initial.ms)}`);
    const functions = queryRows(
      (await cgc(["query", "MATCH (f:Function) RETURN count(f) AS n"], repo.path, graph.env)).stdout,
    )[0]?.n;

    // The product's session core, headless, on this graph: the same runner, store and sync as in pi.
    const ctx = { cwd: repo.path, hasUI: false, ui: {} } as unknown as ExtensionContext;
    const session = createCgcSession(ctx);
    await session.refresh();
    if (session.store.get().readiness !== "ready") throw new Error(`session not ready: ${session.store.get().reason}`);

    const samples = Object.fromEntries(VARIANTS.map((v) => [v, [] as Sample[]])) as Record<Variant, Sample[]>;
    let engine: Engine | undefined;
    let engineStart: SizeResult["engineStart"];
    const cacheDir = mkdtempSync(join(tmpdir(), "pi-cgc-bench-engine-"));
    const launchEngine = async (): Promise<{ engine: Engine; ms: number }> => {
      const interpreter = cgcInterpreter(cgcBinary(), process.env);
      if (!interpreter.ok) throw new Error(interpreter.reason);
      const started = performance.now();
      const launched = startEngine({
        runner: session.runner,
        python: interpreter.python,
        root: repo.path,
        cacheDir,
        startBudgetMs: 1_800_000,
      });
      const phase = await launched.started;
      if (phase.phase !== "ready") throw new Error(`the engine did not start: ${JSON.stringify(phase)}`);
      return { engine: launched, ms: performance.now() - started };
    };
    if (variants.includes("engine")) {
      log(`edit-to-fresh: ${size} files — starting the engine cold, then warm`);
      const cold = await launchEngine();
      await cold.engine.stop();
      const warm = await launchEngine();
      // As the product does after its own full index (the graph was just built from this tree): the engine
      // takes the tree it read as the graph's model, so the first edit is an ordinary one (ADR 0011).
      const told = await warm.engine.rebuilt([], 1_800_000);
      if (!told.ok) throw new Error(`the engine refused the rebuilt tree: ${told.reason}`);
      engine = warm.engine;
      engineStart = { coldMs: cold.ms, warmMs: warm.ms, rssMb: Number.NaN };
    }
    let newFile: string | undefined;
    const watchStartMs: number[] = [];
    const mcpStartMs: number[] = [];
    const check = async (graphEnv: Record<string, string>, from: number, to: number) => {
      const names = await markersInGraph(repo, graphEnv);
      return { added: names.includes(marker(to)), removed: !names.includes(marker(from)) };
    };

    /** Makes the next edit and asks `client` every 50 ms until the graph has the new function and not the old. */
    const editAndPoll = async (client: McpClient): Promise<number> => {
      const query = `MATCH (f:Function) WHERE f.path = '${target}' AND f.name STARTS WITH 'bench_fresh_' RETURN f.name AS name`;
      const { from, to } = next();
      onDisk = to;
      const started = performance.now();
      for (;;) {
        const answer = await client.call("execute_cypher_query", { cypher_query: query });
        const names = ((answer.results as Array<{ name: string }>) ?? []).map((row) => row.name);
        if (names.includes(marker(to)) && !names.includes(marker(from))) return performance.now() - started;
        if (performance.now() - started > 600_000) throw new Error(`the watcher never reflected the edit: ${names}`);
        await pause(50);
      }
    };

    const measure: Record<Variant, () => Promise<Sample>> = {
      engine: async () => {
        const running = engine as Engine;
        type Kind = "function replaced" | "new file" | "file deleted";
        const one = async (kind: Kind, paths: string[], check: () => Promise<{ added: boolean; removed: boolean }>) => {
          const started = performance.now();
          const updated = await running.update(paths, 600_000);
          const updatedAt = performance.now();
          const verified = await running.verify(paths, 600_000);
          const elapsed = performance.now() - started;
          if (!updated.ok || !verified.ok || verified.value.unreflected.length > 0) {
            throw new Error(`the engine did not verify: ${JSON.stringify({ updated, verified })}`);
          }
          const steps: Record<string, number> = {
            "update in the engine": updated.value.ms,
            "before the database": updated.value.resolveMs ?? Number.NaN,
            "CPU before the database": updated.value.resolveCpuMs ?? Number.NaN,
            // linkRows is a count of rows, not a time.
            ...Object.fromEntries(Object.entries(updated.value.phases ?? {}).filter(([name]) => name !== "linkRows")),
            "read-back": performance.now() - updatedAt,
          };
          // Each edit's figures as it goes (the table keeps medians only): where a slow one spent its time.
          log(
            `edit-to-fresh: ${size} files — ${basename(paths[0] as string)}: ${ms(elapsed)}, database held ${ms(updated.value.lockMs)}, ` +
              Object.entries(steps)
                .map(([name, value]) => `${name} ${Math.round(value)}`)
                .join(", "),
          );
          return { kind, elapsed, lockMs: updated.value.lockMs, steps, ...(await check()) };
        };
        const results: Array<Awaited<ReturnType<typeof one>>> = [];
        for (let i = 0; i < ENGINE_EDITS; i++) {
          if (i % 3 === 0) {
            const { from, to } = next();
            onDisk = to;
            results.push(await one("function replaced", [target], () => check(graph.env, from, to)));
          } else if (i % 3 === 1) {
            newFile = join(repo.path, `bench_new_${k}.py`);
            writeFileSync(
              newFile,
              `from _compression import *\n\n\ndef caller_${k}():\n    return ${marker(onDisk)}()\n`,
            );
            results.push(await one("new file", [newFile], async () => ({ added: true, removed: true })));
          } else {
            const gone = newFile as string;
            rmSync(gone);
            results.push(await one("file deleted", [gone], async () => ({ added: true, removed: true })));
          }
        }
        const sorted = results.map((r) => r.elapsed).sort((a, b) => a - b);
        const median = sorted[Math.floor(sorted.length / 2)] as number;
        const medianOf = (values: number[]) => values.sort((a, b) => a - b)[Math.floor(values.length / 2)] as number;
        // The median of each step over the edits (its own median: the steps' medians need not add up).
        const stepNames = [...new Set(results.flatMap((r) => Object.keys(r.steps)))];
        const steps = Object.fromEntries(
          stepNames.map((name) => [`median ${name}`, medianOf(results.map((r) => r.steps[name] ?? 0))]),
        );
        return {
          ms: median,
          parts: {
            [`median of ${ENGINE_EDITS} edits, slowest`]: sorted.at(-1) as number,
            "database held (median)": medianOf(results.map((r) => r.lockMs)),
            // Where the overall median falls depends on the mix of kinds; each kind's own median does not.
            ...Object.fromEntries(
              (["function replaced", "new file", "file deleted"] as const).map((kind) => [
                `median ${kind}`,
                medianOf(results.filter((r) => r.kind === kind).map((r) => r.elapsed)),
              ]),
            ),
            ...steps,
          },
          added: results.every((r) => r.added),
          removed: results.every((r) => r.removed),
        };
      },
      sync: async () => {
        const { from, to } = next();
        onDisk = to;
        const started = performance.now();
        session.store.apply((state) => changesObserved(state, [target]));
        const outcome = await syncAndVerify(session);
        const elapsed = performance.now() - started;
        if (outcome.result.code !== "OK" || !outcome.verified.includes(target)) {
          throw new Error(`sync did not verify: ${outcome.result.code} ${outcome.result.reason} ${outcome.unverified}`);
        }
        const indexMs = outcome.result.durationMs;
        return { ms: elapsed, parts: { "index --force": indexMs }, ...(await check(graph.env, from, to)) };
      },
      rebuild: async () => {
        const { from, to, undo } = next();
        const fresh = await graphOn(backend);
        try {
          const started = performance.now();
          const index = await cgc(["index", repo.path], repo.path, fresh.env);
          const result = await check(fresh.env, from, to);
          return { ms: performance.now() - started, parts: { index: index.ms }, ...result };
        } finally {
          undo();
          await fresh.stop();
        }
      },
      watch: async (): Promise<Sample> => {
        const started0 = performance.now();
        const watcher = startCgc(["watch", repo.path], repo.path, graph.env);
        const pid = watcher.child.pid as number;
        try {
          await waitForText(watcher.output, watcher.child, /Monitoring for file changes/, 300_000);
          watchStartMs.push(performance.now() - started0);
          if (backend !== "embedded") {
            // A server admits other clients while the watcher lives, and the watcher's work is partly the
            // server's (its own CPU can rest while a query runs there): ask the graph itself, through a
            // `cgc mcp start` used only as a warm query client.
            const reader = startCgc(["mcp", "start"], repo.path, graph.env);
            try {
              const client = mcpClient(reader.child);
              await client.initialize();
              const first = await editAndPoll(client);
              const later = await editAndPoll(client);
              return { ms: later, parts: { "first edit": first }, added: true, removed: true };
            } finally {
              await stop(reader.child);
            }
          }
          // The first edit a new watcher sees costs more (lazy imports, an empty imports map): report it apart.
          const first = next();
          onDisk = first.to;
          const firstStarted = performance.now();
          const firstSettled = await cpuSettled(pid, 1_500, 600_000);
          const { from, to } = next();
          onDisk = to;
          const started = performance.now();
          const settled = await cpuSettled(pid, 1_500, 600_000);
          await stop(watcher.child);
          const stoppedAt = performance.now();
          const result = await check(graph.env, from, to);
          const firstGone = !(await markersInGraph(repo, graph.env)).includes(marker(first.from));
          return {
            ms: performance.now() - started,
            parts: {
              "first edit: update over": firstSettled - firstStarted,
              "update over": settled - started,
              "SIGINT → exit": stoppedAt - settled,
            },
            ...result,
            removed: result.removed && firstGone,
          };
        } finally {
          await stop(watcher.child);
        }
      },
      mcp: async () => {
        const started0 = performance.now();
        const server = startCgc(["mcp", "start"], repo.path, graph.env);
        try {
          const client = mcpClient(server.child);
          await client.initialize();
          const watching = await client.call("watch_directory", { repo_path: repo.path });
          if (watching.success !== true) throw new Error(`watch_directory: ${JSON.stringify(watching)}`);
          mcpStartMs.push(performance.now() - started0);
          const first = await editAndPoll(client);
          const later = await editAndPoll(client);
          return { ms: later, parts: { "first edit": first }, added: true, removed: true };
        } finally {
          await stop(server.child);
        }
      },
      file: async () => {
        // On a copy of the graph, so that whatever single-file indexing leaves behind stays out of the others.
        const copy = makeCgcHome();
        cpSync(join(graph.home, ".codegraphcontext"), join(copy.home, ".codegraphcontext"), { recursive: true });
        const { from, to, undo } = next();
        try {
          const started = performance.now();
          await cgc(["index", target], repo.path, copy.env);
          const result = await check(copy.env, from, to);
          return { ms: performance.now() - started, parts: {}, ...result };
        } finally {
          undo();
          copy.cleanup();
        }
      },
    };

    for (let round = 0; round < rounds; round++) {
      const order = variants.map((_, i) => variants[(i + round) % variants.length] as Variant);
      for (const variant of order) {
        const sample = await measure[variant]();
        samples[variant].push(sample);
        log(`edit-to-fresh: ${size} files, round ${round + 1}/${rounds}, ${variant}: ${ms(sample.ms)}`);
      }
    }
    if (engine && engineStart) {
      engineStart.rssMb = residentMb(engine.pid);
      await engine.stop();
    }
    rmSync(cacheDir, { recursive: true, force: true });
    await session.dispose();
    return {
      engineStart,
      size,
      functions: typeof functions === "number" ? functions : Number.NaN,
      initialIndexMs: initial.ms,
      samples,
      watchStartMs,
      mcpStartMs,
    };
  } finally {
    for (const key of Object.keys(process.env)) if (!(key in previousEnv)) delete process.env[key];
    Object.assign(process.env, previousEnv);
    repo.cleanup();
    await graph.stop();
  }
}

/** cgc 0.6.13 indexes about two files a second here, so rounds get fewer as repositories grow. */
function roundsFor(size: number): number {
  return size <= 30 ? 3 : 1;
}

export async function run(options: BenchOptions): Promise<BenchReport> {
  const sizes = options.sizes ?? (options.quick ? DEFAULT_SIZES.slice(0, -1) : DEFAULT_SIZES);
  const results: SizeResult[] = [];
  const variants = variantsOn(options.backend, options.variants);
  for (const size of sizes) results.push(await measureSize(size, roundsFor(size), options.backend, variants));

  const label: Record<Variant, string> = {
    engine: "pi-cgc engine (update + read-back), median per round",
    sync: "full-rebuild sync (`index --force` + re-probe + read-back)",
    rebuild: "full rebuild into an empty graph + query",
    watch:
      options.backend === "embedded"
        ? "`cgc watch` running → update over → stop → query"
        : "`cgc watch` running → a query through another client sees it",
    mcp: "`cgc mcp start` + `watch_directory` → query through it",
    file: "`cgc index <file>` + query",
  };
  const rows: string[][] = [];
  for (const result of results) {
    for (const variant of variants) {
      const samples = result.samples[variant];
      const parts = Object.keys(samples[0]?.parts ?? {})
        .map(
          (name) =>
            `${name} ${spread(
              samples.map((s) => s.parts[name] ?? Number.NaN),
              name === "polls" ? String : ms,
            )}`,
        )
        .join("; ");
      const correct = (pick: (s: Sample) => boolean) => `${samples.filter(pick).length}/${samples.length}`;
      rows.push([
        `${result.size} (${result.functions} functions)`,
        label[variant],
        spread(samples.map((s) => s.ms)),
        parts,
        correct((s) => s.added),
        correct((s) => s.removed),
      ]);
    }
  }
  const ran = (variant: Variant) => variants.includes(variant);
  const starts = results.map(
    (r) =>
      `- ${r.size} files: initial \`cgc index\` ${ms(r.initialIndexMs)}` +
      (ran("watch") ? `; \`cgc watch\` start (to "Monitoring") ${spread(r.watchStartMs)}` : "") +
      (r.engineStart
        ? `; engine start cold ${ms(r.engineStart.coldMs)}, warm ${ms(r.engineStart.warmMs)}, resident ${r.engineStart.rssMb.toFixed(0)} MB`
        : "") +
      (ran("mcp")
        ? `; \`cgc mcp start\` + \`watch_directory\` (it re-reads every file: sync on start) ${spread(r.mcpStartMs)}`
        : "") +
      ".",
  );
  const described: Record<Variant, string[]> = {
    engine: [
      `- *engine*: pi-cgc's engine already running (started once per size, cold then warm, then told the graph was`,
      "  just rebuilt from the tree, as the product tells it after its own full index), through the product's",
      `  client: \`update\` then the \`verify\` read-back, ${ENGINE_EDITS} edits per round cycling through a function`,
      "  replaced in the target file (checked by a query: new present, old gone), a new file calling it, and that",
      "  file deleted; the figure is the round's median, the slowest edit and the database-held time beside it.",
    ],
    sync: [
      "- *chosen sync*: src/freshness/sync.ts `syncAndVerify` on the product's session core (headless), timed",
      "  from the edit to its verified answer — three spawns: `cgc index --force <root>`, the re-probe every",
      "  maintenance run ends with, the read-back query.",
    ],
    rebuild: [],
    watch: [
      ...(options.backend === "embedded"
        ? []
        : [
            "- *watch* on falkordb-remote: `cgc watch` running, a second `cgc mcp start` used only as a query client;",
            "  from the edit until `execute_cypher_query` (every 50 ms) answers with the new function and without the",
            "  old one. Two edits per watcher, the second is the figure. The rest of this paragraph is the embedded method.",
          ]),
      "- *watch*: the watcher logs nothing at cgc's default level and, on the embedded database, no other process can",
      '  query while it lives; "update over" is the moment its CPU time stopped moving (polled from /proc every',
      "  25 ms, then 1.5 s quiet). Each watcher sees two edits: the first one a new watcher handles is reported",
      "  apart; the second is the figure, from the edit through the update, SIGINT, the exit and one `cgc query`",
      "  that finds the change. cgc's watcher debounces 2 s before it starts an update.",
    ],
    mcp: [
      "- *mcp*: one `cgc mcp start` holding the database, watching the root (`watch_directory`), answering",
      "  `execute_cypher_query` every 50 ms until the answer has the new function and not the old one; two edits",
      "  per server, the second is the figure.",
    ],
    file: [
      "- *file*: on a copy of the indexed graph; 'old removed' 0/n means the replaced function stays in the graph.",
    ],
  };
  const notRun = VARIANTS.filter((variant) => !ran(variant));
  const markdown = [
    `Repositories from \`scaledRepo(n)\` (real Python: the standard library, then from 1 800 files on the packages of`,
    `the project's virtual environment under \`third_party/\`), each edit replaces one function in \`${TARGET}\``,
    "(`bench_fresh_<k-1>` → `bench_fresh_<k>`: one added, one removed). Rounds per size: " +
      results.map((r) => `${r.size} files × ${roundsFor(r.size)}`).join(", ") +
      `; the ${variants.length} variants interleaved in rotating order within each round. Median (min–max, n).`,
    "",
    ...variants.flatMap((variant) => described[variant]),
    ...(options.backend === "embedded"
      ? []
      : [
          "- On falkordb-remote the graph lives in a FalkorDB server the bench starts on 127.0.0.1 (a second one",
          "  for the rebuild). *file* cannot run there: it works on a copy of the embedded database's files.",
        ]),
    ...(notRun.length > 0 ? [`- Not run here: ${notRun.map((v) => `*${v}*`).join(", ")}.`] : []),
    "",
    table(["files", "path", "edit → fresh", "parts", "new found", "old removed"], rows),
    "",
    "Start-up costs (paid once per watcher, not per edit):",
    ...starts,
  ].join("\n");
  return { title: `Edit-to-fresh latency: ${titleOf(variants, options.backend, sizes)}`, markdown };
}

/** What a run measured, for its section's title: its paths, its backend and its sizes. */
function titleOf(variants: readonly Variant[], backend: string, sizes: readonly number[]): string {
  const names: Record<Variant, string> = {
    engine: "engine",
    sync: "chosen sync",
    rebuild: "full rebuild",
    watch: "`cgc watch`",
    mcp: "`cgc mcp start`'s watcher",
    file: "`cgc index <file>`",
  };
  const listed = variants.map((variant) => names[variant]);
  const what =
    variants.length === 1 && variants[0] === "engine"
      ? "the engine"
      : listed.length > 1
        ? `${listed.slice(0, -1).join(", ")} and ${listed.at(-1)}`
        : (listed[0] ?? "");
  const where = backend === "embedded" ? "KùzuDB" : backend === "falkordb-remote" ? "a FalkorDB server" : backend;
  const files = (n: number) => n.toLocaleString("en").replace(/,/g, " ");
  const range =
    sizes.length === 1
      ? `${files(sizes[0] as number)} files`
      : sizes.length === 2
        ? `${files(sizes[0] as number)} and ${files(sizes[1] as number)} files`
        : `${files(sizes[0] as number)} to ${files(sizes.at(-1) as number)} files`;
  return `${what} on ${where}, ${range}`;
}
