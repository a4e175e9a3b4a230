// What a change did to a file's callable surface: its functions, classes and methods with their parameter
// lists, read from the text before and after (pure; no cgc, no git). Used by `cgc_impact` (the text at HEAD
// against the working tree) and by the impact note (the text before the session's first edit against now).
//
// Why the text and not the graph's Function nodes: cgc's `args` hold parameter names only (a type or a
// default that changes is invisible there), and the graph of "before" is gone once the engine updated it —
// keeping a copy of it would cost a query before every edit. Both texts are at hand (git, the file read
// before an edit), reading a definition's header is exact for Python and TypeScript/JavaScript, and it
// costs microseconds. The graph then answers who depends on what changed.

export type DefinitionKind = "function" | "method" | "class";

export interface Definition {
  kind: DefinitionKind;
  name: string;
  /** The class a method belongs to. */
  owner?: string;
  /** The parameter list as written, whitespace collapsed (a class: its bases). */
  params: string;
  /** 1-based line of the header. */
  line: number;
}

export type ChangeKind = "added" | "removed" | "renamed" | "params";

export interface SignatureChange {
  change: ChangeKind;
  kind: DefinitionKind;
  /** The name now (for removed: the name it had). */
  name: string;
  /** renamed: the old name. */
  from?: string;
  owner?: string;
  before?: Definition;
  after?: Definition;
}

const PYTHON = /\.pyw?$/;
const SCRIPT = /\.(ts|tsx|mts|cts|js|jsx|mjs|cjs)$/;

export function supportedSource(path: string): boolean {
  return PYTHON.test(path) || SCRIPT.test(path);
}

/** The text with strings and comments blanked (same length, newlines kept), where code is searched. */
export function codeOnly(path: string, text: string): string {
  if (PYTHON.test(path)) return maskPythonStrings(text);
  if (SCRIPT.test(path)) return maskScript(text);
  return text;
}

export function definitionsOf(path: string, text: string): Definition[] {
  if (PYTHON.test(path)) return pythonDefinitions(text);
  if (SCRIPT.test(path)) return scriptDefinitions(text);
  return [];
}

/** The text of a balanced `(…)` starting at `open` in `text`, and the index after it. */
function balanced(text: string, open: number): { inner: string; end: number } | undefined {
  let depth = 0;
  let quote: string | undefined;
  for (let i = open; i < text.length; i++) {
    const c = text[i];
    if (quote) {
      if (c === "\\") i++;
      else if (c === quote) quote = undefined;
      continue;
    }
    if (c === '"' || c === "'" || c === "`") quote = c;
    else if (c === "(" || c === "[" || c === "{") depth++;
    else if (c === ")" || c === "]" || c === "}") {
      depth--;
      if (depth === 0) return { inner: text.slice(open + 1, i), end: i + 1 };
    }
  }
  return undefined;
}

const normalizeParams = (raw: string) =>
  raw
    .replace(/#[^\n]*|\/\/[^\n]*|\/\*[\s\S]*?\*\//g, "")
    .replace(/\s+/g, " ")
    .replace(/\s*([,:=()[\]{}<>|])\s*/g, "$1")
    .replace(/,$/, "")
    .trim();

/** Line starts, for mapping an offset to its 1-based line. */
function lineOf(starts: number[], offset: number): number {
  let lo = 0;
  let hi = starts.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if ((starts[mid] as number) <= offset) lo = mid;
    else hi = mid - 1;
  }
  return lo + 1;
}

function lineStarts(text: string): number[] {
  const starts = [0];
  for (let i = 0; i < text.length; i++) if (text[i] === "\n") starts.push(i + 1);
  return starts;
}

