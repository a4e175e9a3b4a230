// Regenerates test/fixtures/cgc/ from the real cgc, so that every format src/cgc/parse.ts reads
// was printed by the binary we pin (docs/cgc-compat.md records the version observed).
//
//   npm run fixtures            (= node --import tsx scripts/capture-fixtures.ts)
//   npm run fixtures contexts   (only the named-context captures; the other fixtures stay as they are)
//   npm run fixtures faults     (only the reliability faults: a damaged database, a watch whose server stopped)
//   npm run fixtures backends   (only `banner-*`: the `Using database:` line on each backend of
//                                test/helpers/backends.ts; starts FalkorDB and Neo4j servers, about two minutes)
//
// Needs the project's cgc (.venv/bin/cgc, made by `npm run setup`) with its tree-sitter grammars.
// Runs in throw-away CGC homes (HOME=<temp>) on fixture repositories made by test/helpers/repos.ts,
// so nothing of the user's own CGC is read or written. Takes a minute or two: each lock capture
// waits out cgc's own retries (~8 s). One JSON file per capture: argv, env deltas, cwd kind, exit
// code, stdout, stderr, cgc version. The random temp directory is written as <WORK> and this
// checkout as <PROJECT>; everything else is byte-exact (timings included, so they change per run).
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseVersion } from "../src/cgc/parse.ts";
import { REPOSITORIES_QUERY as PROBE_QUERY } from "../src/lifecycle/probe.ts";
import { BACKEND_NAMES, startBackend } from "../test/helpers/backends.ts";
import {
  type CgcExecResult,
  cgcExec,
  cgcStart,
  makeCgcHome,
  PINNED_ENV,
  PROJECT_ROOT,
} from "../test/helpers/cgc-env.ts";
import { startFalkorDB } from "../test/helpers/falkordb.ts";
import { type FixtureRepo, npmPackageRepo, stdlibRepo, tinyRepo } from "../test/helpers/repos.ts";

const OUT = join(PROJECT_ROOT, "test", "fixtures", "cgc");
const VENV_BIN = join(PROJECT_ROOT, ".venv", "bin");
const work = realpathSync(mkdtempSync(join(tmpdir(), "pi-cgc-capture-")));
const project = realpathSync(PROJECT_ROOT);

// Placeholders for what differs between machines and runs; the longest path is replaced first.
const tsLibs = process.env.TREE_SITTER_LANGUAGE_PACK_LIBS_DIR;
const placeholders = new Map<string, string>([
  [work, "<WORK>"],
  [project, "<PROJECT>"],
]);
if (tsLibs) placeholders.set(tsLibs, "<TS_LIBS>");
const byLength = [...placeholders].sort((a, b) => b[0].length - a[0].length);

function stable(text: string): string {
  return byLength.reduce((acc, [from, to]) => acc.split(from).join(to), text);
}

type CwdKind = "repo" | "work" | "home";

interface Capture {
  name: string;
  description: string;
  argv: string[];
  env: Record<string, string>;
  cwd_kind: CwdKind;
  exitCode: number | null;
  stdout: string;
  stderr: string;
  cgcVersion: string;
}

let cgcVersion = "unknown";
const written: string[] = [];

function save(name: string, record: Omit<Capture, "name" | "cgcVersion">, extra: Record<string, unknown> = {}): void {
  const capture: Capture = {
    name,
    description: record.description,
    argv: record.argv.map(stable),
    env: Object.fromEntries(Object.entries(record.env).map(([key, value]) => [key, stable(value)])),
    cwd_kind: record.cwd_kind,
    exitCode: record.exitCode,
    stdout: stable(record.stdout),
    stderr: stable(record.stderr),
    cgcVersion,
  };
  writeFileSync(join(OUT, `${name}.json`), `${JSON.stringify({ ...capture, ...extra }, null, 2)}\n`);
  written.push(name);
  console.log(`${name}: exit ${record.exitCode}`);
}

/** The environment deltas of every capture, as recorded in the fixture. */
function envFor(home: string, extra: Record<string, string> = {}): Record<string, string> {
  return {
    HOME: home,
    ...PINNED_ENV,
    // cgc doctor reports whether `cgc` is on PATH; put it there as an installed cgc would be.
    PATH: `${VENV_BIN}:${process.env.PATH ?? ""}`,
    ...(tsLibs ? { TREE_SITTER_LANGUAGE_PACK_LIBS_DIR: tsLibs } : {}),
    ...extra,
  };
}

