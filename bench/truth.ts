// How true cgc's call graph is: its CALLS and HEURISTIC_CALLS pairs against a type-aware reference (SCIP
// indexes from scip-python and scip-typescript) on pinned packages from PyPI and npm. The method is in
// test/helpers/truth.ts; test/integration/truth.test.ts holds floors under these figures.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { PROJECT_ROOT } from "../test/helpers/cgc-env.ts";
import { CORPORA, type Corpus, type TruthRun, truthRun, truthTables } from "../test/helpers/truth.ts";
import { type BenchOptions, type BenchReport, log, ms } from "./harness.ts";

const BENCH_CORPORA: Corpus[] = [CORPORA.itsdangerous, CORPORA.click, CORPORA.jinja2, CORPORA["query-core"]];

function installed(name: string): string {
  const manifest = join(PROJECT_ROOT, "node_modules", ...name.split("/"), "package.json");
  return `${name} ${(JSON.parse(readFileSync(manifest, "utf8")) as { version: string }).version}`;
}

export async function run(options: BenchOptions): Promise<BenchReport> {
  const corpora = options.quick ? [CORPORA.itsdangerous, CORPORA["query-core"]] : BENCH_CORPORA;
  const runs: TruthRun[] = [];
  for (const corpus of corpora) {
    log(`truth: ${corpus.name} ${corpus.version}`);
    const result = await truthRun(corpus);
    log(
      `truth: ${corpus.name}: cgc index ${ms(result.graph.indexMs)}, reference ${ms(result.referenceMs)}, ` +
        `${result.reference.unmappedDefinitions} of ${result.reference.definitions} reference function definitions ` +
        "without a Function node at their line",
    );
    runs.push(result);
  }
  const tools = ["@sourcegraph/scip-python", "@sourcegraph/scip-typescript", "@c4312/scip"].map(installed).join(", ");
  const markdown = [
    `- Reference: ${tools}; corpora fetched by \`pip download --no-deps\` / \`npm pack\`, sha256-pinned ` +
      "(test/helpers/truth.ts), indexed by cgc on its default backend in a fresh home.",
    "- A pair is (calling function → called function), both Function nodes of the corpus's graph. Reference pairs: " +
      "SCIP references followed by `(` to a symbol defined at a Function node's line, attributed to the innermost " +
      "enclosing function. Left out on both sides: module-level calls (cgc's `<module>` nodes) and calls of " +
      "classes (`Foo(`, `new Foo(`, which cgc links to Class nodes). Graph pairs: CALLS and HEURISTIC_CALLS edges " +
      "between Function nodes.",
    "- False none: callees with at least one true caller for which the graph lists no calling function at all " +
      "(a `<module>` caller does not count, as on the reference side).",
    "",
    truthTables(runs),
  ].join("\n");
  return { title: "Call-graph truth against a type-aware reference", markdown };
}
