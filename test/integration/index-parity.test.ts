// pi-cgc's own full index leaves the graph cgc's own index leaves, on a FalkorDB server, FalkorDB Lite and Neo4j
// (engine/tests/test_index_parity.py is the same on KùzuDB). One multi-language tree (Python, JavaScript,
// TypeScript, Go, Java: test/helpers/index-parity.ts buildTree) in two copies: cgc's index of one, pi-cgc's
// `engine/pi-cgc-engine.py index --force` of the other, each in a HOME of its own; the canonical dumps
// (`dump --dangling`) and the schema cgc's index creates (the backend's index and constraint listing) compared
// line for line: 0 differing. pi-cgc's index says "written with bulk" where the replay applies.
//
// On FalkorDB the replay refuses, by design, a JS or TS file that imports several names of one module in one
// statement (`import { a, b } from './x'`): one IMPORTS statement of cgc's writer then sets one relationship to
// different values and FalkorDB keeps a row of its own choosing (graph_rows._refuse_conflicting_rows). The bulk
// cases on FalkorDB leave such files out of the tree; the refused case keeps them and asserts that cgc's own
// writer wrote the graph (indexer.write_with_cgc_writer), schema included. Neo4j applies the rows one by one:
// its tree keeps them, in bulk.
//
// Both trees have Python files with a NUL in a docstring once unescaped: on FalkorDB cgc's write of such a file
// fails at that docstring and cgc's pipeline goes on; pi-cgc's index leaves the same graph, in bulk and with cgc's
// writer (graph_rows.write_fails).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ENGINE_SCRIPT } from "../../src/cgc/engine-script.ts";
import { startBackend, type TestBackend } from "../helpers/backends.ts";
import { cgcBinary, cgcStart, makeCgcHome, PROJECT_ROOT, stopEscalating } from "../helpers/cgc-env.ts";
import {
  buildTree,
  clearNeo4j,
  differing,
  edgeTypes,
  FAULT_ENGINE,
  importsSeveralNamesAtOnce,
  indexSide,
  type Side,
} from "../helpers/index-parity.ts";

const PYTHON = join(PROJECT_ROOT, ".venv", "bin", "python");
const LITE_PYTHON = join(PROJECT_ROOT, ".venv-lite", "bin", "python");
const PI_INDEX = (python: string) => [python, ENGINE_SCRIPT, "index", "--force"];

let work: string;
/** The tree whose JS and TS import one name per statement (bulk on FalkorDB), and the whole tree. */
let bulkTree: string;
let wholeTree: string;
const timings: string[] = [];

beforeAll(() => {
  work = mkdtempSync(join(tmpdir(), "pi-cgc-index-parity-"));
  bulkTree = join(work, "tree-bulk");
  wholeTree = join(work, "tree-whole");
  const bulk = buildTree(bulkTree, { falkordbBulk: true });
  const whole = buildTree(wholeTree, { falkordbBulk: false });
  // Every language, in both trees; the whole tree has the statements the replay refuses on FalkorDB.
  for (const counts of [bulk, whole]) {
    expect(counts[".py"]).toBeGreaterThanOrEqual(8);
    expect(counts[".js"]).toBeGreaterThanOrEqual(10);
    expect(counts[".ts"]).toBeGreaterThanOrEqual(10);
    expect(counts[".go"]).toBeGreaterThanOrEqual(4);
    expect(counts[".java"]).toBe(4);
  }
  expect((whole[".ts"] ?? 0) + (whole[".js"] ?? 0)).toBeGreaterThan((bulk[".ts"] ?? 0) + (bulk[".js"] ?? 0));
  expect(importsSeveralNamesAtOnce("import { a, b } from './x'")).toBe(true);
  expect(importsSeveralNamesAtOnce("import { a } from './x'\nimport b from './y'")).toBe(false);
});

afterAll(() => {
  rmSync(work, { recursive: true, force: true });
  console.info(`index parity timings:\n${timings.join("\n")}`);
});