function recordedEnv(env: Record<string, string>): Record<string, string> {
  return { ...env, PATH: `${VENV_BIN}:$PATH` };
}

async function capture(
  name: string,
  description: string,
  args: string[],
  where: {
    cwd: string;
    cwd_kind: CwdKind;
    env: Record<string, string>;
    cgc?: string;
    recorded?: Record<string, string>;
  },
): Promise<CgcExecResult> {
  const result = await cgcExec(args, { cwd: where.cwd, env: where.env, cgc: where.cgc, timeoutMs: 600_000 });
  if (result.timedOut) throw new Error(`${name}: cgc ${args.join(" ")} timed out`);
  save(name, {
    description,
    argv: ["cgc", ...args],
    env: where.recorded ?? recordedEnv(where.env),
    cwd_kind: where.cwd_kind,
    exitCode: result.code,
    stdout: result.stdout,
    stderr: result.stderr,
  });
  return result;
}

const REPOSITORIES_QUERY =
  "MATCH (r:Repository) RETURN r.path AS path, r.name AS name, r.indexed_at AS indexed_at, r.commit_hash AS commit_hash";
// `<module>` is a synthetic Function node cgc adds per Python file; the index summary leaves it out.
const COUNTS_QUERY =
  "MATCH (r:Repository) OPTIONAL MATCH (r)-[:CONTAINS*]->(f:File) WITH r, count(DISTINCT f) AS files " +
  "OPTIONAL MATCH (r)-[:CONTAINS*]->(fn:Function) WHERE fn.name <> '<module>' WITH r, files, count(DISTINCT fn) AS functions " +
  "OPTIONAL MATCH (r)-[:CONTAINS*]->(c:Class) RETURN r.path AS path, files, functions, count(DISTINCT c) AS classes ORDER BY path";
const LANGUAGES_QUERY =
  "MATCH (r:Repository)-[:CONTAINS*]->(f:File) RETURN r.path AS path, f.language AS language, count(DISTINCT f) AS files ORDER BY path, language";

