// Every kind of change the freshness check must see, with the real pi (faux model driving pi's own bash
// tool) and the real cgc: a deletion, a rename, a write that puts an old modification time back, a new
// file in a new folder, files cgc indexes without parsing (also in hidden folders), a file pi-cgc's own /cgc report
// writes, a deletion made outside pi between prompts, and one made while pi was away. Each
// must turn the chip to possibly stale, and the graph called fresh afterwards must match the tree.
// (Before the tracker compared stamps, the first three and the last two left the chip at fresh.) And a file
// deleted while pi-cgc's own first index ran, and one the agent edits while its rebuild runs, after cgc read them.
import { chmodSync, existsSync, mkdtempSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fauxAssistantMessage, fauxToolCall } from "@mariozechner/pi-ai";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { type CgcHome, cgcBinary, cgcExec, makeCgcHome, PROJECT_ROOT } from "../helpers/cgc-env.ts";
import { restoreEnv, restoreSuiteEnv, suiteEnv, withEnv } from "../helpers/env.ts";
import { compareWithFullIndexInNewHome } from "../helpers/graph-parity.ts";
import { cgcStatus, type PiHarness, recordingUi, startPi, waitFor } from "../helpers/pi-sdk.ts";
import { caseRepos, type TinyRepo } from "../helpers/repos.ts";

let home: CgcHome;
const harnesses: PiHarness[] = [];
const repos = caseRepos();

beforeAll(() => {
  home = makeCgcHome();
  suiteEnv({ HOME: home.home, CGC_EXECUTABLE: cgcBinary() });
});
afterEach(async () => {
  for (const h of harnesses.splice(0)) await h.dispose();
  repos.cleanup();
  restoreEnv();
});
afterAll(() => {
  restoreSuiteEnv();
  home.cleanup();
});

async function readySession(repo: TinyRepo) {
  const ui = recordingUi();
  const h = await startPi({ cwd: repo.path, ui });
  harnesses.push(h);
  const chip = () => ui.statuses.get("cgc");
  await waitFor(() => chip() === "cgc ready · fresh", "a fresh, ready graph");
  return { h, ui, chip };
}

/** File path → function names, for the files of `repo` the graph holds. */
async function graphFiles(repo: TinyRepo): Promise<Map<string, string[]>> {
  const result = await cgcExec(
    [
      "query",
      `MATCH (f:File) WHERE f.path STARTS WITH '${repo.path}/' OPTIONAL MATCH (f)-[:CONTAINS]->(fn:Function) ` +
        "RETURN f.path AS path, collect(fn.name) AS names",
    ],
    { cwd: repo.path, env: home.env },
  );
  expect(result.code).toBe(0);
  const rows = JSON.parse(result.stdout.slice(result.stdout.indexOf("["))) as Array<{
    path: string;
    names: string[] | null;
  }>;
  // KùzuDB collects no function of a file as null.
  return new Map(rows.map((row) => [row.path.slice(repo.path.length + 1), (row.names ?? []).sort()]));
}

/** One agent run that runs `command` through pi's bash tool. */
function bashRun(command: string) {
  return [
    fauxAssistantMessage(fauxToolCall("bash", { command }), { stopReason: "toolUse" }),
    fauxAssistantMessage("done"),
  ];
}

/** The chip right after the agent's run, then the fresh claim after the sync, then the graph. */
async function staleThenFresh(session: Awaited<ReturnType<typeof readySession>>) {
  expect(session.chip()).toBe("cgc ready · possibly stale");
  await waitFor(() => session.chip() === "cgc ready · fresh", "fresh after the sync", 120_000);
}

