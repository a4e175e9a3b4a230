// Linked git worktrees (ADR 0008): which worktree a folder belongs to, read from git's own files without
// spawning; the CGC named context each worktree gets; and pi-cgc's record of which worktree owns which
// context. The record lives in pi's agent directory, never in the user's repository.
import { createHash } from "node:crypto";
import { existsSync, linkSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { readGitDirs } from "./git.ts";
import { canonical, gitToplevel } from "./root.ts";

/** What makes a worktree itself: the repository it belongs to and its id there. Its path can change. */
export interface WorktreeIdentity {
  /** The repository's shared git dir, symlinks resolved. */
  commonDir: string;
  /** The worktree's directory name under `<commonDir>/worktrees/`. */
  worktreeId: string;
}

export type WorktreeInfo =
  | { kind: "not-git" }
  | { kind: "main"; root: string }
  | { kind: "linked"; root: string; identity: WorktreeIdentity }
  | { kind: "malformed"; root: string; error: string };

export function detectWorktree(cwd: string): WorktreeInfo {
  const root = gitToplevel(cwd);
  if (!root) return { kind: "not-git" };
  const dirs = readGitDirs(root);
  if (!dirs.ok) return "notGit" in dirs ? { kind: "not-git" } : { kind: "malformed", root, error: dirs.error };
  const { commonDir, worktreeId } = dirs.value;
  if (!worktreeId) return { kind: "main", root };
  return { kind: "linked", root, identity: { commonDir: canonical(commonDir), worktreeId } };
}

/**
 * `wt-<id>-<hash>`. The slug keeps the name readable and safe as a directory name under cgc's home on any
 * file system (lower case, [a-z0-9._-]); the hash of the whole identity keeps two worktrees from ever
 * sharing a name — ids are per repository ("feature" exists in many), and slugging can merge ids.
 * At most 44 characters: cgc_contexts accepts up to 64.
 */
export function contextNameFor(identity: WorktreeIdentity): string {
  const slug =
    identity.worktreeId
      .toLowerCase()
      .replace(/[^a-z0-9._-]+/g, "-")
      .replace(/[-._]*[-.][-._]*/g, (run) => (run === "." || run === "_" ? run : "-"))
      .replace(/^[-.]+|[-.]+$/g, "")
      .slice(0, 32)
      .replace(/[-.]+$/, "") || "worktree";
  const hash = createHash("sha256").update(`${identity.commonDir}\0${identity.worktreeId}`).digest("hex");
  return `wt-${slug}-${hash.slice(0, 8)}`;
}

export function sameIdentity(a: WorktreeIdentity, b: WorktreeIdentity): boolean {
  return a.commonDir === b.commonDir && a.worktreeId === b.worktreeId;
}

/** Whether git still knows the worktree (`git worktree prune` removes its admin dir). */
export function worktreeExists(identity: WorktreeIdentity): boolean {
  return existsSync(join(identity.commonDir, "worktrees", identity.worktreeId));
}

// ---------------------------------------------------------------------------------------------------
// The record: one file per context, `<agent dir>/cgc-worktrees/<context>.json`, naming the worktree it was
// created for. One file each, so sessions in two worktrees never overwrite each other's entries.

export interface ContextRecord extends WorktreeIdentity {
  /** The worktree's root when pi-cgc last worked in it. */
  path: string;
  createdAt: string;
  /** Set once the "worktree is gone" notice was shown, so it is shown once. */
  orphanNoticeAt?: string;
}

export function worktreeRecordDir(agentDir: string): string {
  return join(agentDir, "cgc-worktrees");
}

export type RecordRead = { ok: true; record?: ContextRecord } | { ok: false; error: string };

export function readRecord(dir: string, name: string): RecordRead {
  const path = join(dir, `${name}.json`);
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return { ok: true };
    return { ok: false, error: `${path} cannot be read: ${(error as Error).message}` };
  }
  try {
    const record = JSON.parse(text) as unknown;
    return isRecord(record) ? { ok: true, record } : { ok: false, error: `${path} is not a complete pi-cgc record` };
  } catch (error) {
    return { ok: false, error: `${path} is not valid JSON (${(error as Error).message})` };
  }
}