async function main(): Promise<void> {
  mkdirSync(OUT, { recursive: true });
  if (process.argv[2] === "contexts") {
    await readVersion(envFor(makeCgcHome(join(work, "version")).home));
    await captureContexts(tinyRepo({ parent: join(work, "repos") }));
    rmSync(work, { recursive: true, force: true });
    console.log(`wrote ${written.length} fixtures to ${OUT}`);
    return;
  }
  if (process.argv[2] === "backends") {
    await readVersion(envFor(makeCgcHome(join(work, "version")).home));
    await captureBackends(join(work, "repos"));
    rmSync(work, { recursive: true, force: true });
    console.log(`wrote ${written.length} fixtures to ${OUT}`);
    return;
  }
  if (process.argv[2] === "faults") {
    await readVersion(envFor(makeCgcHome(join(work, "version")).home));
    await captureFaults(join(work, "repos"));
    rmSync(work, { recursive: true, force: true });
    console.log(`wrote ${written.length} fixtures to ${OUT}`);
    return;
  }
  for (const file of readdirSync(OUT)) if (file.endsWith(".json")) rmSync(join(OUT, file));

  const repos = join(work, "repos");
  const tiny = tinyRepo({ parent: repos });
  const json = stdlibRepo("json", { parent: repos });
  const email = stdlibRepo("email", { parent: repos });
  const npm = npmPackageRepo({ parent: repos });
  const awkward = tinyRepo({
    parent: repos,
    awkwardPath: true,
    name: "a-long-repository-directory-name-that-pushes-the-path-past-eighty-columns",
  });
  writeFileSync(
    join(OUT, "repos.json"),
    `${JSON.stringify(
      {
        description: "the fixture repositories the captures ran on, as test/helpers/repos.ts made them",
        repos: [tiny, json, email, npm, awkward].map((repo) => ({
          name: repo.name,
          path: stable(repo.path),
          head: repo.head,
          files: repo.files,
        })),
      },
      null,
      2,
    )}\n`,
  );
  const mainHome = makeCgcHome(join(work, "main"));
  const env = envFor(mainHome.home);
  const inRepo = (repo: FixtureRepo, extra: Record<string, string> = {}) => ({
    cwd: repo.path,
    cwd_kind: "repo" as const,
    env: { ...env, ...extra },
  });
  const inWork = { cwd: work, cwd_kind: "work" as const, env };

  await readVersion(env);
  await capture("version", "cgc --version (prints on stderr)", ["--version"], inWork);

  await capture("list-empty", "cgc list in a fresh home (no .env: auto-detect picks kuzudb)", ["list"], inWork);
  await capture("stats-empty", "cgc stats with nothing indexed", ["stats"], inWork);
  await capture("index-first", "first index of tinyRepo()", ["index", tiny.path], inRepo(tiny));
  await capture("index-skip", "index again: skipped by the file-count check", ["index", tiny.path], inRepo(tiny));
  await capture(
    "index-skip-dot",
    "index again as `.`: the skip message echoes the argument",
    ["index", "."],
    inRepo(tiny),
  );
  await capture("index-force", "index --force: delete and rebuild", ["index", "--force", tiny.path], inRepo(tiny));
  await capture(
    "index-missing-path",
    "index of a path that does not exist",
    ["index", join(work, "does-not-exist")],
    inWork,
  );
  await capture("index-stdlib-json", "index of stdlibRepo('json')", ["index", json.path], inRepo(json));
  await capture("index-stdlib-email", "index of stdlibRepo('email')", ["index", email.path], inRepo(email));
  await capture("index-npm", "index of npmPackageRepo() (picomatch, JavaScript)", ["index", npm.path], inRepo(npm));
  await capture(
    "index-awkward-path",
    "index of tinyRepo() under a path with spaces, `[id]` and non-ASCII, longer than 80 columns",
    ["index", awkward.path],
    inRepo(awkward),
  );
  // `[/x]` is a Rich closing tag without an opening one: cgc dies printing the path.
  const closingTag = tinyRepo({ parent: join(repos, "closing [/x] tag"), name: "tiny-closing-tag" });
  await capture(
    "index-markup-error",
    "index of a repository whose path holds `[/x]`: Rich raises MarkupError",
    ["index", closingTag.path],
    inRepo(closingTag),
  );
  await capture("list-repos", "cgc list with five repositories, one with a long awkward path", ["list"], inWork);
  await capture("stats-overall", "cgc stats over the whole database", ["stats"], inWork);
  await capture("stats-repo", "cgc stats for tinyRepo()", ["stats", tiny.path], inRepo(tiny));
  await capture("stats-repo-awkward", "cgc stats for the awkward-path repository", ["stats", awkward.path], inWork);
  await capture("stats-unknown", "cgc stats for a path that is not indexed", ["stats", join(work, "nowhere")], inWork);
  await capture("query-repositories", "Repository nodes", ["query", REPOSITORIES_QUERY], inWork);
  await capture(
    "query-counts",
    "files, functions (without <module>) and classes per repository",
    ["query", COUNTS_QUERY],
    inWork,
  );
  await capture("query-languages", "File nodes per repository and File.language", ["query", LANGUAGES_QUERY], inWork);
  for (const label of ["Repository", "File", "Function", "Class"]) {
    await capture(
      `query-properties-${label.toLowerCase()}`,
      `properties of ${label} nodes (Kùzu table_info)`,
      ["query", `CALL table_info('${label}') RETURN *`],
      inWork,
    );
  }
  await capture("query-error", "a Cypher syntax error", ["query", "MATCH (n) RETURN n LIMIT"], inWork);
  await capture(
    "query-write-rejected",
    "a write query, refused by cgc's read-only check",
    ["query", "CREATE (n:Repository {path: '/nowhere'}) RETURN n"],
    inWork,
  );

  await captureLocks(tiny, env, "kuzudb");
  await captureMcp(tiny, env);
  await captureContexts(tiny);

  // Ladybug in its own home: the same lock texts must hold for the other embedded backend.
  const ladybug = makeCgcHome(join(work, "ladybug"));
  const ladybugEnv = envFor(ladybug.home, { DEFAULT_DATABASE: "ladybugdb" });
  await capture("index-ladybugdb", "first index of tinyRepo() with DEFAULT_DATABASE=ladybugdb", ["index", tiny.path], {
    cwd: tiny.path,
    cwd_kind: "repo",
    env: ladybugEnv,
  });
  await captureLocks(tiny, ladybugEnv, "ladybugdb");

  // doctor in a fresh home: it writes a default .env naming falkordb.
  const doctor = makeCgcHome(join(work, "doctor"));
  const doctorEnv = envFor(doctor.home);
  const inDoctorHome = { cwd: doctor.home, cwd_kind: "home" as const, env: doctorEnv };
  await capture("doctor-first-run", "cgc doctor in a fresh home (writes .env)", ["doctor"], inDoctorHome);
  await capture("doctor-default", "cgc doctor once the default .env exists", ["doctor"], inDoctorHome);
  await capture("doctor-kuzudb", "cgc doctor with DEFAULT_DATABASE=kuzudb", ["doctor"], {
    ...inDoctorHome,
    env: { ...doctorEnv, DEFAULT_DATABASE: "kuzudb" },
  });

  // The same in the home that holds data: after doctor, the banner names falkordb while the
  // factory falls back to the Kùzu directory, so the repositories are still listed.
  await capture("doctor-after-index", "cgc doctor in the home with indexed repositories", ["doctor"], inWork);
  await capture("list-after-doctor", "cgc list after doctor wrote DEFAULT_DATABASE=falkordb", ["list"], inWork);
  await captureFaults(repos);
  await captureBackends(repos);

  rmSync(work, { recursive: true, force: true });
  console.log(`wrote ${written.length} fixtures to ${OUT}`);
}

