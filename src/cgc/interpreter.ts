// cgc's own Python: the interpreter named by the cgc executable's launcher line (pip and pipx write
// `#!/path/to/python`, or for long paths a `#!/bin/sh` line followed by `'''exec' "/path/to/python" …`).
// pi-cgc's engine runs with it, so it imports the very library the cgc command runs on.
import { accessSync, closeSync, constants, existsSync, openSync, readdirSync, readFileSync, readSync } from "node:fs";
import { basename, delimiter, dirname, isAbsolute, join } from "node:path";

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

/**
 * The version `cgc --version` prints (cgc reads it with importlib.metadata), read from the package metadata
 * in the virtual environment of cgc's interpreter (pip, pipx and uv install cgc in one) without starting
 * Python, which costs about a second of CPU at every session start. Undefined when the metadata does not say
 * it with certainty: an interpreter outside a virtual environment (its search path is Python's to tell), or
 * not exactly one installed version. The caller then asks cgc.
 */
export function installedCgcVersion(executable: string, env: NodeJS.ProcessEnv): string | undefined {
  const interpreter = cgcInterpreter(executable, env);
  if (!interpreter.ok) return undefined;
  const bin = dirname(interpreter.python);
  const venv = dirname(bin);
  if (basename(bin) !== "bin" || !existsSync(join(venv, "pyvenv.cfg"))) return undefined;
  const versions = new Set<string>();
  for (const lib of ["lib", "lib64"]) {
    for (const python of entries(join(venv, lib)).filter((name) => /^python3\.\d+$/.test(name))) {
      const sitePackages = join(venv, lib, python, "site-packages");
      for (const name of entries(sitePackages).filter((entry) => DIST_INFO.test(entry))) {
        const version = metadataVersion(join(sitePackages, name, "METADATA"));
        if (version === undefined) return undefined;
        versions.add(version);
      }
    }
  }
  return versions.size === 1 ? [...versions][0] : undefined;
}

/** codegraphcontext's distribution folder, under its normalized names. */
const DIST_INFO = /^codegraphcontext-[^-]+\.dist-info$/i;

function entries(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}

function metadataVersion(path: string): string | undefined {
  try {
    return /^Version:[ \t]*(\S+)[ \t]*$/m.exec(readFileSync(path, "utf8"))?.[1];
  } catch {
    return undefined;
  }
}
