// The first prompt sees the graph. session_start returns at once and probes in the background; a prompt that
// arrives while that first probe still runs (a `pi -p` run, a prompt typed in the first seconds) would be
// offered no graph tool and no routing card. pi awaits the `input` handler, so the prompt waits there for
// the first verdict, at most `timeouts.probeMs`, then goes on as it did before: without the graph.
import type { CgcSession } from "./session.ts";

export interface FirstProbe {
  /** Resolves when the session's first probe settled (whatever it found), or when `boundMs` passed. */
  wait(boundMs: number): Promise<void>;
  readonly settled: boolean;
}

export function trackFirstProbe(session: Pick<CgcSession, "refresh">): FirstProbe {
  let settled = false;
  const first = session.refresh().then(
    () => {
      settled = true;
    },
    () => {
      settled = true; // a failed probe is a verdict too (unknown): the prompt need not wait for it
    },
  );
  return {
    get settled() {
      return settled;
    },
    async wait(boundMs) {
      if (settled) return;
      let timer: NodeJS.Timeout | undefined;
      const bound = new Promise<void>((resolve) => {
        timer = setTimeout(resolve, boundMs);
      });
      await Promise.race([first, bound]);
      clearTimeout(timer);
    },
  };
}
