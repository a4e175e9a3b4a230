// Reading git's own files (HEAD, refs, the worktree gitfile) without spawning git: cheap enough for
// session start and every prompt.
import { readFileSync, statSync } from "node:fs";
import { isAbsolute, join, resolve } from "node:path";

export interface GitDirs {
  /** This checkout's git dir (`.git`, or `<common>/worktrees/<id>` for a linked worktree). */
  gitDir: string;
  /** The repository's shared dir (refs, objects). */
  commonDir: string;
  /** Set for a linked worktree: its id under `<common>/worktrees/`. */
  worktreeId?: string;
}

export type GitDirsResult = { ok: true; value: GitDirs } | { ok: false; error: string } | { ok: false; notGit: true };

export function readGitDirs(root: string): GitDirsResult {
  const dotGit = join(root, ".git");
  let isDir: boolean;
  try {
    isDir = statSync(dotGit).isDirectory();
  } catch {
    return { ok: false, notGit: true };
  }
  if (isDir) return { ok: true, value: { gitDir: dotGit, commonDir: dotGit } };
  const pointer = /^gitdir:\s*(.+?)\s*$/m.exec(readText(dotGit) ?? "")?.[1];
  if (!pointer) return { ok: false, error: `${dotGit} is a file without a "gitdir:" line` };
  const gitDir = isAbsolute(pointer) ? pointer : resolve(root, pointer);
  const id = /[/\\]worktrees[/\\]([^/\\]+)[/\\]?$/.exec(gitDir)?.[1];
  const common = readText(join(gitDir, "commondir"))?.trim();
  if (!common) {
    const isGitDir = readText(join(gitDir, "HEAD")) !== undefined;
    // A submodule or `--separate-git-dir` checkout: its own repository, shared with nobody.
    if (isGitDir && !id) return { ok: true, value: { gitDir, commonDir: gitDir } };
    const why = isGitDir ? "has no commondir file" : "is not a git directory";
    return { ok: false, error: `${dotGit} points to ${gitDir}, which ${why}` };
  }
  const commonDir = isAbsolute(common) ? common : resolve(gitDir, common);
  return { ok: true, value: { gitDir, commonDir, worktreeId: id } };
}

/** The commit HEAD points at, or undefined (unborn branch, unreadable refs, not a repository). */
export function readHeadCommit(root: string): string | undefined {
  const dirs = readGitDirs(root);
  if (!dirs.ok) return undefined;
  const head = readText(join(dirs.value.gitDir, "HEAD"))?.trim();
  if (!head) return undefined;
  if (/^[0-9a-f]{40}$/.test(head)) return head;
  const ref = /^ref:\s*(\S+)$/.exec(head)?.[1];
  if (!ref) return undefined;
  for (const dir of [dirs.value.gitDir, dirs.value.commonDir]) {
    const loose = readText(join(dir, ref))?.trim();
    if (loose && /^[0-9a-f]{40}$/.test(loose)) return loose;
  }
  const packed = readText(join(dirs.value.commonDir, "packed-refs")) ?? "";
  for (const line of packed.split("\n")) {
    const [sha, name] = line.trim().split(" ");
    if (name === ref && sha && /^[0-9a-f]{40}$/.test(sha)) return sha;
  }
  return undefined;
}

function readText(path: string): string | undefined {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return undefined;
  }
}
