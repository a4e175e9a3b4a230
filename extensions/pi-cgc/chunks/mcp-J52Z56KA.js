import {
  parseJson
} from "./chunk-AN223M6Q.js";

// src/agent/mcp.ts
var IDLE_MS = 3e3;
function createMcpLease(options) {
  const idleMs = options.idleMs ?? IDLE_MS;
  let server;
  let nextId = 0;
  let idleTimer;
  let inFlight = 0;
  let starts = 0;
  function send(target, message) {
    target.handle.child?.stdin?.write(`${JSON.stringify({ jsonrpc: "2.0", ...message })}
`);
  }
  function request(target, method, params) {
    if (target.gone) return Promise.resolve({ ok: false, ...target.gone });
    const id = ++nextId;
    return new Promise((resolve) => {
      target.pending.set(id, { resolve });
      send(target, { id, method, params });
    });
  }
  function onStdout(target, line) {
    const current = target();
    if (!current || !line.startsWith("{")) return;
    const message = parseJson(line);
    if (typeof message?.id !== "number") return;
    const waiter = current.pending.get(message.id);
    if (!waiter) return;
    current.pending.delete(message.id);
    if (message.error) {
      const { error: summary, details } = message.error.data ?? {};
      const said = [summary, details].filter((part) => typeof part === "string");
      waiter.resolve({
        ok: false,
        code: "FAILED",
        reason: said.length > 0 ? said.join(": ") : message.error.message ?? "cgc's MCP server reported an error",
        toolError: true
      });
      return;
    }
    waiter.resolve({ ok: true, value: message.result });
  }
  function start() {
    starts++;
    let self;
    const handle = options.runner.startLongLived(["mcp", "start"], {
      cwd: options.cwd(),
      stdin: true,
      onLine: (line, stream) => {
        if (stream === "stdout") onStdout(() => self, line);
      }
    });
    const created = { handle, pending: /* @__PURE__ */ new Map(), initialized: Promise.resolve({ ok: true, value: null }) };
    self = created;
    void handle.exited.then((result) => {
      created.gone ??= { code: result.code === "OK" ? "FAILED" : result.code, reason: result.reason };
      for (const waiter of created.pending.values()) waiter.resolve({ ok: false, ...created.gone });
      created.pending.clear();
      if (server === created) server = void 0;
    });
    created.initialized = request(created, "initialize", {
      protocolVersion: "2025-03-26",
      capabilities: {},
      clientInfo: { name: "pi-cgc", version: "0" }
    }).then((outcome) => {
      if (outcome.ok) send(created, { method: "notifications/initialized" });
      return outcome;
    });
    return created;
  }
  async function stopServer(target, code, reason) {
    target.gone ??= { code, reason };
    if (server === target) server = void 0;
    target.handle.child?.stdin?.end();
    await target.handle.stop();
  }
  function armIdle() {
    if (idleTimer) clearTimeout(idleTimer);
    idleTimer = void 0;
    if (inFlight > 0 || !server) return;
    idleTimer = setTimeout(() => void release("the lease was idle"), idleMs);
    idleTimer.unref();
  }
  async function call(name, args, signal) {
    if (signal?.aborted) return { ok: false, code: "CANCELLED", reason: "cancelled before start" };
    if (idleTimer) clearTimeout(idleTimer);
    inFlight++;
    const target = server ?? start();
    server = target;
    const budgetMs = options.budgetMs();
    let timer;
    let onAbort;
    const interrupted = new Promise((resolve) => {
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
    const answered = (async () => {
      const init = await target.initialized;
      if (!init.ok) return init;
      const outcome2 = await request(target, "tools/call", { name, arguments: args });
      return outcome2.ok ? { ok: true, value: toolJson(outcome2.value) } : outcome2;
    })();
    const outcome = await Promise.race([answered, interrupted]);
    if (timer) clearTimeout(timer);
    if (onAbort) signal?.removeEventListener("abort", onAbort);
    inFlight--;
    armIdle();
    return outcome;
  }
  async function release(reason = "released") {
    if (idleTimer) clearTimeout(idleTimer);
    idleTimer = void 0;
    if (server) await stopServer(server, "CANCELLED", `cgc's MCP server was stopped: ${reason}`);
  }
  return {
    call,
    release,
    get holding() {
      return server !== void 0;
    },
    /** Children started so far (tests and the benchmark read it). */
    get starts() {
      return starts;
    }
  };
}
function toolJson(result) {
  const content = result?.content;
  const text = content?.find((part) => part.type === "text")?.text;
  if (text === void 0) return result;
  return parseJson(text) ?? text;
}
export {
  IDLE_MS,
  createMcpLease
};
