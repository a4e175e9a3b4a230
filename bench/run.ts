// `npm run bench [-- --only <name>[,<name>…]] [--quick] [--sizes <files>[,…]] [--backend falkordb-remote]
// [--variants <name>[,…]] [--record]`:
// runs the bench modules in a fixed
// order (a module that is not there is skipped), prints each report, and with --record writes each
// report into its own marked section of bench/RESULTS.md, leaving every other section as it is.
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { BACKENDS, type Backend, type BenchOptions, type BenchReport, header, log, machine } from "./harness.ts";

const MODULES = [
  "spawn-cost",
  "session-start",
  "session-spawns",
  "memory",
  "change-detection",
  "query-latency",
  "watcher-memory",
  "tier-tokens",
  "edit-to-fresh",
  "engine-discovery",
  "index-cost",
  "index-force",
  "startup-overhead",
  "truth",
];

const BENCH_DIR = dirname(fileURLToPath(import.meta.url));
const RESULTS = join(BENCH_DIR, "RESULTS.md");

interface Args extends BenchOptions {
  only: string[] | undefined;
  record: boolean;
}

function parseArgs(argv: string[]): Args {
  const args: Args = { quick: false, record: false, only: undefined, backend: "embedded" };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === "--quick") args.quick = true;
    else if (arg === "--record") args.record = true;
    else if (arg === "--only") args.only = (argv[++i] ?? "").split(",").filter(Boolean);
    else if (arg?.startsWith("--only=")) args.only = arg.slice("--only=".length).split(",").filter(Boolean);
    else if (arg === "--sizes") args.sizes = (argv[++i] ?? "").split(",").map(Number);
    else if (arg === "--backend") args.backend = argv[++i] as Backend;
    else if (arg === "--variants") args.variants = (argv[++i] ?? "").split(",").filter(Boolean);
    else
      throw new Error(
        `unknown argument ${arg}; usage: bench/run.ts [--only <name>[,…]] [--quick] [--sizes n,…] [--backend ${BACKENDS.join("|")}] [--variants a,…] [--record]`,
      );
  }
  if (!BACKENDS.includes(args.backend))
    throw new Error(`--backend takes ${BACKENDS.join(" or ")}, not ${args.backend}`);
  if (args.sizes?.some((size) => !Number.isInteger(size) || size < 0)) throw new Error("--sizes takes file counts");
  const unknown = args.only?.filter((name) => !MODULES.includes(name)) ?? [];
  if (unknown.length > 0) throw new Error(`no bench module ${unknown.join(", ")}; known: ${MODULES.join(", ")}`);
  return args;
}

function commandFor(name: string, args: Args): string {
  const sizes = args.sizes ? ` --sizes ${args.sizes.join(",")}` : "";
  const backend = args.backend === "embedded" ? "" : ` --backend ${args.backend}`;
  const variants = args.variants ? ` --variants ${args.variants.join(",")}` : "";
  return `npm run bench -- --only ${name}${args.quick ? " --quick" : ""}${sizes}${backend}${variants}`;
}

/** Replaces the section between this module's markers, or appends it; other sections stay byte for byte. */
function record(name: string, section: string): void {
  const start = `<!-- bench:${name} -->`;
  const end = `<!-- /bench:${name} -->`;
  const block = `${start}\n${section.trim()}\n${end}`;
  const text = existsSync(RESULTS) ? readFileSync(RESULTS, "utf8") : "# Benchmark results\n";
  const from = text.indexOf(start);
  const to = text.indexOf(end);
  const next =
    from >= 0 && to > from
      ? text.slice(0, from) + block + text.slice(to + end.length)
      : `${text.trimEnd()}\n\n${block}\n`;
  writeFileSync(RESULTS, next);
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  const selected = args.only ?? MODULES;
  let failures = 0;
  for (const name of selected) {
    const file = join(BENCH_DIR, `${name}.ts`);
    if (!existsSync(file)) {
      log(`${name}: not present, skipped`);
      continue;
    }
    const mod = (await import(pathToFileURL(file).href)) as {
      run?: (options: BenchOptions) => Promise<unknown>;
      backends?: readonly Backend[];
    };
    if (typeof mod.run !== "function") {
      log(`${name}: exports no run(), skipped`);
      continue;
    }
    if (!(mod.backends ?? ["embedded"]).includes(args.backend)) {
      log(`${name}: does not run on ${args.backend}, skipped`);
      continue;
    }
    log(`${name}: running`);
    const m = machine();
    const started = Date.now();
    try {
      const report = (await mod.run({
        quick: args.quick,
        sizes: args.sizes,
        backend: args.backend,
        variants: args.variants,
      })) as BenchReport | string | undefined;
      log(`${name}: done in ${((Date.now() - started) / 1000).toFixed(0)} s`);
      if (report === undefined) continue;
      const { title, markdown } = typeof report === "string" ? { title: name, markdown: report } : report;
      const section = `## ${title}\n\n${header(m, commandFor(name, args), args.backend)}\n\n${markdown}\n`;
      process.stdout.write(`\n${section}\n`);
      // A run with other sizes, --quick, another backend or other variants is a different measurement: it gets
      // its own section.
      const variant =
        `${args.sizes ? `-sizes-${args.sizes.join("-")}` : ""}${args.quick ? "-quick" : ""}` +
        `${args.backend === "embedded" ? "" : `-${args.backend}`}` +
        `${args.variants ? `-${args.variants.join("-")}` : ""}`;
      if (args.record) record(`${name}${variant}`, section);
    } catch (error) {
      failures++;
      log(`${name}: FAILED: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    }
  }
  process.exitCode = failures > 0 ? 1 : 0;
}

await main();
