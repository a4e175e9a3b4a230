// cgc's own Python, from the launcher lines pip and pipx really write (the short form, and the `/bin/sh`
// form pip uses when the interpreter's path is too long for a shebang).
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { cgcInterpreter, installedCgcVersion } from "../../src/cgc/interpreter.ts";
import { parseVersion } from "../../src/cgc/parse.ts";
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

describe("cgc's installed version, from its package metadata", () => {
  /** A virtual environment with a cgc launcher and codegraphcontext's metadata at each of `versions`. */
  function venv(versions: Array<[python: string, version: string]>, options: { pyvenvCfg?: boolean } = {}): string {
    const dir = mkdtempSync(join(tmpdir(), "pi-cgc-venv-"));
    dirs.push(dir);
    mkdirSync(join(dir, "bin"));
    const python = join(dir, "bin", "python");
    writeFileSync(python, "");
    chmodSync(python, 0o755);
    if (options.pyvenvCfg !== false) writeFileSync(join(dir, "pyvenv.cfg"), "home = /usr/bin\n");
    for (const [pythonDir, version] of versions) {
      const info = join(dir, "lib", pythonDir, "site-packages", `codegraphcontext-${version}.dist-info`);
      mkdirSync(info, { recursive: true });
      writeFileSync(
        join(info, "METADATA"),
        `Metadata-Version: 2.4\nName: codegraphcontext\nVersion: ${version}\n\nVersion: 9.9.9\n`,
      );
    }
    const cgc = join(dir, "bin", "cgc");
    writeFileSync(cgc, `#!${python}\nimport sys\n`);
    chmodSync(cgc, 0o755);
    return cgc;
  }

  it("is what `cgc --version` prints for the project's cgc (the recorded capture)", () => {
    const fixture = JSON.parse(readFileSync(join(PROJECT_ROOT, "test/fixtures/cgc/version.json"), "utf8"));
    const printed = parseVersion(`${fixture.stderr ?? ""}\n${fixture.stdout ?? ""}`);
    expect(printed.kind).toBe("ok");
    expect(installedCgcVersion(cgcBinary(), process.env)).toBe(printed.kind === "ok" ? printed.value.version : "");
  });

  it("reads the metadata's Version field in a virtual environment", () => {
    expect(installedCgcVersion(venv([["python3.12", "1.2.3"]]), {})).toBe("1.2.3");
  });

  it("is unknown (cgc is asked) outside a virtual environment, with two installed versions, or none", () => {
    expect(installedCgcVersion(venv([["python3.12", "1.2.3"]], { pyvenvCfg: false }), {})).toBeUndefined();
    expect(
      installedCgcVersion(
        venv([
          ["python3.11", "1.2.3"],
          ["python3.12", "1.3.0"],
        ]),
        {},
      ),
    ).toBeUndefined();
    expect(installedCgcVersion(venv([]), {})).toBeUndefined();
    expect(installedCgcVersion(launcher("#!/bin/sh\nexec true\n"), {})).toBeUndefined();
    expect(installedCgcVersion("cgc", { PATH: "/nonexistent" })).toBeUndefined();
  });
});
