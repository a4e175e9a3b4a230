// The user's own cgc configuration: ~/.codegraphcontext (HOME as the cgc child sees it), and the .env file in it
// that cgc reads after the environment (python-dotenv's syntax, as far as pi-cgc reads it).
import { readFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";

/** ~/.codegraphcontext of a cgc child with `env` (its HOME, else this process's home). */
export function cgcConfigDir(env: NodeJS.ProcessEnv, homeDir?: string): string {
  return join(homeDir ?? (env.HOME || homedir()), ".codegraphcontext");
}

/** The path of the user's cgc .env. */
export function cgcDotEnvPath(env: NodeJS.ProcessEnv, homeDir?: string): string {
  return join(cgcConfigDir(env, homeDir), ".env");
}

/** The variables of the user's cgc .env (empty when there is none). */
export function readCgcDotEnv(env: NodeJS.ProcessEnv, homeDir?: string): Record<string, string> {
  let text: string;
  try {
    text = readFileSync(cgcDotEnvPath(env, homeDir), "utf8");
  } catch {
    return {};
  }
  const values: Record<string, string> = {};
  for (const line of text.split("\n")) {
    const match = /^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*?)\s*$/.exec(line);
    if (!match?.[1]) continue;
    values[match[1]] = (match[2] ?? "").replace(/^(['"])(.*)\1$/, "$2");
  }
  return values;
}
