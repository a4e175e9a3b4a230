// What each `/cgc` verb does (command.ts registers the command and imports this on its first use).
// Destructive or workspace-writing verbs ask first and name the effect and the path (ADR 0003); without a UI
// the answer is no.
import { existsSync } from "node:fs";
import { join } from "node:path";
import type { ExtensionCommandContext } from "@mariozechner/pi-coding-agent";
import { shownBackend } from "../cgc/backend.ts";
import { countIndexFiles, describeIndexCost, estimateIndex, type IndexCost } from "../cgc/index-cost.ts";
import { cgcInterpreter } from "../cgc/interpreter.ts";
import { describeLiteNetwork } from "../cgc/lite-gate.ts";
import { indexResumed, indexSkipped } from "../cgc/parse.ts";
import { describeWatcher, watcherOf } from "../freshness/watcher.ts";
import type { CgcSession } from "../lifecycle/session.ts";
import type { State } from "../state/model.ts";
import { count } from "../state/words.ts";
import { differingFiles } from "../workspace/main-graph.ts";
import type { CommandHooks, Show, Verb } from "./command.ts";
import { openSettings } from "./settings.ts";
import { renderConfigTable, renderStatus } from "./status.ts";

/** What the verbs use of a session. */
export type VerbSession = Pick<
  CgcSession,
  | "backend"
  | "config"
  | "env"
  | "fullIndexThrough"
  | "loaded"
  | "maintenanceRunning"
  | "notices"
  | "present"
  | "refresh"
  | "reloadConfig"
  | "root"
  | "runMaintenance"
  | "runner"
  | "store"
  | "worktree"
>;

export interface VerbContext {
  session: VerbSession;
  ctx: ExtensionCommandContext;
  show: Show;
  hooks: CommandHooks;
}

export async function runVerb(verb: Verb, rest: string[], { session, ctx, show, hooks }: VerbContext): Promise<void> {
  switch (verb) {
    case "status":
      // The first verdict may still be on its way (print mode runs the command at once): wait for it. Busy
      // and unknown are verdicts of a moment (a lock, a timeout): re-check them, as the busy notice promises.
      if (!session.store.get().probed || (isTransient(session.store.get()) && !session.maintenanceRunning))
        await session.refresh();
      show(
        renderStatus({
          state: session.store.get(),
          root: session.root,
          backend: session.backend,
          reportedBackend: session.store.get().facts?.reportedBackend,
          executable: session.runner.executable,
          maintenanceRunning: session.maintenanceRunning,
          watcher: describeWatcher(session.config()["freshness.watch"], watcherOf(session)),
          engine: hooks.engine(),
          fullIndexThroughEngine: session.fullIndexThrough() !== undefined,
          worktree: session.worktree.describe(),
          liteNetwork:
            (session.store.get().facts?.reportedBackend ?? session.backend)?.name === "falkordb"
              ? describeLiteNetwork(session.env)
              : undefined,
        }),
      );
      return;
    case "index":
      return indexVerb(session, ctx, rest.includes("--force") || rest.includes("-f"), show);
    case "sync":
      show(await hooks.sync(ctx));
      return;
    case "doctor": {
      const result = await session.runner.run(["doctor"], { kind: "query", cwd: session.root, takesLock: false });
      const output = session.present(`${result.stderr}\n${result.stdout}`.trim());
      show(`cgc doctor (${result.code}):\n${output.text}`, result.code === "OK" ? "info" : "warning");
      return;
    }
    case "report":
      return reportVerb(session, ctx, show, hooks);
    case "config":
      return configVerb(session, ctx, show, hooks);
  }
}

/** cgc writes a default .cgcignore into the indexed folder when it finds none (0.6.13, unconditionally). */
function cgcignoreNote(root: string): string {
  return existsSync(join(root, ".cgcignore")) ? "" : ` cgc also writes a default ${join(root, ".cgcignore")}.`;
}

/** The files cgc would read and an estimate of the time, or undefined when they cannot be had quickly. */
async function indexCost(session: VerbSession, backend: string | undefined): Promise<IndexCost | undefined> {
  const interpreter = cgcInterpreter(session.runner.executable, session.env);
  if (!interpreter.ok) return undefined;
  const counted = await countIndexFiles(interpreter.python, session.root, session.env);
  const indexer = session.fullIndexThrough() !== undefined ? "pi-cgc" : "cgc";
  return "files" in counted ? estimateIndex(counted, backend, indexer) : undefined;
}

/** What the new worktree's index will do when it starts from the main checkout's graph (lifecycle/maintenance.ts). */
async function fromMainLine(session: VerbSession): Promise<string | undefined> {
  const main = session.fullIndexThrough() !== undefined ? session.worktree.fromMain() : undefined;
  if (!main || !("root" in main)) return undefined;
  const differ = await differingFiles(main.root, session.root);
  const files = differ === undefined ? "the files that differ" : count(differ, "file");
  return ` pi-cgc starts it from the main checkout's graph (${main.root}), its paths moved: ${files} differ, applied as one update; a full index runs instead if that graph cannot be used.`;
}

