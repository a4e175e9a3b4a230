// The footer chip (ADR 0004): a pure rendering of the state. It never spawns cgc and never polls;
// while work runs, a one-second tick re-renders the elapsed time from the state alone.
import { formatElapsed } from "../state/elapsed.ts";
import type { State } from "../state/model.ts";
import type { Store } from "../state/store.ts";

export const CHIP_KEY = "cgc";

export function chipText(state: State, now = Date.now()): string {
  if (state.activity !== "idle") {
    const elapsed = state.activityStartedAt ? ` ${formatElapsed(now - state.activityStartedAt)}` : "";
    const of = state.estimate ? ` of ~${formatElapsed(state.estimate.ms)} · ${state.estimate.files} files` : "";
    const label = state.activity === "rebuilding" ? "rebuilding…" : `${state.activity}…`;
    const progress = state.progress ? ` · ${state.progress}` : "";
    return `cgc ${label}${elapsed}${of}${progress}`;
  }
  if (!state.probed) return "cgc checking…";
  if (state.readiness !== "ready") return `cgc ${state.readiness}`;
  return `cgc ready${freshnessSuffix(state)}`;
}

/** Shows the chip for `store` from now on (`setStatus`); returns the stop. */
export function mountChip(store: Store, setStatus: (text: string) => void): () => void {
  let ticker: NodeJS.Timeout | undefined;
  let stopped = false;
  let shown: string | undefined;
  // Only a new text is shown: a state change the chip does not render (another writer seen, say) is no news.
  const render = (state: State) => {
    if (stopped) return;
    const text = chipText(state);
    if (text !== shown) setStatus(text);
    shown = text;
    if (state.activity !== "idle" && !ticker) {
      ticker = setInterval(() => render(store.get()), 1_000);
      ticker.unref();
    } else if (state.activity === "idle" && ticker) {
      clearInterval(ticker);
      ticker = undefined;
    }
  };
  const unsubscribe = store.subscribe((state) => render(state));
  render(store.get());
  return () => {
    stopped = true;
    unsubscribe();
    if (ticker) clearInterval(ticker);
  };
}

function freshnessSuffix(state: State): string {
  switch (state.freshness) {
    case "fresh":
      return state.keptByWatcher ? " · watched" : " · fresh";
    case "possibly-stale":
      return " · possibly stale";
    case "unknown":
      return "";
  }
}
