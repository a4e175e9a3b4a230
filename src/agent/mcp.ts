// A `cgc mcp start` child owned by pi-cgc and leased for bursts of graph queries (ADR 0006). It answers in
// faithful JSON (the CLI prints through Rich, which eats `[tag]` text and crashes on `[/x]` in a value)
// and, once warm, in milliseconds instead of a Python start-up per call. On an embedded backend it holds
// the database's exclusive lock for its whole life, so the lease is short: it ends IDLE_MS after the last
// call, when the agent's run ends, when pi-cgc's own maintenance starts, and with the session. Any other
// cgc that meets the lock meanwhile is covered by cgc's own open retries (5 tries over ~7.5 s in 0.6.13).
import { parseJson } from "../cgc/parse.ts";
import type { RunCode, Runner } from "../cgc/runner.ts";

/** Ends the lease this long after the last call settles; well inside cgc's ~7.5 s lock-retry window. */
export const IDLE_MS = 3_000;

export type McpOutcome =
  | { ok: true; value: unknown }
  /** `toolError`: cgc's handler answered with `{"error": …}` (JSON-RPC -32000), not a transport failure. */
  | { ok: false; code: RunCode; reason: string; toolError?: boolean };

interface Pending {
  resolve(outcome: McpOutcome): void;
}

interface Server {
  handle: ReturnType<Runner["startLongLived"]>;
  pending: Map<number, Pending>;
  initialized: Promise<McpOutcome>;
  /** Set once the child is gone (or going): the reason every later call gets. */
  gone?: { code: RunCode; reason: string };
}

export interface McpLeaseOptions {
  runner: Runner;
  cwd: () => string;
  /** Budget of one call, start-up included (the query budget). */
  budgetMs: () => number;
  idleMs?: number;
}

export type McpLease = ReturnType<typeof createMcpLease>;

