// From the session's cwd to the root the graph knows: an indexed ancestor, else the git toplevel,
// else the cwd itself. Reads the file system only; never spawns.
import { existsSync, realpathSync } from "node:fs";
import { dirname, isAbsolute, join, relative, resolve, sep } from "node:path";

export function canonical(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return resolve(path);
  }
}

/** The nearest directory at or above `cwd` holding `.git` (a directory, or a gitfile in a linked worktree). */
export function gitToplevel(cwd: string): string | undefined {
  let dir = canonical(cwd);
  for (;;) {
    if (existsSync(join(dir, ".git"))) return dir;
    const parent = dirname(dir);
    if (parent === dir) return undefined;
    dir = parent;
  }
}

/**
 * Whether `child` is `parent` or below it, by their paths (no links followed). A name that merely begins
 * with two dots (`..foo`) is inside; `..` and `../x` are not, nor is another drive (an absolute relative).
 */
export function isWithin(parent: string, child: string): boolean {
  const rel = relative(parent, child);
  return rel === "" || (rel !== ".." && !rel.startsWith(`..${sep}`) && !isAbsolute(rel));
}

/**
 * The workspace root. An indexed repository containing the cwd wins (the deepest one), so a session
 * started in a subfolder of an indexed tree finds it; otherwise the git toplevel; otherwise the cwd.
 * `printed` maps a real path to the form the graph's answer shows it in (cgc's CLI output drops
 * `[tag]` segments as Rich markup), so `app/[id]` still matches.
 */
export function resolveWorkspaceRoot(
  cwd: string,
  indexedPaths: readonly string[] = [],
  printed: (path: string) => string = (path) => path,
): string {
  const here = canonical(cwd);
  const known = new Set(indexedPaths);
  for (let dir = here; ; dir = dirname(dir)) {
    if (known.has(dir) || known.has(printed(dir))) return dir;
    if (dirname(dir) === dir) break;
  }
  return gitToplevel(here) ?? here;
}
