// How should the agent's graph queries reach cgc? The same query (the callers of the function with the
// most callers) on the same repository, in interleaved rounds, through:
//   spawn       a `cgc query` process per call (the runner's CLI path)
//   lease cold  a new `cgc mcp start` child: start, initialize, call (a lease's first call)
//   lease warm  a call on a held `cgc mcp start` child (src/agent/mcp.ts)
// plus what a held lease costs others (a CLI call meeting its lock while the lease is released), and the
// tokens the routing card adds to each prompt. Then an answer with possible callers at 1 000 files: the graph's
// callers through the held lease and the engine's possible call sites (src/agent/possible-callers.ts), each
// alone and one after the other as cgc_relations asks them, warm and first after an edit.
//
//   npm run bench -- --only query-latency [--quick] [--record]
//   node --import tsx bench/query-latency.ts [--quick]
import { appendFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { buildCard, CARD_MAX_TOKENS, type CardTools, estimateTextTokens } from "../src/agent/card.ts";
import { GAP_TOOL_NAMES, GRAPH_TOOL_NAMES, INTENT_CATALOG, INTENTS } from "../src/agent/catalog.ts";
import { createMcpLease } from "../src/agent/mcp.ts";
import { ENGINE_SCRIPT } from "../src/cgc/engine-script.ts";
import { cgcInterpreter } from "../src/cgc/interpreter.ts";
import { createRunner } from "../src/cgc/runner.ts";
import { type Engine, type PossibleTarget, startEngine } from "../src/freshness/engine.ts";
import { cgcBinary, childEnv, makeCgcHome } from "../test/helpers/cgc-env.ts";
import { type FixtureRepo, scaledRepo, stdlibRepo, tinyRepo } from "../test/helpers/repos.ts";
import {
  type BenchOptions,
  type BenchReport,
  cgc,
  header,
  interleave,
  log,
  machine,
  ms,
  queryRows,
  ratio,
  spread,
  stats,
  table,
  timeSpawn,
} from "./harness.ts";

const OWN_TOOLS: CardTools = {
  graph: GRAPH_TOOL_NAMES,
  text: ["read", "bash"],
  doctor: GAP_TOOL_NAMES.doctor,
};

function cardRows(): string[][] {
  const adapter = (prefix: string): CardTools => ({
    graph: Object.fromEntries(INTENTS.map((intent) => [intent, `${prefix}${INTENT_CATALOG[intent]}`])),
    text: ["read", "bash"],
    doctor: GAP_TOOL_NAMES.doctor,
  });
  const cases: Array<[string, CardTools]> = [
    ["pi-cgc's own tools (pi defaults: read, bash)", OWN_TOOLS],
    [
      "pi-cgc's own tools, grep on, skill loaded",
      { ...OWN_TOOLS, text: ["grep", "read", "bash"], skill: "cgc-routing" },
    ],
    ["pi-mcp-adapter tools (`cgc_` prefix)", adapter("cgc_")],
    ["pi 1.x MCP tools (`mcp__cgc__` prefix)", adapter("mcp__cgc__")],
  ];
  return cases.map(([name, tools]) => {
    const card = buildCard(tools);
    return [name, String(card.length), String(Buffer.byteLength(card)), String(estimateTextTokens(card))];
  });
}

export async function run(options: BenchOptions): Promise<BenchReport> {
  const rounds = options.quick ? 3 : 8;
  const home = makeCgcHome();
  const repo: FixtureRepo = options.quick ? tinyRepo() : stdlibRepo("email");
  const runner = createRunner({
    executable: cgcBinary(),
    env: childEnv(home.env),
    budgets: { probe: 60_000, query: 60_000, maintenance: 0, longLived: 0 },
  });
  try {
    await cgc(["index", repo.path], repo.path, home.env);
    const picked = await cgc(
      [
        "query",
        "MATCH (c:Function)-[:CALLS]->(f:Function) RETURN f.name AS name, count(c) AS callers ORDER BY callers DESC LIMIT 1",
      ],
      repo.path,
      home.env,
    );
    const target = queryRows(picked.stdout)[0]?.name;
    if (typeof target !== "string") throw new Error(`no target function in ${repo.name}`);
    const cypher = `MATCH (c:Function)-[r:CALLS]->(f:Function {name: '${target}'}) RETURN c.name AS caller, c.path AS path, r.line_number AS line`;

    const held = createMcpLease({ runner, cwd: () => repo.path, budgetMs: () => 60_000, idleMs: 3_600_000 });
    const timed = async (call: () => Promise<boolean>, what: string) => {
      const started = performance.now();
      if (!(await call())) throw new Error(`${what} failed`);
      return performance.now() - started;
    };
    // One owner of the embedded database at a time: the held lease ends before anything else opens it.
    const spawnCall = async () => {
      await held.release("a CLI call follows");
      return timed(async () => {
        const result = await runner.run(["query", cypher], { kind: "query", cwd: repo.path });
        return result.code === "OK" && queryRows(result.stdout).length > 0;
      }, "cgc query");
    };
    const leaseCall = (lease: ReturnType<typeof createMcpLease>) =>
      lease.call("execute_cypher_query", { cypher_query: cypher }).then((outcome) => outcome.ok);

    // The first call of each kind on this machine state, before any round.
    const firstSpawn = await spawnCall();
    const firstLease = await timed(() => leaseCall(held), "first lease call");
    await held.release("cold rounds next");

    log(`query-latency: ${rounds} interleaved rounds on ${repo.name} (${repo.files.length} files)`);
    const samples = await interleave(
      {
        spawn: spawnCall,
        "lease cold": async () => {
          await held.release("a new child follows");
          const lease = createMcpLease({ runner, cwd: () => repo.path, budgetMs: () => 60_000 });
          const took = await timed(() => leaseCall(lease), "lease cold");
          await lease.release("measured");
          return took;
        },
        "lease warm": async () => {
          if (!held.holding && !(await leaseCall(held))) throw new Error("warming the lease failed");
          return timed(() => leaseCall(held), "lease warm");
        },
      },
      rounds,
    );
    if (!(await leaseCall(held))) throw new Error("re-warming the lease failed");
    const holding = held.holding;

    // What a held lease costs a CLI caller: the lease ends 500 ms after the CLI starts (as at agent_end).
    const contention = performance.now();
    const waiting = runner.run(["query", "MATCH (f:File) RETURN count(f) AS files"], { kind: "query", cwd: repo.path });
    await new Promise((resolve) => setTimeout(resolve, 500));
    await held.release("a CLI call is waiting");
    const contended = await waiting;
    const contendedMs = performance.now() - contention;

    const s = (name: keyof typeof samples) => stats(samples[name]);
    const markdown = [
      `Repository: ${repo.name} (${repo.files.length} files, stdlib copy); query: the callers of \`${target}\` ` +
        `(${queryRows((await cgc(["query", cypher], repo.path, home.env)).stdout).length} rows); ${rounds} interleaved rounds.`,
      "",
      table(
        ["strategy", "first call", "per call (median, min–max)"],
        [
          ["spawn: `cgc query` per call", ms(firstSpawn), spread(samples.spawn)],
          ["lease cold: new `cgc mcp start` + initialize + call", ms(firstLease), spread(samples["lease cold"])],
          ["lease warm: call on a held `cgc mcp start`", "–", spread(samples["lease warm"])],
        ],
      ),
      "",
      `Ratios (medians): spawn / lease warm = ${ratio(samples.spawn, samples["lease warm"])}; ` +
        `spawn / lease cold = ${ratio(samples.spawn, samples["lease cold"])}. ` +
        `Lease warm median ${ms(s("lease warm").median)} vs spawn ${ms(s("spawn").median)}.`,
      "",
      `A CLI call started while the lease held the database, the lease released 500 ms later: ${contended.code} ` +
        `after ${ms(contendedMs)} (cgc retries its lock 5 times over ~7.5 s; the lease was ${holding ? "held" : "not held"} before).`,
      "",
      `Routing card (hard cap ${CARD_MAX_TOKENS} tokens, counted as characters / 4), added to every prompt while ready:`,
      "",
      table(["tools in the session", "characters", "bytes", "tokens"], cardRows()),
    ].join("\n");
    return {
      title: "Query latency of the agent tools, and the routing card's size",
      markdown: `${markdown}\n\n${await possibleLatency(options.quick ? 100 : 1_000, rounds)}`,
    };
  } finally {
    await runner.close();
    repo.cleanup();
    home.cleanup();
  }
}

/**
 * The callers of the most-called functions of a `size`-file repository with their possible callers: pi-cgc's own
 * index, the engine started warm from it (as after that index), the graph's callers through a held lease, and the
 * engine's `possible` request, interleaved over the targets; then the first `possible` after an edit (the engine
 * makes the edited file's view again and the index over all).
 */
async function possibleLatency(size: number, rounds: number): Promise<string> {
  const home = makeCgcHome();
  const repo = scaledRepo(size);
  const cacheDir = mkdtempSync(join(tmpdir(), "pi-cgc-bench-possible-"));
  const runner = createRunner({
    executable: cgcBinary(),
    env: childEnv(home.env),
    budgets: { probe: 60_000, query: 60_000, maintenance: 0, longLived: 0 },
  });
  const interpreter = cgcInterpreter(cgcBinary(), process.env);
  if (!interpreter.ok) throw new Error(interpreter.reason);
  let engine: Engine | undefined;
  const held = createMcpLease({ runner, cwd: () => repo.path, budgetMs: () => 60_000, idleMs: 3_600_000 });
  try {
    log(`query-latency: pi-cgc's index of ${size} files`);
    const indexed = timeSpawn(interpreter.python, [ENGINE_SCRIPT, "--cache-dir", cacheDir, "index", repo.path], {
      cwd: repo.path,
      env: childEnv(home.env),
    });
    const index = await indexed;
    if (index.code !== 0) throw new Error(`pi-cgc's index failed (${index.code}): ${index.stderr}`);
    engine = startEngine({ runner, python: interpreter.python, root: repo.path, cacheDir, startBudgetMs: 1_800_000 });
    const phase = await engine.started;
    if (phase.phase !== "ready") throw new Error(`the engine did not start: ${JSON.stringify(phase)}`);
    const told = await engine.rebuilt([], 1_800_000);
    if (!told.ok) throw new Error(`the engine refused the rebuilt tree: ${told.reason}`);
    const picked = await held.call("execute_cypher_query", {
      cypher_query:
        "MATCH (c:Function)-[:CALLS]->(f:Function) RETURN f.name AS name, f.path AS path, f.line_number AS line, " +
        "count(c) AS callers ORDER BY callers DESC, path, line LIMIT 5",
    });
    if (!picked.ok) throw new Error(`picking targets failed: ${picked.reason}`);
    const rows = ((picked.value as { results?: unknown }).results ?? []) as Array<Record<string, unknown>>;
    const targets = rows.map((row) => ({
      name: String(row.name),
      path: String(row.path),
      line: Number(row.line),
    }));
    if (targets.length === 0) throw new Error("no called function in the graph");
    const graphCallers = (target: PossibleTarget) =>
      held.call("execute_cypher_query", {
        cypher_query:
          "MATCH (f:Function)<-[r:CALLS|HEURISTIC_CALLS]-(o:Function) WHERE f.name = $name AND f.path = $path " +
          "RETURN o.name AS name, o.path AS path, r.line_number AS line, r.confidence_label AS label, " +
          "r.resolution_tier AS tier, r.full_call_name AS call",
        params: { name: target.name, path: target.path },
      });
    const possible = async (target: PossibleTarget) => {
      const answer = await (engine as Engine).possible([target], 60_000);
      if (!answer.ok) throw new Error(`possible failed: ${answer.reason}`);
      return answer.value.sites[0]?.length ?? 0;
    };
    const sites = await Promise.all(targets.map(async (t) => ((await graphCallers(t)).ok ? possible(t) : -1)));
    let turn = 0;
    const nextTarget = () => targets[turn++ % targets.length] as PossibleTarget;
    const timed = async (work: () => Promise<unknown>) => {
      const started = performance.now();
      await work();
      return performance.now() - started;
    };
    log(`query-latency: ${rounds * targets.length} interleaved rounds of possible callers on ${size} files`);
    const samples = await interleave(
      {
        "graph callers (held lease)": () => timed(() => graphCallers(nextTarget())),
        "possible callers (engine)": () => timed(() => possible(nextTarget())),
        "both, as cgc_relations asks": () =>
          timed(async () => {
            const target = nextTarget();
            await graphCallers(target);
            await possible(target);
          }),
      },
      rounds * targets.length,
    );
    // The first question after an edit: one file changed, the engine's update, then `possible`.
    const edited = join(repo.path, repo.files[0] as string);
    const afterEdit: number[] = [];
    // One owner of the embedded database at a time: the engine's update writes it.
    await held.release("an update follows");
    for (let i = 0; i < rounds; i++) {
      appendFileSync(edited, `\ndef _bench_possible_${i}():\n    return ${i}\n`);
      const updated = await engine.update([edited], 600_000);
      if (!updated.ok) throw new Error(`update failed: ${updated.reason}`);
      afterEdit.push(await timed(() => possible(nextTarget())));
    }
    return [
      `Possible callers at ${size} files (\`scaledRepo\`: the standard library's files), pi-cgc's index, the engine ` +
        `warm: the callers of the ${targets.length} most-called functions ` +
        `(${targets.map((t, i) => `\`${t.name}\` ${sites[i]} sites`).join(", ")}), ${rounds} rounds each.`,
      "",
      table(
        ["what", "per answer (median, min–max)"],
        [
          ["the graph's callers, through the held lease", spread(samples["graph callers (held lease)"])],
          ["the engine's possible call sites", spread(samples["possible callers (engine)"])],
          ["both, one after the other (cgc_relations callers)", spread(samples["both, as cgc_relations asks"])],
          ["the engine's possible call sites, first after an edit and its update", spread(afterEdit)],
        ],
      ),
    ].join("\n");
  } finally {
    await held.release("measured");
    await engine?.stop();
    await runner.close();
    repo.cleanup();
    home.cleanup();
    rmSync(cacheDir, { recursive: true, force: true });
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const quick = process.argv.includes("--quick");
  const report = await run({ quick, backend: "embedded" });
  const command = `node --import tsx bench/query-latency.ts${quick ? " --quick" : ""}`;
  process.stdout.write(`## ${report.title}\n\n${header(machine(), command)}\n\n${report.markdown}\n`);
}
