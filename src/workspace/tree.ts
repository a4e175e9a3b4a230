// What the source tree holds, as stamps per file, and what changed between two looks at it. A stamp is
// size, modification time, status-change time and inode: `rm` and `mv` change the set of paths, and the
// status-change time moves on every write, rename or restore — also when a tool puts an old modification
// time back (`tar x`, `cp -p`, `rsync -t`, git) — so a comparison of stamps sees every kind of change that
// a modification time against a moment misses. File times come from a coarse kernel clock, so two writes
// a few milliseconds apart can share them: a file touched within RECENT_MS of a look also carries a hash
// of its content, and keeps it until its times move. Reads the file system only, and every file cgc's own
// discovery may index (a few more, never fewer: a file it misses would be a change no one sees).
import { createHash } from "node:crypto";
import { type Dirent, existsSync, readdirSync, readFileSync, type Stats, statSync } from "node:fs";
import { basename, dirname, extname, join, relative, sep } from "node:path";
import ignore from "ignore";
import { readCgcDotEnv } from "./cgc-config.ts";

/**
 * cgc 0.6.13's default IGNORE_DIRS, matched as cgc matches them: any folder of that name, in any case. Hidden
 * folders are walked: cgc's IGNORE_HIDDEN_FILES setting is read by nothing in its discovery, which indexes
 * `.github/`, `.pi/` and the like.
 */
const DEFAULT_IGNORED_DIRS: ReadonlySet<string> = new Set(
  "node_modules,venv,.venv,env,.env,dist,build,target,out,.git,.idea,.vscode,__pycache__".split(","),
);

/**
 * The folder names cgc's walk skips: its IGNORE_DIRS setting where cgc reads it (the environment, then
 * ~/.codegraphcontext/.env; a repository's own .env only in cgc's per-repo mode, not read here), else the default.
 */
export function cgcIgnoredDirs(env: NodeJS.ProcessEnv): ReadonlySet<string> {
  const setting = env.IGNORE_DIRS ?? readCgcDotEnv(env).IGNORE_DIRS;
  if (setting === undefined) return DEFAULT_IGNORED_DIRS;
  return new Set(
    setting
      .split(",")
      .map((name) => name.trim().toLowerCase())
      .filter(Boolean),
  );
}

/** Extensions cgc parses (its doctor lists the languages). */
const SOURCE_EXTENSIONS = new Set(
  (
    ".py .ipynb .js .jsx .mjs .cjs .ts .mts .cts .tsx .go .rs .c .h .cc .cpp .hpp .hh .java .rb .cs .php .kt .kts " +
    ".scala .sc .swift .hs .dart .pl .pm .lua .ex .exs .el .html .css .sol .svelte .vue .tf .hcl .gradle"
  ).split(" "),
);

/**
 * Files cgc 0.6.13 indexes without parsing (its discovery's _GENERIC_EXTENSIONS and _GENERIC_FILENAMES): each is
 * a File node, so creating, deleting or renaming one changes the graph.
 */
const GENERIC_EXTENSIONS = new Set(".toml .sh .yaml .yml .json .ini .cfg .md .txt .bat .ps1".split(" "));
const GENERIC_FILENAMES = new Set(["Dockerfile", "Makefile", ".gitignore", ".dockerignore", ".env"]);

/** A file cgc parses, by its extension (in its case: cgc matches `.py`, not `.PY`). */
export function isSourcePath(path: string): boolean {
  return SOURCE_EXTENSIONS.has(extname(path));
}

/** A file cgc's discovery may put in the graph, by its name: a source file or a generic one. */
export function isIndexedPath(path: string): boolean {
  const extension = extname(path);
  return SOURCE_EXTENSIONS.has(extension) || GENERIC_EXTENSIONS.has(extension) || GENERIC_FILENAMES.has(basename(path));
}

/**
 * The files at the workspace root whose lines decide what cgc indexes (cgc 0.6.13 reads both): a change to
 * one adds files to the graph or takes them out, though no source file changed.
 */
const IGNORE_FILES = new Set([".cgcignore", ".gitignore"]);

