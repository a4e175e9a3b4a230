// Incremental updates (ADR 0011): the session's edits reach the graph through pi-cgc's engine, debounced
// and coalesced while the agent works, each one read back before the graph is called fresh. The engine
// runs only where it was proven (a cgc version it was checked on, the workspace's default graph); anywhere
// else, after a crash or when an update cannot be trusted, the caller falls back to a full rebuild and
// the user is told once why.
import { holdsExclusiveLock } from "../cgc/backend.ts";
import { engineScriptPresent, PROVEN_CGC_VERSIONS } from "../cgc/engine-script.ts";
import { cgcInterpreter } from "../cgc/interpreter.ts";
import type { CgcSession } from "../lifecycle/session.ts";
import { freshnessVerified, graphWrittenOutside, maintenanceSettled, maintenanceStarted } from "../state/model.ts";
import { count } from "../state/words.ts";
import { CLOCK_SLACK_MS, lastTouched } from "../workspace/tree.ts";
import {
  type AdoptedCounts,
  type Engine,
  engineModelKept,
  type PossibleSite,
  type PossibleTarget,
  startEngine,
} from "./engine.ts";

const NOTHING_TO_UPDATE = "Nothing to update: no file changed since the graph was verified.";

// Not unref'd: a pause inside an update is part of work pi is waiting for.
const pause = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Quiet time after the last observed change before an update starts: one update per burst of edits. */
export const DEBOUNCE_MS = 300;
/** Longest a graph tool waits for a pending update before it answers and names what is pending. */
export const SETTLE_BOUND_MS = 5_000;
/** Longest it waits for the engine's start (a warm start reads its cache; a cold one parses the tree). */
const SETTLE_START_MS = 30_000;
/**
 * Budget of a possible-callers request: the engine answers from memory. Measured at 1 000 files: one target
 * 3 ms, 300 targets 0.4 s, the first request 1.8 s (it builds each file's view), 856 `__init__`s 1.6–2.3 s. One
 * queued behind an update that outlives it is answered unknown, and the engine runs on.
 */
const POSSIBLE_BUDGET_MS = 20_000;
/** Budget of the engine's start: a cold start parses the whole tree. */
const START_BUDGET_MS = 600_000;
/**
 * Where the database allows one opener, the engine keeps it open this long after an update and its read-back
 * (they come back to back), and pi-cgc's own cgc calls wait until it has let go.
 */
const EMBEDDED_HOLD_MS = 300;
/**
 * An update that met the lock is tried once more, a second later (a lease server of ours still letting go).
 * Each attempt already waits: cgc's own database open retries a held Kùzu lock for 7.5 s (0.5, 1, 2, 4 s).
 * More attempts only kept the chip at "updating…" for most of a minute while a user's `cgc watch` held it.
 */
const BUSY_RETRIES = 1;
const BUSY_SKIP = "Update skipped: ";

export interface EngineUpdates {
  /** The engine is ready or starting: edits go through it, and the full-rebuild sync stands down. */
  readonly ready: boolean;
  /** Whether it runs, or why not — one line for /cgc status. */
  describe(): string;
  /** An observed change: update once the burst is over. */
  schedule(): void;
  /**
   * Applies every changed path now; undefined when the engine cannot (the caller rebuilds instead). `asked`:
   * the user asked (/cgc sync), so a run it joined that met the lock before is followed by a try of its own.
   */
  run(asked?: boolean): Promise<string | undefined>;
  /**
   * A full index or rebuild completed: a running engine re-reads the tree the graph now reflects. `startedAt`:
   * when that run began; a changed path last touched before it was read by the run as it is now.
   */
  rebuilt(startedAt?: number): void;
  /**
   * Something else writes (or wrote) the graph (pi-cgc's `cgc watch`, or one outside pi-cgc; `by` says which):
   * a running engine's model no longer describes it. The engine is stopped; the next change starts it again from
   * the disk, untrusted, and compares the graph with a full index of the tree before it writes (ADR 0011).
   */
  writtenElsewhere(by: string): void;
  /** Waits (bounded) for a pending update; returns the changed paths it did not get to. */
  settle(signal?: AbortSignal): Promise<string[]>;
  /**
   * Each target's possible call sites from the engine's parse of the tree, or why they are unknown (the engine
   * does not run here, or failed). An engine not started yet starts now, and its start is waited for (bounded).
   */
  possible(targets: readonly PossibleTarget[], signal?: AbortSignal): Promise<PossibleAnswer>;
  stop(): Promise<void>;
}

