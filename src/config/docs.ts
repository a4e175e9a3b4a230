// Markdown generated from the key table: docs/configuration.md and the README's table never drift from code.
import { CONFIG_KEY_NAMES, CONFIG_KEYS } from "./keys.ts";

export function renderConfigTable(): string {
  const rows = CONFIG_KEY_NAMES.map((name) => {
    const def = CONFIG_KEYS[name];
    const shown = (def.type.format as (value: unknown) => string)(def.default);
    return `| \`${name}\` | ${def.type.label} | \`${shown}\` | \`${def.env}\` | ${def.doc} |`;
  });
  return ["| Key | Type | Default | Environment | What it does |", "| --- | --- | --- | --- | --- |", ...rows].join(
    "\n",
  );
}

export function renderConfigurationDoc(): string {
  return `# Configuration

<!-- Generated from src/config/keys.ts by \`npm run docs\`; a test fails when this file is out of date. -->

pi-cgc reads its settings in layers, each overriding the one before:

1. the defaults below;
2. the global file \`cgc.json\` in pi's agent directory (\`$PI_CODING_AGENT_DIR\`, or \`~/.pi/agent\`);
3. the project file \`.pi/cgc.json\` in the workspace;
4. environment variables.

Files hold JSON, nested (\`{ "freshness": { "watch": "auto" } }\`) or flat (\`{ "freshness.watch": "auto" }\`).
A value that does not validate is skipped with a warning naming the key, the value and where it came from;
the layers below it still apply. \`/cgc config\` shows every key with its effective value and its source.

Booleans accept \`true\`/\`false\` and the words \`yes\`/\`no\`, \`on\`/\`off\`, \`1\`/\`0\`. \`freshness.watch\` maps
booleans to \`on\`/\`off\`; only the literal text \`auto\` selects the backend-aware mode.

${renderConfigTable()}
`;
}

/** Replaces the text between the README's config-table markers. */
export function withReadmeTable(readme: string): string {
  const start = "<!-- config-table:start -->";
  const end = "<!-- config-table:end -->";
  const from = readme.indexOf(start);
  const to = readme.indexOf(end);
  if (from < 0 || to < from) return readme;
  return `${readme.slice(0, from + start.length)}\n${renderConfigTable()}\n${readme.slice(to)}`;
}
