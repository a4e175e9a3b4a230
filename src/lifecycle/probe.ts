// The readiness probe: runs in the background at session start and after every maintenance run, with
// as few cgc spawns as the facts allow (version and backend in parallel with one graph query that answers
// both "is this workspace indexed?" and the coverage facts; the version read from cgc's package metadata
// instead of a `cgc --version` wherever that metadata is certain).
import { type Backend, detectCgcBackend, reportedBackend } from "../cgc/backend.ts";
import { installedCgcVersion } from "../cgc/interpreter.ts";
import { detectDamagedDatabase, parseQueryJson, parseVersion, richPrinted } from "../cgc/parse.ts";
import type { Runner } from "../cgc/runner.ts";
import { graphLedger } from "../state/ledger.ts";
import type { ProbeVerdict, RepositoryFacts } from "../state/model.ts";
import { count } from "../state/words.ts";
import { readHeadCommit } from "../workspace/git.ts";
import { resolveWorkspaceRoot } from "../workspace/root.ts";
import type { StartDrift } from "../workspace/tracker.ts";

/** Every repository with its counts, in one query; the graph decides indexedness, never a folder marker. */
export const REPOSITORIES_QUERY =
  "MATCH (r:Repository) OPTIONAL MATCH (r)-[:CONTAINS*1..]->(f:File) " +
  "OPTIONAL MATCH (f)-[:CONTAINS]->(fn:Function) OPTIONAL MATCH (f)-[:CONTAINS]->(c:Class) " +
  "RETURN r.path AS path, r.name AS name, r.indexed_at AS indexed_at, r.commit_hash AS commit_hash, " +
  "count(DISTINCT f) AS files, count(DISTINCT fn) AS functions, count(DISTINCT c) AS classes, " +
  "collect(DISTINCT f.language) AS languages";

export interface ProbeInput {
  runner: Runner;
  /** The session's cwd. */
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** Skip the backend detection when it is already known this session (it runs at most once). */
  knownBackend?: Backend | null;
  /** Skip `--version` when it is already known this session (or from cgc's package metadata). */
  knownVersion?: string;
  /** Set when the workspace has no graph to ask yet (a worktree whose context does not exist): why it is unindexed. */
  noGraph?: string;
  /** The files changed since the graph was last known to reflect the tree (the session's change tracker). */
  fileDrift: (root: string, indexedMs: number) => StartDrift;
}

export interface ProbeOutcome {
  verdict: ProbeVerdict;
  root: string;
  backend: Backend | null;
  repositories: RepositoryFacts[];
  /** False when the probe was cancelled (session ended): record nothing. */
  settled: boolean;
}

