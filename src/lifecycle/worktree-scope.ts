// Worktree isolation for one session (ADR 0008). In `isolate` mode a linked worktree works in its own CGC
// named context: this decides which one and in what state, hands the runner what every database-backed
// call must carry (or the reason none may run), creates the context under the index consent, and reports
// recorded contexts whose worktree is gone. It deletes nothing; a record that does not match is refused.
import { existsSync } from "node:fs";
import { dirname } from "node:path";
import { type Backend, isServerBackend } from "../cgc/backend.ts";
import { type ContextList, parseContextCreate, parseContextList } from "../cgc/parse.ts";
import { notRun, type Runner, type RunResult } from "../cgc/runner.ts";
import type { WorktreeMode } from "../config/keys.ts";
import { agentDir } from "../config/load.ts";
import type { ProbeVerdict } from "../state/model.ts";
import type { NoticeLedger } from "../state/notices.ts";
import { currentMainGraph, type MainGraph, mainCheckoutOf } from "../workspace/main-graph.ts";
import {
  contextNameFor,
  describeIdentity,
  detectWorktree,
  orphanedContexts,
  ownershipOf,
  readRecord,
  readRecords,
  removeRecord,
  type WorktreeInfo,
  worktreeRecordDir,
  writeRecord,
} from "../workspace/worktree.ts";

export type ScopeState =
  /** Not isolated: the default graph, as without this feature. */
  | { kind: "shared"; why: string }
  | { kind: "checking"; name: string }
  /** The context does not exist: the workspace is unindexed until the user consents to create it. */
  | { kind: "pending"; name: string }
  | { kind: "active"; name: string; database: string; dbPath: string }
  | { kind: "refused"; name: string; reason: string };

export interface ScopeResolution {
  /** Use this verdict instead of probing: the scope is refused, or cgc's contexts could not be listed. */
  verdict?: ProbeVerdict;
  /** Probe without asking the graph, which does not exist yet (the reason it is unindexed). */
  noGraph?: string;
}

export interface WorktreeScopeOptions {
  cwd: string;
  env: NodeJS.ProcessEnv;
  mode: WorktreeMode;
  notices: NoticeLedger;
}

export type WorktreeScope = ReturnType<typeof createWorktreeScope>;

