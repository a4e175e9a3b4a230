// Readiness at session start, with the real pi (SDK, faux model) and the real cgc in an isolated home.
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { type CgcHome, cgcBinary, cgcExec, makeCgcHome } from "../helpers/cgc-env.ts";
import { type PiHarness, recordingUi, startPi, waitFor } from "../helpers/pi-sdk.ts";
import { tinyRepo } from "../helpers/repos.ts";

let home: CgcHome;
const harnesses: PiHarness[] = [];

beforeAll(() => {
  home = makeCgcHome();
  process.env.HOME = home.home;
  process.env.CGC_EXECUTABLE = cgcBinary();
});
afterEach(async () => {
  for (const h of harnesses.splice(0)) await h.dispose();
});
afterAll(() => home.cleanup());

async function start(cwd: string) {
  const ui = recordingUi();
  const h = await startPi({ cwd, ui });
  harnesses.push(h);
  return { h, ui };
}

describe("readiness", () => {
  it("unindexed workspace: chip unindexed and one notice naming /cgc index", async () => {
    const repo = tinyRepo();
    const { ui } = await start(repo.path);
    await waitFor(() => ui.statuses.get("cgc") === "cgc unindexed", "chip unindexed");
    expect(ui.notices.filter((n) => n.message.includes("/cgc index"))).toHaveLength(1);
  });

  it("indexed workspace, session in a subfolder: ready", async () => {
    const repo = tinyRepo();
    const indexed = await cgcExec(["index", repo.path], { cwd: repo.path, env: home.env });
    expect(indexed.code).toBe(0);
    const { ui } = await start(`${repo.path}/pkg`);
    await waitFor(() => ui.statuses.get("cgc")?.startsWith("cgc ready"), "chip ready");
    expect(ui.statuses.get("cgc")).toBe("cgc ready · fresh");
  });
});
