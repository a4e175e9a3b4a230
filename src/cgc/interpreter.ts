// cgc's own Python: the interpreter named by the cgc executable's launcher line (pip and pipx write
// `#!/path/to/python`, or for long paths a `#!/bin/sh` line followed by `'''exec' "/path/to/python" …`).
// pi-cgc's engine runs with it, so it imports the very library the cgc command runs on.
import { accessSync, closeSync, constants, openSync, readSync } from "node:fs";
import { delimiter, isAbsolute, join } from "node:path";

export type Interpreter = { ok: true; python: string } | { ok: false; reason: string };

export function cgcInterpreter(executable: string, env: NodeJS.ProcessEnv): Interpreter {
  const path = locate(executable, env);
  if (!path) return { ok: false, reason: `${executable} is not on PATH` };
  let head: string;
  try {
    const fd = openSync(path, "r");
    const buffer = Buffer.alloc(1024);
    const read = readSync(fd, buffer, 0, buffer.length, 0);
    closeSync(fd);
    head = buffer.subarray(0, read).toString("utf8");
  } catch (error) {
    return { ok: false, reason: `cannot read ${path}: ${(error as Error).message}` };
  }
  const [first = "", second = ""] = head.split("\n");
  const shebang = /^#!\s*(\S+)/.exec(first)?.[1];
  const python = shebang?.endsWith("/sh") ? /^'''exec' "?([^"\s]+)"?/.exec(second)?.[1] : shebang;
  if (!python || !/python[\d.]*$/.test(python)) {
    return {
      ok: false,
      reason: `${path} is not a Python launcher (its first line is ${JSON.stringify(first.slice(0, 80))})`,
    };
  }
  return executableFile(python) ? { ok: true, python } : { ok: false, reason: `cgc's Python ${python} cannot be run` };
}

function locate(executable: string, env: NodeJS.ProcessEnv): string | undefined {
  if (executable.includes("/")) return executableFile(executable) ? executable : undefined;
  for (const dir of (env.PATH ?? "").split(delimiter)) {
    if (!dir || !isAbsolute(dir)) continue;
    const candidate = join(dir, executable);
    if (executableFile(candidate)) return candidate;
  }
  return undefined;
}

function executableFile(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}
