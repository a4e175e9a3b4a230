// Drives a real pi in `--mode rpc`: JSONL commands on stdin, responses and events on stdout.
// Frames are split on "\n" only (pi's framing; readline would also split on U+2028/U+2029 inside JSON).
// pi runs in its own process group, so stop() ends pi and anything it spawned.
import { type ChildProcess, spawn } from "node:child_process";
import { signalGroup } from "../../src/cgc/children.ts";
import { startWait } from "./wait-record.ts";

export type Frame = { type: string; [key: string]: unknown };
export type UiRequest = Frame & { type: "extension_ui_request"; id: string; method: string };
/** Fields of the `extension_ui_response` for a dialog (`{ confirmed: true }`, `{ value: "x" }`, `{ cancelled: true }`). */
export type UiAnswer = Record<string, unknown>;

export interface PiRpcOptions {
  /** pi's cli.js. */
  cli: string;
  args?: string[];
  cwd: string;
  /** Replaces nothing: added to the current environment (a value of undefined removes a variable). */
  env?: Record<string, string | undefined>;
  /** Node binary to run the cli with; default: the one running the tests. */
  node?: string;
  /** Answers dialog requests (select, confirm, input, editor). Default: cancel. */
  onUiRequest?: (request: UiRequest) => UiAnswer | Promise<UiAnswer>;
}

export interface PiRpc {
  readonly child: ChildProcess;
  /** Every frame received so far, in order. */
  readonly frames: Frame[];
  stderr(): string;
  send(command: Record<string, unknown>): void;
  /** Sends a command (adding an id when it has none) and resolves with its response frame. */
  request(command: Record<string, unknown>, timeoutMs?: number): Promise<Frame>;
  /** Resolves with the first frame, received or to come, that satisfies `predicate`. */
  waitFor(predicate: (frame: Frame) => boolean, timeoutMs?: number): Promise<Frame>;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Closes stdin, then SIGTERM and finally SIGKILL to the whole process group, until pi is gone. */
  stop(timeoutMs?: number): Promise<void>;
}

const DIALOGS = new Set(["select", "confirm", "input", "editor"]);

export function startPiRpc(options: PiRpcOptions): PiRpc {
  const child = spawn(options.node ?? process.execPath, [options.cli, "--mode", "rpc", ...(options.args ?? [])], {
    cwd: options.cwd,
    env: { ...process.env, ...options.env },
    stdio: ["pipe", "pipe", "pipe"],
    detached: true,
  });
  const frames: Frame[] = [];
  const listeners = new Set<() => void>();
  const notify = () => {
    for (const listener of listeners) listener();
  };
  let stderr = "";
  let exitInfo: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.on("exit", (code, signal) => {
      exitInfo = { code, signal };
      resolve(exitInfo);
      notify();
    });
  });

  const send = (command: Record<string, unknown>) => {
    child.stdin?.write(`${JSON.stringify(command)}\n`);
  };

  const answer = async (request: UiRequest) => {
    const fields = options.onUiRequest ? await options.onUiRequest(request) : { cancelled: true };
    if (exitInfo === undefined) send({ type: "extension_ui_response", id: request.id, ...fields });
  };

  let buffer = "";
  child.stdout?.setEncoding("utf8");
  child.stdout?.on("data", (chunk: string) => {
    buffer += chunk;
    for (let newline = buffer.indexOf("\n"); newline >= 0; newline = buffer.indexOf("\n")) {
      const line = buffer.slice(0, newline).trim();
      buffer = buffer.slice(newline + 1);
      if (!line) continue;
      let frame: Frame;
      try {
        frame = JSON.parse(line) as Frame;
      } catch {
        frame = { type: "unparsed", line };
      }
      frames.push(frame);
      if (frame.type === "extension_ui_request" && DIALOGS.has(String(frame.method))) void answer(frame as UiRequest);
    }
    notify();
  });
  child.stderr?.setEncoding("utf8");
  child.stderr?.on("data", (chunk: string) => {
    stderr += chunk;
  });

  const waitFor = (predicate: (frame: Frame) => boolean, timeoutMs = 120_000) =>
    new Promise<Frame>((resolve, reject) => {
      const ended = startWait(timeoutMs);
      let checked = 0;
      const check = () => {
        for (; checked < frames.length; checked++) {
          const frame = frames[checked] as Frame;
          if (predicate(frame)) return finish(() => resolve(frame));
        }
        if (exitInfo)
          finish(() => reject(new Error(`pi exited (${JSON.stringify(exitInfo)}) first; stderr:\n${stderr}`)), false);
      };
      const timer = setTimeout(
        () => finish(() => reject(new Error(`no matching frame within ${timeoutMs} ms; stderr:\n${stderr}`)), false),
        timeoutMs,
      );
      const finish = (settle: () => void, met = true) => {
        ended(met);
        clearTimeout(timer);
        listeners.delete(check);
        settle();
      };
      listeners.add(check);
      check();
    });

  let nextId = 0;
  const request = (command: Record<string, unknown>, timeoutMs?: number) => {
    const id = (command.id as string | undefined) ?? `req-${++nextId}`;
    const response = waitFor((f) => f.type === "response" && f.id === id, timeoutMs);
    send({ ...command, id });
    return response;
  };

  const stop = async (timeoutMs = 5_000) => {
    child.stdin?.end();
    signalGroup(child.pid, "SIGTERM");
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<false>((r) => {
      timer = setTimeout(() => r(false), timeoutMs);
    });
    const gone = await Promise.race([exited.then(() => true), deadline]);
    clearTimeout(timer);
    signalGroup(child.pid, "SIGKILL"); // also reaches children that outlived pi in its group
    if (!gone) await exited;
  };

  return { child, frames, stderr: () => stderr, send, request, waitFor, exited, stop };
}
