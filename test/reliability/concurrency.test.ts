// Concurrency: several processes saving the same settings file at once, and two real pi processes (the CLI
// in RPC mode) on one workspace and one embedded database. One works, the other reports busy; neither
// breaks the graph (queried afterwards) or the settings file.
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { type CgcHome, cgcBinary, cgcExec, makeCgcHome, PROJECT_ROOT } from "../helpers/cgc-env.ts";
import { type PiRpc, startPiRpc } from "../helpers/pi-rpc.ts";
import { waitFor } from "../helpers/pi-sdk.ts";
import { type TinyRepo, tinyRepo } from "../helpers/repos.ts";
import { chipOf, EXTENSION, expectNoCgcLeft, type GraphRecord, graphRecord, PI_CLI } from "./support.ts";

const SAVER = join(PROJECT_ROOT, "test", "reliability", "saver.ts");

describe("concurrent saves of one settings file", () => {
  it("seven processes saving their own key, two fighting over one: never a broken file, no key lost", async () => {
    const dir = mkdtempSync(join(tmpdir(), "pi-cgc-saves-"));
    const path = join(dir, ".pi", "cgc.json");
    mkdirSync(join(dir, ".pi"));
    writeFileSync(path, `${JSON.stringify({ theirs: { keep: [1, 2] }, "lifecycle.autoCreate": true }, null, 2)}\n`);
    const own = [
      "timeouts.probeMs",
      "timeouts.queryMs",
      "timeouts.maintenanceMs",
      "timeouts.longLivedMs",
      "freshness.watcherLivenessMs",
      "freshness.maxSyncsPerSession",
      "output.maxBytes",
    ] as const;
    const rounds = 25;
    const run = (key: string, first: number) =>
      new Promise<number | null>((resolve) => {
        const child = spawn(process.execPath, ["--import", "tsx", SAVER, path, key, String(rounds), String(first)], {
          cwd: PROJECT_ROOT,
          stdio: ["ignore", "ignore", "inherit"],
        });
        child.on("close", resolve);
      });
    // A reader the whole time: every read is a whole JSON object.
    let reads = 0;
    let broken: string | undefined;
    let done = false;
    const reader = (async () => {
      while (!done) {
        const text = readFileSync(path, "utf8");
        try {
          const data = JSON.parse(text) as unknown;
          if (typeof data !== "object" || data === null || Array.isArray(data)) broken = text;
        } catch {
          broken = text;
        }
        reads++;
        await new Promise((resolve) => setImmediate(resolve));
      }
    })();
    const codes = await Promise.all([
      ...own.map((key) => run(key, 2_000)),
      // Two processes fighting over one key: the file ends with one of their last values.
      run("output.maxLines", 5_000),
      run("output.maxLines", 7_000),
    ]);
    done = true;
    await reader;
    expect(codes.every((code) => code === 0)).toBe(true);
    expect(broken).toBeUndefined();
    expect(reads).toBeGreaterThan(10);
    const data = JSON.parse(readFileSync(path, "utf8")) as Record<string, Record<string, unknown>>;
    for (const key of own) {
      const [group, name] = key.split(".") as [string, string];
      expect(data[group]?.[name], key).toBe(2_000 + rounds - 1);
    }
    expect([5_000 + rounds - 1, 7_000 + rounds - 1]).toContain(data.output?.maxLines);
    expect(data.theirs).toEqual({ keep: [1, 2] });
    expect(data["lifecycle.autoCreate"]).toBe(true);
    expect(readdirSync(join(dir, ".pi"))).toEqual(["cgc.json"]); // no temp file, no lock left behind
  });
});

