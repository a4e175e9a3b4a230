// CGC's MCP tool catalog as `cgc mcp start` 0.6.13 lists it (test/fixtures/cgc/mcp-tools.json holds the
// captured list; a test keeps the two equal), and how to find those tools in pi's tool list under
// whatever prefix an MCP adapter gives them (`cgc_find_code`, `mcp__cgc__find_code`, …).

export const MCP_CATALOG = [
  "add_code_to_graph",
  "check_job_status",
  "list_jobs",
  "find_code",
  "analyze_code_relationships",
  "watch_directory",
  "execute_cypher_query",
  "add_package_to_graph",
  "find_dead_code",
  "calculate_cyclomatic_complexity",
  "find_most_complex_functions",
  "list_indexed_repositories",
  "delete_repository",
  "visualize_graph_query",
  "list_watched_paths",
  "unwatch_directory",
  "load_bundle",
  "search_registry_bundles",
  "get_repository_stats",
  "discover_codegraph_contexts",
  "switch_context",
  "list_graphs",
  "generate_report",
  "find_java_spring_endpoints",
  "find_java_spring_beans",
  "find_datasource_nodes",
  "simulate_metrics",
  "simulate_architectural_change",
  "analyze_architectural_evolution",
] as const;

export type CatalogTool = (typeof MCP_CATALOG)[number];

/** What the agent asks the graph, and the catalog tool that answers it. */
export const INTENT_CATALOG = {
  find: "find_code",
  relations: "analyze_code_relationships",
  deadCode: "find_dead_code",
  complexity: "find_most_complex_functions",
  cypher: "execute_cypher_query",
  stats: "get_repository_stats",
} as const satisfies Record<string, CatalogTool>;

export type Intent = keyof typeof INTENT_CATALOG;
export const INTENTS = Object.keys(INTENT_CATALOG) as Intent[];

/** pi-cgc's own tool for each intent (tools.ts defines them under these names). */
export const GRAPH_TOOL_NAMES = {
  find: "cgc_find",
  relations: "cgc_relations",
  deadCode: "cgc_dead_code",
  complexity: "cgc_complex_functions",
  cypher: "cgc_cypher",
  stats: "cgc_stats",
} as const satisfies Record<Intent, string>;

/**
 * What the uncommitted changes can break (impact.ts). It answers through pi-cgc's own query lease, like the
 * graph tools, so it is wanted when they are: beside an adapter's server, a second server of pi-cgc's would
 * meet the embedded database's lock.
 */
export const IMPACT_TOOL_NAME = "cgc_impact";

/** pi-cgc's tools for cgc verbs the catalog lacks (gap-tools.ts defines them under these names). */
export const GAP_TOOL_NAMES = { doctor: "cgc_doctor", contexts: "cgc_contexts", bundle: "cgc_bundle_export" } as const;

/** A tool name is a catalog tool under a prefix when it ends with `_<catalog name>` (or is the bare name). */
function catalogNameOf(toolName: string): { prefix: string; catalog: CatalogTool } | undefined {
  for (const catalog of MCP_CATALOG) {
    if (toolName === catalog) return { prefix: "", catalog };
    if (toolName.endsWith(`_${catalog}`)) return { prefix: toolName.slice(0, -catalog.length), catalog };
  }
  return undefined;
}

/**
 * CGC's MCP tools present in a tool list: catalog name → the name pi knows it by. A prefix counts as a
 * CGC server only when it carries at least two catalog names, so one unrelated `*_find_code` elsewhere is
 * not mistaken for CGC. When two servers qualify, the first tool seen wins.
 */
export function detectMcpTools(toolNames: readonly string[]): Map<CatalogTool, string> {
  const groups = new Map<string, Map<CatalogTool, string>>();
  for (const name of toolNames) {
    const found = catalogNameOf(name);
    if (!found) continue;
    const group = groups.get(found.prefix) ?? new Map<CatalogTool, string>();
    if (!group.has(found.catalog)) group.set(found.catalog, name);
    groups.set(found.prefix, group);
  }
  const detected = new Map<CatalogTool, string>();
  for (const group of groups.values()) {
    if (group.size < 2) continue;
    for (const [catalog, name] of group) if (!detected.has(catalog)) detected.set(catalog, name);
  }
  return detected;
}
