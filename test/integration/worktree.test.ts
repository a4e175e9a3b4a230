// Worktree isolation (ADR 0008) with real git worktrees, the real cgc in an isolated home and the real pi:
// in isolate mode each linked worktree gets its own CGC named context, created under the index consent;
// a context recorded for another worktree is refused; a pruned worktree's context is reported once and kept.
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fauxAssistantMessage, fauxToolCall } from "@mariozechner/pi-ai";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type ListedContext, type Parsed, parseContextList, parseQueryJson } from "../../src/cgc/parse.ts";
import { type CgcHome, cgcBinary, cgcExec, makeCgcHome } from "../helpers/cgc-env.ts";
import { restoreEnv, restoreSuiteEnv, withEnv as setEnv, suiteEnv } from "../helpers/env.ts";
import { type PiHarness, type RecordingUi, recordingUi, startPi, waitFor } from "../helpers/pi-sdk.ts";
import { commitAll, type TinyRepo, tinyRepo } from "../helpers/repos.ts";

let home: CgcHome;
let agentDir: string;
const harnesses: PiHarness[] = [];
const repos: TinyRepo[] = [];
// Each case runs two or three pi sessions, each indexing with the real cgc.
const CASE_MS = 300_000;

beforeAll(() => {
  home = makeCgcHome();
  suiteEnv({ HOME: home.home, CGC_EXECUTABLE: cgcBinary() });
});
beforeEach(() => {
  // A fresh pi agent dir per case: the worktree record lives there.
  agentDir = realpathSync(mkdtempSync(join(tmpdir(), "pi-cgc-agent-")));
});
afterEach(async () => {
  for (const h of harnesses.splice(0)) await h.dispose();
  for (const repo of repos.splice(0)) repo.cleanup();
  restoreEnv();
  rmSync(agentDir, { recursive: true, force: true });
  // Every case starts from an empty cgc (no contexts, no default graph); no cgc runs any more.
  rmSync(join(home.home, ".codegraphcontext"), { recursive: true, force: true });
});
afterAll(() => {
  restoreSuiteEnv();
  home.cleanup();
});

/** The case's environment, with the case's own pi agent dir. */
function withEnv(values: Record<string, string>) {
  setEnv({ PI_CODING_AGENT_DIR: agentDir, ...values });
}

function git(cwd: string, args: string[]): string {
  return execFileSync("git", args, {
    cwd,
    encoding: "utf8",
    env: { PATH: process.env.PATH ?? "", GIT_CONFIG_NOSYSTEM: "1", GIT_CONFIG_GLOBAL: "/dev/null" },
  });
}

/** A repository with worktrees `a` (branch-a) and `b` (branch-b); only branch-b defines only_on_branch_b. */
function twoWorktrees(name = "tiny"): { main: TinyRepo; a: string; b: string } {
  const main = tinyRepo({ name });
  repos.push(main);
  const parent = dirname(main.path);
  git(main.path, ["worktree", "add", "-q", "-b", "branch-a", join(parent, "a")]);
  git(main.path, ["worktree", "add", "-q", "-b", "branch-b", join(parent, "b")]);
  const b = realpathSync(join(parent, "b"));
  const alpha = join(b, "pkg", "alpha.py");
  writeFileSync(alpha, `${readFileSync(alpha, "utf8")}\n\ndef only_on_branch_b(value):\n    return alpha(value)\n`);
  commitAll(b, "only on branch b");
  return { main, a: realpathSync(join(parent, "a")), b };
}

/** A repository with one worktree named `feature`. */
function featureWorktree(name: string): { main: TinyRepo; feature: string } {
  const main = tinyRepo({ name });
  repos.push(main);
  const feature = join(dirname(main.path), "feature");
  git(main.path, ["worktree", "add", "-q", "-b", "feature", feature]);
  return { main, feature: realpathSync(feature) };
}

async function start(cwd: string, chip: RegExp, ui: RecordingUi = recordingUi()) {
  const h = await startPi({ cwd, ui, agentDir });
  harnesses.push(h);
  await waitFor(() => chip.test(ui.statuses.get("cgc") ?? ""), `chip ${chip} in ${cwd}`, 120_000);
  return { h, ui, chip: () => ui.statuses.get("cgc") };
}

async function stop(h: PiHarness) {
  harnesses.splice(harnesses.indexOf(h), 1);
  await h.dispose();
}

