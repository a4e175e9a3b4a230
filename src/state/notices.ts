// The ledger of once-per-session notices, keyed by condition. Notices go to the user, never into the
// agent's context (ADR 0004). With a UI (TUI, RPC) they use pi's notify; in print and json modes only
// the conditions a user must not miss (cgc missing, busy) are written, as one line on stderr.

export type NoticeLevel = "info" | "warning" | "error";

export type NoticeId =
  | "cgc-unavailable"
  | "unindexed"
  | "busy"
  | "probe-unknown"
  | "corrupt"
  | "index-started"
  | "index-failed"
  | "indexed"
  | "drift-detected"
  | "drift-resolved"
  | "skipped-busy"
  | "sync-budget-spent"
  | "budget-exceeded"
  | "sync-failed"
  | "index-unverified"
  | "index-partial"
  | "engine-fallback"
  | "config-warning"
  | "watcher-started"
  | "watcher-not-started-embedded"
  | "watcher-not-started-unindexed"
  | "watcher-not-verified"
  | "worktree-malformed"
  | "worktree-refused"
  | "worktree-orphaned";

/** Shown on stderr when there is no UI to carry notices. */
const HEADLESS_NOTICES = new Set<NoticeId>(["cgc-unavailable", "busy", "worktree-refused"]);

export interface NoticeSink {
  hasUI: boolean;
  notify(message: string, level: NoticeLevel): void;
  stderr(line: string): void;
}

export function createNoticeLedger(sink: NoticeSink) {
  const shown = new Map<string, string>();
  return {
    /** Shows the notice unless this condition was already shown this session. Returns whether it was shown. */
    once(id: NoticeId, message: string, level: NoticeLevel = "info", variant = ""): boolean {
      const key = variant ? `${id}:${variant}` : id;
      if (shown.has(key)) return false;
      shown.set(key, message);
      if (sink.hasUI) sink.notify(message, level);
      else if (HEADLESS_NOTICES.has(id)) sink.stderr(`pi-cgc: ${message}`);
      return true;
    },
    has(id: NoticeId): boolean {
      return [...shown.keys()].some((key) => key === id || key.startsWith(`${id}:`));
    },
    shown(): ReadonlyMap<string, string> {
      return shown;
    },
  };
}

export type NoticeLedger = ReturnType<typeof createNoticeLedger>;