function expectSameGraph(theirs: Side, ours: Side, backend: string): void {
  expect(theirs.schema.backend).toBe(backend);
  expect(ours.schema.backend).toBe(backend);
  expect(theirs.dump.length).toBeGreaterThan(2000);
  expect([...edgeTypes(theirs.dump)]).toEqual(
    expect.arrayContaining(["CONTAINS", "CALLS", "IMPORTS", "INHERITS", "HAS_PARAMETER"]),
  );
  const diff = differing(theirs.dump, ours.dump);
  expect(diff, `${diff.length} differing lines of ${theirs.dump.length}:\n${diff.slice(0, 20).join("\n")}`).toEqual([]);
  // The indexes (and on Neo4j the constraints) cgc's index creates before it writes; the dump does not show them.
  expect(theirs.schema.lines.length).toBeGreaterThan(10);
  expect(differing(theirs.schema.lines, ours.schema.lines)).toEqual([]);
}

/**
 * The files with a NUL in a docstring (NUL_DOCSTRINGS): on FalkorDB cgc's write of each fails at that docstring, so
 * its graph has the class's file without the class, and pi-cgc said which files; KùzuDB and Neo4j keep them whole.
 */
function expectNulDocstrings(theirs: Side, ours: Side, writtenWhole: boolean): void {
  const holder = theirs.dump.some((line) => line.startsWith("N Class ") && line.includes('"name": "Holder"'));
  const fileOf = theirs.dump.some((line) => line.startsWith("N File ") && line.includes('"name": "in_class.py"'));
  expect({ holder, fileOf }).toEqual({ holder: writtenWhole, fileOf: true });
  // pi-cgc's last line names them (pi-cgc tells the user: src/lifecycle/maintenance.ts).
  const named =
    /; 2 files only in part \(falkordb(-remote)? cannot take a NUL character in a docstring\): py\/escapes\/in_class\.py, py\/escapes\/in_function\.py; written with /;
  if (writtenWhole) expect(ours.index.stdout).not.toMatch(/only in part/);
  else expect(ours.index.stdout).toMatch(named);
}

function note(what: string, theirs: Side, ours: Side): void {
  timings.push(`${what}: cgc ${theirs.index.ms} ms, pi-cgc ${ours.index.ms} ms, ${theirs.dump.length} lines`);
}