function value<T>(parsed: Parsed<T>): T {
  if (parsed.kind !== "ok") throw new Error(`expected ok, got unknown: ${parsed.reason}`);
  return parsed.value;
}

async function contexts(): Promise<ListedContext[]> {
  const result = await cgcExec(["context", "list"], { cwd: home.home, env: home.env });
  expect(result.code).toBe(0);
  return value(parseContextList(result.stderr)).contexts;
}

async function graph(cypher: string, context?: string): Promise<Array<Record<string, unknown>>> {
  const args = ["query", cypher, ...(context ? ["--context", context] : [])];
  const result = await cgcExec(args, { cwd: home.home, env: home.env });
  expect(result.code, `${result.stdout}\n${result.stderr}`).toBe(0);
  return value(parseQueryJson(result.stdout));
}

const repositoryPaths = async (context?: string) =>
  (await graph("MATCH (r:Repository) RETURN r.path AS path ORDER BY path", context)).map((row) => row.path);
const definitionsOf = async (name: string, context?: string) =>
  (await graph(`MATCH (f:Function) WHERE f.name = '${name}' RETURN f.path AS path`, context)).map((row) => row.path);

/** pi-cgc's record: one file per context under the agent dir. */
const recordDir = () => join(agentDir, "cgc-worktrees");
function records(): Record<string, Record<string, string>> {
  return Object.fromEntries(
    readdirSync(recordDir()).map((file) => [
      file.replace(/\.json$/, ""),
      JSON.parse(readFileSync(join(recordDir(), file), "utf8")),
    ]),
  );
}

async function status(h: PiHarness, ui: RecordingUi): Promise<string> {
  const before = ui.notices.length;
  await h.session.prompt("/cgc status");
  return ui.notices
    .slice(before)
    .map((notice) => notice.message)
    .join("\n");
}

function toolText(h: PiHarness): { text: string; isError: boolean } | undefined {
  const last = h.session.messages.findLast((message) => message.role === "toolResult");
  if (last?.role !== "toolResult") return undefined;
  return { text: last.content.map((part) => (part.type === "text" ? part.text : "")).join(""), isError: last.isError };
}

async function findThroughPi(h: PiHarness, query: string) {
  h.faux.setResponses([
    fauxAssistantMessage(fauxToolCall("cgc_find", { query }), { stopReason: "toolUse" }),
    fauxAssistantMessage("done"),
  ]);
  await h.session.prompt(`where is ${query}?`);
  return toolText(h);
}

describe("isolate mode: one graph per linked worktree", () => {
  it(
    "two worktrees on two branches: B's graph finds the function only branch B has, A's does not",
    async () => {
      withEnv({ CGC_WORKTREE_MODE: "isolate", CGC_LIFECYCLE_AUTO_CREATE: "true" });
      const { main, a, b } = twoWorktrees();

      const inB = await start(b, /^cgc ready · fresh$/);
      expect(inB.ui.confirms).toEqual([]); // autoCreate is the consent
      // Through pi-cgc's own graph tool, i.e. a `cgc mcp start` pointed at the context by path.
      const foundInB = await findThroughPi(inB.h, "only_on_branch_b");
      expect(foundInB?.isError, foundInB?.text).toBe(false);
      expect(foundInB?.text).toMatch(/^function only_on_branch_b {2}pkg\/alpha\.py:\d+/m);
      const statusB = await status(inB.h, inB.ui);
      expect(statusB).toMatch(/^worktree: {3}linked worktree — context wt-b-[0-9a-f]{8} \(\w+, .+\)$/m);
      await stop(inB.h);

      const inA = await start(a, /^cgc ready · fresh$/);
      const foundInA = await findThroughPi(inA.h, "only_on_branch_b");
      expect(foundInA?.isError).toBe(true);
      expect(foundInA?.text).toMatch(/^NOT_FOUND/);
      await stop(inA.h);

      // The real graphs, read with cgc itself.
      const names = (await contexts()).map((context) => context.name).sort();
      expect(names).toEqual([expect.stringMatching(/^wt-a-[0-9a-f]{8}$/), expect.stringMatching(/^wt-b-[0-9a-f]{8}$/)]);
      const [contextA, contextB] = names as [string, string];
      expect(await repositoryPaths(contextA)).toEqual([a]);
      expect(await repositoryPaths(contextB)).toEqual([b]);
      expect(await definitionsOf("only_on_branch_b", contextB)).toEqual([join(b, "pkg", "alpha.py")]);
      expect(await definitionsOf("only_on_branch_b", contextA)).toEqual([]);
      expect(await definitionsOf("alpha", contextA)).toEqual([join(a, "pkg", "alpha.py")]);
      // Nothing went into the default graph, and pi-cgc wrote nothing into the repository (cgc index itself
      // writes a default .cgcignore into any root that has none, with or without a context).
      expect(await repositoryPaths()).toEqual([]);
      expect(git(a, ["status", "--porcelain", "--ignored"])).toBe("?? .cgcignore\n");
      expect(git(b, ["status", "--porcelain", "--ignored"])).toBe("?? .cgcignore\n");

      // The record, outside the repository: each context's worktree identity and path.
      const common = realpathSync(join(main.path, ".git"));
      expect(records()).toEqual({
        [contextA]: { commonDir: common, worktreeId: "a", path: a, createdAt: expect.any(String) },
        [contextB]: { commonDir: common, worktreeId: "b", path: b, createdAt: expect.any(String) },
      });
    },
    CASE_MS,
  );
});