export function createMcpLease(options: McpLeaseOptions) {
  const idleMs = options.idleMs ?? IDLE_MS;
  let server: Server | undefined;
  let nextId = 0;
  let idleTimer: NodeJS.Timeout | undefined;
  let inFlight = 0;
  let starts = 0;

  function send(target: Server, message: Record<string, unknown>): void {
    target.handle.child?.stdin?.write(`${JSON.stringify({ jsonrpc: "2.0", ...message })}\n`);
  }

  function request(target: Server, method: string, params: Record<string, unknown>): Promise<McpOutcome> {
    if (target.gone) return Promise.resolve({ ok: false, ...target.gone });
    const id = ++nextId;
    return new Promise((resolve) => {
      target.pending.set(id, { resolve });
      send(target, { id, method, params });
    });
  }

  function onStdout(target: () => Server | undefined, line: string): void {
    const current = target();
    if (!current || !line.startsWith("{")) return;
    const message = parseJson(line) as
      | { id?: unknown; result?: unknown; error?: { message?: string; data?: { error?: unknown; details?: unknown } } }
      | undefined;
    if (typeof message?.id !== "number") return;
    const waiter = current.pending.get(message.id);
    if (!waiter) return;
    current.pending.delete(message.id);
    if (message.error) {
      const { error: summary, details } = message.error.data ?? {};
      const said = [summary, details].filter((part): part is string => typeof part === "string");
      waiter.resolve({
        ok: false,
        code: "FAILED",
        reason: said.length > 0 ? said.join(": ") : (message.error.message ?? "cgc's MCP server reported an error"),
        toolError: true,
      });
      return;
    }
    waiter.resolve({ ok: true, value: message.result });
  }

  function start(): Server {
    starts++;
    let self: Server | undefined;
    const handle = options.runner.startLongLived(["mcp", "start"], {
      cwd: options.cwd(),
      stdin: true,
      onLine: (line, stream) => {
        if (stream === "stdout") onStdout(() => self, line);
      },
    });
    const created: Server = { handle, pending: new Map(), initialized: Promise.resolve({ ok: true, value: null }) };
    self = created;
    void handle.exited.then((result) => {
      created.gone ??= { code: result.code === "OK" ? "FAILED" : result.code, reason: result.reason };
      for (const waiter of created.pending.values()) waiter.resolve({ ok: false, ...created.gone });
      created.pending.clear();
      if (server === created) server = undefined;
    });
    created.initialized = request(created, "initialize", {
      protocolVersion: "2025-03-26",
      capabilities: {},
      clientInfo: { name: "pi-cgc", version: "0" },
    }).then((outcome) => {
      if (outcome.ok) send(created, { method: "notifications/initialized" });
      return outcome;
    });
    return created;
  }

  async function stopServer(target: Server, code: RunCode, reason: string): Promise<void> {
    target.gone ??= { code, reason };
    if (server === target) server = undefined;
    target.handle.child?.stdin?.end(); // EOF: cgc closes its database and exits on its own
    await target.handle.stop();
  }

  function armIdle(): void {
    if (idleTimer) clearTimeout(idleTimer);
    idleTimer = undefined;
    if (inFlight > 0 || !server) return;
    idleTimer = setTimeout(() => void release("the lease was idle"), idleMs);
    idleTimer.unref();
  }

  /** Calls one catalog tool; the child is started on demand and kept warm for the next call. */
  async function call(name: string, args: Record<string, unknown>, signal?: AbortSignal): Promise<McpOutcome> {
    if (signal?.aborted) return { ok: false, code: "CANCELLED", reason: "cancelled before start" };
    if (idleTimer) clearTimeout(idleTimer);
    inFlight++;
    const target = server ?? start();
    server = target;
    const budgetMs = options.budgetMs();
    let timer: NodeJS.Timeout | undefined;
    let onAbort: (() => void) | undefined;
    // cgc's server has no request cancellation: a call that must end early ends the child with it.
    const interrupted = new Promise<McpOutcome>((resolve) => {
      if (budgetMs > 0) {
        timer = setTimeout(() => {
          const reason = `cgc's MCP server did not answer ${name} within ${budgetMs} ms and was stopped`;
          resolve({ ok: false, code: "TIMEOUT", reason });
          void stopServer(target, "TIMEOUT", reason);
        }, budgetMs);
      }
      onAbort = () => {
        resolve({ ok: false, code: "CANCELLED", reason: `${name} was cancelled` });
        void stopServer(target, "CANCELLED", "a call was cancelled");
      };
      signal?.addEventListener("abort", onAbort, { once: true });
    });
    const answered = (async (): Promise<McpOutcome> => {
      const init = await target.initialized;
      if (!init.ok) return init;
      const outcome = await request(target, "tools/call", { name, arguments: args });
      return outcome.ok ? { ok: true, value: toolJson(outcome.value) } : outcome;
    })();
    const outcome = await Promise.race([answered, interrupted]);
    if (timer) clearTimeout(timer);
    if (onAbort) signal?.removeEventListener("abort", onAbort);
    inFlight--;
    armIdle();
    return outcome;
  }

  /** Ends the lease now (maintenance, end of the agent's run, session end); calls in flight get `reason`. */
  async function release(reason = "released"): Promise<void> {
    if (idleTimer) clearTimeout(idleTimer);
    idleTimer = undefined;
    if (server) await stopServer(server, "CANCELLED", `cgc's MCP server was stopped: ${reason}`);
  }

  return {
    call,
    release,
    get holding() {
      return server !== undefined;
    },
    /** Children started so far (tests and the benchmark read it). */
    get starts() {
      return starts;
    },
  };
}

/** A tools/call result is `{content:[{type:"text", text: <json.dumps(result)>}]}`. */
function toolJson(result: unknown): unknown {
  const content = (result as { content?: Array<{ type?: string; text?: string }> } | undefined)?.content;
  const text = content?.find((part) => part.type === "text")?.text;
  if (text === undefined) return result;
  return parseJson(text) ?? text;
}