/**
 * Faults the reliability suite injects into the real cgc (test/reliability/): a damaged Kùzu file, in the
 * two forms Kùzu names (the first page overwritten; the file cut to half its size, as a half-written copy),
 * and a `cgc watch` whose FalkorDB server stopped while it ran (it stays alive and prints a traceback for
 * every change it cannot write).
 */
async function captureFaults(repos: string): Promise<void> {
  const damaged = makeCgcHome(join(work, "damaged"));
  const env = envFor(damaged.home);
  const repo = tinyRepo({ parent: repos, name: "tiny-damaged" });
  const where = { cwd: repo.path, cwd_kind: "repo" as const, env };
  const indexed = await cgcExec(["index", repo.path], { cwd: repo.path, env });
  if (indexed.code !== 0) throw new Error(`corrupt captures: the index failed:\n${indexed.stdout}${indexed.stderr}`);
  const db = join(damaged.home, ".codegraphcontext", "global", "db", "kuzudb");
  const good = readFileSync(db);
  writeFileSync(db, Buffer.concat([Buffer.alloc(4096, 0xff), good.subarray(4096)]));
  await capture(
    "corrupt-header",
    "cgc query after the first 4096 bytes of the Kùzu file were overwritten with 0xff",
    ["query", REPOSITORIES_QUERY],
    where,
  );
  writeFileSync(db, good.subarray(0, Math.floor(good.length / 2)));
  await capture(
    "corrupt-truncated",
    "cgc query after the Kùzu file was cut to half its size (a half-written copy)",
    ["query", REPOSITORIES_QUERY],
    where,
  );

  const server = await startFalkorDB();
  try {
    const serverHome = makeCgcHome(join(work, "falkordb"));
    const serverEnv = envFor(serverHome.home, server.env);
    const watched = tinyRepo({ parent: repos, name: "tiny-watched" });
    const index = await cgcExec(["index", watched.path], { cwd: watched.path, env: serverEnv });
    if (index.code !== 0) throw new Error(`watch capture: the index failed:\n${index.stdout}${index.stderr}`);
    const watch = cgcStart(["watch", watched.path], { cwd: watched.path, env: serverEnv });
    await watch.waitForLine("stdout", /Monitoring for file changes/);
    await server.stop();
    const file = join(watched.path, "pkg", "text.py");
    writeFileSync(file, `${readFileSync(file, "utf8")}\n\ndef after_the_server_stopped():\n    return 1\n`);
    await watch.waitForLine("stderr", /^\S*ConnectionError: /);
    const done = await watch.stop();
    save("watch-server-stopped", {
      description:
        "cgc watch on falkordb-remote; the server stopped, then pkg/text.py changed; still alive until SIGINT",
      argv: ["cgc", "watch", watched.path],
      env: recordedEnv({ ...serverEnv, FALKORDB_PORT: "<PORT>" }),
      cwd_kind: "repo",
      exitCode: done.code,
      stdout: done.stdout,
      stderr: done.stderr.split(`127.0.0.1:${server.port}`).join("127.0.0.1:<PORT>"),
    });
  } finally {
    await server.stop();
  }
}