/** A path whose change can change the graph: a file cgc may index, or an ignore file at `root`. */
export function isTrackedPath(root: string, path: string): boolean {
  return isIndexedPath(path) || isIgnoreFile(root, path);
}

/** Absolute path → stamp. */
export type TreeSnapshot = Map<string, string>;

/** Times closer than this to a look cannot tell two writes apart. */
const RECENT_MS = 2_000;

/**
 * The stamp of one file now (undefined when it is gone or no longer a file). `previous` is its stamp at
 * the last look: a stamp that carried a content hash keeps carrying one while the times stay the same.
 */
export function stampPath(path: string, previous?: string): string | undefined {
  let stats: Stats;
  try {
    stats = statSync(path);
  } catch {
    return undefined;
  }
  if (!stats.isFile()) return undefined;
  const times = `${stats.size}:${stats.mtimeMs}:${stats.ctimeMs}:${stats.ino}`;
  const recent = Math.max(stats.mtimeMs, stats.ctimeMs) >= Date.now() - RECENT_MS;
  if (!recent && !previous?.startsWith(`${times}:`)) return times;
  try {
    return `${times}:${createHash("sha1").update(readFileSync(path)).digest("base64")}`;
  } catch {
    return undefined;
  }
}

/** Clock slack between Node's clock, file times and cgc's recorded UTC times on the same machine. */
export const CLOCK_SLACK_MS = 1_000;

/** The latest of a file's modification and status-change times; undefined when it is gone. */
export function lastTouched(path: string): number | undefined {
  try {
    const stats = statSync(path);
    return Math.max(stats.mtimeMs, stats.ctimeMs);
  } catch {
    return undefined;
  }
}

/** The latest of a stamp's modification and status-change times. */
export function stampTime(stamp: string): number {
  const [, mtime, ctime] = stamp.split(":");
  return Math.max(Number(mtime), Number(ctime));
}

/**
 * Every file under `root` cgc may index, and the root's ignore files, with its stamp (`previous`: the last look's,
 * see stampPath; `skippedDirs`: cgcIgnoredDirs).
 */
export function snapshotTree(
  root: string,
  previous?: TreeSnapshot,
  skippedDirs: ReadonlySet<string> = DEFAULT_IGNORED_DIRS,
): TreeSnapshot {
  const snapshot: TreeSnapshot = new Map();
  const ignored = ignoreRules(root);
  const stack: Array<[string, string]> = [[root, ""]];
  while (stack.length > 0) {
    const [dir, relativeDir] = stack.pop() as [string, string];
    let entries: Dirent[];
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      continue;
    }
    for (const entry of entries) {
      const path = join(dir, entry.name);
      const relativePath = relativeDir + entry.name;
      if (dir === root && entry.isFile() && IGNORE_FILES.has(entry.name)) {
        const stamp = stampPath(path, previous?.get(path));
        if (stamp !== undefined) snapshot.set(path, stamp);
        continue;
      }
      if (entry.isDirectory()) {
        if (!skippedDirs.has(entry.name.toLowerCase()) && !ignored?.(`${relativePath}/`))
          stack.push([path, `${relativePath}/`]);
      } else if (entry.isFile() && isIndexedPath(entry.name) && !ignored?.(relativePath)) {
        const stamp = stampPath(path, previous?.get(path));
        if (stamp !== undefined) snapshot.set(path, stamp);
      }
    }
  }
  return snapshot;
}

/**
 * Whether cgc's walk of `root` takes a file under it: by its name, the folders cgc skips, and its ignore rules
 * (see ignoreRules), read once for the returned test.
 */
export function walkedByCgc(
  root: string,
  skippedDirs: ReadonlySet<string> = DEFAULT_IGNORED_DIRS,
): (path: string) => boolean {
  const ignored = ignoreRules(root);
  return (path) => {
    const parts = relative(root, path).split(sep);
    if (parts[0] === ".." || !isIndexedPath(path)) return false;
    for (let depth = 1; depth < parts.length; depth++) {
      const folder = parts[depth - 1] as string;
      // cgc prunes a folder its rules match: nothing under it is looked at.
      if (skippedDirs.has(folder.toLowerCase()) || ignored?.(`${parts.slice(0, depth).join("/")}/`)) return false;
    }
    return !ignored?.(parts.join("/"));
  };
}

