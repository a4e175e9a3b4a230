// How should the agent's graph queries reach cgc? Measures, on one repository in one run, the same
// query through each strategy, cold (first call) and warm (median of the next ones):
//   spawn     a `cgc query` process per call (runner.run, the CLI's Cypher path)
//   mcp-once  a `cgc mcp start` child per call (what a lease costs when calls are further apart than IDLE_MS)
//   mcp-lease one pi-cgc-owned `cgc mcp start` child kept warm between calls (src/agent/mcp.ts)
// It also measures what the lease costs others: how long a CLI call waits when it meets the held lock.
//
//   node --import tsx bench/query-latency.ts [--warm N] [--repo tiny|email]
//
// Uses a throw-away CGC home (HOME=<temp>) and the project's cgc (.venv/bin/cgc).
import { cpus, totalmem } from "node:os";
import { createMcpLease } from "../src/agent/mcp.ts";
import { parseVersion } from "../src/cgc/parse.ts";
import { createRunner, type RunResult } from "../src/cgc/runner.ts";
import { cgcBinary, cgcExec, childEnv, makeCgcHome } from "../test/helpers/cgc-env.ts";
import { type FixtureRepo, stdlibRepo, tinyRepo } from "../test/helpers/repos.ts";

const argv = process.argv.slice(2);
const option = (name: string, fallback: string) => {
  const at = argv.indexOf(`--${name}`);
  return at >= 0 ? (argv[at + 1] ?? fallback) : fallback;
};
const WARM = Number(option("warm", "8"));
const REPO = option("repo", "email");

const home = makeCgcHome();
const repo: FixtureRepo = REPO === "tiny" ? tinyRepo() : stdlibRepo(REPO);
const env = childEnv(home.env);
const runner = createRunner({
  executable: cgcBinary(),
  env,
  budgets: { probe: 60_000, query: 60_000, maintenance: 0, longLived: 0 },
});

const ms = (start: bigint) => Number(process.hrtime.bigint() - start) / 1e6;
const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
};
const fmt = (value: number) => (value >= 100 ? value.toFixed(0) : value.toFixed(1));

function check(ok: boolean, what: string): void {
  if (!ok) throw new Error(`benchmark query failed: ${what}`);
}

async function main(): Promise<void> {
  const indexed = await cgcExec(["index", repo.path], { cwd: repo.path, env: home.env, timeoutMs: 600_000 });
  check(indexed.code === 0, `cgc index: ${indexed.stderr.slice(-500)}`);

  // The target: the function with the most callers, so that every strategy returns real rows.
  const picked = await runner.run(
    [
      "query",
      "MATCH (c:Function)-[:CALLS]->(f:Function) RETURN f.name AS name, count(c) AS callers ORDER BY callers DESC LIMIT 1",
    ],
    { kind: "query", cwd: repo.path },
  );
  const target = /"name": "([^"]+)"/.exec(picked.stdout)?.[1];
  check(target !== undefined, `no target function: ${picked.stdout}${picked.stderr}`);
  const cypher = `MATCH (c:Function)-[r:CALLS]->(f:Function {name: '${target}'}) RETURN c.name AS caller, c.path AS path, r.line_number AS line`;

  const spawnCall = async () => {
    const result: RunResult = await runner.run(["query", cypher], { kind: "query", cwd: repo.path });
    check(result.code === "OK" && result.stdout.includes('"caller"'), `spawn: ${result.code} ${result.reason}`);
  };
  const onceCall = async () => {
    const lease = createMcpLease({ runner, cwd: () => repo.path, budgetMs: () => 60_000 });
    const outcome = await lease.call("execute_cypher_query", { cypher_query: cypher });
    check(outcome.ok, `mcp-once: ${JSON.stringify(outcome)}`);
    await lease.release("one call per child");
  };
  const lease = createMcpLease({ runner, cwd: () => repo.path, budgetMs: () => 60_000, idleMs: 600_000 });
  const leaseCall = async () => {
    const outcome = await lease.call("execute_cypher_query", { cypher_query: cypher });
    check(outcome.ok, `mcp-lease: ${JSON.stringify(outcome)}`);
  };

  const measure = async (call: () => Promise<void>) => {
    let start = process.hrtime.bigint();
    await call();
    const cold = ms(start);
    const warm: number[] = [];
    for (let i = 0; i < WARM; i++) {
      start = process.hrtime.bigint();
      await call();
      warm.push(ms(start));
    }
    return { cold, warm: median(warm), min: Math.min(...warm), max: Math.max(...warm) };
  };

  const spawn = await measure(spawnCall);
  const once = await measure(onceCall);
  const leased = await measure(leaseCall);

  // What the held lock costs a CLI caller: the lease is released 500 ms after the CLI starts.
  const contender = process.hrtime.bigint();
  const waiting = runner.run(["query", "MATCH (f:File) RETURN count(f) AS files"], {
    kind: "query",
    cwd: repo.path,
  });
  await new Promise((resolve) => setTimeout(resolve, 500));
  await lease.release("a CLI call is waiting");
  const contended = await waiting;
  const contenderMs = ms(contender);
  const version = await runner.run(["--version"], { kind: "probe", cwd: repo.path, takesLock: false });
  const parsed = parseVersion(`${version.stderr}${version.stdout}`);
  const cgcVersion = parsed.kind === "ok" ? `cgc ${parsed.value.version}` : "cgc (version unknown)";
  await runner.close();

  const files = repo.files.length;
  const rows = [
    ["spawn (cgc query per call)", spawn],
    ["mcp-once (cgc mcp start per call)", once],
    ["mcp-lease (warm cgc mcp start)", leased],
  ] as const;
  const lines = [
    `query latency — ${repo.name} (${files} files), callers of \`${target}\`, ${WARM} warm calls each`,
    `machine: ${cpus().length} × ${cpus()[0]?.model ?? "cpu"}, ${(totalmem() / 2 ** 30).toFixed(0)} GiB; node ${process.version}; ${cgcVersion}`,
    "",
    "| strategy | cold ms | warm ms (median) | warm min–max |",
    "| --- | ---: | ---: | ---: |",
    ...rows.map(([name, r]) => `| ${name} | ${fmt(r.cold)} | ${fmt(r.warm)} | ${fmt(r.min)}–${fmt(r.max)} |`),
    "",
    `ratios: spawn warm / lease warm = ${(spawn.warm / leased.warm).toFixed(0)}×; ` +
      `lease cold / spawn warm = ${(leased.cold / spawn.warm).toFixed(2)}×; ` +
      `mcp-once / spawn (warm) = ${(once.warm / spawn.warm).toFixed(2)}×`,
    `a CLI call meeting the held lock (lease released after 500 ms): ${contended.code} after ${fmt(contenderMs)} ms`,
  ];
  console.log(lines.join("\n"));
}

try {
  await main();
} finally {
  repo.cleanup();
  home.cleanup();
}
