// The impact note (opt-in, `proactive.impactNotes`): a third tier beside ADR 0009's drift steers and result
// annotations, with their principle — it tells the agent what it would otherwise not know, and is quiet
// otherwise. After an update in which a function or method that other files call lost or changed its
// parameters, or was removed or renamed, one short message before the agent's next model call names those
// callers (path:line, at most NOTE_CALLERS, then how many more and `cgc_impact`). Once per changed symbol per
// session; never when every caller was already edited; never while the graph is possibly stale for the
// changed file (it waits for the update's read-back); never for a full index (only edits are looked at).
// An update slower than the edit's wait is read back later: the next model call (or prompt) then waits for the
// note's query, so the note reaches the first model call after the read-back.
//
// "Before" is the file's text just before the session's first edit of it (read in `tool_call`, which pi awaits
// before the edit runs), or HEAD's for a change made through bash. A body-only edit changes no header, so it
// costs no wait and no query.
import { readFileSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { type ExtensionAPI, isEditToolResult, isWriteToolResult } from "@mariozechner/pi-coding-agent";
import type { CgcSession } from "../lifecycle/session.ts";
import { isReady } from "../state/model.ts";
import { count } from "../state/words.ts";
import { canonical, isWithin } from "../workspace/root.ts";
import { IMPACT_TOOL_NAME } from "./catalog.ts";
import { headText } from "./git-changes.ts";
import type { Dependent } from "./impact.ts";
import { displayPath, ToolFailure } from "./results.ts";
import { keyOf, type SignatureChange, signature, supportedSource } from "./signatures.ts";
import type { GraphDeps, GraphSession } from "./tools.ts";

export const IMPACT_NOTE_TYPE = "cgc-impact-note";
/** Callers named in one note line; the rest are counted and left to `cgc_impact`. */
export const NOTE_CALLERS = 8;

/** What the note uses of a session. */
export type NotingSession = GraphSession & Pick<CgcSession, "config">;

function readText(path: string): string | undefined {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return undefined;
  }
}

/**
 * The note's line for one change (pure: the tier-tokens bench and the unit tests read it). Callers not confirmed
 * (possible: a guess of cgc's, or a call pi-cgc could not rule out) are counted and named apart, after the others.
 */
export function impactLine(root: string, path: string, change: SignatureChange, callers: Dependent[]): string {
  const file = displayPath(root, path);
  const sure = callers.filter((caller) => caller.possible === undefined);
  const loose = callers.filter((caller) => caller.possible !== undefined);
  const shownSure = sure.slice(0, NOTE_CALLERS);
  const shownLoose = loose.slice(0, NOTE_CALLERS - shownSure.length);
  const at = (shown: Dependent[]) =>
    shown.map((caller) => `${displayPath(root, caller.path)}:${caller.line ?? "?"}`).join(", ");
  const more = callers.length - shownSure.length - shownLoose.length;
  const tail = more > 0 ? `, and ${more} more — \`${IMPACT_TOOL_NAME}\`` : "";
  const before = change.before ? signature(change.before) : change.name;
  const what =
    change.change === "params"
      ? `\`${before}\` in ${file} now takes \`${change.after ? signature(change.after) : change.name}\``
      : change.change === "renamed"
        ? `\`${before}\` in ${file} was renamed to \`${change.after ? signature(change.after) : change.name}\``
        : `\`${before}\` was removed from ${file}`;
  const still = change.change === "params" ? "call it as before" : "use the old name";
  const notConfirmed = `(not confirmed; \`${IMPACT_TOOL_NAME}\` says why)`;
  if (sure.length === 0)
    return `${what}; ${count(loose.length, "possible call site")} in files not edited in this session ${notConfirmed}: ${at(shownLoose)}${tail}.`;
  const possible =
    loose.length === 0
      ? ""
      : `; ${count(loose.length, "more possible call site")} ${notConfirmed}${shownLoose.length > 0 ? `: ${at(shownLoose)}` : ""}`;
  return `${what}; ${count(sure.length, "call site")} in files not edited in this session still ${still}: ${at(shownSure)}${possible}${tail}.`;
}

export function impactNote(lines: string[]): string {
  return `Impact of your last edit (pi-cgc, from the code graph): ${lines.join(" ")}`;
}