describe("two real pi processes on one workspace and one embedded database", () => {
  let home: CgcHome;
  let repo: TinyRepo;
  const pis: PiRpc[] = [];
  /** The graph right after the index, before either pi ran. */
  let baseline: GraphRecord;
  const settings = `${JSON.stringify({ lifecycle: { syncOnStart: true }, theirs: "kept" }, null, 2)}\n`;

  beforeAll(() => {
    home = makeCgcHome();
  });
  afterEach(async () => {
    for (const pi of pis.splice(0)) await pi.stop();
    await expectNoCgcLeft(home.home);
    // Neither pi touched the user's settings.
    expect(readFileSync(join(repo.path, ".pi", "cgc.json"), "utf8")).toBe(settings);
    repo.cleanup();
  });
  afterAll(() => home.cleanup());

  let agentDir = "";

  async function indexedRepo(): Promise<TinyRepo> {
    agentDir = mkdtempSync(join(tmpdir(), "pi-cgc-agent-"));
    repo = tinyRepo();
    mkdirSync(join(repo.path, ".pi"));
    writeFileSync(join(repo.path, ".pi", "cgc.json"), settings);
    expect((await cgcExec(["index", repo.path], { cwd: repo.path, env: home.env })).code).toBe(0);
    baseline = await graphRecord(home.env, repo.path);
    return repo;
  }

  function pi(extra: Record<string, string> = {}): PiRpc {
    const started = startPiRpc({
      cli: PI_CLI,
      cwd: repo.path,
      args: ["--no-session", "--no-extensions", "-e", EXTENSION],
      env: {
        HOME: home.home,
        // One user's two pi processes share pi's agent directory, where pi-cgc records its own writes
        // (src/lifecycle/provenance.ts): each knows the other's sync for pi-cgc's, not another process's.
        PI_CODING_AGENT_DIR: agentDir,
        PI_OFFLINE: "1",
        CGC_EXECUTABLE: cgcBinary(),
        ...extra,
      },
      onUiRequest: () => ({ confirmed: true }),
    });
    pis.push(started);
    return started;
  }

  const chips = (p: PiRpc) => p.frames.map(chipOf).filter((text): text is string => text !== undefined);
  const said = (p: PiRpc, pattern: RegExp) =>
    p.frames.some((f) => f.type === "extension_ui_request" && f.method === "notify" && pattern.test(String(f.message)));

  it("one holds the database (its watcher) and works; the other reports busy, then recovers; the graph is whole", async () => {
    await indexedRepo();
    const a = pi({ CGC_FRESHNESS_WATCH: "on", CGC_FRESHNESS_WATCHER_LIVENESS_MS: "1500" });
    await a.waitFor(
      (f) => f.type === "extension_ui_request" && /cgc watch is following/.test(String(f.message)),
      60_000,
    );
    const b = pi();
    // The chip and the notice are two frames on pi's output: wait for both, not one and then look for the other.
    await waitFor(
      () =>
        chips(b).at(-1) === "cgc busy" && said(b, /cgc is busy: another cgc process holds the embedded database lock/),
      "the second pi's busy verdict, and its notice",
      60_000,
    );
    await b.request({ type: "prompt", message: "/cgc sync" });
    await waitFor(() => said(b, /^Nothing to sync: cgc is busy/), "the busy answer to /cgc sync");

    // The first one works: its watcher puts a change into the graph.
    const file = join(repo.path, "pkg", "text.py");
    writeFileSync(file, `${readFileSync(file, "utf8")}\n\ndef written_while_shared():\n    return 1\n`);
    await a.request({ type: "prompt", message: "/cgc status" });
    await a.stop();
    pis.splice(pis.indexOf(a), 1);

    // The lock is free: the second one re-checks, syncs, and both the verdict and the graph agree.
    await b.request({ type: "prompt", message: "/cgc status" });
    await waitFor(() => /^cgc ready/.test(chips(b).at(-1) ?? ""), "ready after the re-check", 60_000);
    await b.request({ type: "prompt", message: "/cgc sync" });
    await waitFor(() => chips(b).at(-1) === "cgc ready · fresh", "fresh after the sync", 120_000);
    const graph = await graphRecord(home.env, repo.path);
    expect(graph.files).toBe(baseline.files);
    expect(graph.functions).toEqual([...baseline.functions, "written_while_shared"].sort());
    expect([...chips(a), ...chips(b)]).not.toContain("cgc corrupt");
  });

  it("both sync at the same moment: each sync runs or is skipped as busy, never both broken; the graph is whole", async () => {
    await indexedRepo();
    // Each pi's engine takes the change (the default): one applies it, the other finds it applied or the
    // database held; a full rebuild only where an engine cannot run.
    const a = pi();
    const b = pi();
    await waitFor(
      () => chips(a).at(-1) === "cgc ready · fresh" && chips(b).at(-1) === "cgc ready · fresh",
      "two ready pis",
      90_000,
    );
    const file = join(repo.path, "pkg", "beta.py");
    writeFileSync(file, `${readFileSync(file, "utf8")}\n\ndef synced_twice():\n    return 2\n`);
    await Promise.all([
      a.request({ type: "prompt", message: "/cgc sync" }),
      b.request({ type: "prompt", message: "/cgc sync" }),
    ]);
    const outcome = (p: PiRpc) =>
      waitFor(
        () =>
          p.frames
            .filter((f) => f.type === "extension_ui_request" && f.method === "notify")
            .map((f) => String(f.message))
            .find((text) =>
              /^Synced |^Sync ended |sync skipped|^Updated |^Update skipped|^Nothing to update/.test(text),
            ),
        "the sync's outcome",
        120_000,
      );
    const [first, second] = await Promise.all([outcome(a), outcome(b)]);
    expect([first, second].some((text) => /^(Synced|Updated) /.test(text))).toBe(true);
    for (const text of [first, second]) expect(text).toMatch(/^Synced |^Updated |^Nothing to update|BUSY|skipped/);
    const graph = await graphRecord(home.env, repo.path);
    expect(graph.files).toBe(baseline.files);
    expect(graph.functions).toEqual([...baseline.functions, "synced_twice"].sort());
    expect([...chips(a), ...chips(b)]).not.toContain("cgc corrupt");
    expect(existsSync(join(repo.path, ".pi", "cgc.json.lock"))).toBe(false);
  });
});
