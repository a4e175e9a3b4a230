// A `cgc watch` the user (or another pi) runs on this workspace writes the graph beside pi-cgc: on a server
// backend nothing keeps it out, it stamps the graph only at its first scan, and what it writes differs
// from a full index (ADR 0010). pi-cgc cannot tell its writes apart, so while one runs the graph is never
// called fresh, and after it the engine rewrites every file's links (ADR 0011, "Other writers").
// Found by reading /proc (Linux): each process's argument list and working directory. Elsewhere, or where
// /proc says nothing (another user's process), none is found. cgc's MCP server can also watch a directory
// (its `watch_directory` tool) inside `cgc mcp start`: no argument list shows that, so it is not found.
import { readdirSync, readFileSync, readlinkSync } from "node:fs";
import { basename, resolve } from "node:path";
import { canonical, isWithin } from "../workspace/root.ts";
import { liveGroups } from "./children.ts";

export interface OtherWatcher {
  pid: number;
  /** The directory it watches, absolute and canonical. */
  dir: string;
}

/** cgc's watch commands (`cgc watch [PATH]` and its shortcut `cgc w`) and the options they take. */
const WATCH_COMMANDS = new Set(["watch", "w"]);
const OPTIONS_WITH_VALUE = new Set(["--context", "-c"]);
const CGC_PROGRAMS = new Set(["cgc", "codegraphcontext"]);

/**
 * The directory a process's argument list watches, if it is a cgc watch: the console script (`…/python
 * …/bin/cgc watch .`, as /proc shows the installed entry point) or `python -m codegraphcontext watch`.
 * A relative path is resolved against the process's working directory.
 */
export function watchedDirOf(argv: readonly string[], cwd: string): string | undefined {
  let at = argv.findIndex(
    (arg, i) => CGC_PROGRAMS.has(basename(arg)) || (arg === "-m" && argv[i + 1] === "codegraphcontext"),
  );
  if (at < 0) return undefined;
  if (argv[at] === "-m") at += 1;
  const command = argv[at + 1];
  if (command === undefined || !WATCH_COMMANDS.has(command)) return undefined;
  for (let i = at + 2; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (OPTIONS_WITH_VALUE.has(arg)) i += 1;
    else if (!arg.startsWith("-")) return resolve(cwd, arg);
  }
  return resolve(cwd, ".");
}

/** Whether a watcher of `dir` sees files of `root`: the same tree, one inside the other. */
export function watchesRoot(dir: string, root: string): boolean {
  return isWithin(dir, root) || isWithin(root, dir);
}

/** The process group of `pid` (field 5 of /proc/<pid>/stat). */
function groupOf(pid: number): number | undefined {
  try {
    // The command name (field 2) is in parentheses and may hold spaces: the fields after its last ")".
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[2]);
  } catch {
    return undefined;
  }
}

/** The cgc watchers other than pi-cgc's own that see files of `root`. */
export function otherWatchersOf(root: string): OtherWatcher[] {
  let entries: string[];
  try {
    entries = readdirSync("/proc");
  } catch {
    return [];
  }
  const found: OtherWatcher[] = [];
  const own = new Set(liveGroups());
  for (const entry of entries) {
    const pid = Number(entry);
    if (!Number.isInteger(pid) || pid <= 0 || pid === process.pid) continue;
    try {
      const argv = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").filter(Boolean);
      if (!argv.some((arg) => WATCH_COMMANDS.has(arg))) continue;
      const dir = watchedDirOf(argv, readlinkSync(`/proc/${pid}/cwd`));
      if (dir === undefined) continue;
      const watched = canonical(dir);
      // pi-cgc's own watcher leads a process group of this process's cgc children (children.ts).
      if (watchesRoot(watched, root) && !own.has(groupOf(pid) ?? -1)) found.push({ pid, dir: watched });
    } catch {
      // Gone meanwhile, or another user's: it says nothing here.
    }
  }
  return found;
}

/** One line naming them, for /cgc status and the answer of a sync or update made while they run. */
export function describeOtherWatchers(watchers: readonly OtherWatcher[]): string {
  const which = watchers.map(({ pid, dir }) => `pid ${pid} on ${dir}`).join(", ");
  return (
    `a cgc watch outside pi-cgc (${which}) writes this graph, and cgc's watcher leaves it different from a ` +
    "full index; pi-cgc calls it fresh again once that watcher has stopped and the graph is brought up to date"
  );
}
