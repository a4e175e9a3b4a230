// `npm start` is how a developer tries pi-cgc: setup, then the real pi TUI with this checkout loaded.
// The first suite drives it in a real terminal (tmux); the second checks start.mjs's choices (directory,
// which cgc, exit code) through a probe extension that reports what pi saw.
import { execFileSync, spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { poll } from "../helpers/poll.ts";
import { startTmux, type TmuxSession } from "../helpers/tmux.ts";

const ROOT = resolve(import.meta.dirname, "../..");
const STATUS = /\bcgc (ready|unindexed|unavailable|unknown|busy|indexing)/;

function gitRepo(dir: string): string {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "app.py"), "def main():\n    return helper()\n\n\ndef helper():\n    return 1\n");
  execFileSync("git", ["init", "-q", dir]);
  return dir;
}

/** pids of live processes whose environment contains `entry` (KEY=value). */
function processesWithEnv(entry: string): number[] {
  const pids: number[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      if (readFileSync(`/proc/${name}/environ`, "latin1").split("\0").includes(entry)) pids.push(Number(name));
    } catch {
      // exited meanwhile, or not ours
    }
  }
  return pids;
}

describe("npm start -- <repo>, in a terminal", () => {
  let tmp: string;
  let agentDir: string;
  let repo: string;
  let session: TmuxSession | undefined;

  beforeAll(() => {
    tmp = mkdtempSync(join(tmpdir(), "pi-cgc-e2e-"));
    agentDir = join(tmp, "agent");
    mkdirSync(agentDir);
    mkdirSync(join(tmp, "home"));
    repo = gitRepo(join(tmp, "repo"));
  });

  afterAll(() => {
    session?.kill();
    rmSync(tmp, { recursive: true, force: true });
  });

  it("shows pi's interface with pi-cgc's status in the footer, in that repository; leaves no process when the terminal goes away", async () => {
    session = startTmux({
      command: ["npm", "start", "--", repo],
      cwd: ROOT,
      // A fresh HOME keeps cgc (started by pi-cgc) away from the developer's ~/.codegraphcontext.
      env: { PI_CODING_AGENT_DIR: agentDir, PI_OFFLINE: "1", HOME: join(tmp, "home") },
      width: 140,
      height: 40,
    });
    const screen = await session.waitFor(STATUS, 90_000);
    expect(screen).toContain("pi v"); // pi's own header: the TUI is up, not just a log line
    expect(screen).toContain(repo); // the footer names pi's working directory
    expect(screen).not.toMatch(/Failed to load extension/);

    // The terminal goes away: nothing of pi's, pi-cgc's or cgc's is left behind.
    const marker = `PI_CODING_AGENT_DIR=${agentDir}`;
    expect(processesWithEnv(marker).length).toBeGreaterThan(0);
    session?.kill();
    const gone = await poll(() => processesWithEnv(marker).length === 0, 60_000, 100);
    expect(gone, `still running: ${processesWithEnv(marker).join(", ")}`).toBe(true);
  });
});

describe("scripts/start.mjs", () => {
  let tmp: string;
  let probe: string;

  // Loaded next to pi-cgc; records what pi's process saw, at load time.
  const PROBE = `
import { writeFileSync } from "node:fs";
export default function () {
  writeFileSync(process.env.PROBE_OUT, JSON.stringify({ cwd: process.cwd(), cgc: process.env.CGC_EXECUTABLE ?? null }));
}
`;

  beforeAll(() => {
    tmp = mkdtempSync(join(tmpdir(), "pi-cgc-start-"));
    probe = join(tmp, "probe.ts");
    writeFileSync(probe, PROBE);
  });

  afterAll(() => rmSync(tmp, { recursive: true, force: true }));

  /** Runs pi through start.mjs in RPC mode with stdin closed: it loads extensions, then exits. */
  function start(name: string, options: { args?: string[]; env?: Record<string, string> }) {
    const agentDir = join(tmp, name, "agent");
    const home = join(tmp, name, "home");
    mkdirSync(agentDir, { recursive: true });
    mkdirSync(home, { recursive: true });
    const out = join(tmp, name, "probe.json");
    const piArgs = ["--mode", "rpc", "--no-session", "--no-extensions", "-e", probe];
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      HOME: home,
      PI_CODING_AGENT_DIR: agentDir,
      PI_OFFLINE: "1",
      PROBE_OUT: out,
    };
    delete env.CGC_EXECUTABLE;
    const script = join(ROOT, "scripts", "start.mjs");
    const result = spawnSync(process.execPath, [script, ...(options.args ?? []), ...piArgs], {
      cwd: ROOT,
      input: "",
      encoding: "utf8",
      timeout: 60_000,
      env: { ...env, ...options.env },
    });
    const seen = (() => {
      try {
        return JSON.parse(readFileSync(out, "utf8")) as { cwd: string; cgc: string | null };
      } catch {
        return undefined;
      }
    })();
    return { status: result.status, stderr: result.stderr, seen, agentDir };
  }

  it("runs pi in the directory given, with the project's cgc", () => {
    const repo = gitRepo(join(tmp, "given", "repo"));
    const run = start("given", { args: [repo] });
    expect(run.status, run.stderr).toBe(0);
    expect(run.seen).toEqual({ cwd: repo, cgc: join(ROOT, ".venv", "bin", "cgc") });
  });

  it("runs pi in the directory npm was started from (INIT_CWD)", () => {
    const repo = gitRepo(join(tmp, "initcwd", "repo"));
    const run = start("initcwd", { env: { INIT_CWD: repo } });
    expect(run.status, run.stderr).toBe(0);
    expect(run.seen?.cwd).toBe(repo);
  });

  it("keeps a CGC_EXECUTABLE the user set", () => {
    const repo = gitRepo(join(tmp, "env", "repo"));
    const run = start("env", { args: [repo], env: { CGC_EXECUTABLE: "/opt/cgc/bin/cgc" } });
    expect(run.seen?.cgc).toBe("/opt/cgc/bin/cgc");
  });

  it("leaves CGC_EXECUTABLE unset when a pi-cgc config file names the executable", () => {
    const global = gitRepo(join(tmp, "global", "repo"));
    const agentDir = join(tmp, "global", "agent");
    mkdirSync(agentDir, { recursive: true });
    writeFileSync(join(agentDir, "cgc.json"), JSON.stringify({ cgc: { executable: "/opt/cgc/bin/cgc" } }));
    expect(start("global", { args: [global] }).seen?.cgc).toBeNull();

    const project = gitRepo(join(tmp, "project", "repo"));
    mkdirSync(join(project, ".pi"));
    writeFileSync(join(project, ".pi", "cgc.json"), JSON.stringify({ "cgc.executable": "/opt/cgc/bin/cgc" }));
    expect(start("project", { args: [project] }).seen?.cgc).toBeNull();
  });

  it("forwards pi's exit code", () => {
    const repo = gitRepo(join(tmp, "fail", "repo"));
    const run = start("fail", { args: [repo, "-e", join(tmp, "no-such-extension.ts")] });
    expect(run.status).toBe(1);
    expect(run.stderr).toMatch(/Failed to load extension/);
  });

  it("refuses a target that is not a directory", () => {
    const run = start("missing", { args: [join(tmp, "does-not-exist")] });
    expect(run.status).toBe(2);
    expect(run.stderr).toMatch(/not a directory/);
  });
});
