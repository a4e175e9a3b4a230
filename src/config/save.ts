// Saving one key into a config file: the loader's own validator first, every other key (known or not)
// kept as it was, and an atomic replace so that concurrent saves never leave a broken file. Saves of the
// same file from several processes (two pi sessions) take turns under a lock, so none loses another's key;
// waiting for the lock is asynchronous, so pi's event loop (its UI, other sessions' work) never stops for it.
import { existsSync, mkdirSync, readFileSync, renameSync, rmdirSync, statSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { CONFIG_KEYS, type ConfigKey } from "./keys.ts";
import { isPlainObject } from "./load.ts";

export type SaveResult = { ok: true; path: string } | { ok: false; error: string };

export async function saveConfigValue(path: string, name: ConfigKey, raw: unknown): Promise<SaveResult> {
  const parsed = CONFIG_KEYS[name].type.parse(raw);
  if (!parsed.ok) return { ok: false, error: `${name}: ${parsed.error}` };
  mkdirSync(dirname(path), { recursive: true });
  return withFileLock(path, () => replaceKey(path, name, parsed.value));
}

/** How long a save waits for another process's save of the same file, and when a lock counts as left behind. */
const LOCK_WAIT_MS = 5_000;
const LOCK_STALE_MS = 10_000;

/**
 * A directory next to the file as the lock: mkdir is atomic, and a saver that died leaves only a stale one.
 * While another process holds it, this retries every few milliseconds on a timer, not in a blocking wait.
 * The work itself is synchronous, so no other save in this process can run between taking and leaving it.
 */
async function withFileLock(path: string, work: () => SaveResult): Promise<SaveResult> {
  const lock = `${path}.lock`;
  const deadline = Date.now() + LOCK_WAIT_MS;
  for (;;) {
    try {
      mkdirSync(lock);
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") {
        return { ok: false, error: `cannot save ${path}: ${(error as Error).message}` };
      }
      if (isStale(lock)) continue;
      if (Date.now() > deadline) return { ok: false, error: `${path} is being saved by another process; try again` };
      await sleep(5 + Math.random() * 20);
    }
  }
  try {
    return work();
  } finally {
    rmdirSync(lock);
  }
}

function isStale(lock: string): boolean {
  try {
    if (Date.now() - statSync(lock).mtimeMs < LOCK_STALE_MS) return false;
    rmdirSync(lock);
    return true;
  } catch {
    return true; // gone meanwhile: try again
  }
}

function replaceKey(path: string, name: ConfigKey, value: unknown): SaveResult {
  let data: Record<string, unknown> = {};
  if (existsSync(path)) {
    let existing: unknown;
    try {
      existing = JSON.parse(readFileSync(path, "utf8"));
    } catch (error) {
      return { ok: false, error: `${path} is not valid JSON (${(error as Error).message}); fix it before saving` };
    }
    if (!isPlainObject(existing)) return { ok: false, error: `${path} does not hold a JSON object; not saved` };
    data = existing;
  }
  setKey(data, name, value);
  const temp = `${path}.${process.pid}.${Date.now()}.${Math.random().toString(36).slice(2)}.tmp`;
  writeFileSync(temp, `${JSON.stringify(data, null, 2)}\n`);
  renameSync(temp, path);
  return { ok: true, path };
}

/** Writes where the file already keeps the key (flat "a.b" or nested {a:{b}}); new keys go nested. */
function setKey(data: Record<string, unknown>, name: string, value: unknown): void {
  if (Object.hasOwn(data, name)) {
    data[name] = value;
    return;
  }
  const parts = name.split(".");
  let node = data;
  for (const part of parts.slice(0, -1)) {
    if (!isPlainObject(node[part])) node[part] = {};
    node = node[part] as Record<string, unknown>;
  }
  node[parts[parts.length - 1] as string] = value;
}
