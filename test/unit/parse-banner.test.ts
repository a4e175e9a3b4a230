// parseDatabaseBanner against the `Using database:` line the real cgc printed on each backend of the test
// matrix (test/fixtures/cgc/banner-*.json, `npm run fixtures backends`) and in the other captures.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parseDatabaseBanner } from "../../src/cgc/parse.ts";
import { PROJECT_ROOT } from "../helpers/cgc-env.ts";

const DIR = join(PROJECT_ROOT, "test", "fixtures", "cgc");
const fixture = (name: string) =>
  JSON.parse(readFileSync(join(DIR, `${name}.json`), "utf8")) as { stdout: string; stderr: string };

describe("parseDatabaseBanner", () => {
  it.each([
    ["banner-kuzudb", { name: "kuzudb", source: "auto-detect" }],
    ["banner-falkordb", { name: "falkordb", source: "auto-detect" }],
    [
      "banner-falkordb-remote",
      { name: "falkordb-remote", source: "environment (DEFAULT_DATABASE)", host: "127.0.0.1" },
    ],
    ["banner-neo4j", { name: "neo4j", source: "environment (DEFAULT_DATABASE)" }],
    // A lock failure still names the backend: the line comes before the database opens.
    ["lock-cli-kuzudb", { name: "kuzudb", source: "auto-detect" }],
    ["index-ladybugdb", { name: "ladybugdb", source: "environment (DEFAULT_DATABASE)" }],
    // After `cgc doctor` wrote its .env: the backend asked for (the data stays in KùzuDB on Python 3.11).
    ["list-after-doctor", { name: "falkordb", source: "<WORK>/main/home/.codegraphcontext/.env" }],
    ["context-query", { name: "kuzudb", source: "context (wt-feature-0123abcd)" }],
  ])("%s", (name, expected) => {
    const { stdout, stderr } = fixture(name);
    expect(parseDatabaseBanner(`${stderr}\n${stdout}`)).toEqual({ kind: "ok", value: expected });
  });

  it("finds a line in every capture of a command that opens the database, and none in --version", () => {
    for (const file of readdirSync(DIR).filter((name) => /^(banner|query|index|list|stats)-/.test(name))) {
      const { stdout, stderr } = fixture(file.slice(0, -5));
      expect(parseDatabaseBanner(stderr).kind, file).toBe("ok");
      expect(parseDatabaseBanner(stdout).kind, file).toBe("unknown");
    }
    expect(parseDatabaseBanner(fixture("version").stderr).kind).toBe("unknown");
  });

  it("reads a NEO4J_DATABASE detail, and reads only complete, balanced lines", () => {
    expect(
      parseDatabaseBanner("Using database: Neo4j (source: /h/.codegraphcontext/.env, database: graphs)\n"),
    ).toEqual({
      kind: "ok",
      value: { name: "neo4j", source: "/h/.codegraphcontext/.env", database: "graphs" },
    });
    expect(parseDatabaseBanner("Using database: kuzudb (source: auto-detect)").kind).toBe("unknown");
    expect(parseDatabaseBanner("Using database: kuzudb (source: environment (DEFAULT_DATABASE)\n").kind).toBe(
      "unknown",
    );
    expect(
      parseDatabaseBanner("⚠ DEFAULT_DATABASE=neo4j but credentials not found. Falling back to default.\n").kind,
    ).toBe("unknown");
  });
});
