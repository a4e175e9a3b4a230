// The settings modal in pi's real TUI under tmux: change freshness.watch to auto, save to the project
// file, and find it there with the keys pi-cgc does not know preserved.
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, expect, it } from "vitest";
import { piInTmux, runSlashCommand, type TmuxSession } from "../helpers/tmux.ts";

const tmp = mkdtempSync(join(tmpdir(), "pi-cgc-settings-"));
let tui: TmuxSession | undefined;

afterAll(() => {
  tui?.kill();
  rmSync(tmp, { recursive: true, force: true });
});

it("/cgc config: cycle freshness.watch to auto, save to project, unknown keys kept", async () => {
  const repo = join(tmp, "repo");
  mkdirSync(join(repo, ".pi"), { recursive: true });
  execFileSync("git", ["init", "-q", repo]);
  writeFileSync(join(repo, "app.py"), "def main():\n    return 1\n");
  const projectFile = join(repo, ".pi", "cgc.json");
  writeFileSync(projectFile, JSON.stringify({ someone: { else: [1, 2] }, freshness: { watch: "off" } }));

  tui = piInTmux({ repo, scratch: tmp });
  await tui.waitFor(/cgc (unindexed|ready)/, 60_000);
  await runSlashCommand(tui, "/cgc config");
  await tui.waitFor(/pi-cgc settings/, 10_000);
  tui.sendKeys("freshness.watch");
  await tui.waitFor(/→ freshness\.watch\s+off/, 10_000);
  tui.sendKeys("Enter");
  await tui.waitFor(/→ freshness\.watch\s+on/, 10_000);
  tui.sendKeys("Enter");
  await tui.waitFor(/→ freshness\.watch\s+auto/, 10_000);
  tui.sendKeys("Escape");
  await tui.waitFor(/Save freshness\.watch = auto\?/, 10_000);
  tui.sendKeys("Enter"); // the first choice: save to project
  await tui.waitFor(/Saved to .*cgc\.json/, 10_000);
  expect(JSON.parse(readFileSync(projectFile, "utf8"))).toEqual({
    someone: { else: [1, 2] },
    freshness: { watch: "auto" },
  });
});