export function createWorktreeScope(options: WorktreeScopeOptions) {
  const { cwd, notices } = options;
  const isolating = options.mode === "isolate";
  const records = worktreeRecordDir(agentDir(options.env));
  let info: WorktreeInfo | undefined;
  const worktree = (): WorktreeInfo => {
    info ??= detectWorktree(cwd); // once per session: git's files do not change under a running session
    return info;
  };
  const linked = () => {
    const found = worktree();
    return isolating && found.kind === "linked" ? { ...found, name: contextNameFor(found.identity) } : undefined;
  };
  let state: ScopeState = initialState();
  let listed: ContextList | undefined;
  let firstResolve = true;

  function initialState(): ScopeState {
    if (!isolating) return { kind: "shared", why: "worktree.mode is off" };
    const found = worktree();
    switch (found.kind) {
      case "not-git":
        return { kind: "shared", why: "not a git repository" };
      case "main":
        return { kind: "shared", why: "the main checkout" };
      case "malformed":
        return { kind: "shared", why: `unreadable worktree pointer (${found.error})` };
      case "linked":
        return { kind: "checking", name: contextNameFor(found.identity) };
    }
  }

  const cwdFor = () => {
    const found = worktree();
    return found.kind === "not-git" ? cwd : found.root;
  };

  async function listContexts(runner: Runner): Promise<{ list: ContextList } | { code: string; reason: string }> {
    if (listed) return { list: listed };
    const result = await runner.run(["context", "list"], { kind: "probe", cwd: cwdFor(), takesLock: false });
    if (result.code !== "OK") return { code: result.code, reason: result.reason };
    const parsed = parseContextList(`${result.stderr}\n${result.stdout}`);
    if (parsed.kind !== "ok") return { code: "FAILED", reason: `cgc context list could not be read: ${parsed.reason}` };
    listed = parsed.value;
    return { list: listed };
  }

  function refuse(name: string, reason: string): ScopeResolution {
    state = { kind: "refused", name, reason };
    notices.once("worktree-refused", reason, "error", name);
    return { verdict: { readiness: "unavailable", reason } };
  }

  /**
   * Once per session: a recorded context whose worktree git no longer knows gets one notice, ever; once
   * the context is gone too (deleted by the user), its record names nothing and is dropped.
   */
  async function reportOrphans(runner: Runner): Promise<void> {
    const orphans = orphanedContexts(readRecords(records));
    if (orphans.length === 0) return;
    const listing = await listContexts(runner);
    if (!("list" in listing)) return; // asked again next session
    for (const [name, record] of orphans) {
      const context = listing.list.contexts.find((entry) => entry.name === name);
      if (!context) {
        removeRecord(records, name);
        continue;
      }
      if (record.orphanNoticeAt) continue;
      notices.once(
        "worktree-orphaned",
        `The git ${describeIdentity(record, record.path)} no longer exists, but its CGC named context ${name} is still there with its graph. ` +
          `pi-cgc deletes nothing on its own: to remove it, ask the agent to use the cgc_contexts tool (action delete, name ${name}), which asks you first; ` +
          `cgc keeps the database files (${context.dbPath}).`,
        "warning",
        name,
      );
      writeRecord(records, name, { ...record, orphanNoticeAt: new Date().toISOString() });
    }
  }

  /** Decides the scope before each probe. Spawns `cgc context list` once per session (again after a create or delete). */
  async function resolve(runner: Runner): Promise<ScopeResolution> {
    if (!isolating) return {};
    const found = worktree();
    if (firstResolve) {
      firstResolve = false;
      if (found.kind === "malformed") {
        notices.once(
          "worktree-malformed",
          `${found.root} has a .git file pi-cgc cannot follow (${found.error}); it is treated as a plain folder, without worktree isolation.`,
          "warning",
        );
      }
      await reportOrphans(runner);
    }
    const here = linked();
    if (!here) return {};
    if (state.kind === "refused") return { verdict: { readiness: "unavailable", reason: state.reason } };
    const { name, identity, root } = here;
    const read = readRecord(records, name);
    if (!read.ok) {
      return refuse(
        name,
        `Worktree isolation refused: its record cannot be read: ${read.error}. pi-cgc does not overwrite it.`,
      );
    }
    const owner = ownershipOf(read.record, identity);
    if (owner.kind === "mismatch") {
      return refuse(
        name,
        `Worktree isolation refused: the CGC context ${name} is recorded for the ${describeIdentity(owner.record, owner.record.path)}, ` +
          `not for this ${describeIdentity(identity, root)}. pi-cgc neither shares nor repairs it (record: ${records}/${name}.json). ` +
          `If that worktree is gone, remove the context (cgc context delete ${name}; cgc keeps its files) and pi-cgc drops the record at the next session; or set worktree.mode to off.`,
      );
    }
    const listing = await listContexts(runner);
    if (!("list" in listing)) {
      const readiness = listing.code === "UNAVAILABLE" ? "unavailable" : "unknown";
      return { verdict: { readiness, reason: `cgc's named contexts could not be listed: ${listing.reason}` } };
    }
    if (listing.list.mode !== "global") {
      return refuse(
        name,
        `Worktree isolation refused: cgc is in ${listing.list.mode} mode, where \`cgc mcp start\` (which takes no --context) opens another database than ${name}. Switch back with \`cgc context mode global\`, or set worktree.mode to off.`,
      );
    }
    const context = listing.list.contexts.find((entry) => entry.name === name);
    if (!context) {
      state = { kind: "pending", name };
      return { noGraph: `this worktree's CGC named context ${name} does not exist yet` };
    }
    if (owner.kind === "unrecorded") {
      return refuse(
        name,
        `Worktree isolation refused: cgc already has a context ${name} that pi-cgc has no record of creating for this ${describeIdentity(identity, root)}, so it is not used. ` +
          `If nothing else needs it, remove it (cgc context delete ${name}; cgc keeps its files) and pi-cgc creates its own; or set worktree.mode to off.`,
      );
    }
    if (!existsSync(dirname(context.dbPath))) {
      return refuse(
        name,
        `Worktree isolation refused: cgc lists the context ${name} at ${context.dbPath}, which does not exist (cgc drops [bracketed] text from the paths it prints), so cgc's MCP server cannot be pointed at it.`,
      );
    }
    if (owner.record.path !== root) writeRecord(records, name, { ...owner.record, path: root });
    state = { kind: "active", name, database: context.database, dbPath: context.dbPath };
    return {};
  }

  /** On a server backend every context reads and writes the one server graph: isolation would be a claim, not a fact. */
  function refuseServerBackend(backend: Backend | null | undefined): ProbeVerdict | undefined {
    const here = linked();
    if (!here || state.kind === "refused" || !backend || !isServerBackend(backend.name)) return undefined;
    return refuse(
      here.name,
      `Worktree isolation refused: cgc's backend is ${backend.name} (from ${backend.source}), a server whose one graph every CGC context shares, so ${here.name} would not keep this worktree apart. Use an embedded backend, or set worktree.mode to off.`,
    ).verdict;
  }

  /**
   * Creates the pending context (the caller has the user's consent to index). The record is written first,
   * so a context pi-cgc made is never one it has no record of. Returns a failed result, or undefined.
   */
  async function createContext(runner: Runner, backend: Backend | null | undefined): Promise<RunResult | undefined> {
    const here = linked();
    if (!here || state.kind !== "pending") return undefined;
    const { name, identity, root } = here;
    const claimed = writeRecord(records, name, { ...identity, path: root, createdAt: new Date().toISOString() }, true);
    if (!claimed.ok) {
      state = { kind: "checking", name }; // the next probe says why
      return notRun([runner.executable, "context", "create", name], "FAILED", claimed.error);
    }
    const database = backend && !isServerBackend(backend.name) ? ["--database", backend.name] : [];
    const args = ["context", "create", name, ...database];
    const result = await runner.run(args, { kind: "maintenance", cwd: root, takesLock: false });
    listed = undefined;
    if (result.code !== "OK") return result;
    const created = parseContextCreate(result.stdout, name);
    if (created.kind !== "ok") return { ...result, code: "FAILED", reason: created.reason };
    const settled = await resolve(runner);
    if ((state as ScopeState).kind !== "active")
      return notRun(
        [runner.executable, ...args],
        "FAILED",
        settled.verdict?.reason ?? `the context ${name} is not usable`,
      );
    return undefined;
  }

  /**
   * Where the pending context's graph can start from: the main checkout's graph, when it is current
   * (workspace/main-graph.ts); else why not. Undefined outside a pending linked worktree.
   */
  function fromMain(): MainGraph | { why: string } | undefined {
    const here = linked();
    if (!here || state.kind !== "pending") return undefined;
    const mainRoot = mainCheckoutOf(here.identity);
    if (!mainRoot) return { why: "the repository has no main checkout" };
    return currentMainGraph(options.env, mainRoot);
  }

  /** A context was deleted (cgc_contexts, confirmed by the user): its record goes. True when it was this session's. */
  function contextDeleted(name: string): boolean {
    removeRecord(records, name);
    listed = undefined;
    if (!("name" in state) || state.name !== name) return false;
    state = { kind: "checking", name };
    return true;
  }

  function describe(): string | undefined {
    const found = worktree();
    const orphans = isolating ? orphanNames() : [];
    const gone = orphans.length > 0 ? `; worktree gone, context kept: ${orphans.join(", ")}` : "";
    switch (state.kind) {
      case "shared":
        if (!isolating)
          return found.kind === "linked"
            ? `linked worktree "${found.identity.worktreeId}" — shares the default graph (worktree.mode off)`
            : undefined;
        return `${state.why} — default graph${gone}`;
      case "checking":
        return `linked worktree — context ${state.name}, not checked yet${gone}`;
      case "pending":
        return `linked worktree — context ${state.name} does not exist yet (/cgc index creates it)${gone}`;
      case "active":
        return `linked worktree — context ${state.name} (${state.database}, ${state.dbPath})${gone}`;
      case "refused":
        return `linked worktree — context ${state.name} refused: ${state.reason}${gone}`;
    }
  }

  function orphanNames(): string[] {
    return orphanedContexts(readRecords(records)).map(([name]) => name);
  }

  return {
    get state(): ScopeState {
      return state;
    },
    /** The git toplevel of the session's folder (the worktree's root), when there is one. */
    get root(): string | undefined {
      const found = worktree();
      return found.kind === "not-git" ? undefined : found.root;
    },
    resolve,
    refuseServerBackend,
    createContext,
    fromMain,
    contextDeleted,
    describe,
    /** Runner: arguments for every database-backed subcommand. */
    subcommandArgs(): string[] {
      const name = linked()?.name;
      return name ? ["--context", name] : [];
    },
    /** Runner: `mcp start` takes no --context, so it gets the context's database by path. */
    serverEnv(): Record<string, string> {
      return state.kind === "active" ? { CGC_RUNTIME_DB_TYPE: state.database, CGC_RUNTIME_DB_PATH: state.dbPath } : {};
    },
    /** Runner: why no database-backed call may run now (a linked worktree whose context is not usable). */
    databaseRefusal(): string | undefined {
      if (!linked()) return undefined;
      switch (state.kind) {
        case "active":
        case "shared":
          return undefined;
        case "refused":
          return state.reason;
        case "pending":
          return `this worktree's CGC named context ${state.name} does not exist yet`;
        case "checking":
          return `this worktree's CGC named context ${state.name} has not been checked yet`;
      }
    },
    /** The watcher's gate: a linked worktree is watched only in its own, usable context. */
    allowsWatcher(): boolean {
      return !linked() || state.kind === "active";
    },
  };
}