/** Python: `def`/`async def` at module level or directly in a class body, and `class` headers. */
function pythonDefinitions(text: string): Definition[] {
  const masked = maskPythonStrings(text);
  const starts = lineStarts(masked);
  const found: Definition[] = [];
  /** Open classes and functions by indentation: a def inside a function is local, not surface. */
  const scopes: Array<{ indent: number; kind: "class" | "function"; name: string }> = [];
  const header = /^([ \t]*)(?:async[ \t]+)?(def|class)[ \t]+([A-Za-z_]\w*)[ \t]*([(:])?/gm;
  for (const match of masked.matchAll(header)) {
    const indent = (match[1] as string).replace(/\t/g, "        ").length;
    while (scopes.length > 0 && (scopes.at(-1) as { indent: number }).indent >= indent) scopes.pop();
    const keyword = match[2] as "def" | "class";
    const name = match[3] as string;
    const parent = scopes.at(-1);
    let params = "";
    if (match[4] === "(") {
      const open = (match.index ?? 0) + match[0].length - 1;
      params = normalizeParams(balanced(text, open)?.inner ?? "");
    }
    const line = lineOf(starts, (match.index ?? 0) + (match[1] as string).length);
    scopes.push({ indent, kind: keyword === "class" ? "class" : "function", name });
    if (parent?.kind === "function") continue;
    if (keyword === "class")
      found.push({ kind: "class", name, params, line, ...(parent ? { owner: parent.name } : {}) });
    else if (parent) found.push({ kind: "method", name, owner: parent.name, params, line });
    else found.push({ kind: "function", name, params, line });
  }
  return found;
}

/** Blanks the inside of Python strings and comments (same length), so a `def` in a docstring is no header. */
function maskPythonStrings(text: string): string {
  let out = "";
  let i = 0;
  while (i < text.length) {
    const c = text[i] as string;
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
      out += c + text.slice(i + 1, j - 1).replace(/[^\n]/g, " ") + (j - 1 > i ? (text[j - 1] as string) : "");
      i = j;
    } else {
      out += c;
      i++;
    }
  }
  return out;
}

const NOT_METHODS = new Set(["if", "for", "while", "switch", "catch", "return", "function", "with", "else", "do"]);

/**
 * TypeScript and JavaScript: function declarations and `const f = (…) =>` / `function` expressions at module
 * level, classes, and the methods of a class body (brace depth tracked outside strings and comments).
 */