export type PossibleAnswer = { sites: PossibleSite[][] } | { unknown: string };

/** What the engine's updates need of a session. */
export type UpdatingSession = Pick<
  CgcSession,
  | "backend"
  | "config"
  | "disposed"
  | "env"
  | "ledger"
  | "notices"
  | "provenance"
  | "refresh"
  | "root"
  | "runner"
  | "store"
  | "worktree"
>;

/**
 * `fellBack`: the engine could not make the graph fresh (it stopped after a failure, or found the graph written
 * by another process); the caller's full rebuild takes over (an update the timer started has no caller
 * waiting to fall back).
 */
/** What an adoption found, for /cgc status. */
function adoptionNote(adopted: AdoptedCounts, ms: number): string {
  const wrote = adopted.files + adopted.links + adopted.stale;
  return `graph adopted in ${ms} ms (${wrote === 0 ? "nothing differed from a full index" : `${count(wrote, "file")} written again`})`;
}

export function createEngineUpdates(session: UpdatingSession, fellBack: () => void): EngineUpdates {
  let engine: Engine | undefined;
  let why = "waiting for the first probe";
  let last = "";
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<string | undefined> | undefined;
  let again = false;
  /** A full index of pi-cgc's completed before the engine was up: it is told so before its first update. */
  let rebuiltBeforeReady = false;
  /** The engine's answer to the last `rebuilt`: updates wait for it (the engine answers in order anyway). */
  let rebuiltDone: Promise<unknown> = Promise.resolve();
  /** When the last full index or rebuild began (see tellRebuilt). */
  let rebuildStartedAt: number | undefined;

  /** An engine being stopped because its model went stale: a new one starts only after it is gone. */
  let stopping: Promise<void> | undefined;
  let notStarted = "not started yet: it starts at the first change, applies it and stays";

  /** The engine's comparison of a graph it had no model of (adopt): updates wait for it. */
  let adoptDone: Promise<unknown> = Promise.resolve();
  let adoptPending = false;
  /** What the engine's last adoption found, for /cgc status. */
  let adoptedNote = "";
  let adoptionConsidered = false;

  const ready = () => engine?.phase.phase === "ready";
  session.store.subscribe((state, previous) => {
    if (state.readiness !== "ready" || previous.readiness === "ready") return;
    // A rebuild settles before the re-probe that ends it says the graph is ready: the engine starts then.
    if (rebuiltBeforeReady && !engine) consider();
    // A graph the engine has no model of (written by cgc outside pi-cgc, or its cache lost): the engine starts now
    // and adopts it in the background, so that the session's first edit is an ordinary update. Not beside a
    // `cgc watch` (pi-cgc's or the user's): the watcher keeps the graph then.
    const watched = session.config()["freshness.watch"] !== "off" || state.otherWriter;
    if (!adoptionConsidered && !engine && session.config()["freshness.autoSync"] && !watched) {
      adoptionConsidered = true;
      if (!engineModelKept(session.ledger.engineCacheDir, session.root)) consider();
    }
  });

  /** Why the engine may not run here (`tell`: the user expected it and is told once), or "wait" for the probe. */
  const refusal = (): { reason: string; tell: boolean } | "wait" | undefined => {
    const state = session.store.get();
    const version = state.facts?.cgcVersion;
    if (!session.config()["freshness.engine"]) return { reason: "off (freshness.engine is false)", tell: false };
    if (state.readiness !== "ready" || !version) return "wait";
    if (!PROVEN_CGC_VERSIONS.includes(version))
      return {
        reason: `not used: it was proven on cgc ${PROVEN_CGC_VERSIONS.join(", ")}, this is cgc ${version}`,
        tell: true,
      };
    if (!engineScriptPresent()) return { reason: "not used: its script is missing from the package", tell: true };
    return undefined;
  };

  /** Starts the engine once the probe has said what cgc this is; records why not otherwise. */
  const consider = () => {
    if (engine || session.disposed) return;
    if (stopping) return void stopping.then(consider);
    const refused = refusal();
    if (refused === "wait") return;
    const interpreter = refused ? undefined : cgcInterpreter(session.runner.executable, session.env);
    if (refused || !interpreter?.ok) {
      why = refused?.reason ?? `not used: ${interpreter && !interpreter.ok ? interpreter.reason : "no interpreter"}`;
      if (refused?.tell !== false) fallBack(why);
      return;
    }
    why = "starting";
    adoptedNote = "";
    engine = startEngine({
      runner: session.runner,
      python: interpreter.python,
      root: session.root,
      cacheDir: session.ledger.engineCacheDir,
      parseStore: { dir: session.ledger.parseStoreDir, mb: session.config()["engine.parseStoreMb"] },
      startBudgetMs: START_BUDGET_MS,
      holdMs: holdsExclusiveLock(session.backend?.name) ? EMBEDDED_HOLD_MS : undefined,
      // A linked worktree's graph is its own named context (worktree.mode isolate), named as cgc's MCP server
      // gets it (by its database and path), so that both meet at the same FalkorDB Lite daemon where that is it.
      context: session.worktree.subcommandArgs()[1],
      env: session.worktree.serverEnv(),
    });
    void engine.started.then((phase) => {
      if (phase.phase === "ready") {
        why = "";
        // Unless something wrote the graph since (the rebuild then to come will tell it again).
        const since = session.store.get().rebuildNeeded || session.ledger.abandonedRunNote();
        if (rebuiltBeforeReady && !phase.facts.trusted && !since) tellRebuilt();
        else if (!phase.facts.trusted && !since) adopt();
        if (session.store.get().changedPaths.length > 0) schedule();
      } else if (!session.disposed) {
        why = `not used: ${"reason" in phase ? phase.reason : "it did not start"}`;
        fallBack(why);
      }
    });
  };

  const fallBack = (reason: string) => {
    session.notices.once(
      "engine-fallback",
      `pi-cgc's incremental engine is ${reason}; each sync is a full rebuild (cgc index --force) instead.`,
      "warning",
    );
  };

  /** The engine broke mid-session: stop it and let the full rebuild take over. */
  const retire = (reason: string) => {
    why = `stopped after a failure: ${reason}`;
    void engine?.stop();
    fallBack(why);
    fellBack();
  };

  /**
   * The graph was just rebuilt from the tree by a full index: what the engine reads from the disk now is what
   * the graph holds, but for the paths changed since the index read them. Told so, its first update is an
   * ordinary one, not the rewrite of every file's links an engine pays when it cannot know (ADR 0011).
   */
  const tellRebuilt = () => {
    rebuiltBeforeReady = false;
    const current = engine;
    if (!current) return;
    // The paths the engine cannot take as the graph has them: changed, and not read by the rebuild as they are
    // now (gone, or touched after it began). The others would make its next update of them write every file's
    // links again, as an engine that read the tree after a change must.
    const since = rebuildStartedAt;
    const unknown = session.store.get().changedPaths.filter((path) => {
      const touched = lastTouched(path);
      return since === undefined || touched === undefined || touched >= since - CLOCK_SLACK_MS;
    });
    rebuiltDone = current.rebuilt(unknown, session.config()["timeouts.maintenanceMs"]).then((answer) => {
      if (!answer.ok && !session.disposed) retire(answer.reason);
    });
  };

  /**
   * The engine started without the graph's model: it compares the graph with a full index of the tree it read and
   * writes only what differs (engine/pi_cgc_engine/adopt.py), before any update of this session. A graph cgc wrote
   * of the same tree gets nothing written.
   */
  const adopt = () => {
    const current = engine;
    // Nothing is written beside another writer: the first update, which waits for it to stop, compares instead.
    if (!current || session.store.get().otherWriter) return;
    const settleNote = session.ledger.runStarted("adopt");
    const once = () => current.adopt(session.config()["timeouts.maintenanceMs"]);
    const asked = holdsExclusiveLock(session.backend?.name) ? session.runner.exclusive(once) : once();
    adoptPending = true;
    adoptDone = asked.then((answer) => {
      adoptPending = false;
      // An answer given before any write leaves no unfinished run behind.
      const wroteNothing = !answer.ok && ["UNSUPPORTED", "NO_GRAPH", "REBUILD"].includes(answer.code);
      settleNote(answer.ok ? "OK" : wroteNothing ? "SKIPPED" : answer.code === "BUSY" ? "BUSY" : "FAILED");
      if (session.disposed || engine !== current) return;
      if (!answer.ok) {
        // BUSY, UNSUPPORTED: the first update goes as before. REBUILD: so much differs that a full index is faster.
        if (answer.code === "REBUILD") fellBack();
        return;
      }
      const { stampBefore, stampAfter, adopted, ms } = answer.value;
      const outside = session.provenance.ownWrite(stampBefore, stampAfter, settleNote.windowId);
      if (outside) {
        session.store.apply((state) => graphWrittenOutside(state, outside));
        session.ledger.writtenElsewhere();
        fellBack();
        return;
      }
      if (adopted) adoptedNote = adoptionNote(adopted, ms);
    });
  };

  const schedule = () => {
    if (!ready() || !session.config()["freshness.autoSync"]) return;
    if (timer) clearTimeout(timer);
    timer = setTimeout(() => {
      timer = undefined;
      void run();
    }, DEBOUNCE_MS);
    timer.unref();
  };

  const applyOnce = async (current: Engine): Promise<string | undefined> => {
    await rebuiltDone;
    if (adoptPending) {
      // A graph the engine had no model of is compared with the tree first (adopt): part of making the edit fresh.
      session.store.apply((state, now) => maintenanceStarted(state, "updating", "update", now));
      await adoptDone;
      session.store.apply((state, now) => maintenanceSettled(state, "OK", now));
    }
    // No graph to update (the last update found it gone, say): the probe's verdict stands, and a full rebuild
    // is not the answer either (an unindexed workspace is indexed only as the user chose).
    const { readiness, reason } = session.store.get();
    if (readiness === "unindexed") return `Nothing to update: cgc is unindexed (${reason}).`;
    // A previous run that never settled left a graph of unknown shape: only a full rebuild knows it.
    if (session.ledger.abandonedRunNote()) return undefined;
    const { changedPaths: paths, freshness, rebuildNeeded } = session.store.get();
    // Written by another process: which files it left wrong is not known, so the engine cannot target them.
    if (rebuildNeeded) return undefined;
    // Stale for a reason no path names (a moved HEAD with no file changed, say): the full rebuild decides.
    if (paths.length === 0) return freshness === "possibly-stale" ? undefined : NOTHING_TO_UPDATE;
    const budget = session.config()["timeouts.maintenanceMs"];
    session.store.apply((state, now) => maintenanceStarted(state, "updating", "update", now));
    const settleNote = session.ledger.runStarted("update");
    const { updated, checked } = await talk(current, paths, budget);
    // A session that ended meanwhile cannot read the update back nor remember the tree it wrote: the run stays
    // unfinished for the next session, which then rebuilds rather than trust a graph no one verified.
    if (session.disposed) {
      settleNote("FAILED");
      return "the session ended";
    }
    settleNote(updated.ok || updated.code === "REBUILD" ? "OK" : updated.code === "BUSY" ? "BUSY" : "FAILED");
    // Set aside while it ran (another writer: `writtenElsewhere`): what it read back says nothing of what that
    // writer left, and it is no failure of the engine's. The engine started next takes the changes.
    if (engine !== current) {
      session.store.apply((state, now) => maintenanceSettled(state, updated.ok ? "OK" : updated.code, now));
      return `Update set aside: the engine was ${notStarted}.`;
    }
    if (!updated.ok && updated.code === "BUSY") {
      session.store.apply((state, now) => maintenanceSettled(state, "BUSY", now, `update: ${updated.reason}`));
      session.notices.once(
        "skipped-busy",
        "cgc update skipped: another cgc process holds the database lock.",
        "warning",
      );
      await session.refresh(); // readiness is re-derived after every settled run: busy, as the lock says
      return `${BUSY_SKIP}${updated.reason}`;
    }
    // The graph lost the workspace's index under the session (a `cgc delete`, a server restarted without its
    // data): the engine wrote nothing, and the probe says what the graph is now (unindexed: the seeds' path).
    if (!updated.ok && updated.code === "NO_GRAPH") {
      session.store.apply((state, now) => maintenanceSettled(state, "FAILED", now, `update: ${updated.reason}`));
      await session.refresh();
      return `Update not applied: ${updated.reason}.`;
    }
    // The engine read the tree from the disk (the graph was written elsewhere), so this update would write every
    // file's links again; on KùzuDB pi-cgc's own full index does that many times faster (engine/pi_cgc_engine/
    // engine.py, REBUILD_RATHER_FROM). Nothing was written: the full rebuild takes the changes, and the engine
    // then reads the tree it wrote (rebuilt), trusted.
    if (!updated.ok && updated.code === "REBUILD") {
      session.store.apply((state, now) => maintenanceSettled(state, "OK", now));
      fellBack();
      return undefined;
    }
    if (!checked.ok) {
      session.store.apply((state, now) => maintenanceSettled(state, "FAILED", now, `update: ${checked.reason}`));
      retire(checked.reason);
      return undefined;
    }
    session.store.apply((state, now) => maintenanceSettled(state, "OK", now));
    // Another process stamped the graph between the stamp this session last knew and this update (a user's
    // `cgc index`, say): what it left is not the engine's model, so the update is not a verified graph; only
    // a full rebuild makes it one (ADR 0011, "Other writers").
    const outside = updated.ok
      ? session.provenance.ownWrite(updated.value.stampBefore, updated.value.stampAfter, settleNote.windowId)
      : undefined;
    if (outside) {
      session.store.apply((state) => graphWrittenOutside(state, outside));
      session.ledger.writtenElsewhere(); // as the probe does when it finds such a stamp
      fellBack();
      return undefined;
    }
    const reflected = updated.ok ? checked.value.reflected : [];
    session.store.apply((state, now) => freshnessVerified(state, reflected, now));
    if (updated.ok) {
      const { ms, lockMs, rewritten, adopted, bulk } = updated.value;
      // An engine without the graph's model compared it with the tree in this update (adopt).
      if (adopted) adoptedNote = adoptionNote(adopted, ms);
      last = `last update: ${count(paths.length, "file")} in ${ms} ms (database held ${lockMs} ms; links of ${count(rewritten ?? 0, "other file")} rewritten${bulk ? "; written in bulk" : ""})`;
    }
    const { otherWriter } = session.store.get();
    if (otherWriter) return `Updated ${session.root}, but ${otherWriter}.`;
    const missing = paths.length - reflected.length;
    return missing > 0
      ? `Updated ${session.root}, but ${count(missing, "changed file")} ${missing === 1 ? "is" : "are"} not reflected yet; the graph stays possibly stale.`
      : `Updated ${session.root}: the graph reflects ${count(reflected.length, "changed file")}.`;
  };

  /** The update and its read-back; never beside pi-cgc's own cgc calls where the database has one opener. */
  const talk = async (current: Engine, paths: string[], budget: number) => {
    const exclusive = holdsExclusiveLock(session.backend?.name);
    const once = async () => {
      const updated = await current.update(paths, budget);
      const checked = updated.ok ? await current.verify(paths, session.config()["timeouts.queryMs"]) : updated;
      if (exclusive) await pause(EMBEDDED_HOLD_MS + 200); // until the engine has let go of the database
      return { updated, checked };
    };
    for (let attempt = 0; ; attempt++) {
      const answer = exclusive ? await session.runner.exclusive(once) : await once();
      if (answer.updated.ok || answer.updated.code !== "BUSY" || attempt >= BUSY_RETRIES || session.disposed)
        return answer;
      await pause(1_000 * (attempt + 1));
    }
  };

  /** One update at a time; a change observed meanwhile runs another right after. */
  const run = async (asked = false): Promise<string | undefined> => {
    // An engine set aside for another writer is being replaced: the next one takes the changes.
    if (stopping) {
      await stopping;
      consider();
    }
    // The first change starts the engine: its updates wait for the start rather than fall back.
    if (engine?.phase.phase === "starting") await engine.started;
    if (!engine || !ready()) return undefined;
    if (running) {
      again = true;
      const joined = await running;
      // That run met the lock before the user asked (it may still have been re-probing): the lock may be
      // gone by now, and the user's request is a try of its own.
      return asked && joined?.startsWith(BUSY_SKIP) && !session.disposed ? run() : joined;
    }
    const current = engine;
    running = (async () => {
      let message: string | undefined;
      let said: string | undefined;
      let busy = false;
      do {
        again = false;
        message = await applyOnce(current);
        busy = message?.startsWith(BUSY_SKIP) ?? false;
        // A run joined while it worked finds nothing left: what the run did is the answer, not that.
        if (message !== NOTHING_TO_UPDATE || said === undefined) said = message;
        // After a skip the lock is still held as far as anyone knows: the next try is the user's (/cgc sync).
      } while (again && !busy && message !== undefined && ready() && !session.disposed);
      return message === undefined ? undefined : said;
    })().finally(() => {
      running = undefined;
    });
    return running;
  };

  const describe = (): string => {
    if (engine?.phase.phase === "ready") {
      const { cgcVersion, backend, files, startMs, warm } = engine.phase.facts;
      const started = `started in ${(startMs / 1000).toFixed(1)} s${warm ? " (warm)" : ""}`;
      const notes = [adoptedNote, last].filter((note) => note !== "");
      return `ready — cgc ${cgcVersion}, ${backend}, ${files} files, ${started}${notes.map((note) => `; ${note}`).join("")}`;
    }
    if (engine) return why;
    const refused = refusal();
    if (refused === "wait") return why;
    return refused ? refused.reason : notStarted;
  };

  return {
    get ready() {
      return ready() || engine?.phase.phase === "starting";
    },
    describe,
    schedule() {
      consider();
      schedule();
    },
    run: (asked) => {
      consider();
      return run(asked);
    },
    rebuilt(startedAt) {
      rebuildStartedAt = startedAt;
      if (ready()) return tellRebuilt();
      // Not up yet: it starts now rather than at the first change, so that the tree it reads is the one the
      // graph was just built from and its cache becomes the graph's model (also for the next session).
      rebuiltBeforeReady = true;
      consider();
    },
    writtenElsewhere(by) {
      session.ledger.writtenElsewhere();
      const current = engine;
      if (!current) return;
      engine = undefined;
      notStarted =
        `stopped: ${by}; the engine starts again at the next change it sees, and ` +
        "then compares the graph with a full index of the tree before it writes";
      // An update under way ends first: stopped half-way, it would leave a part-written graph, which only a full
      // rebuild can vouch for.
      stopping = (async () => {
        await running?.catch(() => undefined);
        // Again: that update, ending, took its state for the graph's and wiped the mark.
        session.ledger.writtenElsewhere();
        await current.stop();
      })().finally(() => {
        stopping = undefined;
      });
    },
    async settle(signal) {
      const bound = boundBy(signal);
      // An engine still starting takes the changes as soon as it is up.
      if (engine?.phase.phase === "starting") await Promise.race([engine.started, bound(SETTLE_START_MS)]);
      if (engine?.phase.phase === "starting") return [...session.store.get().changedPaths];
      if (!ready()) return [];
      if (timer) {
        clearTimeout(timer);
        timer = undefined;
        void run();
      }
      if (running) await Promise.race([running, bound(SETTLE_BOUND_MS)]);
      return running ? [...session.store.get().changedPaths] : [];
    },
    async possible(targets, signal) {
      // A session that edited nothing has not started the engine: a question about callers starts it.
      if (stopping) await stopping;
      consider();
      if (engine?.phase.phase === "starting") await Promise.race([engine.started, boundBy(signal)(SETTLE_START_MS)]);
      if (signal?.aborted) return { unknown: "the question was cancelled" };
      const current = engine;
      if (current?.phase.phase === "starting")
        return { unknown: "pi-cgc's engine is still starting (it reads the tree); ask again shortly" };
      if (current?.phase.phase !== "ready") return { unknown: `pi-cgc's engine is ${describe()}` };
      const answer = await current.possible(targets, POSSIBLE_BUDGET_MS);
      if (!answer.ok) return { unknown: `pi-cgc's engine did not answer (${answer.code}: ${answer.reason})` };
      return { sites: answer.value.sites };
    },
    async stop() {
      if (timer) clearTimeout(timer);
      await engine?.stop();
    },
  };
}

/** A wait of at most `ms` that ends early when `signal` aborts. */
const boundBy =
  (signal: AbortSignal | undefined) =>
  (ms: number): Promise<void> =>
    new Promise<void>((resolve) => {
      setTimeout(resolve, ms).unref();
      signal?.addEventListener("abort", () => resolve(), { once: true });
    });
