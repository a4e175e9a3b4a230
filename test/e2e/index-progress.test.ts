// /cgc index in pi's real TUI under tmux: the confirmation states what the index will cost (the files cgc
// will read, counted by cgc's own rules, and an estimate on this backend), and while it runs the footer chip
// shows the elapsed time against that estimate and the phase — whole words, never a cut-off line of cgc's.
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, expect, it } from "vitest";
import { piInTmux, runSlashCommand, type TmuxSession } from "../helpers/tmux.ts";

const tmp = mkdtempSync(join(tmpdir(), "pi-cgc-index-progress-"));
let tui: TmuxSession | undefined;

afterAll(() => {
  tui?.kill();
  rmSync(tmp, { recursive: true, force: true });
});

it("/cgc index: the confirmation states files and time; the chip shows elapsed of the estimate, then ready", async () => {
  const repo = join(tmp, "repo");
  mkdirSync(join(repo, "pkg"), { recursive: true });
  execFileSync("git", ["init", "-q", repo]);
  for (let i = 0; i < 12; i++) {
    writeFileSync(
      join(repo, "pkg", `m${i}.py`),
      `def f${i}(x):\n    return g${i}(x)\n\n\ndef g${i}(x):\n    return x\n`,
    );
  }
  writeFileSync(join(repo, "notes.bin"), Buffer.alloc(16)); // not a file cgc reads

  tui = piInTmux({ repo, scratch: tmp, width: 160 });
  await tui.waitFor(/cgc unindexed/, 90_000);
  await runSlashCommand(tui, "/cgc index");
  const asked = await tui.waitFor(/Build a code graph\?/, 60_000);
  expect(asked.replace(/\s+/g, " ")).toMatch(/pi-cgc's index will read 12 files, \d+ KiB: about \d+s on kuzudb/);
  // Counting wrote nothing into the workspace before the yes (cgc's own discovery would write .cgcignore).
  expect(existsSync(join(repo, ".cgcignore"))).toBe(false);
  tui.sendKeys("Enter"); // yes
  const running = await tui.waitFor(/cgc indexing… \d+s of ~\d+s · 12 files/, 60_000);
  expect(running).not.toMatch(/Starting indexing for/);
  await tui.waitFor(/cgc ready · fresh/, 180_000);
});
