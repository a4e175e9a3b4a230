// Drives a real terminal program (pi's TUI) under tmux for e2e tests. Each session gets its own tmux
// server socket, so tests never touch a developer's tmux and killing the session ends its server too.
import { execFileSync } from "node:child_process";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { cgcBinary, EXTENSION_ENTRY, PROJECT_ROOT } from "./cgc-env.ts";
import { poll } from "./poll.ts";

export interface TmuxOptions {
  /** argv of the program to run in the pane. */
  command: string[];
  cwd: string;
  /** Added to the current environment for the program. */
  env?: Record<string, string>;
  width?: number;
  height?: number;
}

export interface TmuxSession {
  readonly name: string;
  /** pid of the program running in the pane. */
  readonly panePid: number;
  /** tmux key names or literal text, as `tmux send-keys` takes them. */
  sendKeys(...keys: string[]): void;
  /** The visible screen as plain text. */
  capture(): string;
  /** Polls the screen until `pattern` matches; throws with the last screen after `timeoutMs`. */
  waitFor(pattern: RegExp, timeoutMs: number): Promise<string>;
  kill(): void;
}

let counter = 0;

export function startTmux(options: TmuxOptions): TmuxSession {
  const name = `pi-cgc-${process.pid}-${++counter}`;
  const socket = name;
  const tmux = (...args: string[]) =>
    execFileSync("tmux", ["-L", socket, ...args], {
      encoding: "utf8",
      env: { ...process.env, ...options.env },
      stdio: ["ignore", "pipe", "pipe"],
    });
  const envArgs = Object.entries(options.env ?? {}).flatMap(([key, value]) => ["-e", `${key}=${value}`]);
  tmux(
    "-f",
    "/dev/null",
    "new-session",
    "-d",
    "-s",
    name,
    "-x",
    String(options.width ?? 120),
    "-y",
    String(options.height ?? 40),
    "-c",
    options.cwd,
    ...envArgs,
    ...options.command,
    // Keep a dead pane on screen, so a program that exits early leaves its last words for waitFor's error.
    ";",
    "set-option",
    "-t",
    name,
    "remain-on-exit",
    "on",
  );
  const panePid = Number(tmux("display-message", "-p", "-t", name, "#{pane_pid}").trim());

  const capture = () => tmux("capture-pane", "-p", "-t", name);
  return {
    name,
    panePid,
    sendKeys: (...keys) => void tmux("send-keys", "-t", name, ...keys),
    capture,
    async waitFor(pattern, timeoutMs) {
      let screen = "";
      const seen = await poll(
        () => {
          try {
            screen = capture();
          } catch (error) {
            throw new Error(`tmux session ${name} is gone while waiting for ${pattern}: ${error}\n${screen}`);
          }
          return pattern.test(screen);
        },
        timeoutMs,
        100,
      );
      if (!seen) throw new Error(`timed out after ${timeoutMs} ms waiting for ${pattern}; screen:\n${screen}`);
      return screen;
    },
    kill() {
      try {
        tmux("kill-server");
      } catch {
        // already gone
      }
    },
  };
}

/**
 * pi's real TUI with this checkout's pi-cgc, in `repo`, under tmux: a fresh HOME and agent directory under
 * `scratch` (so cgc and pi keep away from the developer's), offline, with the project's cgc.
 */
export function piInTmux(options: { repo: string; scratch: string; width?: number; height?: number }): TmuxSession {
  const home = join(options.scratch, "home");
  const agent = join(options.scratch, "agent");
  mkdirSync(home, { recursive: true });
  mkdirSync(agent, { recursive: true });
  // The pi line under test (test/helpers/pi-sdk.ts PI_LINE): 1.x from .cache/compat under `npm run test:pi1`.
  const cli =
    process.env.PI_CGC_TEST_PI === "1"
      ? join(PROJECT_ROOT, ".cache", "compat", "node_modules", "@earendil-works", "pi-coding-agent", "dist", "cli.js")
      : join(PROJECT_ROOT, "node_modules", "@mariozechner", "pi-coding-agent", "dist", "cli.js");
  return startTmux({
    command: [process.execPath, cli, "--no-session", "-e", EXTENSION_ENTRY],
    cwd: options.repo,
    env: { HOME: home, PI_CODING_AGENT_DIR: agent, PI_OFFLINE: "1", CGC_EXECUTABLE: cgcBinary() },
    width: options.width ?? 140,
    height: options.height ?? 45,
  });
}

/** Types a slash command, takes pi's autocomplete suggestion and runs it. */
export async function runSlashCommand(tui: TmuxSession, command: string): Promise<void> {
  tui.sendKeys(command);
  await tui.waitFor(new RegExp(command.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&")), 10_000);
  tui.sendKeys("Enter"); // accepts the autocomplete suggestion
  tui.sendKeys("Enter"); // runs the command
}