describe("every kind of change reaches the graph before it is called fresh", () => {
  it("a file deleted by the agent's bash (rm)", async () => {
    const repo = await repos.indexed(home.env);
    const session = await readySession(repo);
    session.h.faux.setResponses(bashRun("rm pkg/text.py"));
    await session.h.session.prompt("remove text.py");
    await staleThenFresh(session);
    expect((await graphFiles(repo)).has("pkg/text.py")).toBe(false);
  });

  it("a file renamed by the agent's bash (mv keeps the modification time)", async () => {
    const repo = await repos.indexed(home.env);
    const session = await readySession(repo);
    session.h.faux.setResponses(bashRun("mv pkg/text.py pkg/strings.py"));
    await session.h.session.prompt("rename text.py");
    await staleThenFresh(session);
    const files = await graphFiles(repo);
    expect(files.has("pkg/text.py")).toBe(false);
    expect(files.get("pkg/strings.py")).toEqual(["<module>", "normalize", "orphan"]);
  });

  it("a file rewritten with its old modification time put back (as tar x, cp -p and rsync -t do)", async () => {
    const repo = await repos.indexed(home.env);
    const session = await readySession(repo);
    session.h.faux.setResponses(
      bashRun("printf 'def restored():\\n    return 1\\n' > pkg/text.py && touch -d '2001-02-03 04:05:06' pkg/text.py"),
    );
    await session.h.session.prompt("restore text.py");
    await staleThenFresh(session);
    expect((await graphFiles(repo)).get("pkg/text.py")).toEqual(["<module>", "restored"]);
  });

  it("a new file in a new folder", async () => {
    const repo = await repos.indexed(home.env);
    const session = await readySession(repo);
    session.h.faux.setResponses(
      bashRun("mkdir -p pkg/deep/er && printf 'def deep_new():\\n    return 2\\n' > pkg/deep/er/fresh_module.py"),
    );
    await session.h.session.prompt("add a module");
    await staleThenFresh(session);
    expect((await graphFiles(repo)).get("pkg/deep/er/fresh_module.py")).toEqual(["<module>", "deep_new"]);
  });

  it("files cgc indexes without parsing them, and files in hidden folders (cgc walks those too)", async () => {
    const repo = await repos.indexed(home.env);
    const session = await readySession(repo);
    session.h.faux.setResponses(
      bashRun(
        "printf '# notes\\n' > NOTES.md && mkdir -p .github/workflows && printf 'on: push\\n' > .github/workflows/ci.yml",
      ),
    );
    await session.h.session.prompt("add notes and a workflow");
    await staleThenFresh(session);
    const files = await graphFiles(repo);
    expect(files.get("NOTES.md")).toEqual([]);
    expect(files.get(".github/workflows/ci.yml")).toEqual([]);
  });

  it("/cgc report writes CGC_REPORT.md into the workspace: not fresh until the graph holds it", async () => {
    const repo = await repos.indexed(home.env);
    const session = await readySession(repo);
    session.ui.confirmAnswer = true;
    await session.h.session.prompt("/cgc report");
    expect(session.ui.notices.map((notice) => notice.message)).toContainEqual(
      expect.stringContaining("Report written to"),
    );
    await staleThenFresh(session);
    expect((await graphFiles(repo)).get("CGC_REPORT.md")).toEqual([]);
  });

  it("a file a new .gitignore line leaves out, with the engine off: the full rebuild takes it out, then fresh", async () => {
    withEnv({ CGC_FRESHNESS_ENGINE: "false" });
    const repo = await repos.indexed(home.env);
    const session = await readySession(repo);
    session.h.faux.setResponses(bashRun("printf 'pkg/beta.py\\n' >> .gitignore"));
    await session.h.session.prompt("ignore beta.py");
    await staleThenFresh(session);
    const files = await graphFiles(repo);
    expect(files.has("pkg/beta.py")).toBe(false);
    expect(files.has("pkg/alpha.py")).toBe(true);
  }, 300_000);

  it("a file deleted and one renamed outside pi between two prompts", async () => {
    const repo = await repos.indexed(home.env);
    const session = await readySession(repo);
    session.h.faux.setResponses([fauxAssistantMessage("first"), fauxAssistantMessage("second")]);
    await session.h.session.prompt("one");
    rmSync(join(repo.path, "pkg", "beta.py"));
    renameSync(join(repo.path, "pkg", "text.py"), join(repo.path, "pkg", "words.py"));
    await session.h.session.prompt("two");
    await staleThenFresh(session);
    const files = await graphFiles(repo);
    expect(files.has("pkg/beta.py")).toBe(false);
    expect(files.has("pkg/text.py")).toBe(false);
    expect(files.get("pkg/words.py")).toEqual(["<module>", "normalize", "orphan"]);
  });

  it("a file deleted while pi was away: the next session's start sees it", async () => {
    const repo = await repos.indexed(home.env);
    const first = await readySession(repo);
    await first.h.dispose();
    harnesses.splice(harnesses.indexOf(first.h), 1);
    rmSync(join(repo.path, "pkg", "beta.py"));
    renameSync(join(repo.path, "pkg", "alpha.py"), join(repo.path, "pkg", "first.py"));
    const ui = recordingUi();
    const h = await startPi({ cwd: repo.path, ui });
    harnesses.push(h);
    await waitFor(() => ui.statuses.get("cgc") === "cgc ready · fresh", "fresh after the start-time sync", 120_000);
    expect(ui.statusHistory).toContain("cgc ready · possibly stale");
    expect(ui.notices.map((notice) => notice.message)).toContainEqual(
      expect.stringMatching(/possibly stale: 3 files changed since the graph was last verified/),
    );
    const files = await graphFiles(repo);
    expect(files.has("pkg/beta.py")).toBe(false);
    expect(files.has("pkg/alpha.py")).toBe(false);
    expect(files.has("pkg/first.py")).toBe(true);
  });

  it("a file deleted while pi-cgc's first index ran, after cgc read it: not fresh until the graph lets it go", async () => {
    const repo = repos.tiny({ extraFiles: { "doomed.py": "def doomed():\n    return 1\n" } });
    // Stands for someone deleting a file while the index runs, once cgc has read it (the soak met it with an
    // index slowed by load): the real cgc indexes, then the file goes before pi-cgc sees the index end.
    await withIndexLauncher({ after: `os.remove(${JSON.stringify(join(repo.path, "doomed.py"))})` }, async () => {
      const { ui } = await firstIndexByPiCgc(repo);
      await waitFor(() => ui.statuses.get("cgc") === "cgc ready · fresh", "fresh once the deletion is in", 120_000);
      expect(ui.statusHistory).toContain("cgc ready · possibly stale");
      const files = await graphFiles(repo);
      expect(files.has("doomed.py")).toBe(false);
      expect(files.get("pkg/alpha.py")).toEqual(expect.arrayContaining(["alpha"]));
      await expectEqualToFullIndex(repo);
    });
  });

  it("another cgc that indexed the workspace as pi-cgc's /cgc index began: cgc skips, and that graph is not called fresh", async () => {
    const repo = repos.tiny();
    // Stands for another writer indexing at the moment pi-cgc's index starts (the soak's cgc watch, seed 20261407,
    // whose first scan stamped the graph just before /cgc index): the real cgc indexes for it, then pi-cgc's own
    // real `cgc index` finds that graph and skips. Its stamp falls inside pi-cgc's run, which wrote nothing.
    const other = `subprocess.call([${JSON.stringify(cgcBinary())}, "index", sys.argv[-1]], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)`;
    await withIndexLauncher({ before: other }, async () => {
      const { ui, h } = await firstIndexByPiCgc(repo);
      expect(ui.notices.map((notice) => notice.message)).toContainEqual(
        expect.stringMatching(/^cgc did not index .*which pi-cgc did not build, and skipped/),
      );
      expect(ui.statuses.get("cgc")).toBe("cgc ready · possibly stale");
      expect(ui.statusHistory).not.toContain("cgc ready · fresh");
      expect(await cgcStatus(h)).toMatch(/freshness: {2}possibly-stale/);
    });
  });

  it("a file the agent edits while pi-cgc's rebuild runs, after cgc read it: the edit reaches the graph", async () => {
    const repo = await repos.indexed(home.env);
    const indexed = join(repo.path, "..", `${repo.name}-indexed`);
    const go = join(repo.path, "..", `${repo.name}-go`);
    // Stands for an agent that edits a file while a rebuild runs, once cgc has read it: the real cgc
    // rebuilds, then holds its exit until the test's edit is in.
    const wait = `open(${JSON.stringify(indexed)}, "w").close()\nwhile not os.path.exists(${JSON.stringify(go)}): time.sleep(0.05)`;
    await withIndexLauncher({ after: wait }, async () => {
      const session = await readySession(repo);
      session.ui.confirmAnswer = true;
      const rebuild = session.h.session.prompt("/cgc index --force");
      await waitFor(() => existsSync(indexed), "cgc's rebuild done, its exit held", 120_000);
      session.h.faux.setResponses([
        fauxAssistantMessage(
          fauxToolCall("edit", {
            path: "pkg/text.py",
            edits: [{ oldText: "def orphan(", newText: "def adopted(" }],
          }),
          { stopReason: "toolUse" },
        ),
        fauxAssistantMessage("done"),
      ]);
      await session.h.session.prompt("rename orphan");
      writeFileSync(go, "");
      await rebuild;
      await waitFor(() => session.chip() === "cgc ready · fresh", "fresh once the edit is in", 120_000);
      expect((await graphFiles(repo)).get("pkg/text.py")).toEqual(["<module>", "adopted", "normalize"]);
      await expectEqualToFullIndex(repo);
    });
  });
});

