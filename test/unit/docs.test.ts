// Generated documents stay in step with the key table, and every declared key is read by the product.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { renderConfigTable, renderConfigurationDoc } from "../../src/config/docs.ts";
import { CONFIG_KEY_NAMES } from "../../src/config/keys.ts";
import { PROJECT_ROOT } from "../helpers/cgc-env.ts";

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory()
      ? sourceFiles(join(dir, entry.name))
      : entry.name.endsWith(".ts")
        ? [join(dir, entry.name)]
        : [],
  );
}

describe("generated configuration docs", () => {
  it("docs/configuration.md is what `npm run docs` generates", () => {
    expect(readFileSync(join(PROJECT_ROOT, "docs", "configuration.md"), "utf8")).toBe(renderConfigurationDoc());
  });

  it("the README's table is the generated one", () => {
    const readme = readFileSync(join(PROJECT_ROOT, "README.md"), "utf8");
    expect(readme).toContain(`<!-- config-table:start -->\n${renderConfigTable()}\n<!-- config-table:end -->`);
  });

  it("every declared key is read somewhere outside the config layer", () => {
    const code = sourceFiles(join(PROJECT_ROOT, "src"))
      .filter((file) => !file.includes(`${join("src", "config")}`))
      .map((file) => readFileSync(file, "utf8"))
      .join("\n");
    const unread = CONFIG_KEY_NAMES.filter((name) => !code.includes(`"${name}"`));
    expect(unread).toEqual([]);
  });
});
