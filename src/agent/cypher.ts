// Read-only Cypher, checked before cgc sees the query. The gate lists what it allows, not what it refuses:
// which clauses and procedures write differs by backend and version, and a list of refusals (cgc 0.6.13's
// `is_read_only_cypher`, and an earlier form of this gate) let any `CALL name(...)` it did not name reach the
// database. Allowed: the clauses that read (MATCH, OPTIONAL MATCH, WITH, WHERE, RETURN, ORDER BY, SKIP, LIMIT,
// UNWIND, UNION, CALL { … } whose body passes the same gate) and CALL of a procedure in READ_PROCEDURES, each
// run against its real backend by test/reliability/cypher-gate.test.ts. Quoted text and comments are skipped in
// one left-to-right pass; a word in clause position (the start, after CALL { or UNION, or right after a
// complete term) must be an allowed keyword; a known clause keyword that writes or administers is refused
// wherever it stands, unless it is a name (`n.set`, `:Update`, `$delete`, `AS load`).

/** Procedures known to read, per backend; each checked on its backend (and every other) by a test. */
export const READ_PROCEDURES: Readonly<Record<string, readonly ("kuzudb" | "falkordb" | "neo4j")[]>> = {
  // KùzuDB 0.11: the catalog's table functions.
  show_tables: ["kuzudb"],
  table_info: ["kuzudb"],
  show_connection: ["kuzudb"],
  db_version: ["kuzudb"],
  show_functions: ["kuzudb"],
  current_setting: ["kuzudb"],
  show_indexes: ["kuzudb"],
  show_sequences: ["kuzudb"],
  show_warnings: ["kuzudb"],
  // FalkorDB (Lite and server) and Neo4j: the schema's names.
  "db.labels": ["falkordb", "neo4j"],
  "db.relationshiptypes": ["falkordb", "neo4j"],
  "db.propertykeys": ["falkordb", "neo4j"],
  "db.indexes": ["falkordb"],
  // Neo4j 5: the schema's shape (db.indexes is SHOW INDEXES there).
  "db.schema.visualization": ["neo4j"],
  "db.schema.nodetypeproperties": ["neo4j"],
  "db.schema.reltypeproperties": ["neo4j"],
};

/** Clauses a query (or a CALL subquery, or the part after UNION) may start with. */
const START_CLAUSES = new Set(["MATCH", "OPTIONAL", "WITH", "UNWIND", "RETURN", "CALL"]);

/** Every keyword a read may use in clause position or inside an expression. */
const ALLOWED_WORDS = new Set([
  ...START_CLAUSES,
  "WHERE",
  "ORDER",
  "BY",
  "SKIP",
  "LIMIT",
  "UNION",
  "ALL",
  "YIELD",
  "DISTINCT",
  "AS",
  "AND",
  "OR",
  "XOR",
  "NOT",
  "IN",
  "IS",
  "NULL",
  "TRUE",
  "FALSE",
  "CONTAINS",
  "STARTS",
  "ENDS",
  "ASC",
  "ASCENDING",
  "DESC",
  "DESCENDING",
  "CASE",
  "WHEN",
  "THEN",
  "ELSE",
  "END",
  "EXISTS",
  "COUNT",
  "COLLECT",
]);

/** Keywords that end a term: a word after one of them stands in clause position. */
const TERM_WORDS = new Set(["NULL", "TRUE", "FALSE", "END", "ASC", "ASCENDING", "DESC", "DESCENDING"]);

/**
 * Clause keywords of Cypher and of the backends' dialects that write, administer or reach outside the graph:
 * refused wherever they stand, unless they are a name. (Any other word in clause position is refused too; these
 * are also refused where a word would otherwise pass as a variable or a function, `WITH n, create(x)`.)
 */
const KNOWN_CLAUSES = new Set([
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
  "INSTALL",
  "ATTACH",
  "EXPORT",
  "IMPORT",
  "USE",
  "BEGIN",
  "COMMIT",
  "ROLLBACK",
  "CHECKPOINT",
]);

const ASK_INSTEAD =
  "ask with the clauses that read (MATCH, OPTIONAL MATCH, WITH, WHERE, RETURN, ORDER BY, SKIP, LIMIT, UNWIND, UNION, " +
  "CALL { … } of those), e.g. MATCH (f:Function) RETURN f.name LIMIT 20";