type ContextMessage = { role: string; timestamp?: number; customType?: string; content?: unknown };
const isNote = (message: unknown) =>
  (message as ContextMessage | undefined)?.role === "custom" &&
  (message as ContextMessage).customType === IMPACT_NOTE_TYPE;
const identity = (message: unknown) => {
  const m = message as ContextMessage;
  return `${m.role}:${m.timestamp ?? ""}:${isNote(m) ? String(m.content) : ""}`;
};

export interface ImpactNotes {
  /** Files edited in this session (cgc_impact marks dependents there). */
  edited(): ReadonlySet<string>;
}

export function installImpactNotes(
  pi: ExtensionAPI,
  current: () => NotingSession | undefined,
  deps: GraphDeps,
): ImpactNotes {
  let before = new Map<string, string>();
  let edited = new Set<string>();
  let noted = new Set<string>();
  let pending = new Set<string>();
  let queued: string[] = [];
  let anchored: Array<{ content: string; anchor: string | undefined }> = [];
  let streaming = false;
  let evaluating: Promise<void> = Promise.resolve();

  const enabled = (session: NotingSession | undefined): session is NotingSession =>
    session?.config()["proactive.impactNotes"] === true && isReady(session.store.get());

  const absolute = (cwd: string, raw: string) => {
    const path = resolve(cwd, raw.replace(/^@/, ""));
    return join(canonical(dirname(path)), basename(path));
  };

  const textBefore = async (session: NotingSession, path: string) =>
    before.get(path) ?? (await headText(session.root, path)) ?? "";

  /** Changes of a file worth a note that no note named yet. */
  const newChanges = async (session: NotingSession, path: string): Promise<SignatureChange[]> => {
    const { fileChanges, noteWorthy } = await import("./impact.ts");
    return fileChanges(path, await textBefore(session, path), readText(path) ?? "").filter(
      (change) => noteWorthy(change) && !noted.has(`${path}#${keyOf(change.before ?? change)}`),
    );
  };

  /**
   * During a run the note goes out as a steer (kept in the session, shown to the user), and pi delivers steers
   * one per turn: behind another extension's steer (or the drift steer) it would reach the model a call late.
   * So each model call's context carries it right after the message that was last when it was made, and the
   * steered copy is left out of the context wherever it landed.
   */
  const deliver = (content: string) => {
    if (!streaming) return void queued.push(content);
    anchored.push({ content, anchor: undefined });
    pi.sendMessage({ customType: IMPACT_NOTE_TYPE, content, display: true }, { deliverAs: "steer" });
  };

  /** The pending files the graph now verifiably holds (the others wait for their read-back). */
  const readyPaths = (session: NotingSession): string[] => {
    const state = session.store.get();
    if (!enabled(session) || state.activity !== "idle" || state.rebuildNeeded || state.otherWriter) return [];
    const stale = new Set(state.changedPaths);
    return [...pending].filter((path) => !stale.has(path));
  };

  /**
   * Notes for the pending files the graph now verifiably holds. A change counts as noted once its callers are
   * known: a query cancelled under it (the lease ended with the agent's run, or for pi-cgc's own maintenance)
   * leaves its file pending, asked again at the next model call or prompt; any other failed query, no note.
   */
  const evaluateNow = async (session: NotingSession) => {
    const ready = readyPaths(session);
    if (ready.length === 0) return;
    const stale = new Set(session.store.get().changedPaths);
    const { dependentsOf } = await import("./impact.ts");
    const lines: string[] = [];
    for (const [index, path] of ready.entries()) {
      pending.delete(path);
      try {
        for (const change of await newChanges(session, path)) {
          const q = { deps, session, signal: undefined };
          const callers = (await dependentsOf(q, path, change, 1, new Map(), true)).filter(
            (caller) => caller.path !== path && !stale.has(caller.path),
          );
          noted.add(`${path}#${keyOf(change.before ?? change)}`);
          const untouched = callers.filter((caller) => !edited.has(caller.path));
          // Called from no other file, or only from files already edited: nothing the agent does not know.
          if (untouched.length > 0) lines.push(impactLine(session.root, path, change, untouched));
        }
      } catch (error) {
        if (!(error instanceof ToolFailure && error.code === "CANCELLED")) continue; // a failed query: no note
        for (const later of ready.slice(index)) pending.add(later);
        break;
      }
    }
    if (lines.length > 0 && current() === session) deliver(impactNote(lines));
  };

  const evaluate = (session: NotingSession): Promise<void> => {
    evaluating = evaluating.then(() => evaluateNow(session)).catch(() => undefined); // a failed query: no note
    return evaluating;
  };

  /**
   * Before a model call: a note being worked out, or due (a pending file the graph now holds), is waited for,
   * so that an update read back after the edit's wait still reaches the first model call after its read-back.
   */
  const due = (session: NotingSession | undefined): Promise<void> =>
    session && current() === session && readyPaths(session).length > 0 ? evaluate(session) : evaluating;

  pi.on("session_start", () => {
    before = new Map();
    edited = new Set();
    noted = new Set();
    pending = new Set();
    queued = [];
    anchored = [];
    const session = current();
    session?.store.subscribe((state, previous) => {
      if (current() !== session) return;
      for (const path of state.changedPaths) edited.add(path);
      // A pending file's change was read back (an update, or a full-rebuild sync where the engine is off).
      const reconciled = previous.changedPaths.some((path) => pending.has(path) && !state.changedPaths.includes(path));
      const settled = state.activity === "idle" && previous.activity !== "idle";
      if ((reconciled || settled) && pending.size > 0 && state.activity === "idle") void evaluate(session);
    });
  });

  // pi awaits this before the edit runs: the file as it was, for the first edit of it in this session.
  pi.on("tool_call", (event, ctx) => {
    const session = current();
    if (!enabled(session) || (event.toolName !== "edit" && event.toolName !== "write")) return;
    const raw = (event.input as { path?: unknown }).path;
    if (typeof raw !== "string") return;
    const path = absolute(ctx.cwd, raw);
    if (supportedSource(path) && isWithin(session.root, path) && !before.has(path))
      before.set(path, readText(path) ?? "");
  });

  // After freshness saw the edit (its handler runs first): a changed signature waits for the update here,
  // so that the note reaches the very next model call.
  pi.on("tool_result", async (event, ctx) => {
    const session = current();
    if (!enabled(session)) return;
    const touched: string[] = [];
    if (isEditToolResult(event) || isWriteToolResult(event)) {
      if (typeof event.input.path === "string") touched.push(absolute(ctx.cwd, event.input.path));
    } else if (event.toolName === "bash") touched.push(...session.store.get().changedPaths);
    else return;
    for (const path of touched) {
      if (!supportedSource(path) || !isWithin(session.root, path)) continue;
      edited.add(path);
      if ((await newChanges(session, path)).length > 0) pending.add(path);
    }
    if (pending.size === 0) return;
    await deps.settle();
    await evaluate(session);
  });

  pi.on("context", async (event) => {
    await due(current());
    if (anchored.length === 0) return;
    const contents = new Set(anchored.map((note) => note.content));
    const messages = event.messages.filter(
      (message) => !isNote(message) || !contents.has(String((message as ContextMessage).content)),
    );
    // A note steered during a model call that then ended the run landed after the run's last reply, and pi runs
    // one more turn for it: there it follows that reply, so that the context does not end with the model's own.
    const tail = messages[messages.length - 1] as ContextMessage | undefined;
    if (tail?.role === "assistant")
      for (let at = event.messages.length - 1; at >= 0 && isNote(event.messages[at]); at--) {
        const landed = String((event.messages[at] as ContextMessage).content);
        for (const note of anchored) if (note.content === landed) note.anchor = identity(tail);
      }
    for (const note of anchored) {
      note.anchor ??= messages.length > 0 ? identity(messages[messages.length - 1]) : "";
      let at = note.anchor === "" ? 0 : messages.findIndex((message) => identity(message) === note.anchor) + 1;
      if (at === 0 && note.anchor !== "") continue; // its place was compacted away: so is the note
      while (at < messages.length && isNote(messages[at])) at++;
      messages.splice(at, 0, {
        role: "custom",
        customType: IMPACT_NOTE_TYPE,
        content: note.content,
        display: true,
        timestamp: 0,
      } as (typeof messages)[number]);
    }
    return { messages };
  });

  pi.on("agent_start", () => {
    streaming = true;
  });
  pi.on("agent_end", () => {
    streaming = false;
  });

  pi.on("before_agent_start", async () => {
    const session = current();
    await due(session);
    if (queued.length === 0 || !enabled(session)) return;
    const content = queued.join("\n");
    queued = [];
    return { message: { customType: IMPACT_NOTE_TYPE, content, display: true } };
  });

  return { edited: () => edited };
}
