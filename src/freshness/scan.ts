// The cheap check for changes the session did not see directly (bash commands, editors outside pi,
// a moved HEAD): source files whose modification time is newer than a moment. Reads the file system
// only, skipping the folders cgc itself ignores by default.
import { type Dirent, readdirSync, statSync } from "node:fs";
import { extname, join } from "node:path";

/** cgc 0.6.13's default IGNORE_DIRS, plus hidden folders (IGNORE_HIDDEN_FILES=true). */
const IGNORED_DIRS = new Set([
  "node_modules",
  "venv",
  ".venv",
  "env",
  ".env",
  "dist",
  "build",
  "target",
  "out",
  ".git",
  ".idea",
  ".vscode",
  "__pycache__",
]);

/** Extensions cgc parses (its doctor lists the languages). */
export const SOURCE_EXTENSIONS = new Set(
  (
    ".py .ipynb .js .jsx .mjs .cjs .ts .mts .cts .tsx .go .rs .c .h .cc .cpp .hpp .hh .java .rb .cs .php .kt .kts " +
    ".scala .sc .swift .hs .dart .pl .pm .lua .ex .exs .el .html .css .sol .svelte .vue .tf .hcl .gradle"
  ).split(" "),
);

export function isSourcePath(path: string): boolean {
  return SOURCE_EXTENSIONS.has(extname(path).toLowerCase());
}

export interface ScanResult {
  changed: string[];
  scanned: number;
}

/** Source files under `root` modified after `sinceMs` (at most `limit` reported, all counted). */
export function changedSince(root: string, sinceMs: number, limit = 200): ScanResult {
  const changed: string[] = [];
  let scanned = 0;
  const stack = [root];
  while (stack.length > 0) {
    const dir = stack.pop() as string;
    let entries: Dirent[];
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      continue;
    }
    for (const entry of entries) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) {
        if (!IGNORED_DIRS.has(entry.name) && !entry.name.startsWith(".")) stack.push(path);
      } else if (entry.isFile() && isSourcePath(entry.name) && !entry.name.startsWith(".")) {
        scanned++;
        let mtime: number;
        try {
          mtime = statSync(path).mtimeMs;
        } catch {
          continue;
        }
        if (mtime > sinceMs && changed.length < limit) changed.push(path);
      }
    }
  }
  return { changed, scanned };
}