describe("pi-cgc's full index leaves cgc's graph", () => {
  describe("on a FalkorDB server", () => {
    let backend: TestBackend;
    const homes: Array<{ cleanup(): void }> = [];
    /** A side's environment: the server, a HOME of its own and a graph of its own on the one server. */
    const sideEnv = (graph: string) => {
      const home = makeCgcHome();
      homes.push(home);
      return { ...backend.env, ...home.env, FALKORDB_GRAPH_NAME: graph };
    };
    beforeAll(async () => {
      backend = await startBackend("falkordb-remote");
    });
    afterAll(async () => {
      await backend?.stop();
      for (const home of homes) home.cleanup();
    });

    it("bulk: 0 differing lines, cgc's indexes; a dropped edge type is seen", async () => {
      const theirs = await indexSide(
        work,
        "falkor-cgc",
        bulkTree,
        ".venv",
        [cgcBinary(), "index", "--force"],
        sideEnv("cgc"),
      );
      const ours = await indexSide(work, "falkor-pi", bulkTree, ".venv", PI_INDEX(PYTHON), sideEnv("pi"));
      note("FalkorDB server, bulk tree", theirs, ours);
      expect(ours.index.stdout).toContain("written with bulk");
      expectSameGraph(theirs, ours, "falkordb-remote");
      expectNulDocstrings(theirs, ours, false);
      // The comparison sees a broken replay: every CALLS edge left out of the bulk rows.
      const broken = await indexSide(
        work,
        "falkor-fault",
        bulkTree,
        ".venv",
        [PYTHON, FAULT_ENGINE, "--drop-edge-type", "CALLS", "index", "--force"],
        sideEnv("fault"),
      );
      const diff = differing(theirs.dump, broken.dump);
      expect(diff.length).toBeGreaterThan(100);
      expect(diff.filter((line) => !line.startsWith("< E CALLS "))).toEqual([]);
    });

    it("a tree the replay refuses goes to cgc's writer, which creates cgc's schema first: 0 differing lines", async () => {
      const theirs = await indexSide(
        work,
        "refused-cgc",
        wholeTree,
        ".venv",
        [cgcBinary(), "index", "--force"],
        sideEnv("cgc-r"),
      );
      const ours = await indexSide(work, "refused-pi", wholeTree, ".venv", PI_INDEX(PYTHON), sideEnv("pi-r"));
      note("FalkorDB server, refused tree", theirs, ours);
      // Refused by design (the file header): the fallback, said on stderr with its reason, and on the last line.
      expect(ours.index.stderr).toMatch(
        /written with cgc's own writer: this tree is not one the bulk writer replicates \(\S+: FalkorDB: one statement's rows set the relationship/,
      );
      expect(ours.index.stdout).toContain("written with cgc's writer)");
      // Found before the engine's state was let go of: the tree is read once.
      expect(ours.index.stdout).not.toContain("reading the tree again");
      expectSameGraph(theirs, ours, "falkordb-remote");
      expectNulDocstrings(theirs, ours, false);
    });
  });

  it("on FalkorDB Lite: bulk, 0 differing lines, cgc's indexes", async () => {
    // Each side a HOME of its own (startBackend: FALKORDB_PORT=0, the daemon on its socket only), whose daemon a
    // `cgc mcp start` holds from before the index to after the reads, so that no daemon loads a saved graph
    // (FalkorDB 4.16.2 can hang loading one: docs/cgc-compat.md). cgc's side is cgc's own index with Lite's zero
    // lookup written around (`pi-cgc-engine.py cgc index`): plain cgc on Lite leaves functions unlinked.
    const sides: Side[] = [];
    for (const [side, command] of [
      ["lite-cgc", [LITE_PYTHON, ENGINE_SCRIPT, "cgc", "index", "--force"]],
      ["lite-pi", PI_INDEX(LITE_PYTHON)],
    ] as const) {
      const backend = await startBackend("falkordb");
      const owner = cgcStart(["mcp", "start"], { cwd: work, env: backend.env, cgc: backend.cgc });
      try {
        await owner.waitForLine("stderr", /MCP Server is running/);
        sides.push(await indexSide(work, side, bulkTree, ".venv-lite", [...command], backend.env));
      } finally {
        await stopEscalating(owner);
        await backend.stop();
      }
    }
    const [theirs, ours] = sides as [Side, Side];
    note("FalkorDB Lite, bulk tree", theirs, ours);
    expect(ours.index.stdout).toContain("written with bulk");
    expectSameGraph(theirs, ours, "falkordb");
    expectNulDocstrings(theirs, ours, false);
  });

  it("on Neo4j: bulk, 0 differing lines, cgc's indexes and constraints", async () => {
    // Community has one database per server: cgc's index, its reads, everything cleared, then pi-cgc's.
    const backend = await startBackend("neo4j");
    const home = makeCgcHome();
    try {
      const theirs = await indexSide(
        work,
        "neo4j-cgc",
        wholeTree,
        ".venv",
        [cgcBinary(), "index", "--force"],
        backend.env,
      );
      await clearNeo4j(work, backend.env);
      const ours = await indexSide(work, "neo4j-pi", wholeTree, ".venv", PI_INDEX(PYTHON), {
        ...backend.env,
        ...home.env,
      });
      note("Neo4j, whole tree", theirs, ours);
      expect(ours.index.stdout).toContain("written with bulk");
      expectSameGraph(theirs, ours, "neo4j");
      expectNulDocstrings(theirs, ours, true);
    } finally {
      await backend.stop();
      home.cleanup();
    }
  });
});
