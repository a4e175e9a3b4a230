// The agent surface: which graph tools the agent has, and the routing card that tells it about them.
// Tools are registered only when wanted (the graph is ready and no CGC MCP tool answers the same
// question) and switched off while the graph is not ready, so the agent's tool list never shows a tool
// that cannot answer. The card is rebuilt on every prompt from the tools really active (pi forgets a
// system-prompt change after one prompt). The query lease ends with each run and before maintenance.
// The tools' code (tools.ts, gap-tools.ts, mcp.ts) is imported when a tool is first wanted, after a probe:
// pi's start-up does not pay for loading it, and a print-mode run that ends first never does.
import type { ExtensionAPI, ToolDefinition } from "@mariozechner/pi-coding-agent";
import { holdsExclusiveLock } from "../cgc/backend.ts";
import type { CgcSession } from "../lifecycle/session.ts";
import { isReady, type State } from "../state/model.ts";
import { buildCard, type CardTools } from "./card.ts";
import {
  detectMcpTools,
  GAP_TOOL_NAMES,
  GRAPH_TOOL_NAMES,
  IMPACT_TOOL_NAME,
  INTENT_CATALOG,
  INTENTS,
  type Intent,
} from "./catalog.ts";
import type { McpLease } from "./mcp.ts";
import type { GraphDeps, GraphSession } from "./tools.ts";

export const SKILL_NAME = "cgc-routing";
/** The prompt section the card lives in on pi 1.x. */
export const CARD_SECTION = "code-graph";
const TEXT_TOOLS = ["grep", "read", "bash"];

interface Tools {
  graph: Record<Intent, ToolDefinition>;
  impact: ToolDefinition;
  gaps: ToolDefinition[];
  createMcpLease: typeof import("./mcp.ts").createMcpLease;
}

/** What the agent surface uses of a session: the graph tools' part, and the backend (for the query lease). */
export type AgentSession = GraphSession & Pick<CgcSession, "backend">;

