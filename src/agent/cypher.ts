// Read-only Cypher, checked before cgc sees the query (cgc checks too, but a write that slipped past its
// gate would change the user's graph). The rule is cgc 0.6.13's `is_read_only_cypher`, made stricter:
// quoted text and comments are skipped in one left-to-right pass, a keyword counts only in clause
// position, and Kùzu's own statements that change the database or its settings are refused as well.

const WRITE_KEYWORDS = new Set(
  [
    "CREATE",
    "MERGE",
    "DELETE",
    "DETACH",
    "SET",
    "REMOVE",
    "DROP",
    "LOAD",
    "FOREACH",
    "ALTER",
    "COPY",
    "INSERT",
    "UPDATE",
    "TRUNCATE",
    "GRANT",
    "REVOKE",
    // Kùzu: extensions, attached databases, export/import, transactions, checkpoints.
    "INSTALL",
    "ATTACH",
    "EXPORT",
    "IMPORT",
    "USE",
    "BEGIN",
    "COMMIT",
    "ROLLBACK",
    "CHECKPOINT",
  ].map((word) => word.toLowerCase()),
);

const WRITE_PATTERNS = [
  /\bCALL\s+(apoc|dbms)\b/i,
  /\bCALL\s+db\.[a-z0-9_.]*(create|drop|delete|set|add|remove|alter)/i,
  /\bCALL\s*\{/i,
  /\bapoc\.(create|merge|refactor|periodic)\b/i,
  /\bCALL\s+\w+\s*=/i, // Kùzu configuration: CALL threads = 1
];

const QUOTED_OR_COMMENT = /'(?:\\.|[^'\\])*'|"(?:\\.|[^"\\])*"|`(?:\\.|[^`\\])*`|\/\/[^\n]*|\/\*[\s\S]*?\*\//g;
const TOKEN = /\w+|[^\w\s]/g;

export type CypherVerdict = { readOnly: true } | { readOnly: false; reason: string };

export function checkReadOnlyCypher(query: string): CypherVerdict {
  if (query.trim() === "") return { readOnly: false, reason: "the query is empty" };
  // An unterminated quote or comment could hide a clause from the scan: refuse rather than guess.
  const stripped = query.replace(QUOTED_OR_COMMENT, " ");
  if (/['"`]|\/\*/.test(stripped)) return { readOnly: false, reason: "the query has an unterminated quote or comment" };
  if (stripped.includes(";")) return { readOnly: false, reason: "one statement only (no `;`)" };
  const tokens = stripped.match(TOKEN) ?? [];
  for (const [index, token] of tokens.entries()) {
    if (!WRITE_KEYWORDS.has(token.toLowerCase())) continue;
    const previous = tokens[index - 1] ?? "";
    // `n.set`, `(n:Update)`, `$delete` and `AS load` name things; they are not clauses.
    if (previous === "." || previous === ":" || previous === "$" || previous.toUpperCase() === "AS") continue;
    return { readOnly: false, reason: `\`${token.toUpperCase()}\` changes the graph` };
  }
  for (const pattern of WRITE_PATTERNS) {
    const match = pattern.exec(stripped);
    if (match) return { readOnly: false, reason: `\`${match[0].trim()}\` may change the graph` };
  }
  return { readOnly: true };
}
