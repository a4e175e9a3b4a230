// A real Neo4j server for the `neo4j` backend: Neo4j's test harness (the community server in one JVM),
// resolved and compiled by scripts/setup.mjs into .cache/neo4j, started by test/neo4j/Neo4jLauncher.java
// with a Bolt connector on 127.0.0.1 at a port the kernel picks and authentication off. Tests point cgc at
// it with NEO4J_URI, NEO4J_USERNAME, NEO4J_PASSWORD and DEFAULT_DATABASE. The launcher stops when its
// standard input closes, so a test process that dies takes the server with it.
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PROJECT_ROOT } from "./cgc-env.ts";

const NEO4J_CACHE = join(PROJECT_ROOT, ".cache", "neo4j");
/** cgc insists on a password; with authentication off the server accepts any. */
export const NEO4J_TEST_PASSWORD = "pi-cgc-test";

export interface Neo4jServer {
  uri: string;
  pid: number;
  /** The environment that makes cgc use this server. */
  env: Record<string, string>;
  stop(): Promise<void>;
}

function launcherClasspath(): string {
  const classpath = join(NEO4J_CACHE, "classpath.txt");
  const classes = join(NEO4J_CACHE, "classes");
  if (!existsSync(classpath) || !existsSync(join(classes, "Neo4jLauncher.class")))
    throw new Error(`Neo4j launcher missing in ${NEO4J_CACHE}: run node scripts/setup.mjs`);
  return `${classes}:${readFileSync(classpath, "utf8").trim()}`;
}

/** Starts the server and resolves once its Bolt connector accepts connections (the launcher's BOLT line). */
export async function startNeo4j(): Promise<Neo4jServer> {
  const dir = mkdtempSync(join(tmpdir(), "pi-cgc-neo4j-"));
  const child: ChildProcess = spawn(
    "java",
    // A small heap and the client compiler: the server holds a few test graphs, and start-up dominates.
    ["-Xmx512m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-cp", launcherClasspath(), "Neo4jLauncher", dir],
    { stdio: ["pipe", "pipe", "pipe"] },
  );
  let out = "";
  let err = "";
  child.stderr?.on("data", (chunk: Buffer) => {
    err = (err + chunk.toString("utf8")).slice(-20_000);
  });
  const uri = await new Promise<string>((resolve, reject) => {
    child.stdout?.on("data", (chunk: Buffer) => {
      out += chunk.toString("utf8");
      const match = /^BOLT (bolt:\/\/[^\s/]+)\/?$/m.exec(out);
      if (match?.[1]) resolve(match[1]);
    });
    child.once("exit", (code) => reject(new Error(`Neo4j launcher exited (${code}) before Bolt was up:\n${err}`)));
  });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const orphanGuard = () => child.kill("SIGKILL");
  process.once("exit", orphanGuard);
  return {
    uri,
    pid: child.pid as number,
    env: {
      NEO4J_URI: uri,
      NEO4J_USERNAME: "neo4j",
      NEO4J_PASSWORD: NEO4J_TEST_PASSWORD,
      DEFAULT_DATABASE: "neo4j",
    },
    async stop() {
      process.off("exit", orphanGuard);
      // Closing stdin is the launcher's stop signal (a clean shutdown); SIGKILL if it takes too long.
      child.stdin?.end();
      const killer = setTimeout(() => child.kill("SIGKILL"), 30_000);
      await exited;
      clearTimeout(killer);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