export function installAgentSurface(
  pi: ExtensionAPI,
  current: () => AgentSession | undefined,
  /** From freshness: the wait for a pending update, and the engine's possible callers. */
  freshness: Pick<GraphDeps, "settle" | "possibleCallers">,
  /** Files edited in this session (cgc_impact marks its dependents there). */
  edited: () => ReadonlySet<string> = () => new Set(),
) {
  let lease: { session: GraphSession; lease: McpLease } | undefined;
  let tools: Tools | undefined;
  let loading: Promise<Tools> | undefined;
  const leaseFor = (session: GraphSession): McpLease => {
    if (!tools) throw new Error("pi-cgc's graph tools are not loaded"); // a lease is asked for only by a tool
    if (lease?.session !== session) {
      void lease?.lease.release("the session changed");
      lease = {
        session,
        lease: tools.createMcpLease({
          runner: session.runner,
          cwd: () => session.root,
          budgetMs: () => session.config()["timeouts.queryMs"],
        }),
      };
    }
    return lease.lease;
  };
  const deps: GraphDeps = {
    current,
    lease: leaseFor,
    settle: freshness.settle,
    possibleCallers: freshness.possibleCallers,
  };
  const loadTools = (): Promise<Tools> => {
    loading ??= Promise.all([
      import("./tools.ts"),
      import("./gap-tools.ts"),
      import("./mcp.ts"),
      import("./impact.ts"),
    ]).then(
      ([graph, gaps, mcp, impact]) => {
        tools = {
          graph: graph.graphTools(deps),
          impact: impact.impactTool({ ...deps, edited }),
          gaps: gaps.gapTools(deps),
          createMcpLease: mcp.createMcpLease,
        };
        return tools;
      },
      (error: unknown) => {
        loading = undefined; // the next prompt tries again (and pi reports what failed)
        throw error;
      },
    );
    return loading;
  };
  const graphNames = Object.values(GRAPH_TOOL_NAMES) as string[];
  const gapNames = Object.values(GAP_TOOL_NAMES) as string[];
  const ownNames = new Set([...graphNames, IMPACT_TOOL_NAME, ...gapNames]);
  const registered = new Set<string>();
  /** What pi-cgc last switched each of its tools to, so a user's own /tools choice is left alone otherwise. */
  const switched = new Map<string, boolean>();

  const mcpTools = () =>
    detectMcpTools(
      pi
        .getAllTools()
        .map((tool) => tool.name)
        .filter((name) => !ownNames.has(name)),
    );

  /** Which of pi-cgc's tools the state wants, by name. */
  const wantedTools = (state: State): Map<string, boolean> => {
    const ready = isReady(state);
    const cgcAvailable = state.readiness !== "unavailable" && state.facts !== undefined;
    const mcp = mcpTools();
    const wanted = new Map<string, boolean>();
    for (const intent of INTENTS) wanted.set(GRAPH_TOOL_NAMES[intent], ready && !mcp.has(INTENT_CATALOG[intent]));
    wanted.set(IMPACT_TOOL_NAME, ready && !mcp.has(INTENT_CATALOG.relations));
    for (const name of gapNames) wanted.set(name, cgcAvailable);
    return wanted;
  };

  /**
   * Registers the tools now wanted and switches pi-cgc's tools on or off to match the state. A tool first
   * wanted before its code is loaded is registered once it is (the promise returned resolves then).
   */
  const syncTools = (state: State): Promise<void> | undefined => {
    const wanted = wantedTools(state);
    if (!tools && [...wanted.values()].some(Boolean)) {
      return loadTools().then(() => {
        const session = current();
        if (session) syncTools(session.store.get());
      });
    }
    for (const tool of tools ? [...Object.values(tools.graph), tools.impact, ...tools.gaps] : []) {
      if (wanted.get(tool.name) && !registered.has(tool.name)) {
        pi.registerTool(tool);
        registered.add(tool.name);
        switched.set(tool.name, true);
      }
    }
    const active = new Set(pi.getActiveTools());
    let changed = false;
    for (const name of registered) {
      const want = wanted.get(name) === true;
      if (switched.get(name) === want) continue; // unchanged since last time: a user's own choice stands
      switched.set(name, want);
      if (want) active.add(name);
      else active.delete(name);
      changed = true;
    }
    if (changed) pi.setActiveTools([...active]);
    return undefined;
  };

  /** From a state change: a failed load is tried again by the next prompt's `input`, which pi reports. */
  const syncInBackground = (state: State) => void syncTools(state)?.catch(() => undefined);

  const cardTools = (skills: readonly { name: string }[] | undefined): CardTools => {
    const active = new Set(pi.getActiveTools());
    const mcp = mcpTools();
    const graphNames: Partial<Record<Intent, string>> = {};
    for (const intent of INTENTS) {
      const name = mcp.get(INTENT_CATALOG[intent]) ?? GRAPH_TOOL_NAMES[intent];
      if (active.has(name)) graphNames[intent] = name;
    }
    return {
      graph: graphNames,
      impact: active.has(IMPACT_TOOL_NAME) ? IMPACT_TOOL_NAME : undefined,
      text: TEXT_TOOLS.filter((name) => active.has(name)),
      doctor: active.has(GAP_TOOL_NAMES.doctor) ? GAP_TOOL_NAMES.doctor : undefined,
      skill: skills?.some((skill) => skill.name === SKILL_NAME) ? SKILL_NAME : undefined,
    };
  };

  pi.on("session_start", () => {
    const session = current();
    if (!session) return;
    syncInBackground(session.store.get());
    session.store.subscribe((state, previous) => {
      if (current() !== session) return;
      // pi-cgc's own maintenance needs the database: end the lease before its cgc meets the lock.
      // An engine update needs it only where the database allows one opener.
      const needsDatabase = state.activity !== "updating" || holdsExclusiveLock(session.backend?.name);
      if (state.activity !== "idle" && previous.activity === "idle" && needsDatabase)
        void lease?.lease.release("maintenance started");
      if (state.readiness !== previous.readiness || state.facts !== previous.facts) syncInBackground(state);
    });
  });

  // Before each prompt's system prompt is built: an MCP adapter may have added its tools meanwhile. pi waits
  // for this handler, so a tool wanted since the last prompt is registered (its code loaded) before this one.
  pi.on("input", async () => {
    const session = current();
    if (session) await syncTools(session.store.get());
  });

  pi.on("before_agent_start", (event) => {
    const session = current();
    const card = session && isReady(session.store.get()) ? buildCard(cardTools(event.systemPromptOptions.skills)) : "";
    // pi 1.x keeps prompt sections across prompts and patches only the ones that changed (cache-friendly);
    // pi 0.73 rebuilds the prompt every time and takes the card appended to it.
    const sections = (event.systemPromptOptions as { sections?: Record<string, string> }).sections;
    if (sections) {
      if (card) sections[CARD_SECTION] = card;
      else delete sections[CARD_SECTION];
      return;
    }
    if (card) return { systemPrompt: `${event.systemPrompt}\n\n${card}` };
  });

  pi.on("agent_end", () => void lease?.lease.release("the agent's run ended"));
  pi.on("session_shutdown", async () => {
    await lease?.lease.release("the session ended");
    lease = undefined;
  });

  /** The graph tools' query path, for the impact note. */
  return { deps };
}