// The readiness probe's graph query on each backend of the test matrix, for the `Using database:` line on
// stderr (parseDatabaseBanner). Each backend has its own home and, for the servers, its own server.
async function captureBackends(repos: string): Promise<void> {
  const repo = tinyRepo({ parent: repos, name: "tiny-backends" });
  for (const name of BACKEND_NAMES) {
    const backend = await startBackend(name);
    try {
      const env = envFor(backend.home.home, backend.env);
      const index = await cgcExec(["index", repo.path], { cwd: repo.path, env, cgc: backend.cgc, timeoutMs: 600_000 });
      if (index.code !== 0) throw new Error(`banner-${name}: the index failed:\n${index.stdout}${index.stderr}`);
      const venv = backend.cgc.includes(".venv-lite") ? ".venv-lite" : ".venv";
      const recorded = Object.fromEntries(
        Object.entries({ ...recordedEnv(env), PATH: `<PROJECT>/${venv}/bin:$PATH` }).map(([key, value]) => [
          key,
          value
            .split(backend.home.home)
            .join("<HOME>")
            .replace(/127\.0\.0\.1:\d+/, "127.0.0.1:<PORT>")
            .replace(/^[1-9]\d*$/, key.endsWith("_PORT") ? "<PORT>" : value),
        ]),
      );
      await capture(
        `banner-${name}`,
        `the readiness probe's graph query with ${venv}/bin/cgc on the ${name} backend (test/helpers/backends.ts): stderr names the backend`,
        ["query", PROBE_QUERY],
        { cwd: repo.path, cwd_kind: "repo", env, cgc: backend.cgc, recorded },
      );
    } finally {
      await backend.stop();
    }
  }
}

async function readVersion(env: Record<string, string>): Promise<void> {
  const probe = parseVersion((await cgcExec(["--version"], { cwd: work, env })).stderr);
  if (probe.kind !== "ok") throw new Error(`cannot read the cgc version: ${probe.reason}`);
  cgcVersion = probe.value.version;
}

/** Named contexts (worktree isolation, ADR 0008), in a home of their own. */
async function captureContexts(repo: FixtureRepo): Promise<void> {
  const home = makeCgcHome(join(work, "contexts"));
  const env = envFor(home.home);
  const inHome = { cwd: home.home, cwd_kind: "home" as const, env };
  const inRepo = { cwd: repo.path, cwd_kind: "repo" as const, env };
  const name = "wt-feature-0123abcd";
  await capture("context-list-empty", "cgc context list in a fresh home (stderr)", ["context", "list"], inHome);
  await capture(
    "context-create",
    "cgc context create with an explicit backend",
    ["context", "create", name, "--database", "kuzudb"],
    inHome,
  );
  await capture(
    "context-create-exists",
    "cgc context create of a name that exists (still exit 0)",
    ["context", "create", name, "--database", "kuzudb"],
    inHome,
  );
  await capture(
    "context-query-unregistered",
    "cgc query --context of a name that is not registered",
    ["query", "MATCH (r:Repository) RETURN r.path AS path", "--context", "wt-missing"],
    inRepo,
  );
  await capture(
    "context-index",
    "cgc index --context: the repository goes into the context's database",
    ["index", repo.path, "--context", name],
    inRepo,
  );
  await capture(
    "context-query",
    "cgc query --context: a `Context:` line precedes the JSON",
    ["query", "MATCH (r:Repository) RETURN r.path AS path", "--context", name],
    inRepo,
  );
  await capture(
    "context-query-default",
    "cgc query without --context: the global database does not hold the context's repository",
    ["query", "MATCH (r:Repository) RETURN r.path AS path"],
    inRepo,
  );
  await capture("context-create-second", "a second context, default backend", ["context", "create", "other"], inHome);
  await capture(
    "context-list",
    "cgc context list with two contexts, one with a linked repository",
    ["context", "list"],
    inHome,
  );

  // delete asks y/N on stdin and has no --yes.
  const deleting = cgcStart(["context", "delete", "other"], { cwd: home.home, env });
  deleting.child.stdin?.end("y\n");
  const deleted = await deleting.exited;
  save("context-delete", {
    description: "cgc context delete, answering y on stdin: the registry entry goes, the database files stay",
    argv: ["cgc", "context", "delete", "other"],
    env: recordedEnv(env),
    cwd_kind: "home",
    exitCode: deleted.code,
    stdout: deleted.stdout,
    stderr: deleted.stderr,
  });

  await capture("context-mode-named", "cgc context mode named (machine-global)", ["context", "mode", "named"], inHome);
  await capture("context-default", "cgc context default", ["context", "default", name], inHome);
  await capture("context-list-named", "cgc context list in named mode with a default", ["context", "list"], inHome);
}

