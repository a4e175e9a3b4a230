// The routing card (ADR 0002): a few lines appended to the system prompt of every prompt while the graph
// is ready, naming only the graph tools this session really has. It routes relationship questions to
// the graph and leaves exact-text search where it belongs. Its text depends on nothing but the tool
// names, so it is byte-identical from prompt to prompt and prompt caches hold.
import type { Intent } from "./catalog.ts";

/** Hard cap, in tokens counted as characters / 4 (the usual estimate for English and code). */
export const CARD_MAX_TOKENS = 200;

/**
 * Tokens of a plain string at characters / 4. pi's own `estimateTokens` takes a whole agent message (and
 * counts a tool call's arguments or an image too); the card is one string, and its cap must not move
 * with pi's estimate from one pi version to another.
 */
export function estimateTextTokens(text: string): number {
  return Math.ceil(text.length / 4);
}

export interface CardTools {
  /** The tool answering each intent in this session (pi-cgc's own or an MCP adapter's). */
  graph: Partial<Record<Intent, string>>;
  /** pi-cgc's cgc_impact when active: what the uncommitted changes can break. */
  impact?: string;
  /** Tools for exact text that are active (`grep`, `read`, `bash`, …). */
  text: readonly string[];
  /** pi-cgc's diagnostics tool when active. */
  doctor?: string;
  /** Set when pi loaded the routing skill. */
  skill?: string;
}

export const CARD_HEADING = "## Code graph (CodeGraphContext)";

interface CardParts {
  head: string[];
  routes: string[];
  exact: string[];
  optional: string[];
}

function cardParts(tools: CardTools): CardParts | undefined {
  const { graph } = tools;
  const routes: Array<[string | undefined, string]> = [
    [
      graph.relations,
      `callers, callees, call chains, ${tools.impact ? "" : "impact of a change, "}importers, class hierarchy, overrides`,
    ],
    [tools.impact, "what will this change break (changed signatures of uncommitted edits, their callers)"],
    [graph.find, "where a function, class or symbol is defined"],
    [graph.deadCode, "dead code"],
    [graph.complexity, "most complex functions"],
    [graph.cypher, "other structural questions (read-only Cypher)"],
    [graph.stats, "graph size"],
  ];
  const present = routes.filter((route): route is [string, string] => route[0] !== undefined);
  if (present.length === 0) return undefined;
  const text = ["grep", "read"].filter((name) => tools.text.includes(name));
  const exact = text.length > 0 ? text.join(" and ") : tools.text.includes("bash") ? "bash (rg, grep)" : undefined;
  const optional = ["Results carry path:line; read them before editing."];
  if (tools.doctor) optional.push(`If a graph tool fails: ${tools.doctor}.`);
  if (tools.skill) optional.push(`More detail: the ${tools.skill} skill.`);
  return {
    head: [CARD_HEADING, "This workspace has a code graph; ask it how code relates before opening files one by one:"],
    routes: present.map(([tool, question]) => `- ${question} → ${tool}`),
    exact: exact ? [`Exact text, strings, config and file contents: keep using ${exact}.`] : [],
    optional,
  };
}

/**
 * The card's lines, in order, within CARD_MAX_TOKENS; empty when no graph tool is present. Over the cap,
 * the optional lines go first, then the least important routes; the exact-text line always stays.
 * Another module (proactive notes) checks that its text never repeats one of these lines, so this is the
 * one place the wording lives.
 */
export function cardLines(tools: CardTools): string[] {
  const parts = cardParts(tools);
  if (!parts) return [];
  const routes = [...parts.routes];
  const fits = (lines: string[]) => estimateTextTokens(lines.join("\n")) <= CARD_MAX_TOKENS;
  while (routes.length > 1 && !fits([...parts.head, ...routes, ...parts.exact])) routes.pop();
  const lines = [...parts.head, ...routes, ...parts.exact];
  if (!fits(lines)) return [];
  for (const line of parts.optional) if (fits([...lines, line])) lines.push(line);
  return lines;
}

/** The card as appended to the system prompt (empty when there is nothing to route to). */
export function buildCard(tools: CardTools): string {
  return cardLines(tools).join("\n");
}