/** The graph called fresh, line for line against a full index of a copy of the same tree in a new home. */
async function expectEqualToFullIndex(repo: TinyRepo): Promise<void> {
  const { missing, extra } = await compareWithFullIndexInNewHome(repo.path, home.env);
  expect({ missing, extra }).toEqual({ missing: [], extra: [] });
}

/** pi on an unindexed `repo`, once `/cgc index` (confirmed) has returned. */
async function firstIndexByPiCgc(repo: TinyRepo) {
  const ui = recordingUi();
  const h = await startPi({ cwd: repo.path, ui });
  harnesses.push(h);
  await waitFor(() => ui.statuses.get("cgc") === "cgc unindexed", "an unindexed workspace");
  ui.confirmAnswer = true;
  await h.session.prompt("/cgc index");
  return { ui, h };
}

/**
 * Runs body with CGC_EXECUTABLE set to a launcher in cgc's own Python (as pip writes them, so that pi-cgc
 * finds cgc's interpreter and its engine) that runs the real cgc, with the Python in `before` ahead of an
 * `index` and the Python in `after` once it is done.
 */
async function withIndexLauncher(
  { before = "", after = "" }: { before?: string; after?: string },
  body: () => Promise<void>,
): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "pi-cgc-index-launcher-"));
  const indented = (code: string) =>
    code
      .split("\n")
      .map((line) => `    ${line}\n`)
      .join("");
  // The hooks run around a full index, whichever program runs it: `cgc index`, or pi-cgc's own index (the engine
  // script, which pi-cgc runs under cgc's Python: the interpreter the cgc launcher names is this wrapper).
  const hooked = (isIndex: string, command: string) =>
    `#!${join(PROJECT_ROOT, ".venv", "bin", "python")}\n` +
    "import os, subprocess, sys, time\n" +
    `is_index = ${isIndex}\n` +
    (before ? `if is_index:\n${indented(before)}` : "") +
    `status = subprocess.call(${command})\n` +
    (after ? `if is_index:\n${indented(after)}` : "") +
    "sys.exit(status)\n";
  const python = join(dir, "python");
  writeFileSync(
    python,
    hooked(
      `len(sys.argv) > 2 and sys.argv[1].endswith("pi-cgc-engine.py") and "index" in sys.argv[2:]`,
      `[${JSON.stringify(join(PROJECT_ROOT, ".venv", "bin", "python"))}, *sys.argv[1:]]`,
    ),
  );
  const launcher = join(dir, "cgc");
  writeFileSync(
    launcher,
    hooked(`sys.argv[1:2] == ["index"]`, `[${JSON.stringify(cgcBinary())}, *sys.argv[1:]]`).replace(
      /^#!.*\n/,
      `#!${python}\n`,
    ),
  );
  chmodSync(python, 0o755);
  chmodSync(launcher, 0o755);
  withEnv({ CGC_EXECUTABLE: launcher });
  try {
    await body();
  } finally {
    withEnv({ CGC_EXECUTABLE: cgcBinary() });
    rmSync(dir, { recursive: true, force: true });
  }
}
