// Freshness with the real pi (faux model driving pi's own edit and bash tools) and the real cgc:
// possibly stale after an edit, a sync when the run ends, a query that sees the change, then fresh.
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fauxAssistantMessage, fauxToolCall } from "@mariozechner/pi-ai";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { graphLedger } from "../../src/state/ledger.ts";
import { type CgcHome, cgcBinary, cgcExec, makeCgcHome, PROJECT_ROOT } from "../helpers/cgc-env.ts";
import { restoreEnv, restoreSuiteEnv, suiteEnv, withEnv } from "../helpers/env.ts";
import { cgcStatus, type PiHarness, recordingUi, startPi, waitFor } from "../helpers/pi-sdk.ts";
import { indexedTinyRepo, type TinyRepo } from "../helpers/repos.ts";

let home: CgcHome;
const harnesses: PiHarness[] = [];

beforeAll(() => {
  home = makeCgcHome();
  suiteEnv({ HOME: home.home, CGC_EXECUTABLE: cgcBinary() });
});
afterEach(async () => {
  for (const h of harnesses.splice(0)) await h.dispose();
  restoreEnv();
});
afterAll(() => {
  restoreSuiteEnv();
  home.cleanup();
});

async function functionNames(repo: TinyRepo, file: string): Promise<string[]> {
  const result = await cgcExec(
    ["query", `MATCH (f:Function) WHERE f.path = '${join(repo.path, file)}' RETURN f.name AS name`],
    { cwd: repo.path, env: home.env },
  );
  return [...result.stdout.matchAll(/"name": "([^"]+)"/g)].map((match) => match[1] as string).sort();
}

async function readySession(repo: TinyRepo) {
  const ui = recordingUi();
  const h = await startPi({ cwd: repo.path, ui });
  harnesses.push(h);
  await waitFor(() => ui.statuses.get("cgc") === "cgc ready · fresh", "a fresh, ready graph");
  return { h, ui, chip: () => ui.statuses.get("cgc") };
}

/** Two agent runs: the first writes pkg/first_new.py, the second pkg/second_new.py, each with one function. */
function twoRunsWritingNewFiles() {
  const write = (name: string) =>
    fauxToolCall("write", { path: `pkg/${name}.py`, content: `def ${name}():\n    return 1\n` });
  return [
    fauxAssistantMessage(write("first_new"), { stopReason: "toolUse" }),
    fauxAssistantMessage("one"),
    fauxAssistantMessage(write("second_new"), { stopReason: "toolUse" }),
    fauxAssistantMessage("two"),
  ];
}