/** cgc 0.6.13's DEFAULT_IGNORE_PATTERNS, which it applies before the ignore files' own lines. */
const DEFAULT_PATTERNS = [
  ..."node_modules/ venv/ .venv/ env/ .env/ dist/ build/ target/ out/ obj/ .git/ __pycache__/".split(" "),
  ..."*.png *.jpg *.jpeg *.gif *.svg *.mp4 *.mp3 *.zip *.tar *.gz".split(" "),
];

/**
 * What cgc's ignore rules leave out of `root`'s graph, as a test of a path relative to `root` (a folder's ending
 * in `/`): its default patterns, then the lines of the first .gitignore and of the first .cgcignore found from
 * `root` up to the top of its git worktree (cgc reads one of each and matches them from `root`), the last match
 * deciding. Git's rules, which the `ignore` library implements, are what cgc's own matcher follows, but for a
 * negation: a `!` line can bring back, for cgc, a path under a folder git's rules leave out. With one among the
 * lines, undefined: nothing is left out here, since a file cgc indexes must never be.
 */
function ignoreRules(root: string): ((relativePath: string) => boolean) | undefined {
  const lines = [...DEFAULT_PATTERNS];
  for (const name of [".gitignore", ".cgcignore"]) {
    const found = nearestUpToWorktree(root, name);
    if (found === undefined) continue;
    try {
      lines.push(...readFileSync(found, "utf8").split("\n"));
    } catch {
      // Unreadable for us, perhaps for cgc too: nothing left out by it.
    }
  }
  const patterns = lines.map((line) => line.trim()).filter((line) => line !== "" && !line.startsWith("#"));
  if (patterns.some((line) => line.startsWith("!"))) return undefined;
  const key = patterns.join("\n");
  let test = knownRules.get(key);
  if (test === undefined) {
    const rules = ignore({ ignorecase: false }).add(patterns);
    test = (relativePath) => rules.ignores(relativePath);
    // The library keeps each path's answer: the same lines at the next check answer from memory.
    if (knownRules.size >= KNOWN_RULES_MAX) knownRules.delete(knownRules.keys().next().value as string);
    knownRules.set(key, test);
  }
  return test;
}

/** Rules by their lines (a few: one per workspace a process tracks). */
const knownRules = new Map<string, (relativePath: string) => boolean>();
const KNOWN_RULES_MAX = 8;

/** `name` in `root` or the nearest folder above it within its git worktree (none above `root` outside one). */
function nearestUpToWorktree(root: string, name: string): string | undefined {
  let top: string | undefined;
  for (let probe = root; ; probe = dirname(probe)) {
    if (existsSync(join(probe, ".git"))) {
      top = probe;
      break;
    }
    if (dirname(probe) === probe) break;
  }
  for (let dir = root; ; dir = dirname(dir)) {
    if (existsSync(join(dir, name))) return join(dir, name);
    if (top === undefined || dir === top || dirname(dir) === dir) return undefined;
  }
}

/** Paths created, changed or deleted between two snapshots, sorted. */
export function changedBetween(before: TreeSnapshot, after: TreeSnapshot): string[] {
  const changed: string[] = [];
  for (const [path, stamp] of after) if (before.get(path) !== stamp) changed.push(path);
  for (const path of before.keys()) if (!after.has(path)) changed.push(path);
  return changed.sort();
}

/** Whether `path` is one of the ignore files at `root` (see IGNORE_FILES). */
export function isIgnoreFile(root: string, path: string): boolean {
  return IGNORE_FILES.has(basename(path)) && dirname(path) === root;
}

/**
 * Indexed paths whose file was written, renamed or restored after `sinceMs` (a moment the graph was built at).
 * Not .cgcignore: cgc writes a default one during an index, after the time it records.
 */
export function touchedAfter(snapshot: TreeSnapshot, sinceMs: number): string[] {
  return [...snapshot]
    .filter(([path, stamp]) => isIndexedPath(path) && stampTime(stamp) > sinceMs)
    .map(([path]) => path)
    .sort();
}
