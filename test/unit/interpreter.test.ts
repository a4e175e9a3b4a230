// cgc's own Python, from the launcher lines pip and pipx really write (the short form, and the `/bin/sh`
// form pip uses when the interpreter's path is too long for a shebang).
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { cgcInterpreter } from "../../src/cgc/interpreter.ts";
import { cgcBinary, PROJECT_ROOT } from "../helpers/cgc-env.ts";

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function launcher(text: string): string {
  const dir = mkdtempSync(join(tmpdir(), "pi-cgc-launcher-"));
  dirs.push(dir);
  const path = join(dir, "cgc");
  writeFileSync(path, text);
  chmodSync(path, 0o755);
  return path;
}

describe("cgc's interpreter", () => {
  it("is the project venv's Python for the project's cgc", () => {
    expect(cgcInterpreter(cgcBinary(), process.env)).toEqual({
      ok: true,
      python: join(PROJECT_ROOT, ".venv", "bin", "python"),
    });
  });

  it("is found on PATH by name", () => {
    const env = { PATH: `/nonexistent:${join(PROJECT_ROOT, ".venv", "bin")}` };
    expect(cgcInterpreter("cgc", env)).toEqual({ ok: true, python: join(PROJECT_ROOT, ".venv", "bin", "python") });
  });

  it("reads pip's /bin/sh form for long interpreter paths", () => {
    const python = join(PROJECT_ROOT, ".venv", "bin", "python");
    const path = launcher(`#!/bin/sh\n'''exec' "${python}" "$0" "$@"\n' '''\nimport sys\n`);
    expect(cgcInterpreter(path, {})).toEqual({ ok: true, python });
  });

  it("says why for a launcher that is not Python, or a cgc that is not there", () => {
    expect(cgcInterpreter(launcher("#!/bin/sh\nexec true\n"), {})).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/is not a Python launcher/),
    });
    expect(cgcInterpreter("cgc", { PATH: "/nonexistent" })).toEqual({ ok: false, reason: "cgc is not on PATH" });
  });
});