describe("off mode", () => {
  it(
    "is as without this feature: a worktree is indexed into the default graph, no context, no record",
    async () => {
      withEnv({ CGC_LIFECYCLE_AUTO_CREATE: "true" });
      const { b } = twoWorktrees();
      const { h, ui } = await start(b, /^cgc ready · fresh$/);
      expect(await status(h, ui)).toMatch(
        /^worktree: {3}linked worktree "b" — shares the default graph \(worktree\.mode off\)$/m,
      );
      await stop(h);
      expect(await repositoryPaths()).toEqual([b]);
      expect(await definitionsOf("only_on_branch_b")).toEqual([join(b, "pkg", "alpha.py")]);
      expect(await contexts()).toEqual([]);
      expect(existsSync(recordDir())).toBe(false);
    },
    CASE_MS,
  );
});

describe("consent", () => {
  it(
    "creating the context asks, naming it; declined → no context, unindexed; accepted → its own graph",
    async () => {
      withEnv({ CGC_WORKTREE_MODE: "isolate", CGC_FRESHNESS_WATCH: "on" });
      const { a } = twoWorktrees();
      const { h, ui, chip } = await start(a, /^cgc unindexed$/);
      expect(ui.notices.map((notice) => notice.message)).toEqual([
        expect.stringMatching(
          /^No code graph for .+: this worktree's CGC named context wt-a-[0-9a-f]{8} does not exist\. Run \/cgc index to create it .*lifecycle\.autoCreate/,
        ),
      ]);

      ui.confirmAnswer = false;
      await h.session.prompt("/cgc index");
      expect(ui.confirms).toEqual([
        {
          title: "Build a code graph?",
          message: expect.stringMatching(
            new RegExp(
              `^pi-cgc will create the CGC named context wt-a-[0-9a-f]{8} for this worktree, then run cgc index on ${a} in it`,
            ),
          ),
        },
      ]);
      expect(chip()).toBe("cgc unindexed");
      expect(await contexts()).toEqual([]);
      expect(existsSync(recordDir())).toBe(false);
      const pending = await status(h, ui);
      expect(pending).toMatch(
        /^readiness: {2}unindexed — this worktree's CGC named context wt-a-\w+ does not exist yet$/m,
      );
      expect(pending).toMatch(/^worktree: {3}linked worktree — context wt-a-\w+ does not exist yet/m);
      // The watcher gate: no context, no watcher (it would watch into the default graph or fail).
      expect(pending).toMatch(/^watcher: {4}on — not started: the worktree gate$/m);

      ui.confirmAnswer = true;
      await h.session.prompt("/cgc index");
      expect(chip()).toBe("cgc ready · fresh");
      const created = await contexts();
      expect(created.map((context) => context.name)).toEqual([expect.stringMatching(/^wt-a-[0-9a-f]{8}$/)]);
      await stop(h);
      expect(await repositoryPaths(created[0]?.name)).toEqual([a]);
      expect(await repositoryPaths()).toEqual([]);
    },
    CASE_MS,
  );
});