/** A `cgc watch` holds the embedded database; a CLI command and `cgc mcp start` then meet the lock. */
async function captureLocks(repo: FixtureRepo, env: Record<string, string>, backend: string): Promise<void> {
  const watch = cgcStart(["watch", repo.path], { cwd: repo.path, env });
  await watch.waitForLine("stdout", /Monitoring for file changes/);
  const where = { cwd: repo.path, cwd_kind: "repo" as const, env };
  await capture(`lock-cli-${backend}`, `cgc list while a cgc watch holds the ${backend} database`, ["list"], where);
  await capture(
    `lock-mcp-${backend}`,
    `cgc mcp start while a cgc watch holds the ${backend} database`,
    ["mcp", "start"],
    where,
  );
  const stopped = await watch.stop("SIGINT");
  save(`watch-${backend}`, {
    description: `cgc watch on an indexed repository (${backend}), stopped with SIGINT`,
    argv: ["cgc", "watch", repo.path],
    env: recordedEnv(env),
    cwd_kind: "repo",
    exitCode: stopped.code,
    stdout: stopped.stdout,
    stderr: stopped.stderr,
  });
}

interface JsonRpcExchange {
  request: Record<string, unknown>;
  response: unknown;
}

/** `cgc mcp start` over stdio: a CLI command meets its lock; then initialize, tools/list, two calls. */
async function captureMcp(repo: FixtureRepo, env: Record<string, string>): Promise<void> {
  const server = cgcStart(["mcp", "start"], { cwd: repo.path, env });
  await server.waitForLine("stderr", /MCP Server is running/);
  await capture("lock-cli-while-mcp", "cgc stats while cgc mcp start holds the database", ["stats"], {
    cwd: repo.path,
    cwd_kind: "repo",
    env,
  });

  const exchange: JsonRpcExchange[] = [];
  const call = async (id: number, method: string, params: Record<string, unknown>) => {
    const request = { jsonrpc: "2.0", id, method, params };
    server.child.stdin?.write(`${JSON.stringify(request)}\n`);
    const line = await server.waitForLine("stdout", new RegExp(`^\\{"jsonrpc": "2.0", "id": ${id}[,}]`));
    exchange.push({ request, response: JSON.parse(line) });
    return JSON.parse(line) as { result?: { tools?: unknown[] } };
  };
  await call(1, "initialize", {
    protocolVersion: "2025-03-26",
    capabilities: {},
    clientInfo: { name: "pi-cgc-fixtures", version: "0" },
  });
  server.child.stdin?.write(`${JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" })}\n`);
  const listed = await call(2, "tools/list", {});
  await call(3, "tools/call", { name: "list_indexed_repositories", arguments: {} });
  await call(4, "tools/call", { name: "execute_cypher_query", arguments: { cypher_query: REPOSITORIES_QUERY } });
  server.child.stdin?.end();
  const done = await server.exited;

  const base = {
    argv: ["cgc", "mcp", "start"],
    env: recordedEnv(env),
    cwd_kind: "repo" as const,
    exitCode: done.code,
    stdout: done.stdout,
    stderr: done.stderr,
  };
  const stableExchange = JSON.parse(stable(JSON.stringify(exchange))) as JsonRpcExchange[];
  save(
    "mcp-tools",
    { ...base, description: "cgc mcp start: initialize, then tools/list (JSON-RPC over stdio)" },
    {
      tools: JSON.parse(stable(JSON.stringify(listed.result?.tools ?? []))),
      exchange: stableExchange.slice(0, 2),
    },
  );
  save(
    "mcp-session",
    { ...base, description: "cgc mcp start: initialize, tools/list, two tools/call, then EOF" },
    {
      exchange: stableExchange,
    },
  );
}

await main();
