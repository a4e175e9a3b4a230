// pi-cgc must load on the pi it is developed against (0.73.1, Node 20) and on the newest pi line
// (@earendil-works 1.6.0, which needs Node >= 22.19; scripts/setup.mjs installs both into .cache/compat),
// given as a package folder: pi reads the manifest's `pi.extensions`, as for an installed package.
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { type Frame, type PiRpc, startPiRpc } from "../helpers/pi-rpc.ts";

const ROOT = resolve(import.meta.dirname, "../..");
const COMPAT = join(ROOT, ".cache", "compat", "node_modules");

const runtimes = [
  {
    pi: "@mariozechner/pi-coding-agent 0.73.1",
    node: process.execPath,
    nodeVersion: /^v20\./,
    cli: join(ROOT, "node_modules", "@mariozechner", "pi-coding-agent", "dist", "cli.js"),
  },
  {
    pi: "@earendil-works/pi-coding-agent 1.6.0",
    node: join(COMPAT, "node", "bin", "node"),
    nodeVersion: /^v22\./,
    cli: join(COMPAT, "@earendil-works", "pi-coding-agent", "dist", "cli.js"),
  },
];

describe.each(runtimes)("pi-cgc loads in $pi", (runtime) => {
  let pi: PiRpc | undefined;
  const temps: string[] = [];
  const temp = (prefix: string) => {
    const dir = mkdtempSync(join(tmpdir(), prefix));
    temps.push(dir);
    return dir;
  };

  afterEach(async () => {
    await pi?.stop();
    for (const dir of temps.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  it("registers /cgc without extension errors", async () => {
    expect(existsSync(runtime.node) && existsSync(runtime.cli), "runtime missing: run node scripts/setup.mjs").toBe(
      true,
    );
    pi = startPiRpc({
      node: runtime.node,
      cli: runtime.cli,
      cwd: temp("pi-cgc-compat-cwd-"),
      env: { PI_CODING_AGENT_DIR: temp("pi-cgc-compat-agent-"), PI_OFFLINE: "1", HOME: temp("pi-cgc-compat-home-") },
      args: ["--no-session", "--no-extensions", "-e", ROOT],
    });

    const commands = await pi.request({ type: "get_commands", id: "1" });
    expect(commands.success, JSON.stringify(commands)).toBe(true);
    const names = (commands.data as { commands: { name: string; source: string }[] }).commands
      .filter((c) => c.source === "extension")
      .map((c) => c.name);
    expect(names).toContain("cgc");
    // From the bundle the manifest names (scripts/build.mjs), not from src/.
    const cgc = (commands.data as { commands: { name: string; sourceInfo?: unknown }[] }).commands.find(
      (c) => c.name === "cgc",
    );
    expect(JSON.stringify(cgc?.sourceInfo)).toContain(join(ROOT, "extensions", "pi-cgc", "index.js"));

    // One more round trip, so that whatever session_start did synchronously has been reported.
    const state = await pi.request({ type: "get_state" });
    expect(state.success, JSON.stringify(state)).toBe(true);

    expect(execFileSync(runtime.node, ["--version"], { encoding: "utf8" })).toMatch(runtime.nodeVersion);
    const errors = pi.frames.filter((f: Frame) => f.type === "extension_error");
    expect(errors).toEqual([]);
    expect(pi.stderr()).not.toMatch(/Failed to load extension|extension error/i);
  });
});