describe("freshness", () => {
  it("an edit through the agent's edit tool: possibly stale, applied by the engine, then fresh", async () => {
    const repo = await indexedTinyRepo(home.env);
    const { h, chip } = await readySession(repo);
    h.faux.setResponses([
      fauxAssistantMessage(
        fauxToolCall("edit", {
          path: "pkg/text.py",
          edits: [
            {
              oldText: "def orphan(value):",
              newText: "def added_helper(value):\n    return value\n\n\ndef orphan(value):",
            },
          ],
        }),
        { stopReason: "toolUse" },
      ),
      fauxAssistantMessage("done"),
    ]);
    await h.session.prompt("add a helper");
    expect(chip()).toBe("cgc ready · possibly stale");
    await waitFor(() => chip() === "cgc ready · fresh", "fresh after the sync", 120_000);
    expect(h.ui?.statusHistory).toContainEqual(expect.stringMatching(/^cgc updating…/));
    expect(await functionNames(repo, "pkg/text.py")).toContain("added_helper");
  });

  it("a file changed by a bash command (sed -i) and a function deleted are seen and synced", async () => {
    const repo = await indexedTinyRepo(home.env);
    const { h, chip } = await readySession(repo);
    h.faux.setResponses([
      fauxAssistantMessage(
        fauxToolCall("bash", { command: "sed -i 's/^def orphan(value):/def renamed_orphan(value):/' pkg/text.py" }),
        {
          stopReason: "toolUse",
        },
      ),
      fauxAssistantMessage("done"),
    ]);
    await h.session.prompt("rename orphan");
    expect(chip()).toBe("cgc ready · possibly stale");
    await waitFor(() => chip() === "cgc ready · fresh", "fresh after the sync", 120_000);
    const names = await functionNames(repo, "pkg/text.py");
    expect(names).toContain("renamed_orphan");
    expect(names).not.toContain("orphan");
  });

  it("a file changed outside pi between two prompts is seen at the next prompt", async () => {
    const repo = await indexedTinyRepo(home.env);
    const { h, chip } = await readySession(repo);
    h.faux.setResponses([fauxAssistantMessage("first"), fauxAssistantMessage("second")]);
    await h.session.prompt("one");
    const file = join(repo.path, "pkg", "beta.py");
    writeFileSync(file, `${readFileSync(file, "utf8")}\n\ndef outside_change():\n    return 1\n`);
    await h.session.prompt("two");
    await waitFor(() => chip() === "cgc ready · fresh", "fresh after the sync", 120_000);
    expect(await functionNames(repo, "pkg/beta.py")).toContain("outside_change");
  });

  it("after the automatic sync budget is spent, the state stays possibly stale; /cgc sync still runs", async () => {
    withEnv({ CGC_FRESHNESS_ENGINE: "false" }); // the budget counts full rebuilds, the engine's fallback
    withEnv({ CGC_FRESHNESS_MAX_SYNCS_PER_SESSION: "1" });
    const repo = await indexedTinyRepo(home.env);
    const { h, ui, chip } = await readySession(repo);
    h.faux.setResponses(twoRunsWritingNewFiles());
    await h.session.prompt("first");
    await waitFor(() => chip() === "cgc ready · fresh", "fresh after the first sync", 120_000);
    await h.session.prompt("second");
    await waitFor(() => ui.notices.some((n) => n.message.includes("automatic syncs")), "the budget notice", 30_000);
    expect(chip()).toBe("cgc ready · possibly stale");
    await h.session.prompt("/cgc sync");
    expect(chip()).toBe("cgc ready · fresh");
    expect(await functionNames(repo, "pkg/second_new.py")).toContain("second_new");
    // Full KùzuDB rebuilds (the engine is off here) whose waits add up past the default 120 s when loaded.
  }, 300_000);
});

describe("a sync that runs out of its time budget", () => {
  it("is not started again automatically; with a larger budget the next session rebuilds the graph", async () => {
    const repo = await indexedTinyRepo(home.env);
    withEnv({ CGC_FRESHNESS_ENGINE: "false" }); // a full rebuild stopped by its budget, the engine's fallback
    // A rebuild longer than its budget, whatever the machine's speed: the real cgc but for `index`, which hangs
    // (test/fixtures/fakes/cgc-hang) until the budget stops it.
    withEnv({
      CGC_EXECUTABLE: join(PROJECT_ROOT, "test", "fixtures", "fakes", "cgc-hang"),
      FAKE_CGC_HANG: "index",
      CGC_TIMEOUTS_MAINTENANCE_MS: "1000",
    });
    const { h, ui, chip } = await readySession(repo);
    h.faux.setResponses(twoRunsWritingNewFiles());
    // The chip ticks while a run goes on: count the moments it turned to syncing or indexing.
    const running = (status: string | undefined) => /^cgc (syncing|indexing)/.test(status ?? "");
    const runsStarted = () =>
      ui.statusHistory.filter((status, i) => running(status) && !running(ui.statusHistory[i - 1])).length;
    const said = (pattern: RegExp) => ui.notices.some((notice) => pattern.test(notice.message));

    await h.session.prompt("first");
    await waitFor(
      () => said(/cgc sync was stopped after .* \(timeouts\.maintenanceMs\)/),
      "the timeout notice",
      60_000,
    );
    await waitFor(() => !running(chip()), "the sync settled", 60_000);
    expect(runsStarted()).toBe(1);

    // Whether cgc had deleted the old graph before it was stopped (unindexed) or not (possibly stale),
    // nothing starts again on its own, a notice says why, and nothing claims fresh.
    await h.session.prompt("second");
    await waitFor(() => said(/stopped after .* raise timeouts\.maintenanceMs/is), "the notice that says why", 30_000);
    expect(runsStarted()).toBe(1);
    expect(chip()).not.toMatch(/fresh$/);
    await h.dispose();
    harnesses.splice(harnesses.indexOf(h), 1);

    // The default budget (30 min) is larger than the one that ran out: the next session rebuilds — a
    // start-time sync of an intact graph, or the index lifecycle.autoCreate allows — and both edits are in.
    withEnv({ CGC_TIMEOUTS_MAINTENANCE_MS: undefined, CGC_EXECUTABLE: cgcBinary(), CGC_LIFECYCLE_AUTO_CREATE: "true" });
    const next = recordingUi();
    harnesses.push(await startPi({ cwd: repo.path, ui: next }));
    await waitFor(() => next.statuses.get("cgc") === "cgc ready · fresh", "fresh after the rebuild", 120_000);
    expect(await functionNames(repo, "pkg/first_new.py")).toContain("first_new");
    expect(await functionNames(repo, "pkg/second_new.py")).toContain("second_new");
    // Full KùzuDB rebuilds (the engine is off here) whose waits add up past the default 120 s when loaded.
  }, 300_000);
});

