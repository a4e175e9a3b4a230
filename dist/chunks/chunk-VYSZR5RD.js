import {
  annotate,
  canonical,
  isWithin
} from "./chunk-PQG6UBWC.js";

// src/agent/results.ts
import { existsSync, realpathSync } from "node:fs";
import { basename, dirname, isAbsolute, join, relative, resolve } from "node:path";
var ToolFailure = class extends Error {
  constructor(code, detail, remedy) {
    super(`${code}: ${detail}
Remedy: ${remedy}`);
    this.code = code;
    this.detail = detail;
    this.remedy = remedy;
  }
  code;
  detail;
  remedy;
};
var REMEDIES = {
  BUSY: "another cgc process holds the graph database; retry in a moment, or use grep/read meanwhile.",
  TIMEOUT: "narrow the question (a file, a smaller depth, a LIMIT) or raise timeouts.queryMs.",
  UNAVAILABLE: "cgc is not runnable here; the user can check /cgc status and /cgc doctor.",
  CANCELLED: "the call was cancelled; ask again if the answer is still needed.",
  FAILED: "check the arguments; if they are right, the user can run /cgc doctor."
};
function failureOf(code, detail) {
  return new ToolFailure(code, detail, REMEDIES[code]);
}
function toolResult(session, raw) {
  const shown = session.present(raw);
  return {
    content: [{ type: "text", text: annotate(session, shown.text) }],
    details: { code: "OK", truncated: shown.truncated, spillPath: shown.spillPath }
  };
}
function fail(session, failure) {
  const shown = session.present(failure.message);
  const error = new Error(annotate(session, shown.text));
  error.name = failure.code;
  throw error;
}
function liveSession(current) {
  const session = current();
  if (!session) throw new ToolFailure("UNAVAILABLE", "pi-cgc is not active in this session", "use grep and read.");
  return session;
}
async function answered(session, body) {
  try {
    return toolResult(session, await body());
  } catch (error) {
    if (error instanceof ToolFailure) fail(session, error);
    throw error;
  }
}
function displayPath(cwd, path) {
  if (!isAbsolute(path)) return path;
  const base = canonical(cwd);
  return isWithin(base, path) ? relative(base, path) || "." : path;
}
function location(cwd, path, line) {
  if (typeof path !== "string") return "(no path)";
  return typeof line === "number" ? `${displayPath(cwd, path)}:${line}` : displayPath(cwd, path);
}
function confinedPath(cwd, raw, roots) {
  const given = raw.replace(/^@/, "").trim();
  const remedy = `give a path inside ${roots.join(" or ")}.`;
  if (given === "" || given.split(/[\\/]/).includes("..")) {
    return new ToolFailure("NOT_ALLOWED", `path ${JSON.stringify(given)} is empty or climbs with ..`, remedy);
  }
  let existing = resolve(cwd, given);
  const tail = [];
  while (!existsSync(existing) && dirname(existing) !== existing) {
    tail.unshift(basename(existing));
    existing = dirname(existing);
  }
  const path = join(realpathSync(existing), ...tail);
  if (roots.some((root) => isWithin(canonical(root), path))) return path;
  return new ToolFailure("NOT_ALLOWED", `${given} resolves to ${path}, outside ${roots.join(" and ")}`, remedy);
}

export {
  ToolFailure,
  failureOf,
  liveSession,
  answered,
  location,
  confinedPath
};
