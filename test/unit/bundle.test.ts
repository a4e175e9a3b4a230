// pi loads pi-cgc from extensions/pi-cgc/ (package.json "pi.extensions"), and it is committed: pi installs a package from
// git with `npm install --omit=dev`, which leaves esbuild out, so a clone must hold the bundle already. This
// builds the committed source afresh (`git archive HEAD`) and compares it, file by file, with the committed
// bundle: a commit that changed src/ without the rebuilt extensions/ (or without its new chunk files) fails here.
import { execFileSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { EXTENSION_ENTRY, PROJECT_ROOT } from "../helpers/cgc-env.ts";

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function filesOf(dir: string): Map<string, string> {
  const files = new Map<string, string>();
  const walk = (at: string) => {
    for (const entry of readdirSync(at, { withFileTypes: true })) {
      const path = join(at, entry.name);
      if (entry.isDirectory()) walk(path);
      else files.set(relative(dir, path), readFileSync(path, "utf8"));
    }
  };
  walk(dir);
  return files;
}

describe("the committed bundle", () => {
  it("is what pi loads", () => {
    expect(relative(PROJECT_ROOT, EXTENSION_ENTRY)).toBe(join("extensions", "pi-cgc", "index.js"));
  });

  it("is the committed source, built", () => {
    const work = mkdtempSync(join(tmpdir(), "pi-cgc-bundle-"));
    dirs.push(work);
    const archive = execFileSync("git", ["archive", "HEAD", "--", "src", "scripts", "package.json", "extensions"], {
      cwd: PROJECT_ROOT,
      maxBuffer: 64 * 1024 * 1024,
    });
    execFileSync("tar", ["-x", "-C", work], { input: archive });
    symlinkSync(join(PROJECT_ROOT, "node_modules"), join(work, "node_modules"));
    renameSync(join(work, "extensions"), join(work, "committed"));
    execFileSync(process.execPath, [join(work, "scripts", "build.mjs")], { cwd: work, stdio: "pipe" });

    const committed = filesOf(join(work, "committed"));
    const built = filesOf(join(work, "extensions"));
    expect([...committed.keys()].sort()).toEqual([...built.keys()].sort());
    for (const [path, text] of built) expect(committed.get(path), `extensions/${path}`).toBe(text);
  });
});