describe("identity", () => {
  it(
    "the same worktree id in two repositories gets two contexts; a record naming another repository's worktree is refused, naming both",
    async () => {
      withEnv({ CGC_WORKTREE_MODE: "isolate", CGC_LIFECYCLE_AUTO_CREATE: "true" });
      const x = featureWorktree("x");
      const y = featureWorktree("y");
      await stop((await start(x.feature, /^cgc ready · fresh$/)).h);
      await stop((await start(y.feature, /^cgc ready · fresh$/)).h);
      const made = records();
      const nameOf = (path: string) => Object.keys(made).find((name) => made[name]?.path === path) as string;
      const [nameX, nameY] = [nameOf(x.feature), nameOf(y.feature)];
      expect(nameX).toMatch(/^wt-feature-[0-9a-f]{8}$/);
      expect(nameY).toMatch(/^wt-feature-[0-9a-f]{8}$/);
      expect(nameX).not.toBe(nameY);

      // With names derived from the whole identity, a name reaches another worktree only through a record
      // written elsewhere (a copied agent dir) or a hash collision: write the record as y's session would have.
      const indexedAt = await graph("MATCH (r:Repository) RETURN r.indexed_at AS at", nameX);
      const recordX = join(recordDir(), `${nameX}.json`);
      writeFileSync(recordX, `${JSON.stringify(made[nameY], null, 2)}\n`);
      const before = readFileSync(recordX, "utf8");

      const { h, ui } = await start(x.feature, /^cgc unavailable$/);
      const refusal = ui.notices.filter((notice) => notice.level === "error");
      expect(ui.notices).toHaveLength(1);
      expect(refusal).toHaveLength(1);
      const message = refusal[0]?.message ?? "";
      expect(message).toContain(nameX);
      expect(message).toContain(`worktree "feature" of ${realpathSync(join(y.main.path, ".git"))} (at ${y.feature})`);
      expect(message).toContain(
        `this worktree "feature" of ${realpathSync(join(x.main.path, ".git"))} (at ${x.feature})`,
      );
      expect(ui.statusHistory).not.toContain("cgc corrupt");

      // Readiness says why; /cgc index does not ask or run; the record is not repaired; the context stays.
      expect(await status(h, ui)).toMatch(/^readiness: {2}unavailable — Worktree isolation refused: the CGC context /m);
      await h.session.prompt("/cgc index");
      expect(ui.confirms).toEqual([]);
      await stop(h);
      expect(readFileSync(recordX, "utf8")).toBe(before);
      expect((await contexts()).map((context) => context.name).sort()).toEqual([nameX, nameY].sort());
      expect(await graph("MATCH (r:Repository) RETURN r.indexed_at AS at", nameX)).toEqual(indexedAt);
    },
    CASE_MS,
  );
});

describe("a pruned worktree", () => {
  it(
    "the next session gives one notice naming its context and how to remove it; the context stays",
    async () => {
      withEnv({ CGC_WORKTREE_MODE: "isolate", CGC_LIFECYCLE_AUTO_CREATE: "true" });
      const { main, b } = twoWorktrees();
      await stop((await start(b, /^cgc ready · fresh$/)).h);
      const [context] = (await contexts()).map((listed) => listed.name);
      expect(context).toMatch(/^wt-b-[0-9a-f]{8}$/);

      rmSync(b, { recursive: true, force: true });
      git(main.path, ["worktree", "prune"]);
      expect(existsSync(join(main.path, ".git", "worktrees", "b"))).toBe(false);

      withEnv({ CGC_LIFECYCLE_AUTO_CREATE: "false" });
      const orphanNotices = (ui: RecordingUi) =>
        ui.notices.filter((notice) => notice.message.includes(context as string));
      const first = await start(main.path, /^cgc unindexed$/);
      expect(orphanNotices(first.ui)).toEqual([
        {
          level: "warning",
          message: expect.stringMatching(
            new RegExp(
              `^The git worktree "b" of .+ \\(at ${b}\\) no longer exists, but its CGC named context ${context} is still there .*cgc_contexts tool \\(action delete, name ${context}\\), which asks you first`,
            ),
          ),
        },
      ]);
      await stop(first.h);

      const second = await start(main.path, /^cgc unindexed$/);
      expect(orphanNotices(second.ui)).toEqual([]); // one notice, ever
      expect(await status(second.h, second.ui)).toContain(`worktree gone, context kept: ${context}`);
      await stop(second.h);

      expect((await contexts()).map((listed) => listed.name)).toEqual([context]);
      expect(records()[context as string]).toMatchObject({
        worktreeId: "b",
        orphanNoticeAt: expect.any(String),
      });
    },
    CASE_MS,
  );
});

