// The agent surface: which graph tools the agent has, and the routing card that tells it about them.
// Tools are registered only when wanted (the graph is ready and no CGC MCP tool answers the same
// question) and switched off while the graph is not ready, so the agent's tool list never shows a tool
// that cannot answer. The card is rebuilt on every prompt from the tools really active (pi forgets a
// system-prompt change after one prompt). The query lease ends with each run and before maintenance.
import type { ExtensionAPI } from "@mariozechner/pi-coding-agent";
import { holdsExclusiveLock } from "../cgc/backend.ts";
import type { CgcSession, CurrentSession } from "../lifecycle/session.ts";
import { isReady, type State } from "../state/model.ts";
import { buildCard, type CardTools } from "./card.ts";
import { detectMcpTools, INTENT_CATALOG, INTENTS, type Intent } from "./catalog.ts";
import { gapTools } from "./gap-tools.ts";
import { createMcpLease, type McpLease } from "./mcp.ts";
import { type GraphDeps, graphTools } from "./tools.ts";

export const SKILL_NAME = "cgc-routing";
/** The prompt section the card lives in on pi 1.x. */
export const CARD_SECTION = "code-graph";
const TEXT_TOOLS = ["grep", "read", "bash"];

export function installAgentSurface(pi: ExtensionAPI, current: CurrentSession, settle: GraphDeps["settle"]) {
  let lease: { session: CgcSession; lease: McpLease } | undefined;
  const leaseFor = (session: CgcSession): McpLease => {
    if (lease?.session !== session) {
      void lease?.lease.release("the session changed");
      lease = {
        session,
        lease: createMcpLease({
          runner: session.runner,
          cwd: () => session.root,
          budgetMs: () => session.config()["timeouts.queryMs"],
        }),
      };
    }
    return lease.lease;
  };
  const deps: GraphDeps = { current, lease: leaseFor, settle };
  const graph = graphTools(deps);
  const gaps = gapTools(deps);
  const ownNames = new Set([...Object.values(graph).map((tool) => tool.name), ...gaps.map((tool) => tool.name)]);
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

  /** Registers the tools now wanted and switches pi-cgc's tools on or off to match the state. */
  const syncTools = (state: State) => {
    const ready = isReady(state);
    const cgcAvailable = state.readiness !== "unavailable" && state.facts !== undefined;
    const mcp = mcpTools();
    const wanted = new Map<string, boolean>();
    for (const intent of INTENTS) wanted.set(graph[intent].name, ready && !mcp.has(INTENT_CATALOG[intent]));
    for (const tool of gaps) wanted.set(tool.name, cgcAvailable);

    for (const tool of [...Object.values(graph), ...gaps]) {
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
  };

  const cardTools = (skills: readonly { name: string }[] | undefined): CardTools => {
    const active = new Set(pi.getActiveTools());
    const mcp = mcpTools();
    const graphNames: Partial<Record<Intent, string>> = {};
    for (const intent of INTENTS) {
      const name = mcp.get(INTENT_CATALOG[intent]) ?? graph[intent].name;
      if (active.has(name)) graphNames[intent] = name;
    }
    return {
      graph: graphNames,
      text: TEXT_TOOLS.filter((name) => active.has(name)),
      doctor: active.has("cgc_doctor") ? "cgc_doctor" : undefined,
      skill: skills?.some((skill) => skill.name === SKILL_NAME) ? SKILL_NAME : undefined,
    };
  };

  pi.on("session_start", () => {
    const session = current();
    if (!session) return;
    syncTools(session.store.get());
    session.store.subscribe((state, previous) => {
      if (current() !== session) return;
      // pi-cgc's own maintenance needs the database: end the lease before its cgc meets the lock.
      // An engine update needs it only where the database allows one opener.
      const needsDatabase = state.activity !== "updating" || holdsExclusiveLock(session.backend?.name);
      if (state.activity !== "idle" && previous.activity === "idle" && needsDatabase)
        void lease?.lease.release("maintenance started");
      if (state.readiness !== previous.readiness || state.facts !== previous.facts) syncTools(state);
    });
  });

  // Before each prompt's system prompt is built: an MCP adapter may have added its tools meanwhile.
  pi.on("input", () => {
    const session = current();
    if (session) syncTools(session.store.get());
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
}
