// The routing card's builder: capped, byte-stable, naming only the tools it is given, routing
// relationship questions to the graph and exact text to grep/read.
import { describe, expect, it } from "vitest";
import {
  buildCard,
  CARD_HEADING,
  CARD_MAX_TOKENS,
  type CardTools,
  cardLines,
  estimateTextTokens,
} from "../../src/agent/card.ts";
import { GAP_TOOL_NAMES, GRAPH_TOOL_NAMES, INTENT_CATALOG, INTENTS } from "../../src/agent/catalog.ts";

const own: CardTools = {
  graph: GRAPH_TOOL_NAMES,
  text: ["read", "bash", "grep"],
  doctor: GAP_TOOL_NAMES.doctor,
  skill: "cgc-routing",
};

const prefixed = (prefix: string): CardTools => ({
  graph: Object.fromEntries(INTENTS.map((intent) => [intent, `${prefix}${INTENT_CATALOG[intent]}`])),
  text: ["read", "bash"],
});

describe("routing card", () => {
  it("routes relationship questions to the graph and exact text to grep and read", () => {
    const card = buildCard(own);
    expect(card.startsWith(CARD_HEADING)).toBe(true);
    expect(card).toContain(
      "- callers, callees, call chains, impact of a change, importers, class hierarchy, overrides → cgc_relations",
    );
    expect(card).toContain("- dead code → cgc_dead_code");
    expect(card).toContain("- most complex functions → cgc_complex_functions");
    expect(card).toContain("Exact text, strings, config and file contents: keep using grep and read.");
  });

  it("stays within its cap, even with the longest MCP prefixes", () => {
    for (const tools of [own, prefixed("cgc_"), prefixed("mcp__codegraphcontext__"), prefixed("codegraphcontext_")]) {
      const card = buildCard(tools);
      expect(estimateTextTokens(card)).toBeLessThanOrEqual(CARD_MAX_TOKENS);
      expect(card).toContain("Exact text");
      expect(card).toMatch(/call chains, impact of a change.* → \S+analyze_code_relationships|→ cgc_relations/);
    }
    expect(estimateTextTokens(buildCard(own))).toBeLessThan(CARD_MAX_TOKENS);
  });

  it("names only the tools it is given", () => {
    const card = buildCard({ graph: { relations: "cgc_relations" }, text: ["read"] });
    expect(card).toContain("cgc_relations");
    for (const absent of [
      "cgc_find",
      "cgc_dead_code",
      "cgc_cypher",
      "cgc_stats",
      "cgc_doctor",
      "grep",
      "cgc-routing",
    ]) {
      expect(card).not.toContain(absent);
    }
    expect(card).toContain("keep using read.");
  });

  it("is empty when no graph tool is present", () => {
    expect(buildCard({ graph: {}, text: ["read", "grep"] })).toBe("");
    expect(cardLines({ graph: {}, text: ["read"] })).toEqual([]);
  });

  it("is byte-stable: the same tools give the same bytes", () => {
    expect(buildCard({ ...own })).toBe(buildCard(own));
    expect(cardLines(own).join("\n")).toBe(buildCard(own));
  });

  it("falls back to bash for exact text when grep and read are off", () => {
    expect(buildCard({ graph: { find: "cgc_find" }, text: ["bash"] })).toContain("keep using bash (rg, grep).");
  });
});

describe("routing card and cgc_impact", () => {
  it("names cgc_impact for what a change will break when it is active, and only then", () => {
    const withImpact = buildCard({ ...own, impact: "cgc_impact" });
    expect(withImpact).toContain(
      "- what will this change break (changed signatures of uncommitted edits, their callers) → cgc_impact",
    );
    expect(withImpact).toContain(
      "- callers, callees, call chains, importers, class hierarchy, overrides → cgc_relations",
    );
    expect(estimateTextTokens(withImpact)).toBeLessThanOrEqual(CARD_MAX_TOKENS);
    expect(cardLines({ ...own, impact: "cgc_impact" })).toContain("More detail: the cgc-routing skill.");
    expect(buildCard(own)).not.toContain("cgc_impact");
  });
});