describe("a new worktree from its main checkout's graph", () => {
  it(
    "the consent says so; the new context is the main checkout's graph with its paths moved and the worktree's own change applied",
    async () => {
      withEnv({ CGC_WORKTREE_MODE: "isolate" });
      const { main, feature } = featureWorktree("frommain");
      const alpha = join(feature, "pkg", "alpha.py");
      writeFileSync(alpha, `${readFileSync(alpha, "utf8")}\n\ndef only_on_feature(value):\n    return alpha(value)\n`);
      commitAll(feature, "only on feature");

      // The main checkout, indexed by pi-cgc's own index; its engine's cache is saved when the session ends.
      const inMain = await start(main.path, /^cgc unindexed$/);
      inMain.ui.confirmAnswer = true;
      await inMain.h.session.prompt("/cgc index");
      expect(inMain.chip()).toBe("cgc ready · fresh");
      await stop(inMain.h);

      const { h, ui, chip } = await start(feature, /^cgc unindexed$/);
      ui.confirmAnswer = true;
      await h.session.prompt("/cgc index");
      expect(ui.confirms).toEqual([
        {
          title: "Build a code graph?",
          // As git sees them: alpha.py, and the .cgcignore cgc wrote into the main checkout.
          message: expect.stringContaining(
            `pi-cgc starts it from the main checkout's graph (${main.path}), its paths moved: 2 files differ, applied as one update`,
          ),
        },
      ]);
      expect(chip()).toBe("cgc ready · fresh");
      // The engine's last line: the copy was taken over (a fallback to the full index says why and prints none).
      expect(ui.statusHistory).toContainEqual(
        expect.stringMatching(/\d+ files from the main checkout's graph in [\d.]+ s/),
      );

      // An edit in the worktree: the engine keeps the worktree's context fresh, warm from the cache the copy left.
      h.faux.setResponses([
        fauxAssistantMessage(
          fauxToolCall("edit", {
            path: "pkg/text.py",
            edits: [
              {
                oldText: "def orphan(value):",
                newText: "def wt_caller(value):\n    return normalize(value)\n\n\ndef orphan(value):",
              },
            ],
          }),
          { stopReason: "toolUse" },
        ),
        fauxAssistantMessage(fauxToolCall("cgc_relations", { relation: "callers", target: "normalize" }), {
          stopReason: "toolUse",
        }),
        fauxAssistantMessage("done"),
      ]);
      await h.session.prompt("add a caller of normalize, then list its callers");
      expect(toolText(h)?.text).toMatch(/^- wt_caller {2}pkg\/text\.py:\d+/m);
      await waitFor(() => chip() === "cgc ready · fresh", "fresh after the edit", 60_000);
      expect(ui.statusHistory.filter((text) => /^cgc (syncing|rebuilding)…/.test(text ?? ""))).toEqual([]);
      expect(await status(h, ui)).toMatch(
        /^engine: {5}ready — cgc 0\.6\.13, kuzudb, \d+ files, started in [\d.]+ s \(warm\).*last update: 1 file in \d+ ms/m,
      );
      await stop(h);

      const [created] = (await contexts()).map((context) => context.name);
      expect(await repositoryPaths(created)).toEqual([feature]);
      expect(await definitionsOf("only_on_feature", created)).toEqual([alpha]);
      expect(await definitionsOf("alpha", created)).toEqual([alpha]);
      // Nothing of the main checkout's paths came along.
      const stray = await graph(
        `MATCH (n) WHERE n.path STARTS WITH '${main.path}/' OR n.path = '${main.path}' RETURN count(n) AS n`,
        created,
      );
      expect(stray).toEqual([{ n: 0 }]);
      // The callers the worktree's graph answers are its own file's.
      const callers = await graph(
        "MATCH (a:Function)-[:CALLS]->(b:Function {name: 'alpha'}) RETURN a.name AS name, a.path AS path ORDER BY name",
        created,
      );
      expect(callers).toContainEqual({ name: "only_on_feature", path: alpha });
      expect(await definitionsOf("wt_caller", created)).toEqual([join(feature, "pkg", "text.py")]);
    },
    CASE_MS,
  );
});