function scriptDefinitions(text: string): Definition[] {
  const masked = maskScript(text);
  const starts = lineStarts(masked);
  const found: Definition[] = [];
  const classes: Array<{ name: string; depth: number }> = [];
  let depth = 0;
  let pendingClass: string | undefined;
  const patterns: Array<{ re: RegExp; kind: "function" | "class" | "arrow" | "method" }> = [
    {
      re: /^(?:export\s+)?(?:default\s+)?(?:declare\s+)?(?:async\s+)?function\s*\*?\s*([A-Za-z_$][\w$]*)\s*(?:<[^>(]*>)?\s*\(/,
      kind: "function",
    },
    {
      re: /^(?:export\s+)?(?:default\s+)?(?:declare\s+)?(?:abstract\s+)?class\s+([A-Za-z_$][\w$]*)([^{]*)/,
      kind: "class",
    },
    {
      re: /^(?:export\s+)?(?:const|let|var)\s+([A-Za-z_$][\w$]*)\s*(?::[^=]+)?=\s*(?:async\s+)?(?:function\s*\*?\s*[\w$]*\s*)?(?:<[^>(]*>\s*)?\(/,
      kind: "arrow",
    },
    {
      re: /^(?:(?:public|private|protected|static|async|readonly|override|abstract|get|set|declare)\s+)*\*?\s*(#?[A-Za-z_$][\w$]*)\s*\??\s*(?:<[^>(]*>)?\s*\(/,
      kind: "method",
    },
  ];
  let offset = 0;
  for (const rawLine of masked.split("\n")) {
    const lineStart = offset;
    offset += rawLine.length + 1;
    const trimmed = rawLine.trimStart();
    const at = lineStart + (rawLine.length - trimmed.length);
    const inClass = classes.at(-1);
    const classBody = inClass !== undefined && inClass.depth === depth;
    for (const { re, kind } of patterns) {
      if (kind === "method" ? !classBody : depth !== 0) continue;
      const match = re.exec(trimmed);
      if (!match) continue;
      const name = match[1] as string;
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
          pendingClass = undefined;
        }
      } else if (c === "}") {
        if (classes.at(-1)?.depth === depth) classes.pop();
        depth = Math.max(0, depth - 1);
      }
    }
  }
  return mergeOverloads(found);
}

/** TypeScript overloads: one definition per name, its parameter lists joined. */
function mergeOverloads(found: Definition[]): Definition[] {
  const byKey = new Map<string, Definition>();
  for (const definition of found) {
    const key = keyOf(definition);
    const seen = byKey.get(key);
    if (seen) seen.params = `${seen.params} | ${definition.params}`;
    else byKey.set(key, { ...definition });
  }
  return [...byKey.values()];
}

/** Blanks strings, template literals and comments (same length, newlines kept). */
function maskScript(text: string): string {
  let out = "";
  let i = 0;
  while (i < text.length) {
    const c = text[i] as string;
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
      out += c + text.slice(i + 1, j - 1).replace(/[^\n]/g, " ") + (j - 1 > i ? (text[j - 1] as string) : "");
      i = j;
    } else {
      out += c;
      i++;
    }
  }
  return out;
}

export function keyOf(definition: Pick<Definition, "kind" | "name" | "owner">): string {
  return `${definition.kind}:${definition.owner ? `${definition.owner}.` : ""}${definition.name}`;
}

/** The shown name: `Owner.name` for a method. */
export function qualified(definition: Pick<Definition, "name" | "owner">): string {
  return definition.owner ? `${definition.owner}.${definition.name}` : definition.name;
}

/**
 * Definitions added, removed, renamed, or with another parameter list. A removed and an added definition of
 * the same kind and owner with the same parameters are one rename (the nearest by line when several fit).
 */
export function signatureChanges(before: Definition[], after: Definition[]): SignatureChange[] {
  const old = new Map(before.map((definition) => [keyOf(definition), definition]));
  const now = new Map(after.map((definition) => [keyOf(definition), definition]));
  const changes: SignatureChange[] = [];
  for (const [key, definition] of now) {
    const was = old.get(key);
    if (was && was.params !== definition.params)
      changes.push({
        change: "params",
        kind: definition.kind,
        name: definition.name,
        owner: definition.owner,
        before: was,
        after: definition,
      });
  }
  const removed = [...old].filter(([key]) => !now.has(key)).map(([, definition]) => definition);
  const added = [...now].filter(([key]) => !old.has(key)).map(([, definition]) => definition);
  for (const gone of removed) {
    const fits = added
      .filter(
        (candidate) =>
          candidate.kind === gone.kind && candidate.owner === gone.owner && candidate.params === gone.params,
      )
      .sort((a, b) => Math.abs(a.line - gone.line) - Math.abs(b.line - gone.line));
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
        after: renamed,
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
      after: definition,
    });
  const lineOfChange = (change: SignatureChange) => (change.after ?? change.before)?.line ?? 0;
  return changes.sort((a, b) => lineOfChange(a) - lineOfChange(b));
}

/** A definition as shown: `name(a, b)`; a class with its bases. */
export function signature(definition: Definition): string {
  const params = definition.params.replace(/,/g, ", ").replace(/(?<!:):(?!:)/g, ": ");
  return definition.kind === "class" && !params ? qualified(definition) : `${qualified(definition)}(${params})`;
}

/** One line describing a change, e.g. `normalize(value) → normalize(value, sep)`. */
export function describeChange(change: SignatureChange): string {
  const sig = (definition: Definition | undefined) => (definition ? signature(definition) : "");
  switch (change.change) {
    case "params":
      return `parameters changed: ${sig(change.before)} → ${sig(change.after)}`;
    case "renamed":
      return `renamed: ${sig(change.before)} → ${sig(change.after)}`;
    case "removed":
      return `removed: ${sig(change.before)}`;
    case "added":
      return `added: ${sig(change.after)}`;
  }
}
