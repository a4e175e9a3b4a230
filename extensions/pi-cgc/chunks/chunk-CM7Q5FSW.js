// src/agent/git-changes.ts
import { execFile } from "node:child_process";
import { join } from "node:path";
var GIT_BUDGET_MS = 1e4;
var MAX_BUFFER = 32 * 1024 * 1024;
function git(root, args, signal) {
  return new Promise((resolve) => {
    execFile(
      "git",
      ["-c", "core.quotePath=false", ...args],
      { cwd: root, timeout: GIT_BUDGET_MS, maxBuffer: MAX_BUFFER, signal, encoding: "utf8" },
      (error, stdout, stderr) => {
        if (error) resolve({ ok: false, reason: (stderr || error.message).trim().split("\n")[0] ?? "git failed" });
        else resolve({ ok: true, value: stdout });
      }
    );
  });
}
function parseHunks(diff) {
  const hunks = /* @__PURE__ */ new Map();
  let current;
  for (const line of diff.split("\n")) {
    if (line.startsWith("+++ ")) {
      const target = line.slice(4).replace(/\t$/, "");
      current = target === "/dev/null" ? void 0 : [];
      if (current) hunks.set(target.replace(/^b\//, ""), current);
    } else if (line.startsWith("@@") && current) {
      const match = /^@@ -\d+(?:,\d+)? \+(\d+)(?:,(\d+))? @@/.exec(line);
      if (!match) continue;
      const start = Number(match[1]);
      const count = match[2] === void 0 ? 1 : Number(match[2]);
      current.push(count === 0 ? [Math.max(1, start), start + 1] : [start, start + count - 1]);
    }
  }
  return hunks;
}
async function workingChanges(root, signal) {
  const head = await git(root, ["rev-parse", "--verify", "-q", "HEAD"], signal);
  if (!head.ok) return { ok: false, reason: `no commit to compare with (${head.reason || "HEAD is unborn"})` };
  const [status, diff, untracked] = await Promise.all([
    git(root, ["diff", "HEAD", "--no-renames", "--name-status", "-z", "--", "."], signal),
    git(root, ["diff", "HEAD", "--no-renames", "-U0", "--no-color", "--no-ext-diff", "--", "."], signal),
    git(root, ["ls-files", "--others", "--exclude-standard", "-z", "--", "."], signal)
  ]);
  for (const answer of [status, diff, untracked]) if (!answer.ok) return answer;
  if (!status.ok || !diff.ok || !untracked.ok) return { ok: false, reason: "git failed" };
  const top = await git(root, ["rev-parse", "--show-toplevel"], signal);
  if (!top.ok) return top;
  const base = top.value.trim();
  const hunks = parseHunks(diff.value);
  const files = [];
  const fields = status.value.split("\0").filter(Boolean);
  for (let i = 0; i + 1 < fields.length; i += 2) {
    const code = fields[i][0];
    const rel = fields[i + 1];
    const kind = code === "A" ? "added" : code === "D" ? "deleted" : "modified";
    files.push({ path: join(base, rel), status: kind, lines: hunks.get(rel) ?? [] });
  }
  for (const rel of untracked.value.split("\0").filter(Boolean)) {
    files.push({ path: join(root, rel), status: "added", lines: [[1, Number.MAX_SAFE_INTEGER]] });
  }
  return { ok: true, value: files };
}
async function headText(root, path, signal) {
  const answer = await git(root, ["show", `HEAD:./${relativeTo(root, path)}`], signal);
  return answer.ok ? answer.value : void 0;
}
function relativeTo(root, path) {
  const prefix = root.endsWith("/") ? root : `${root}/`;
  return path.startsWith(prefix) ? path.slice(prefix.length) : path;
}

// src/agent/signatures.ts
var PYTHON = /\.pyw?$/;
var SCRIPT = /\.(ts|tsx|mts|cts|js|jsx|mjs|cjs)$/;
function supportedSource(path) {
  return PYTHON.test(path) || SCRIPT.test(path);
}
function codeOnly(path, text) {
  if (PYTHON.test(path)) return maskPythonStrings(text);
  if (SCRIPT.test(path)) return maskScript(text);
  return text;
}
function definitionsOf(path, text) {
  if (PYTHON.test(path)) return pythonDefinitions(text);
  if (SCRIPT.test(path)) return scriptDefinitions(text);
  return [];
}
function balanced(text, open) {
  let depth = 0;
  let quote;
  for (let i = open; i < text.length; i++) {
    const c = text[i];
    if (quote) {
      if (c === "\\") i++;
      else if (c === quote) quote = void 0;
      continue;
    }
    if (c === '"' || c === "'" || c === "`") quote = c;
    else if (c === "(" || c === "[" || c === "{") depth++;
    else if (c === ")" || c === "]" || c === "}") {
      depth--;
      if (depth === 0) return { inner: text.slice(open + 1, i), end: i + 1 };
    }
  }
  return void 0;
}
var normalizeParams = (raw) => raw.replace(/#[^\n]*|\/\/[^\n]*|\/\*[\s\S]*?\*\//g, "").replace(/\s+/g, " ").replace(/\s*([,:=()[\]{}<>|])\s*/g, "$1").replace(/,$/, "").trim();
function lineOf(starts, offset) {
  let lo = 0;
  let hi = starts.length - 1;
  while (lo < hi) {
    const mid = lo + hi + 1 >> 1;
    if (starts[mid] <= offset) lo = mid;
    else hi = mid - 1;
  }
  return lo + 1;
}
function lineStarts(text) {
  const starts = [0];
  for (let i = 0; i < text.length; i++) if (text[i] === "\n") starts.push(i + 1);
  return starts;
}
function pythonDefinitions(text) {
  const masked = maskPythonStrings(text);
  const starts = lineStarts(masked);
  const found = [];
  const scopes = [];
  const header = /^([ \t]*)(?:async[ \t]+)?(def|class)[ \t]+([A-Za-z_]\w*)[ \t]*([(:])?/gm;
  for (const match of masked.matchAll(header)) {
    const indent = match[1].replace(/\t/g, "        ").length;
    while (scopes.length > 0 && scopes.at(-1).indent >= indent) scopes.pop();
    const keyword = match[2];
    const name = match[3];
    const parent = scopes.at(-1);
    let params = "";
    if (match[4] === "(") {
      const open = (match.index ?? 0) + match[0].length - 1;
      params = normalizeParams(balanced(text, open)?.inner ?? "");
    }
    const line = lineOf(starts, (match.index ?? 0) + match[1].length);
    scopes.push({ indent, kind: keyword === "class" ? "class" : "function", name });
    if (parent?.kind === "function") continue;
    if (keyword === "class")
      found.push({ kind: "class", name, params, line, ...parent ? { owner: parent.name } : {} });
    else if (parent) found.push({ kind: "method", name, owner: parent.name, params, line });
    else found.push({ kind: "function", name, params, line });
  }
  return found;
}
function maskPythonStrings(text) {
  let out = "";
  let i = 0;
  while (i < text.length) {
    const c = text[i];
    if (c === "#") {
      const end = text.indexOf("\n", i);
      const stop = end === -1 ? text.length : end;
      out += " ".repeat(stop - i);
      i = stop;
    } else if (c === '"' || c === "'") {
      const triple = text.startsWith(c.repeat(3), i);
      const close = triple ? c.repeat(3) : c;
      let j = i + close.length;
      while (j < text.length && !text.startsWith(close, j) && (triple || text[j] !== "\n"))
        j += text[j] === "\\" ? 2 : 1;
      j = Math.min(text.length, j + close.length);
      out += c + text.slice(i + 1, j - 1).replace(/[^\n]/g, " ") + (j - 1 > i ? text[j - 1] : "");
      i = j;
    } else {
      out += c;
      i++;
    }
  }
  return out;
}
var NOT_METHODS = /* @__PURE__ */ new Set(["if", "for", "while", "switch", "catch", "return", "function", "with", "else", "do"]);
function scriptDefinitions(text) {
  const masked = maskScript(text);
  const starts = lineStarts(masked);
  const found = [];
  const classes = [];
  let depth = 0;
  let pendingClass;
  const patterns = [
    {
      re: /^(?:export\s+)?(?:default\s+)?(?:declare\s+)?(?:async\s+)?function\s*\*?\s*([A-Za-z_$][\w$]*)\s*(?:<[^>(]*>)?\s*\(/,
      kind: "function"
    },
    {
      re: /^(?:export\s+)?(?:default\s+)?(?:declare\s+)?(?:abstract\s+)?class\s+([A-Za-z_$][\w$]*)([^{]*)/,
      kind: "class"
    },
    {
      re: /^(?:export\s+)?(?:const|let|var)\s+([A-Za-z_$][\w$]*)\s*(?::[^=]+)?=\s*(?:async\s+)?(?:function\s*\*?\s*[\w$]*\s*)?(?:<[^>(]*>\s*)?\(/,
      kind: "arrow"
    },
    {
      re: /^(?:(?:public|private|protected|static|async|readonly|override|abstract|get|set|declare)\s+)*\*?\s*(#?[A-Za-z_$][\w$]*)\s*\??\s*(?:<[^>(]*>)?\s*\(/,
      kind: "method"
    }
  ];
  let offset = 0;
  for (const rawLine of masked.split("\n")) {
    const lineStart = offset;
    offset += rawLine.length + 1;
    const trimmed = rawLine.trimStart();
    const at = lineStart + (rawLine.length - trimmed.length);
    const inClass = classes.at(-1);
    const classBody = inClass !== void 0 && inClass.depth === depth;
    for (const { re, kind } of patterns) {
      if (kind === "method" ? !classBody : depth !== 0) continue;
      const match = re.exec(trimmed);
      if (!match) continue;
      const name = match[1];
      if (kind === "method" && NOT_METHODS.has(name)) break;
      const line = lineOf(starts, at);
      if (kind === "class") {
        found.push({ kind: "class", name, params: normalizeParams(match[2] ?? ""), line });
        pendingClass = name;
        break;
      }
      const open = at + match[0].length - 1;
      const params = normalizeParams(balanced(text, open)?.inner ?? "");
      if (kind === "method") found.push({ kind: "method", name, owner: inClass?.name, params, line });
      else found.push({ kind: "function", name, params, line });
      break;
    }
    for (const c of rawLine) {
      if (c === "{") {
        depth++;
        if (pendingClass) {
          classes.push({ name: pendingClass, depth });
          pendingClass = void 0;
        }
      } else if (c === "}") {
        if (classes.at(-1)?.depth === depth) classes.pop();
        depth = Math.max(0, depth - 1);
      }
    }
  }
  return mergeOverloads(found);
}
function mergeOverloads(found) {
  const byKey = /* @__PURE__ */ new Map();
  for (const definition of found) {
    const key = keyOf(definition);
    const seen = byKey.get(key);
    if (seen) seen.params = `${seen.params} | ${definition.params}`;
    else byKey.set(key, { ...definition });
  }
  return [...byKey.values()];
}
function maskScript(text) {
  let out = "";
  let i = 0;
  while (i < text.length) {
    const c = text[i];
    if (c === "/" && text[i + 1] === "/") {
      const end = text.indexOf("\n", i);
      const stop = end === -1 ? text.length : end;
      out += " ".repeat(stop - i);
      i = stop;
    } else if (c === "/" && text[i + 1] === "*") {
      const end = text.indexOf("*/", i + 2);
      const stop = end === -1 ? text.length : end + 2;
      out += text.slice(i, stop).replace(/[^\n]/g, " ");
      i = stop;
    } else if (c === '"' || c === "'" || c === "`") {
      let j = i + 1;
      while (j < text.length && text[j] !== c && (c === "`" || text[j] !== "\n")) j += text[j] === "\\" ? 2 : 1;
      j = Math.min(text.length, j + 1);
      out += c + text.slice(i + 1, j - 1).replace(/[^\n]/g, " ") + (j - 1 > i ? text[j - 1] : "");
      i = j;
    } else {
      out += c;
      i++;
    }
  }
  return out;
}
function keyOf(definition) {
  return `${definition.kind}:${definition.owner ? `${definition.owner}.` : ""}${definition.name}`;
}
function qualified(definition) {
  return definition.owner ? `${definition.owner}.${definition.name}` : definition.name;
}
function signatureChanges(before, after) {
  const old = new Map(before.map((definition) => [keyOf(definition), definition]));
  const now = new Map(after.map((definition) => [keyOf(definition), definition]));
  const changes = [];
  for (const [key, definition] of now) {
    const was = old.get(key);
    if (was && was.params !== definition.params)
      changes.push({
        change: "params",
        kind: definition.kind,
        name: definition.name,
        owner: definition.owner,
        before: was,
        after: definition
      });
  }
  const removed = [...old].filter(([key]) => !now.has(key)).map(([, definition]) => definition);
  const added = [...now].filter(([key]) => !old.has(key)).map(([, definition]) => definition);
  for (const gone of removed) {
    const fits = added.filter(
      (candidate) => candidate.kind === gone.kind && candidate.owner === gone.owner && candidate.params === gone.params
    ).sort((a, b) => Math.abs(a.line - gone.line) - Math.abs(b.line - gone.line));
    const renamed = fits[0];
    if (renamed) {
      added.splice(added.indexOf(renamed), 1);
      changes.push({
        change: "renamed",
        kind: gone.kind,
        name: renamed.name,
        from: gone.name,
        owner: gone.owner,
        before: gone,
        after: renamed
      });
    } else {
      changes.push({ change: "removed", kind: gone.kind, name: gone.name, owner: gone.owner, before: gone });
    }
  }
  for (const definition of added)
    changes.push({
      change: "added",
      kind: definition.kind,
      name: definition.name,
      owner: definition.owner,
      after: definition
    });
  const lineOfChange = (change) => (change.after ?? change.before)?.line ?? 0;
  return changes.sort((a, b) => lineOfChange(a) - lineOfChange(b));
}
function signature(definition) {
  const params = definition.params.replace(/,/g, ", ").replace(/(?<!:):(?!:)/g, ": ");
  return definition.kind === "class" && !params ? qualified(definition) : `${qualified(definition)}(${params})`;
}
function describeChange(change) {
  const sig = (definition) => definition ? signature(definition) : "";
  switch (change.change) {
    case "params":
      return `parameters changed: ${sig(change.before)} \u2192 ${sig(change.after)}`;
    case "renamed":
      return `renamed: ${sig(change.before)} \u2192 ${sig(change.after)}`;
    case "removed":
      return `removed: ${sig(change.before)}`;
    case "added":
      return `added: ${sig(change.after)}`;
  }
}

export {
  workingChanges,
  headText,
  supportedSource,
  codeOnly,
  definitionsOf,
  keyOf,
  qualified,
  signatureChanges,
  signature,
  describeChange
};
