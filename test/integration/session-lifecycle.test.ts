// pi as a CLI (the real 0.73 binary) with the real cgc: session replacement re-arms pi-cgc without
// doubling it and leaves no cgc child behind; print mode still tells the user what matters.
import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type CgcHome, cgcBinary, EXTENSION_ENTRY, makeCgcHome, PROJECT_ROOT } from "../helpers/cgc-env.ts";
import { type Frame, startPiRpc } from "../helpers/pi-rpc.ts";
import { waitFor } from "../helpers/pi-sdk.ts";
import { indexedTinyRepo, type TinyRepo } from "../helpers/repos.ts";

const PI_CLI = join(PROJECT_ROOT, "node_modules", "@mariozechner", "pi-coding-agent", "dist", "cli.js");
const EXTENSION = EXTENSION_ENTRY;

let home: CgcHome;
let repo: TinyRepo;

beforeAll(async () => {
  home = makeCgcHome();
  repo = await indexedTinyRepo(home.env);
});
afterAll(() => {
  home.cleanup();
  repo.cleanup();
});

/** Live cgc processes started for this test's CGC home (found by HOME in their environment). */
function cgcProcessesOf(cgcHome: string): number[] {
  const pids: number[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const environ = readFileSync(`/proc/${name}/environ`, "latin1").split("\0");
      const cmdline = readFileSync(`/proc/${name}/cmdline`, "latin1");
      const stat = readFileSync(`/proc/${name}/stat`, "latin1");
      if (environ.includes(`HOME=${cgcHome}`) && cmdline.includes("cgc") && !/\) Z /.test(stat))
        pids.push(Number(name));
    } catch {
      // exited meanwhile
    }
  }
  return pids;
}

const statusOf = (frame: Frame) =>
  frame.type === "extension_ui_request" && frame.method === "setStatus" && frame.statusKey === "cgc"
    ? (frame.statusText as string | undefined)
    : undefined;

function env() {
  return {
    HOME: home.home,
    PI_CODING_AGENT_DIR: mkdtempSync(join(tmpdir(), "pi-cgc-agent-")),
    PI_OFFLINE: "1",
    CGC_EXECUTABLE: cgcBinary(),
  };
}

describe("session replacement and quit (RPC mode)", () => {
  it("three new sessions, then quit: one /cgc command, one answer per command, no cgc process left", async () => {
    // The rebuild in flight below is the full-rebuild sync (with nothing changed the engine has nothing to do).
    const pi = startPiRpc({
      cli: PI_CLI,
      args: ["--no-session", "-e", EXTENSION],
      cwd: repo.path,
      env: { ...env(), CGC_FRESHNESS_ENGINE: "false" },
    });
    try {
      await pi.waitFor((frame) => statusOf(frame) === "cgc ready · fresh", 60_000);
      for (let i = 0; i < 3; i++) {
        const before = pi.frames.length;
        const response = await pi.request({ type: "new_session" });
        expect(response.success).toBe(true);
        await pi.waitFor(
          (frame) => pi.frames.indexOf(frame) >= before && statusOf(frame) === "cgc ready · fresh",
          60_000,
        );
      }
      const commands = await pi.request({ type: "get_commands" });
      const names = (commands.data as { commands: Array<{ name: string }> }).commands.map((c) => c.name);
      expect(names.filter((name) => name.startsWith("cgc"))).toEqual(["cgc"]);

      const before = pi.frames.length;
      await pi.request({ type: "prompt", message: "/cgc status" });
      const answers = await waitFor(() => {
        const found = pi.frames
          .slice(before)
          .filter((f) => f.method === "notify" && String(f.message).startsWith("pi-cgc —"));
        return found.length > 0 ? found : undefined;
      }, "the status answer");
      expect(answers).toHaveLength(1);

      // A rebuild in flight when the session is replaced must not survive it.
      pi.send({ type: "prompt", message: "/cgc sync" });
      await pi.waitFor((frame) => statusOf(frame)?.startsWith("cgc syncing…") === true, 30_000);
      await waitFor(() => cgcProcessesOf(home.home).length > 0 || undefined, "the sync's cgc child");
      await pi.request({ type: "new_session" });
      await waitFor(
        () => cgcProcessesOf(home.home).length === 0 || undefined,
        "no cgc child after the replacement",
        60_000, // SIGINT, then SIGTERM and SIGKILL after 2 s grace each: bounded, but a loaded machine is slow
      );
    } finally {
      await pi.stop();
    }
    // The new session may have a cgc child of its own in flight when pi quits: pi-cgc's guardian stops it
    // after pi is gone (SIGINT, then SIGTERM and SIGKILL after the grace), so it is gone soon, not at once.
    await waitFor(() => cgcProcessesOf(home.home).length === 0 || undefined, "no cgc child after quit", 60_000);
  });
});

describe("print mode", () => {
  it("cgc missing: one line on stderr; /cgc status answers on stdout", () => {
    const result = spawnSync(process.execPath, [PI_CLI, "--no-session", "-e", EXTENSION, "-p", "/cgc status"], {
      cwd: repo.path,
      env: { ...process.env, ...env(), CGC_EXECUTABLE: "/nonexistent/cgc" },
      encoding: "utf8",
      timeout: 60_000,
    });
    expect(result.stderr.split("\n").filter((line) => line.startsWith("pi-cgc:"))).toEqual([
      expect.stringContaining("cgc is not available"),
    ]);
    expect(result.stdout).toContain("readiness:  unavailable");
  });

  it("indexed workspace: no notice noise on stderr, the status on stdout", () => {
    const result = spawnSync(process.execPath, [PI_CLI, "--no-session", "-e", EXTENSION, "-p", "/cgc status"], {
      cwd: repo.path,
      env: { ...process.env, ...env() },
      encoding: "utf8",
      timeout: 60_000,
    });
    expect(result.stderr).not.toContain("pi-cgc:");
    expect(result.stdout).toContain("readiness:  ready");
    expect(result.stdout).toContain(`workspace:  ${repo.path}`);
  });
});