/** Every readable record; unreadable ones are left out (and never overwritten). */
export function readRecords(dir: string): Map<string, ContextRecord> {
  const records = new Map<string, ContextRecord>();
  let files: string[];
  try {
    files = readdirSync(dir);
  } catch {
    return records;
  }
  for (const file of files) {
    if (!file.endsWith(".json")) continue;
    const name = file.slice(0, -5);
    const read = readRecord(dir, name);
    if (read.ok && read.record) records.set(name, read.record);
  }
  return records;
}

function isRecord(value: unknown): value is ContextRecord {
  const record = value as Partial<ContextRecord> | null;
  return (
    typeof record === "object" &&
    record !== null &&
    typeof record.commonDir === "string" &&
    typeof record.worktreeId === "string" &&
    typeof record.path === "string" &&
    typeof record.createdAt === "string"
  );
}

export type RecordWrite = { ok: true } | { ok: false; error: string; taken?: ContextRecord };

/**
 * Writes aside, then links (`claim`: fails when a record exists, so two claimants cannot both win) or
 * renames (an update) into place: a reader sees a whole record or none, never half of one.
 */
export function writeRecord(dir: string, name: string, record: ContextRecord, claim = false): RecordWrite {
  const path = join(dir, `${name}.json`);
  const aside = `${path}.${process.pid}.${Date.now()}.tmp`;
  try {
    mkdirSync(dir, { recursive: true });
    writeFileSync(aside, `${JSON.stringify(record, null, 2)}\n`, { mode: 0o600 });
    if (claim) claimPath(aside, path);
    else renameSync(aside, path);
    return { ok: true };
  } catch (error) {
    if (claim && (error as NodeJS.ErrnoException).code === "EEXIST") {
      const existing = readRecord(dir, name);
      if (existing.ok && existing.record && sameIdentity(existing.record, record)) return { ok: true };
      return existing.ok
        ? { ok: false, error: `${path} was just written for another worktree`, taken: existing.record }
        : existing;
    }
    return { ok: false, error: `${path} could not be written: ${(error as Error).message}` };
  } finally {
    removeAside(aside);
  }
}

/** The temporary file goes whatever happened; a folder that is not one (ENOTDIR) holds none to remove. */
function removeAside(aside: string): void {
  try {
    rmSync(aside, { force: true });
  } catch {
    // nothing was written there
  }
}

/** An exclusive, whole-file create: a hard link, or where the file system has none, an exclusive open. */
function claimPath(aside: string, path: string): void {
  try {
    linkSync(aside, path);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== "EPERM" && code !== "ENOTSUP" && code !== "ENOSYS") throw error;
    writeFileSync(path, readFileSync(aside), { flag: "wx", mode: 0o600 });
  }
}

export function removeRecord(dir: string, name: string): void {
  rmSync(join(dir, `${name}.json`), { force: true });
}

export type Ownership =
  | { kind: "recorded"; record: ContextRecord }
  | { kind: "unrecorded" }
  | { kind: "mismatch"; record: ContextRecord };

export function ownershipOf(record: ContextRecord | undefined, identity: WorktreeIdentity): Ownership {
  if (!record) return { kind: "unrecorded" };
  return sameIdentity(record, identity) ? { kind: "recorded", record } : { kind: "mismatch", record };
}

/** Recorded contexts whose worktree git no longer knows (pruned, or the repository is gone). */
export function orphanedContexts(records: ReadonlyMap<string, ContextRecord>): Array<[string, ContextRecord]> {
  return [...records].filter(([, record]) => !worktreeExists(record));
}

export function describeIdentity(identity: WorktreeIdentity, path?: string): string {
  return `worktree "${identity.worktreeId}" of ${identity.commonDir}${path ? ` (at ${path})` : ""}`;
}
