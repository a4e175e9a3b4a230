// Proactive injection (ADR 0009): one module, two tiers, gated by the same readiness predicate
// as the routing card. Tier 1, the coverage note (default on): one capped paragraph of facts from the
// readiness probe's cached data, never a new cgc spawn. Tier 2a, drift steers (opt-in): one per
// possibly-stale episode. Tier 2b, result annotations (opt-in): one delimited line on pi-cgc's own
// outputs only. Content classes: coverage and staleness facts here, routing rules in the card — never both.
import type { ExtensionAPI } from "@mariozechner/pi-coding-agent";
import { shownBackend } from "../cgc/backend.ts";
import type { CgcSession } from "../lifecycle/session.ts";
import { isReady, type State } from "../state/model.ts";
import { count } from "../state/words.ts";

export const NOTE_MAX_CHARS = 600;
export const STEER_TYPE = "cgc-drift-steer";
export const ANNOTATION_PREFIX = "[cgc graph possibly stale:";

/** The coverage note: facts only (what the graph covers, from which snapshot), capped. */
export function coverageNote(state: State, root: string): string | undefined {
  const facts = state.facts;
  if (!isReady(state) || !facts) return undefined;
  const repo = facts.repository;
  const taken = new Date(facts.takenAt).toISOString().replace(/\.\d+Z$/, "Z");
  const named = shownBackend(facts.reportedBackend, facts.backend);
  const scope = `CodeGraphContext ${facts.cgcVersion ?? "(version unknown)"}${named ? `, ${named.name} backend` : ""}`;
  const counts =
    repo && repo.files !== undefined && repo.functions !== undefined
      ? `${repo.files} files${repo.languages?.length ? ` (${repo.languages.join(", ")})` : ""}, ${repo.functions} functions, ${repo.classes ?? "?"} classes`
      : undefined;
  const recorded = repo?.indexedAt
    ? ` It was indexed at ${repo.indexedAt}${repo.commit ? ` (commit ${repo.commit.slice(0, 12)})` : ""}.`
    : "";
  const others =
    facts.repositoryCount && facts.repositoryCount > 1
      ? ` The graph holds ${facts.repositoryCount} repositories in all.`
      : "";
  const body = counts
    ? `Code graph coverage: ${root} — ${counts}.${recorded}${others} Snapshot ${taken}; ${scope}.`
    : `A code graph of ${root} exists.${recorded} Snapshot ${taken}; ${scope}.`;
  return body.length <= NOTE_MAX_CHARS ? body : `${body.slice(0, NOTE_MAX_CHARS - 1)}…`;
}

export function driftSteer(state: State): string {
  const changed = state.changedPaths.length;
  return `The code graph is now possibly stale: ${changed > 0 ? `${count(changed, "file")} changed since it was last verified` : "the files changed since it was last verified"}. pi-cgc syncs it when this run ends; the user can run /cgc sync.`;
}

/** What an annotation reads of a session. */
export type AnnotatingSession = Pick<CgcSession, "config" | "store">;

/** Tier 2b: one delimited line, only while possibly stale, only when enabled. */
export function annotate(session: AnnotatingSession | undefined, text: string): string {
  if (!session?.config()["proactive.resultAnnotations"]) return text;
  const state = session.store.get();
  if (!isReady(state) || state.freshness !== "possibly-stale") return text;
  const changed = state.changedPaths.length;
  return `${text}\n${ANNOTATION_PREFIX} ${count(changed, "changed file")} not yet in the graph; results may lag the code]`;
}

/** What the proactive tiers use of a session. */
export type InjectingSession = AnnotatingSession & Pick<CgcSession, "root">;

export function installInjection(pi: ExtensionAPI, current: () => InjectingSession | undefined) {
  let steeredEpisode = 0;
  let pendingSteer: string | undefined;
  let streaming = false;

  pi.on("session_start", () => {
    steeredEpisode = 0;
    pendingSteer = undefined;
    const session = current();
    // Tier 2a: a steer when an episode opens (fresh → possibly stale), never twice for one episode.
    session?.store.subscribe((state, previous) => {
      if (!session.config()["proactive.driftSteers"] || !isReady(state)) return;
      if (state.episodes <= previous.episodes || state.episodes === steeredEpisode) return;
      steeredEpisode = state.episodes;
      const content = driftSteer(state);
      if (streaming) pi.sendMessage({ customType: STEER_TYPE, content, display: true }, { deliverAs: "steer" });
      else pendingSteer = content;
    });
  });

  pi.on("agent_start", () => {
    streaming = true;
  });
  pi.on("agent_end", () => {
    streaming = false;
  });

  pi.on("before_agent_start", (event) => {
    const session = current();
    if (!session) return;
    const state = session.store.get();
    const steer = pendingSteer;
    pendingSteer = undefined;
    const note = session.config()["proactive.sessionNote"] ? coverageNote(state, session.root) : undefined;
    const live = steer && state.freshness === "possibly-stale" ? steer : undefined;
    if (!note && !live) return;
    return {
      ...(note ? { systemPrompt: `${event.systemPrompt}\n\n${note}` } : {}),
      ...(live ? { message: { customType: STEER_TYPE, content: live, display: true } } : {}),
    };
  });
}
