// pi-cgc's full index beside cgc's own, on one backend: a multi-language tree built from sources a clean clone
// has, each side's index run in a copy of its own, its canonical dump (engine/pi-cgc-engine.py dump --dangling)
// and the schema cgc's index leaves (the backend's index listing: FalkorDB's `CALL db.indexes()`, Neo4j's SHOW
// INDEXES and SHOW CONSTRAINTS), compared line for line. engine/tests/test_index_parity.py is the same on KùzuDB.
import { execFile as execFileCallback, execFileSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { promisify } from "node:util";
import { ENGINE_SCRIPT } from "../../src/cgc/engine-script.ts";
import { childEnv, PROJECT_ROOT } from "./cgc-env.ts";

const execFile = promisify(execFileCallback);

export const FAULT_ENGINE = join(PROJECT_ROOT, "engine", "tests", "fault_engine.py");

/** Java classes the tree gets (no nested same-name call: see sameNameCallsNested). */
const JAVA: Record<string, string> = {
  "Shape.java": `package shapes;

public interface Shape {
    double area();
    String name();
}
`,
  "Base.java": `package shapes;

public abstract class Base implements Shape {
    protected final String label;

    protected Base(String label) {
        this.label = label;
    }

    public String name() {
        return label;
    }

    protected static double square(double x) {
        return x * x;
    }
}
`,
  "Circle.java": `package shapes;

public class Circle extends Base {
    private final double r;

    public Circle(double r) {
        super("circle");
        this.r = r;
    }

    @Override
    public double area() {
        return Math.PI * square(r);
    }
}
`,
  "Rect.java": `package shapes;

import java.util.List;
import java.util.ArrayList;

public class Rect extends Base {
    private final double w;
    private final double h;

    public Rect(double w, double h) {
        super("rect");
        this.w = w;
        this.h = h;
    }

    @Override
    public double area() {
        return w * h;
    }

    public static double total(List<Shape> shapes) {
        double sum = 0;
        for (Shape s : shapes) {
            sum += s.area();
        }
        return sum;
    }

    public static List<Shape> some() {
        List<Shape> out = new ArrayList<>();
        out.add(new Rect(1, 2));
        out.add(new Circle(3));
        return out;
    }
}
`,
};

const GO_CANDIDATES = [
  "container/list/list.go",
  "container/ring/ring.go",
  "container/heap/heap.go",
  "encoding/hex/hex.go",
  "unicode/utf16/utf16.go",
  "sort/search.go",
  "strings/compare.go",
  "bytes/reader.go",
  "errors/errors.go",
  "errors/wrap.go",
  "path/match.go",
  "html/escape.go",
];

/**
 * A line that calls one name twice (Go `NewReader(strings.NewReader(x))`): cgc 0.6.13's parser picks one of the
 * two calls at random, so two indexes of such a file by cgc itself can differ. Such files stay out of the tree.
 */
export function sameNameCallsNested(text: string): boolean {
  const keywords = new Set(["func", "if", "for", "switch", "return"]);
  return text.split("\n").some((line) => {
    const names = [...line.matchAll(/\b([A-Za-z_]\w*)\s*\(/g)]
      .map((m) => m[1])
      .filter((n) => !keywords.has(n as string));
    return new Set(names).size !== names.length;
  });
}

/**
 * A JS or TS file that imports (or re-exports) several names of one module in one statement, `import { a, b }
 * from './x'` or `const { a, b } = require('x')`: on FalkorDB one IMPORTS statement of cgc's writer then sets one
 * relationship to different values, the row FalkorDB keeps is its own choice, and the replay refuses the tree
 * (graph_rows._refuse_conflicting_rows): cgc's own writer writes it.
 */
export function importsSeveralNamesAtOnce(text: string): boolean {
  for (const match of text.matchAll(/\b(?:import|export)\b([^;'"]*?)\bfrom\s*['"]/g))
    if ((match[1] ?? "").includes(",")) return true;
  return /\b(?:const|let|var)\s*\{[^}]*,[^}]*\}\s*=\s*require\(/.test(text);
}

export interface TreeOptions {
  /** Leave out the JS and TS files the replay refuses on FalkorDB (importsSeveralNamesAtOnce). */
  falkordbBulk: boolean;
}

function python(venv: ".venv" | ".venv-lite"): string {
  return join(PROJECT_ROOT, venv, "bin", "python");
}

/**
 * Python files with docstrings that cgc's parser unescapes into a NUL character (as in mypy's util.py). FalkorDB's
 * client writes parameters into the query's text, which FalkorDB reads up to the NUL: cgc's index writes such a file
 * up to the failing statement (a function's docstring: the File node alone; a class's: its functions too) and
 * resolves none of its links. KùzuDB and Neo4j keep the NUL.
 */
export const NUL_DOCSTRINGS: Record<string, string> = {
  "in_function.py": `def plain():
    """plain"""
    return 1


def escaped():
    """holds a \\0 once unescaped"""
    return plain()
`,
  "in_class.py": `def helper(x):
    return x


class Holder:
    """holds a \\0 once unescaped"""

    def get(self, y):
        return helper(y)
`,
  "caller.py": `from escapes.in_function import escaped, plain
from escapes.in_class import Holder, helper


def calls_them():
    plain()
    escaped()
    helper(Holder().get(2))
`,
};

/**
 * The tree: Python's json and wsgiref packages (the interpreter's stdlib), JavaScript from node_modules (basic-ftp's
 * dist, its .js and .d.ts), TypeScript from node_modules (@smithy/signature-v4's dist-types, eventsource-parser's
 * and @jridgewell/sourcemap-codec's sources), Go from GOROOT/src (files without nested same-name calls), the Java
 * classes and the Python files with a NUL in a docstring above. Returns the count of files per suffix.
 */
export function buildTree(root: string, options: TreeOptions): Record<string, number> {
  const counts: Record<string, number> = {};
  const put = (target: string, text: string) => {
    mkdirSync(dirname(target), { recursive: true });
    writeFileSync(target, text);
    const suffix = target.slice(target.lastIndexOf("."));
    counts[suffix] = (counts[suffix] ?? 0) + 1;
  };
  const stdlib = execFileSync(python(".venv"), ["-c", "import sysconfig; print(sysconfig.get_paths()['stdlib'])"], {
    encoding: "utf8",
  }).trim();
  for (const pkg of ["json", "wsgiref"])
    for (const name of readdirSync(join(stdlib, pkg)).sort())
      if (name.endsWith(".py")) put(join(root, "py", pkg, name), readFileSync(join(stdlib, pkg, name), "utf8"));
  const modules = join(PROJECT_ROOT, "node_modules");
  for (const [folder, target] of [
    ["basic-ftp/dist", "js/ftp"],
    ["@smithy/signature-v4/dist-types", "ts/sigv4"],
    ["eventsource-parser/src", "ts/eventsource-parser"],
    ["@jridgewell/sourcemap-codec/src", "ts/sourcemap-codec"],
  ] as const) {
    const dir = join(modules, folder);
    if (!existsSync(dir)) throw new Error(`${dir} missing: run npm install`);
    for (const name of readdirSync(dir).sort()) {
      if (!/\.(js|ts)$/.test(name)) continue;
      const text = readFileSync(join(dir, name), "utf8");
      if (options.falkordbBulk && importsSeveralNamesAtOnce(text)) continue;
      put(join(root, target, name), text);
    }
  }
  const goroot = execFileSync("go", ["env", "GOROOT"], { encoding: "utf8" }).trim();
  for (const name of GO_CANDIDATES) {
    const source = join(goroot, "src", name);
    if (!existsSync(source)) continue;
    const text = readFileSync(source, "utf8");
    if (!sameNameCallsNested(text)) put(join(root, "go", name), text);
  }
  for (const [name, text] of Object.entries(JAVA)) put(join(root, "java", "shapes", name), text);
  for (const [name, text] of Object.entries(NUL_DOCSTRINGS)) put(join(root, "py", "escapes", name), text);
  return counts;
}

export interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
  ms: number;
}

/** Runs a command to its end in `cwd` with a cgc child's environment (childEnv) and `env`. */
export async function runCommand(
  command: string,
  args: string[],
  cwd: string,
  env: Record<string, string>,
): Promise<Run> {
  const started = performance.now();
  const done = await execFile(command, args, {
    cwd,
    env: childEnv(env),
    maxBuffer: 64 * 1024 * 1024,
    timeout: 300_000,
    killSignal: "SIGKILL",
  }).then(
    (result) => ({ code: 0, stdout: result.stdout, stderr: result.stderr }),
    (error: { code?: number | string; stdout?: string; stderr?: string }) => ({
      code: typeof error.code === "number" ? error.code : null,
      stdout: error.stdout ?? "",
      stderr: error.stderr ?? String(error),
    }),
  );
  return { ...done, ms: Math.round(performance.now() - started) };
}

async function mustRun(command: string, args: string[], cwd: string, env: Record<string, string>): Promise<Run> {
  const run = await runCommand(command, args, cwd, env);
  if (run.code !== 0)
    throw new Error(
      `${command} ${args.join(" ")} exited ${run.code}:\n${run.stdout.slice(-3000)}\n${run.stderr.slice(-3000)}`,
    );
  return run;
}

/** The canonical dump of `root`'s graph, every dangling edge too, by `venv`'s Python. */
export async function dumpGraph(
  venv: ".venv" | ".venv-lite",
  root: string,
  env: Record<string, string>,
): Promise<string[]> {
  const out = join(dirname(root), "dump.txt");
  await mustRun(python(venv), [ENGINE_SCRIPT, "dump", "--root", root, "--out", out, "--dangling"], root, env);
  return readFileSync(out, "utf8").split("\n").filter(Boolean);
}

// The schema cgc's index leaves, one sorted line per index or constraint, by cgc's own database manager (the
// backend of `env`). FalkorDB: CALL db.indexes() (label, properties, types, entity type; the status and the
// counters change as the graph fills). Neo4j: SHOW INDEXES and SHOW CONSTRAINTS.
const SCHEMA_SCRIPT = `
import json
from codegraphcontext.core import get_database_manager
manager = get_database_manager()
backend = manager.get_backend_type()
lines = []
with manager.get_driver().session() as session:
    if backend.startswith("falkordb"):
        for row in session.run("CALL db.indexes()").data():
            lines.append("index " + json.dumps({k: row[k] for k in ("label", "properties", "types", "entitytype")}, sort_keys=True))
    else:
        for row in session.run("SHOW INDEXES YIELD name, type, entityType, labelsOrTypes, properties, owningConstraint").data():
            lines.append("index " + json.dumps(row, sort_keys=True))
        for row in session.run("SHOW CONSTRAINTS YIELD name, type, entityType, labelsOrTypes, properties").data():
            lines.append("constraint " + json.dumps(row, sort_keys=True))
manager.close_driver()
print(backend)
print("\\n".join(sorted(lines)))
`;

/** The backend's name and its index (and constraint) listing. */
export async function schemaListing(
  venv: ".venv" | ".venv-lite",
  cwd: string,
  env: Record<string, string>,
): Promise<{ backend: string; lines: string[] }> {
  const run = await mustRun(python(venv), ["-c", SCHEMA_SCRIPT], cwd, env);
  const [backend = "", ...lines] = run.stdout.split("\n").filter(Boolean);
  return { backend, lines };
}

// Neo4j Community has one database per server: between two indexes everything goes, nodes, indexes (but the
// two lookup indexes Neo4j always has) and constraints, so that the second index starts from what the first did.
const NEO4J_CLEAR_SCRIPT = `
from codegraphcontext.core import get_database_manager
manager = get_database_manager()
with manager.get_driver().session() as session:
    session.run("MATCH (n) CALL { WITH n DETACH DELETE n } IN TRANSACTIONS OF 10000 ROWS").consume()
    for row in session.run("SHOW CONSTRAINTS YIELD name").data():
        session.run(f"DROP CONSTRAINT \`{row['name']}\`").consume()
    for row in session.run("SHOW INDEXES YIELD name, type WHERE type <> 'LOOKUP'").data():
        session.run(f"DROP INDEX \`{row['name']}\`").consume()
    left = session.run("MATCH (n) RETURN count(n) AS c").data()[0]["c"]
    schema = session.run("SHOW INDEXES YIELD type WHERE type <> 'LOOKUP'").data()
manager.close_driver()
assert left == 0 and not schema, (left, schema)
`;

export async function clearNeo4j(cwd: string, env: Record<string, string>): Promise<void> {
  await mustRun(python(".venv"), ["-c", NEO4J_CLEAR_SCRIPT], cwd, env);
}

export interface Side {
  /** The copy's root (`<work>/<side>/repo`: both copies have the Repository name `repo`). */
  root: string;
  index: Run;
  dump: string[];
  schema: { backend: string; lines: string[] };
}

/**
 * Copies `tree` to `<work>/<side>/repo`, runs `command args… <root>` there (`env` selects the backend), and
 * reads back the dump and the schema listing.
 */
export async function indexSide(
  work: string,
  side: string,
  tree: string,
  venv: ".venv" | ".venv-lite",
  command: string[],
  env: Record<string, string>,
): Promise<Side> {
  const root = join(work, side, "repo");
  rmSync(dirname(root), { recursive: true, force: true });
  mkdirSync(dirname(root), { recursive: true });
  cpSync(tree, root, { recursive: true });
  const [program, ...args] = command as [string, ...string[]];
  const index = await mustRun(program, [...args, root], root, env);
  writeFileSync(join(work, side, "index.log"), `${index.stdout}\n${index.stderr}`);
  const dump = await dumpGraph(venv, root, env);
  const schema = await schemaListing(venv, root, env);
  return { root, index, dump, schema };
}

/** The lines one list has more often than the other: `< ` only in a, `> ` only in b, sorted. */
export function differing(a: string[], b: string[]): string[] {
  const count = new Map<string, number>();
  for (const line of a) count.set(line, (count.get(line) ?? 0) + 1);
  for (const line of b) count.set(line, (count.get(line) ?? 0) - 1);
  const out: string[] = [];
  for (const [line, n] of [...count.entries()].sort(([x], [y]) => (x < y ? -1 : x > y ? 1 : 0)))
    for (let i = 0; i < Math.abs(n); i++) out.push(`${n > 0 ? "<" : ">"} ${line}`);
  return out.sort((x, y) => (x[0] === y[0] ? 0 : x[0] === "<" ? -1 : 1));
}

/** The edge types a dump has (`E TYPE …` lines). */
export function edgeTypes(dump: string[]): Set<string> {
  return new Set(dump.filter((line) => line.startsWith("E ")).map((line) => line.split(" ")[1] as string));
}
