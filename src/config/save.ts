// Saving one key into a config file: the loader's own validator first, every other key (known or not)
// kept as it was, and an atomic replace so that concurrent saves never leave a broken file.
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { CONFIG_KEYS, type ConfigKey } from "./keys.ts";
import { isPlainObject } from "./load.ts";

export type SaveResult = { ok: true; path: string } | { ok: false; error: string };

export function saveConfigValue(path: string, name: ConfigKey, raw: unknown): SaveResult {
  const parsed = CONFIG_KEYS[name].type.parse(raw);
  if (!parsed.ok) return { ok: false, error: `${name}: ${parsed.error}` };

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
  setKey(data, name, parsed.value);
  mkdirSync(dirname(path), { recursive: true });
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
