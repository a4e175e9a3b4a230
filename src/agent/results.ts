// What every pi-cgc tool returns to the agent: text through the one output policy, then through
// `annotate` (result annotations, an opt-in tier of ADR 0009), and failures as a code with a one-line remedy.
import { existsSync, realpathSync } from "node:fs";
import { basename, dirname, isAbsolute, join, relative, resolve } from "node:path";
import type { AgentToolResult } from "@mariozechner/pi-coding-agent";
import type { RunCode } from "../cgc/runner.ts";
import type { CgcSession } from "../lifecycle/session.ts";
import { canonical, isWithin } from "../workspace/root.ts";
import { type AnnotatingSession, annotate } from "./inject.ts";

export type ToolErrorCode = "NOT_FOUND" | "NOT_ALLOWED" | "BUSY" | "TIMEOUT" | "UNAVAILABLE" | "CANCELLED" | "FAILED";

export interface ToolDetails {
  code: "OK" | ToolErrorCode;
  truncated?: boolean;
  spillPath?: string;
}

/** A failed call: pi marks a thrown error as an error result, and the agent reads code, cause and remedy. */
export class ToolFailure extends Error {
  constructor(
    readonly code: ToolErrorCode,
    readonly detail: string,
    readonly remedy: string,
  ) {
    super(`${code}: ${detail}\nRemedy: ${remedy}`);
  }
}

const REMEDIES: Record<Exclude<RunCode, "OK">, string> = {
  BUSY: "another cgc process holds the graph database; retry in a moment, or use grep/read meanwhile.",
  TIMEOUT: "narrow the question (a file, a smaller depth, a LIMIT) or raise timeouts.queryMs.",
  UNAVAILABLE: "cgc is not runnable here; the user can check /cgc status and /cgc doctor.",
  CANCELLED: "the call was cancelled; ask again if the answer is still needed.",
  FAILED: "check the arguments; if they are right, the user can run /cgc doctor.",
};

export function failureOf(code: Exclude<RunCode, "OK">, detail: string): ToolFailure {
  return new ToolFailure(code, detail, REMEDIES[code]);
}

/** What a tool's answer needs of a session: the output policy and what annotations read. */
export type AnsweringSession = Pick<CgcSession, "present"> & AnnotatingSession;

/** Output policy, then annotations; the result's details say whether the text was capped. */
export function toolResult(session: AnsweringSession, raw: string): AgentToolResult<ToolDetails> {
  const shown = session.present(raw);
  return {
    content: [{ type: "text", text: annotate(session, shown.text) }],
    details: { code: "OK", truncated: shown.truncated, spillPath: shown.spillPath },
  };
}

/** Throws the failure with its text through the output policy and annotations. */
export function fail(session: AnsweringSession, failure: ToolFailure): never {
  const shown = session.present(failure.message);
  const error = new Error(annotate(session, shown.text));
  error.name = failure.code;
  throw error;
}

/** The live session, or the failure that says pi-cgc is not active (diagnostics need no ready graph). */
export function liveSession<S>(current: () => S | undefined): S {
  const session = current();
  if (!session) throw new ToolFailure("UNAVAILABLE", "pi-cgc is not active in this session", "use grep and read.");
  return session;
}

/** Runs a tool body for a session: its text as the answer, a ToolFailure as an error result with its remedy. */
export async function answered(
  session: AnsweringSession,
  body: () => Promise<string>,
): Promise<AgentToolResult<ToolDetails>> {
  try {
    return toolResult(session, await body());
  } catch (error) {
    if (error instanceof ToolFailure) fail(session, error);
    throw error;
  }
}

/** A path the agent can open: relative to the session's cwd when inside it, otherwise absolute. */
export function displayPath(cwd: string, path: string): string {
  if (!isAbsolute(path)) return path;
  const base = canonical(cwd);
  return isWithin(base, path) ? relative(base, path) || "." : path;
}

export function location(cwd: string, path: unknown, line: unknown): string {
  if (typeof path !== "string") return "(no path)";
  return typeof line === "number" ? `${displayPath(cwd, path)}:${line}` : displayPath(cwd, path);
}

/**
 * A path argument resolved inside `roots`: no `..` segment, no symlink leading out (the deepest existing
 * ancestor is canonicalised). The target need not exist (an output file). Returns the absolute path.
 */
export function confinedPath(cwd: string, raw: string, roots: readonly string[]): string | ToolFailure {
  const given = raw.replace(/^@/, "").trim();
  const remedy = `give a path inside ${roots.join(" or ")}.`;
  if (given === "" || given.split(/[\\/]/).includes("..")) {
    return new ToolFailure("NOT_ALLOWED", `path ${JSON.stringify(given)} is empty or climbs with ..`, remedy);
  }
  let existing = resolve(cwd, given);
  const tail: string[] = [];
  while (!existsSync(existing) && dirname(existing) !== existing) {
    tail.unshift(basename(existing));
    existing = dirname(existing);
  }
  const path = join(realpathSync(existing), ...tail);
  if (roots.some((root) => isWithin(canonical(root), path))) return path;
  return new ToolFailure("NOT_ALLOWED", `${given} resolves to ${path}, outside ${roots.join(" and ")}`, remedy);
}
