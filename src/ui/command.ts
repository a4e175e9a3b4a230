// The `/cgc` command: its verbs and their completions, registered at load. What a verb does is in verbs.ts,
// imported on the first /cgc (most sessions never run one; pi's start-up does not pay for loading it).
// Destructive or workspace-writing verbs ask first and name the effect and the path (ADR 0003); without a UI
// the answer is no.
import { writeSync } from "node:fs";
import type { ExtensionAPI, ExtensionCommandContext } from "@mariozechner/pi-coding-agent";
import type { VerbSession } from "./verbs.ts";

export const VERBS = {
  status:
    "What pi-cgc knows: workspace, backend, readiness, index facts, freshness (spawns nothing, except to re-check a busy or unknown verdict)",
  index: "Build the code graph for this workspace (asks first); --force rebuilds it from scratch",
  sync: "Bring the graph up to date with the files changed since it was last verified",
  doctor: "Run cgc doctor and show its report",
  report: "Write CGC_REPORT.md into the workspace (asks first)",
  config: "Settings: every key, its value and its source; save to project or global",
} as const;

export type Verb = keyof typeof VERBS;

export function usage(): string {
  return ["Usage: /cgc <verb>", ...Object.entries(VERBS).map(([verb, doc]) => `  ${verb.padEnd(8)} ${doc}`)].join("\n");
}

export interface CommandHooks {
  /** The freshness machinery's manual sync (not budgeted). */
  sync(ctx: ExtensionCommandContext): Promise<string>;
  /** Decorates output pi-cgc renders (result annotations when enabled). */
  annotate(text: string): string;
  /** The incremental engine, one line: running, or why not. */
  engine(): string;
  /** A verb wrote these workspace files itself (cgc indexes them too): they change the graph's tree. */
  written(paths: string[]): void;
}

export function registerCgcCommand(
  pi: ExtensionAPI,
  current: () => VerbSession | undefined,
  hooks: () => CommandHooks,
) {
  let verbs: Promise<typeof import("./verbs.ts")> | undefined;
  pi.registerCommand("cgc", {
    description: "CodeGraphContext: status, index, sync, doctor, report, config",
    getArgumentCompletions: (prefix) => {
      const items = Object.entries(VERBS)
        .filter(([verb]) => verb.startsWith(prefix.trim()))
        .map(([verb, description]) => ({ value: verb, label: verb, description }));
      if (prefix.trim().startsWith("index"))
        items.push({ value: "index --force", label: "index --force", description: VERBS.index });
      return items.length > 0 ? items : null;
    },
    handler: async (args, ctx) => {
      const session = current();
      if (!session) {
        ctx.ui.notify("pi-cgc is not active in this session.", "warning");
        return;
      }
      const [verb = "status", ...rest] = args.trim().split(/\s+/).filter(Boolean);
      const show = (text: string, level: "info" | "warning" | "error" = "info") => {
        const shown = hooks().annotate(text);
        if (ctx.hasUI) ctx.ui.notify(shown, level);
        else writeSync(1, `${shown}\n`); // synchronous: print mode may exit before a piped write drains
      };
      if (!Object.hasOwn(VERBS, verb)) return show(`Unknown verb "${verb}".\n${usage()}`, "warning");
      verbs ??= import("./verbs.ts");
      return (await verbs).runVerb(verb as Verb, rest, { session, ctx, show, hooks: hooks() });
    },
  });
}

/** Shows a verb's answer: a notice in the UI, stdout in print mode. */
export type Show = (text: string, level?: "info" | "warning" | "error") => void;
