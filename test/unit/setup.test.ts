// `npm start` and `npm test` run scripts/setup.mjs every time, so a run with nothing missing must do no
// install work at all (and, measured, it takes milliseconds).
import { spawnSync } from "node:child_process";
import { resolve } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";

const ROOT = resolve(import.meta.dirname, "../..");
const setup = () =>
  spawnSync(process.execPath, [resolve(ROOT, "scripts", "setup.mjs")], { cwd: ROOT, encoding: "utf8" });

describe("scripts/setup.mjs", () => {
  beforeAll(() => {
    // Normally a no-op (npm test ran setup first); on a cold checkout this does the installs.
    const first = setup();
    expect(first.status, first.stdout + first.stderr).toBe(0);
  }, 900_000);

  it("does nothing but checks when everything is in place", () => {
    const again = setup();
    expect(again.status, again.stderr).toBe(0);
    expect(again.stdout).toMatch(/^\[setup\] nothing to do/m);
    expect(again.stdout).not.toMatch(/npm ci|npm install|pip|venv|fetching|built|installing|verified/);
    expect(again.stderr).toBe("");
  });
});
