// The routing skill and the agent guide name only tools, commands and configuration keys that exist:
// pi-cgc's tools (and their parameters and relation values), CGC's MCP catalog as captured from the real
// `cgc mcp start`, the /cgc verbs, the real cgc CLI's subcommands (asked from the binary), the config table.
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { loadSkillsFromDir } from "@mariozechner/pi-coding-agent";
import { describe, expect, it } from "vitest";
import { MCP_CATALOG } from "../../src/agent/catalog.ts";
import { gapTools } from "../../src/agent/gap-tools.ts";
import { impactTool } from "../../src/agent/impact.ts";
import { SKILL_NAME } from "../../src/agent/install.ts";
import { graphTools } from "../../src/agent/tools.ts";
import { CONFIG_KEY_NAMES } from "../../src/config/keys.ts";
import { VERBS } from "../../src/ui/command.ts";
import { cgcBinary, childEnv, PROJECT_ROOT } from "../helpers/cgc-env.ts";

const DOCS = ["skills/cgc-routing/SKILL.md", "docs/agent-guide.md"];

type Schema = { properties?: Record<string, Schema>; enum?: string[]; items?: Schema };

function vocabulary() {
  const deps = {
    current: () => undefined,
    lease: () => undefined as never,
    settle: async () => [],
    possibleCallers: async () => ({ unknown: "no engine" }),
  };
  const tools = [
    ...Object.values(graphTools(deps)),
    impactTool({ ...deps, edited: () => new Set() }),
    ...gapTools(deps),
  ];
  const names = new Set(tools.map((tool) => tool.name));
  const words = new Set<string>();
  const walk = (schema: Schema | undefined) => {
    for (const [key, value] of Object.entries(schema?.properties ?? {})) {
      words.add(key);
      for (const option of value.enum ?? []) words.add(option);
      walk(value);
    }
  };
  for (const tool of tools) walk(tool.parameters as Schema);
  const fixture = JSON.parse(readFileSync(join(PROJECT_ROOT, "test", "fixtures", "cgc", "mcp-tools.json"), "utf8")) as {
    tools: Array<{ inputSchema: Schema }>;
  };
  for (const tool of fixture.tools) walk(tool.inputSchema);
  // Graph properties a Cypher example may use, from the real schema (Kùzu table_info fixtures).
  for (const table of ["function", "file", "class", "repository"]) {
    const captured = JSON.parse(
      readFileSync(join(PROJECT_ROOT, "test", "fixtures", "cgc", `query-properties-${table}.json`), "utf8"),
    ) as { stdout: string };
    for (const [, name] of captured.stdout.matchAll(/"name": "([a-z_]+)"/g)) words.add(name as string);
  }
  return { names, words };
}

function cliSubcommands(): Set<string> {
  const help = spawnSync(cgcBinary(), ["--help"], { encoding: "utf8", env: childEnv({}) });
  return new Set([...`${help.stdout}${help.stderr}`.matchAll(/^│ ([a-z][a-z-]+)\s{2,}/gm)].map((m) => m[1] as string));
}

/** Everything in `text` that names something that does not exist. */
function unknownNames(text: string, cli: Set<string>): string[] {
  const { names, words } = vocabulary();
  const catalog = new Set<string>(MCP_CATALOG);
  const problems: string[] = [];
  const keyPrefixes = new Set(CONFIG_KEY_NAMES.map((key) => key.split(".")[0] as string));
  for (const [, token] of text.matchAll(/`([^`\n]+)`/g)) {
    const word = token as string;
    if (/^cgc_[a-z_]+$/.test(word)) {
      if (!names.has(word) && !catalog.has(word.slice(4))) problems.push(`tool ${word}`);
    } else if (/^mcp__[a-z]+__[a-z_]+$/.test(word)) {
      if (!catalog.has(word.replace(/^mcp__[a-z]+__/, ""))) problems.push(`tool ${word}`);
    } else if (/^[a-z]+(_[a-z]+)+$/.test(word)) {
      if (!catalog.has(word) && !words.has(word)) problems.push(`name ${word}`);
    } else if (/^[a-z]+\.[a-zA-Z]+$/.test(word) && keyPrefixes.has(word.split(".")[0] as string)) {
      if (!(CONFIG_KEY_NAMES as string[]).includes(word)) problems.push(`config key ${word}`);
    }
    const cliCall = /^cgc ([a-z-]+)/.exec(word);
    if (cliCall && !cli.has(cliCall[1] as string)) problems.push(`cgc command ${word}`);
  }
  for (const [, verb] of text.matchAll(/\/cgc ([a-z-]+)/g)) {
    if (!Object.hasOwn(VERBS, verb as string)) problems.push(`/cgc ${verb}`);
  }
  for (const [, value] of text.matchAll(/"?relation"?: "([a-z_]+)"/g)) {
    if (!words.has(value as string)) problems.push(`relation ${value}`);
  }
  return problems;
}

describe("routing skill and agent guide", () => {
  const cli = cliSubcommands();

  it("know the real cgc's subcommands", () => {
    expect([...cli]).toEqual(expect.arrayContaining(["index", "doctor", "query", "context", "bundle", "mcp"]));
  });

  it.each(DOCS)("%s names only tools, commands and keys that exist", (file) => {
    const text = readFileSync(join(PROJECT_ROOT, file), "utf8");
    expect(unknownNames(text, cli)).toEqual([]);
    expect(text).toMatch(/cgc_relations/);
  });

  it("the check catches a made-up tool, relation, verb, key and command", () => {
    const bogus =
      "`cgc_frobnicate` `mcp__cgc__frobnicate` `find_everything` `freshness.nope` `cgc frob` /cgc frob " +
      '{ "relation": "cousins" }';
    expect(unknownNames(bogus, cli)).toEqual([
      "tool cgc_frobnicate",
      "tool mcp__cgc__frobnicate",
      "name find_everything",
      "config key freshness.nope",
      "cgc command cgc frob",
      "/cgc frob",
      "relation cousins",
    ]);
  });

  it("pi's own skill loader finds the skill in the package's skills directory, without complaint", () => {
    const loaded = loadSkillsFromDir({ dir: join(PROJECT_ROOT, "skills"), source: "package" });
    expect(loaded.diagnostics).toEqual([]);
    expect(loaded.skills.map((skill) => skill.name)).toEqual([SKILL_NAME]);
    expect(loaded.skills[0]?.description).toMatch(/who calls a function/);
  });
});