const isTransient = (state: State) => state.readiness === "busy" || state.readiness === "unknown";

async function indexVerb(session: VerbSession, ctx: ExtensionCommandContext, force: boolean, show: Show) {
  // Whether a worktree's context exists (and so what the confirmation must name) is known after the first probe.
  if (!session.store.get().probed) await session.refresh();
  const state = session.store.get();
  const backend = shownBackend(state.facts?.reportedBackend, session.backend)?.name;
  // Without a known name, "the its configured backend backend" was what users read.
  const into = backend ? `the ${backend} backend` : "cgc's configured backend";
  if (state.readiness === "unavailable") return show(`cgc is not available: ${state.reason}`, "warning");
  if (session.maintenanceRunning) return show(`cgc is already ${state.activity}; wait for it to finish.`, "warning");
  if (!force && state.readiness === "ready") {
    return show(`${session.root} is already indexed. /cgc sync refreshes changed files; /cgc index --force rebuilds.`);
  }
  const scope = session.worktree.state;
  const inContext = scope.kind === "active" ? ` in the CGC named context ${scope.name}` : "";
  const cost = await indexCost(session, backend);
  const fromMain = scope.kind === "pending" ? await fromMainLine(session) : undefined;
  const costLine = fromMain ?? (cost ? ` ${describeIndexCost(cost)}` : "");
  const confirmed =
    scope.kind === "pending"
      ? await ctx.ui.confirm(
          "Build a code graph?",
          `pi-cgc will create the CGC named context ${scope.name} for this worktree, then run cgc index on ${session.root} in it, writing a new graph into ${into}.${costLine}${cgcignoreNote(session.root)}`,
        )
      : force
        ? await ctx.ui.confirm(
            "Replace the code graph?",
            `cgc index --force deletes the existing graph of ${session.root}${inContext} (${backend ? `${backend} backend` : "cgc's configured backend"}) and rebuilds it from scratch.${costLine}`,
          )
        : await ctx.ui.confirm(
            "Build a code graph?",
            `pi-cgc will run cgc index on ${session.root}${inContext}, writing a new graph into ${into}.${costLine}${cgcignoreNote(session.root)}`,
          );
  if (!confirmed) return show("Not indexed: the confirmation was declined.");
  const announced = session.notices.has("indexed");
  const result = await session.runMaintenance(
    force ? "rebuilding" : "indexing",
    force ? ["index", "--force", session.root] : ["index", session.root],
    "index",
    cost ? { ms: cost.estimateMs, files: cost.files } : undefined,
  );
  if (result.code === "OK" && !force && indexSkipped(result.stdout)) {
    return show(
      `cgc did not index ${session.root}: it found a graph of it already there, which pi-cgc did not build, and skipped. ` +
        "That graph is not called fresh; /cgc index --force rebuilds it.",
      "warning",
    );
  }
  if (result.code === "OK" && !force && indexResumed(result.stdout)) {
    return show(
      `Indexed ${session.root}, but cgc resumed a graph another run left unfinished and kept what that run wrote: ` +
        "possibly stale until a full rebuild (the next sync does one; /cgc index --force now).",
      "warning",
    );
  }
  // The follow-up probe's notice ("Indexed: <path> — N files, …") already said it, with the counts.
  if (result.code === "OK" && !announced && session.notices.has("indexed")) return;
  show(result.code === "OK" ? `Indexed ${session.root}.` : `Indexing ended ${result.code}: ${result.reason}`);
}

async function reportVerb(session: VerbSession, ctx: ExtensionCommandContext, show: Show, hooks: CommandHooks) {
  if (session.store.get().readiness !== "ready") return show("No graph to report on yet (see /cgc status).", "warning");
  const path = join(session.root, "CGC_REPORT.md");
  const confirmed = await ctx.ui.confirm(
    "Write a report?",
    `cgc report will write ${path} (replacing it if it exists).`,
  );
  if (!confirmed) return show("No report written: the confirmation was declined.");
  const result = await session.runner.run(["report", "--output", path, "--repo", session.root], {
    kind: "query",
    cwd: session.root,
  });
  // Written or not (a failed report may leave a part), the file is in the tree a full index reads.
  hooks.written([path]);
  show(result.code === "OK" ? `Report written to ${path}.` : `cgc report ended ${result.code}: ${result.reason}`);
}

async function configVerb(session: VerbSession, ctx: ExtensionCommandContext, show: Show, hooks: CommandHooks) {
  session.reloadConfig();
  const loaded = session.loaded;
  if (!ctx.hasUI) return show(renderConfigTable(loaded.values, loaded.sources));
  const saved = await openSettings(ctx, loaded);
  if (saved === "no-tui") return show(renderConfigTable(loaded.values, loaded.sources));
  if (saved !== "none") {
    hooks.written([saved]); // the project's .pi/cgc.json is a file cgc indexes
    session.reloadConfig();
    show(`Saved to ${saved}. Some settings apply from the next session (cgc.executable, timeouts).`);
  }
}