const QUOTED_OR_COMMENT = /'(?:\\.|[^'\\])*'|"(?:\\.|[^"\\])*"|`(?:\\.|[^`\\])*`|\/\/[^\n]*|\/\*[\s\S]*?\*\//g;
const TOKEN = /\$\w+|\w+|[^\w\s]/g;

export type CypherVerdict = { readOnly: true } | { readOnly: false; reason: string };

const refuse = (reason: string): CypherVerdict => ({ readOnly: false, reason });

const clauseRefused = (word: string) =>
  refuse(`\`${word.toUpperCase()}\` is not a clause that only reads; ${ASK_INSTEAD}`);

const procedureRefused = (name: string) =>
  refuse(
    `\`CALL ${name}\` is not a procedure pi-cgc knows to read (it knows ${Object.keys(READ_PROCEDURES).join(", ")}); ` +
      `${ASK_INSTEAD}, or call one of those`,
  );

export function checkReadOnlyCypher(query: string): CypherVerdict {
  if (query.trim() === "") return refuse("the query is empty");
  // A string becomes a literal (0) and a quoted name a plain one (q_), so that both still end a term.
  const stripped = query.replace(QUOTED_OR_COMMENT, (text) =>
    text.startsWith("`") ? " q_ " : text.startsWith("/") ? " " : " 0 ",
  );
  // An unterminated quote or comment could hide a clause from the scan: refuse rather than guess.
  if (/['"`]|\/\*/.test(stripped)) return refuse("the query has an unterminated quote or comment");
  if (stripped.includes(";")) return refuse("one statement only (no `;`)");
  const tokens = stripped.match(TOKEN) ?? [];
  let clauseStart = true; // the next token must start a clause: the query's start, after CALL { and UNION
  let term = false; // the last token ended a term: a word now stands in clause position
  let previous = "";
  for (let index = 0; index < tokens.length; index++) {
    const token = tokens[index] as string;
    const upper = token.toUpperCase();
    const isWord = /^[A-Za-z_]/.test(token);
    if (clauseStart && !(isWord && START_CLAUSES.has(upper))) {
      return isWord
        ? clauseRefused(token)
        : refuse(`a query or subquery starts with a clause, not \`${token}\`; ${ASK_INSTEAD}`);
    }
    clauseStart = false;
    const name = isWord && (previous === "." || previous === ":" || previous.toUpperCase() === "AS");
    previous = token;
    if (!isWord || name) {
      // A name, a number, a parameter, a literal or a closing bracket ends a term; `*` does where no term
      // stood before it (RETURN *, count(*)); other punctuation does not.
      term = name || /^[\d$]/.test(token) || /^[)\]}]$/.test(token) || (token === "*" && !term);
      continue;
    }
    if (KNOWN_CLAUSES.has(upper)) return clauseRefused(token);
    if (term && !ALLOWED_WORDS.has(upper)) return clauseRefused(token);
    if (upper === "CALL") {
      if (tokens[index + 1] === "{") {
        clauseStart = true; // the subquery's body passes the same gate
        previous = "{";
        term = false;
        index++;
        continue;
      }
      let procedure = "";
      let at = index + 1;
      while (/^[A-Za-z_]\w*$/.test(tokens[at] ?? "")) {
        procedure += tokens[at];
        if (tokens[at + 1] !== "." || !/^[A-Za-z_]/.test(tokens[at + 2] ?? "")) break;
        procedure += ".";
        at += 2;
      }
      if (procedure === "" || tokens[at + 1] !== "(") {
        const shown = `${procedure} ${tokens[procedure === "" ? at : at + 1] ?? ""}`.trim();
        return refuse(
          `\`CALL ${shown}\` is neither a procedure pi-cgc knows to read nor a subquery (CALL { … }); ${ASK_INSTEAD}`,
        );
      }
      if (!(procedure.toLowerCase() in READ_PROCEDURES)) return procedureRefused(procedure);
      index = at; // its arguments follow, as expressions
      previous = tokens[at] as string;
      term = true;
      continue;
    }
    if (upper === "UNION") {
      if (tokens[index + 1]?.toUpperCase() === "ALL") index++;
      clauseStart = true;
      term = false;
      continue;
    }
    // An identifier (a variable, a function's name) or a keyword that ends a term; other keywords expect one.
    term = !ALLOWED_WORDS.has(upper) || TERM_WORDS.has(upper);
  }
  return { readOnly: true };
}