describe("a session started while a previous session's sync never finished", () => {
  it("chip, notice and /cgc status say the same thing: possibly stale until a sync is verified, then fresh", async () => {
    const repo = await indexedTinyRepo(home.env);
    // What a pi killed mid-sync leaves behind (the real case: test/reliability/faults.test.ts).
    graphLedger(process.env, repo.path).runStarted("sync");
    withEnv({ CGC_LIFECYCLE_SYNC_ON_START: "false" });
    const ui = recordingUi();
    const h = await startPi({ cwd: repo.path, ui });
    harnesses.push(h);
    const chip = () => ui.statuses.get("cgc");
    const notices = () => ui.notices.map((notice) => notice.message);
    const status = () => cgcStatus(h);
    await waitFor(() => chip()?.startsWith("cgc ready"), "the first verdict");
    const unfinished = /a pi-cgc sync started \S+ has not finished/;
    expect(chip()).toBe("cgc ready · possibly stale");
    expect(notices()).toEqual([expect.stringMatching(unfinished)]);
    expect(await status()).toMatch(
      new RegExp(`^pi-cgc — cgc ready · possibly stale\n[\\s\\S]*freshness:  possibly-stale — ${unfinished.source}`),
    );

    await h.session.prompt("/cgc sync");
    expect(chip()).toBe("cgc ready · fresh");
    expect(notices().at(-2)).toMatch(/is fresh again: pi-cgc brought it up to date and verified it/);
    expect(notices().at(-1)).toMatch(/^Synced /);
    const after = await status();
    expect(after).toMatch(/^pi-cgc — cgc ready · fresh\n[\s\S]*freshness: {2}fresh;/);
    expect(after).not.toMatch(/has not finished/);
  });
});

describe("freshness under an awkward path", () => {
  it("spaces, brackets and unicode in the path: an edit is synced and verified", async () => {
    const repo = await indexedTinyRepo(home.env, { awkwardPath: true });
    const { h, chip } = await readySession(repo);
    h.faux.setResponses([
      fauxAssistantMessage(
        fauxToolCall("write", { path: "pkg/awkward_new.py", content: "def awkward_new():\n    return 1\n" }),
        {
          stopReason: "toolUse",
        },
      ),
      fauxAssistantMessage("done"),
    ]);
    await h.session.prompt("add a file");
    expect(chip()).toBe("cgc ready · possibly stale");
    await waitFor(() => chip() === "cgc ready · fresh", "fresh after the sync", 120_000);
  });
});