export async function probeReadiness(input: ProbeInput): Promise<ProbeOutcome> {
  const { runner, cwd } = input;
  const spawnsBefore = runner.spawnCount;
  // The version from cgc's package metadata where that is certain: a `cgc --version` is a Python start (about
  // a second of CPU, beside the query's) at every session start.
  const installed =
    input.knownVersion === undefined && typeof runner.executable === "string"
      ? installedCgcVersion(runner.executable, input.env)
      : undefined;
  // A complete line, as cgc prints it: the reader takes only lines that ended.
  const knownVersion = input.knownVersion ?? (installed && versionOf(`CodeGraphContext ${installed}\n`));
  const versionCall =
    knownVersion === undefined
      ? runner.run(["--version"], { kind: "probe", cwd, takesLock: false })
      : Promise.resolve(undefined);
  const backendCall =
    input.knownBackend === undefined ? detectCgcBackend({ env: input.env, runner, cwd }) : input.knownBackend;
  const queryCall =
    input.noGraph === undefined
      ? runner.run(["query", REPOSITORIES_QUERY], { kind: "probe", cwd })
      : Promise.resolve(undefined);
  const [version, backend, query] = await Promise.all([versionCall, backendCall, queryCall]);

  const fallbackRoot = resolveWorkspaceRoot(cwd);
  const outcome = (verdict: ProbeVerdict, root = fallbackRoot, repositories: RepositoryFacts[] = []): ProbeOutcome => ({
    verdict,
    root,
    backend,
    repositories,
    settled: true,
  });

  const failedToRun = [version, query].find((call) => call?.code === "UNAVAILABLE");
  if (failedToRun) return outcome({ readiness: "unavailable", reason: failedToRun.reason });
  const decisive = query ?? version; // the call the verdict rests on
  if (decisive?.code === "CANCELLED")
    return { ...outcome({ readiness: "unknown", reason: decisive.reason }), settled: false };
  const cgcVersion = knownVersion ?? (version ? versionOf(`${version.stderr}\n${version.stdout}`) : undefined);
  const facts = (repository?: RepositoryFacts, repositoryCount?: number) => ({
    cgcVersion,
    backend: backend ?? undefined,
    reportedBackend: query ? reportedBackend(query.stderr) : undefined,
    repository,
    repositoryCount,
    takenAt: Date.now(),
    spawns: runner.spawnCount - spawnsBefore,
  });
  if (query === undefined) return outcome({ readiness: "unindexed", reason: input.noGraph ?? "", facts: facts() });
  if (query.code === "BUSY") {
    // The runner says which: the embedded database's lock, or another pi-cgc call's turn at FalkorDB Lite's daemon.
    return outcome({ readiness: "busy", reason: query.reason, facts: facts() });
  }
  if (query.code === "TIMEOUT") return outcome({ readiness: "unknown", reason: query.reason, facts: facts() });
  // Corrupt only on positive evidence: Kùzu saying the database file itself is invalid or cut short.
  const damage = query.code === "FAILED" ? detectDamagedDatabase(`${query.stdout}\n${query.stderr}`) : undefined;
  if (damage)
    return outcome({ readiness: "corrupt", reason: `cgc cannot open its database: ${damage}`, facts: facts() });
  if (query.code !== "OK") {
    return outcome({ readiness: "unknown", reason: `the graph query failed: ${query.reason}`, facts: facts() });
  }
  const parsed = parseQueryJson(query.stdout);
  if (parsed.kind !== "ok") {
    return outcome({
      readiness: "unknown",
      reason: `cgc's answer could not be read: ${parsed.reason}`,
      facts: facts(),
    });
  }
  const records = parsed.value.map(toRepositoryFacts).filter((repo): repo is RepositoryFacts => repo !== null);
  const root = resolveWorkspaceRoot(
    cwd,
    records.map((repo) => repo.path),
    richPrinted,
  );
  const isRoot = (repo: RepositoryFacts) => repo.path === root || repo.path === richPrinted(root);
  // cgc's own verdict (`cgc index`): a Repository node without files is "an empty node from interrupted
  // indexing", not an index; cgc indexes such a repository again instead of skipping it.
  const repositories = records.filter((repo) => repo.files !== 0);
  const found = repositories.find(isRoot);
  const repository = found && { ...found, path: root };
  if (!repository) {
    return outcome(
      {
        readiness: "unindexed",
        reason: records.some(isRoot)
          ? `the graph holds only an empty record for ${root} (an index that did not finish, or no file cgc reads)`
          : `the graph has no repository at ${root}`,
        facts: facts(undefined, repositories.length),
      },
      root,
      repositories,
    );
  }
  return outcome(
    {
      readiness: "ready",
      reason: `indexed (${repository.files ?? "?"} files)`,
      facts: facts(repository, repositories.length),
      drift: startDrift(root, repository, input.env, input.fileDrift),
    },
    root,
    repositories,
  );
}

function versionOf(text: string): string | undefined {
  const parsed = parseVersion(text);
  return parsed.kind === "ok" ? parsed.value.version : undefined;
}

function toRepositoryFacts(row: Record<string, unknown>): RepositoryFacts | null {
  if (typeof row.path !== "string") return null;
  const count = (value: unknown) => (typeof value === "number" && Number.isFinite(value) ? value : undefined);
  const text = (value: unknown) => (typeof value === "string" && value !== "" ? value : undefined);
  return {
    path: row.path,
    name: text(row.name),
    indexedAt: text(row.indexed_at),
    commit: text(row.commit_hash),
    files: count(row.files),
    functions: count(row.functions),
    classes: count(row.classes),
    languages: Array.isArray(row.languages)
      ? row.languages.filter((lang): lang is string => typeof lang === "string").sort()
      : undefined,
  };
}

/**
 * Start-time drift: the graph's recorded commit against HEAD, the files changed since the graph last
 * reflected the tree, and a pi-cgc index or sync of this workspace that never finished
 * (the graph's ledger, src/state/ledger.ts).
 */
export function startDrift(
  root: string,
  repository: RepositoryFacts,
  env: NodeJS.ProcessEnv,
  fileDrift: ProbeInput["fileDrift"],
): ProbeVerdict["drift"] {
  const unfinished = graphLedger(env, root).runNote();
  const head = readHeadCommit(root);
  const indexedMs = repository.indexedAt ? Date.parse(repository.indexedAt) : Number.NaN;
  const details: string[] = [];
  if (head && repository.commit && head !== repository.commit) {
    details.push(`HEAD moved from ${repository.commit.slice(0, 12)} to ${head.slice(0, 12)}`);
  }
  const { paths, basis } = fileDrift(root, indexedMs);
  if (paths.length > 0)
    details.push(
      basis === "file times"
        ? `${count(paths.length, "file")} written after indexing`
        : `${count(paths.length, "file")} changed since the graph was last verified`,
    );
  if (Number.isNaN(indexedMs)) details.push("the graph records no index time");
  if (unfinished) details.push(`a pi-cgc ${unfinished.what} started ${unfinished.startedAt} has not finished`);
  return { changed: details.length > 0, paths, detail: details.join("; ") };
}
