// The parsers against every output captured from the real cgc (test/fixtures/cgc/, `npm run fixtures`),
// and properties showing that nothing makes them throw and that cut output is unknown, not wrong.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  detectBusy,
  detectCgcFailure,
  indexInPart,
  indexSkipped,
  type Parsed,
  parseContextCreate,
  parseContextList,
  parseDoctorDefaultDatabase,
  parseQueryJson,
  parseVersion,
} from "../../src/cgc/parse.ts";
import { PROJECT_ROOT } from "../helpers/cgc-env.ts";
import { TINY_FACTS } from "../helpers/repos.ts";

const DIR = join(PROJECT_ROOT, "test", "fixtures", "cgc");

interface Capture {
  name: string;
  argv: string[];
  exitCode: number | null;
  stdout: string;
  stderr: string;
  cgcVersion: string;
}

interface Manifest {
  repos: Array<{ name: string; path: string; head: string; files: string[] }>;
}

const captures = new Map<string, Capture>(
  readdirSync(DIR)
    .filter((file) => file.endsWith(".json") && file !== "repos.json")
    .map((file) => [file.slice(0, -5), JSON.parse(readFileSync(join(DIR, file), "utf8")) as Capture]),
);
const manifest = JSON.parse(readFileSync(join(DIR, "repos.json"), "utf8")) as Manifest;

function capture(name: string): Capture {
  const found = captures.get(name);
  if (!found) throw new Error(`missing fixture ${name}; run npm run fixtures`);
  return found;
}

/** Both streams, as the runner hands them to the parsers. */
function both(name: string): string {
  const { stdout, stderr } = capture(name);
  return `${stdout}\n${stderr}`;
}

function value<T>(parsed: Parsed<T>): T {
  if (parsed.kind !== "ok") throw new Error(`expected ok, got unknown: ${parsed.reason}`);
  return parsed.value;
}

function repo(name: string) {
  const found = manifest.repos.find((entry) => entry.name === name);
  if (!found) throw new Error(`no fixture repository ${name}`);
  return found;
}

const AWKWARD = "a-long-repository-directory-name-that-pushes-the-path-past-eighty-columns";
// Rich reads `[id]` in the real path as a markup tag and drops it from everything the CLI prints.
const AWKWARD_AS_PRINTED = `<WORK>/repos/dir with spaces/ ünïcødé (x)/${AWKWARD}`;

describe("captured fixtures", () => {
  it("were all made by the same cgc version", () => {
    const versions = new Set([...captures.values()].map((entry) => entry.cgcVersion));
    expect(versions).toEqual(new Set([value(parseVersion(capture("version").stderr)).version]));
  });
});

describe("parseVersion", () => {
  it("reads `cgc --version` from stderr", () => {
    expect(capture("version").stdout).toBe("");
    expect(value(parseVersion(capture("version").stderr))).toEqual({
      version: "0.6.13",
      major: 0,
      minor: 6,
      patch: 13,
    });
  });

  it("does not read a version from a line that was cut", () => {
    expect(parseVersion("CodeGraphContext 0.6.1").kind).toBe("unknown");
    expect(parseVersion("Usage: cgc [OPTIONS]\n").kind).toBe("unknown");
  });
});

describe("parseDoctorDefaultDatabase", () => {
  it("reads the backend cgc was asked for and where the choice came from", () => {
    for (const name of ["doctor-first-run", "doctor-default"]) {
      expect(value(parseDoctorDefaultDatabase(capture(name).stderr))).toEqual({
        name: "falkordb",
        source: "<WORK>/doctor/home/.codegraphcontext/.env",
      });
    }
    expect(value(parseDoctorDefaultDatabase(capture("doctor-kuzudb").stderr))).toEqual({
      name: "kuzudb",
      source: "environment (default_database)",
    });
  });

  it("matches doctor's exit code: 1 for the unusable falkordb default, 0 for kuzudb", () => {
    expect(capture("doctor-default").exitCode).toBe(1);
    expect(capture("doctor-kuzudb").exitCode).toBe(0);
  });
});

describe("indexSkipped", () => {
  it("is true for cgc's skip of an already indexed repository, with the path as given or as `.`", () => {
    expect(indexSkipped(capture("index-skip").stdout)).toBe(true);
    expect(indexSkipped(capture("index-skip-dot").stdout)).toBe(true);
  });

  it("is false for an index that ran, forced or not, and for a failure", () => {
    for (const name of ["index-first", "index-force", "index-ladybugdb", "index-missing-path"]) {
      expect(indexSkipped(capture(name).stdout), name).toBe(false);
    }
  });
});

describe("parseQueryJson", () => {
  it("reads Repository nodes after the preamble", () => {
    const rows = value(parseQueryJson(capture("query-repositories").stdout));
    expect(rows.map((row) => row.name)).toEqual(manifest.repos.map((entry) => entry.name));
    for (const row of rows) {
      const entry = repo(String(row.name));
      expect(row.commit_hash).toBe(entry.head);
      expect(row.path).toBe(entry.name === AWKWARD ? AWKWARD_AS_PRINTED : entry.path);
      expect(String(row.indexed_at)).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d+\+00:00$/);
    }
  });

  it("reads the per-repository counts of tinyRepo()", () => {
    const rows = value(parseQueryJson(capture("query-counts").stdout));
    expect(rows.find((row) => row.path === repo("tiny").path)).toEqual({
      path: repo("tiny").path,
      files: TINY_FACTS.pythonFiles.length,
      functions: TINY_FACTS.functions.length,
      classes: TINY_FACTS.classes.length,
    });
  });

  it("reads File.language, null for files cgc scans as generic", () => {
    const rows = value(parseQueryJson(capture("query-languages").stdout));
    expect(rows.filter((row) => row.path === repo("picomatch").path)).toEqual([
      { path: repo("picomatch").path, language: "javascript", files: 7 },
      { path: repo("picomatch").path, language: null, files: 1 },
    ]);
  });

  it("reads the node properties cgc really stores", () => {
    const names = (label: string) =>
      value(parseQueryJson(capture(`query-properties-${label}`).stdout)).map((row) => row.name);
    expect(names("repository")).toEqual(["path", "name", "is_dependency", "indexed_at", "commit_hash"]);
    expect(names("file")).toEqual(["path", "name", "relative_path", "package_name", "language", "is_dependency"]);
    expect(names("function")).toEqual(
      expect.arrayContaining(["uid", "name", "path", "line_number", "end_line", "lang"]),
    );
    expect(names("class")).toEqual(expect.arrayContaining(["uid", "name", "path", "line_number", "lang"]));
  });

  it("is unknown for a query error and a refused write", () => {
    expect(parseQueryJson(capture("query-error").stdout).kind).toBe("unknown");
    expect(parseQueryJson(capture("query-write-rejected").stdout).kind).toBe("unknown");
  });

  it("is unknown for JSON that is not a list of rows", () => {
    expect(parseQueryJson('{"a": 1}\n').kind).toBe("unknown");
    expect(parseQueryJson("[1, 2]\n").kind).toBe("unknown");
  });
});

describe("detectBusy", () => {
  const locks = [...captures.keys()].filter((name) => name.startsWith("lock-"));

  it("recognises every captured lock: CLI and mcp start, Kùzu and LadybugDB", () => {
    expect(locks.sort()).toEqual([
      "lock-cli-kuzudb",
      "lock-cli-ladybugdb",
      "lock-cli-while-mcp",
      "lock-mcp-kuzudb",
      "lock-mcp-ladybugdb",
    ]);
    for (const name of locks) {
      expect(detectBusy(both(name)), name).toBe(true);
      expect(capture(name).exitCode, name).toBe(1);
    }
  });

  it("is false for every other capture", () => {
    for (const name of [...captures.keys()].filter((entry) => !entry.startsWith("lock-"))) {
      expect(detectBusy(both(name)), name).toBe(false);
    }
  });

  it("ignores the lock text inside query data (indented JSON values)", () => {
    const row =
      '[\n  {\n    "source": "Could not set lock on file : x\\nIO exception: Could not set lock on file"\n  }\n]\n';
    expect(detectBusy(row)).toBe(false);
    expect(detectBusy("      IO exception: Could not set lock on file : /db\n")).toBe(false);
  });
});

describe("detectCgcFailure", () => {
  it("names failures printed with exit code 0", () => {
    expect(detectCgcFailure(both("stats-unknown"))).toBe("Repository not found: <WORK>/nowhere");
    expect(detectCgcFailure("Resolving context...\nAn error occurred: boom\n")).toBe("An error occurred: boom");
  });

  it("names the failures cgc exits 1 on", () => {
    expect(detectCgcFailure(both("query-error"))).toBe("Query Error (RuntimeError):");
    expect(detectCgcFailure(both("query-write-rejected"))).toMatch(/^Error: This tool only supports read-only queries/);
    expect(detectCgcFailure(both("index-missing-path"))).toBe("Error: Path does not exist: <WORK>/does-not-exist");
    expect(detectCgcFailure(both("lock-cli-kuzudb"))).toMatch(/^Database Connection Error: IO exception/);
    expect(detectCgcFailure(both("lock-mcp-kuzudb"))).toMatch(/^RuntimeError: IO exception: Could not set lock/);
  });

  it("is silent on successful output", () => {
    const fine = [
      "list-repos",
      "list-empty",
      "stats-overall",
      "stats-empty",
      "index-first",
      "index-skip",
      "index-force",
    ];
    for (const name of [...fine, "query-repositories", "query-counts", "watch-kuzudb", "version", "mcp-tools"]) {
      expect(detectCgcFailure(both(name)), name).toBeUndefined();
    }
  });
});

// ---------------------------------------------------------------------------------------------
// Properties

const PARSERS = {
  parseVersion,
  parseDoctorDefaultDatabase,
  parseQueryJson,
  parseContextList,
} as const;
const ALL = { ...PARSERS, detectBusy, detectCgcFailure };
const texts = [...captures.keys()].map(both);

function isParsed(result: unknown): boolean {
  const kind = (result as { kind?: unknown }).kind;
  return kind === "ok" || (kind === "unknown" && typeof (result as { reason?: unknown }).reason === "string");
}

describe("properties", () => {
  it("random strings, random unicode: no parser throws, every answer is ok or unknown", () => {
    const anyText = fc.oneof(
      fc.string(),
      fc.string({ unit: "binary" }),
      fc.string({ unit: "grapheme" }),
      fc
        .array(fc.constantFrom("│", "┃", "└", "[", "{", "\n", " │ ", "|", "+---+", "📊", "Error: ", "seconds"))
        .map((parts) => parts.join("")),
    );
    fc.assert(
      fc.property(anyText, (text) => {
        for (const parse of Object.values(PARSERS)) expect(isParsed(parse(text))).toBe(true);
        expect(typeof detectBusy(text)).toBe("boolean");
        const failure = detectCgcFailure(text);
        expect(failure === undefined || typeof failure === "string").toBe(true);
      }),
      { numRuns: 500 },
    );
  });

  it("random slices of the real fixtures never make anything throw", () => {
    fc.assert(
      fc.property(fc.constantFrom(...texts), fc.nat(), fc.nat(), (text, a, b) => {
        const [from, to] = [a % (text.length + 1), b % (text.length + 1)].sort((x, y) => x - y) as [number, number];
        const slice = text.slice(from, to);
        for (const parse of Object.values(ALL)) expect(() => parse(slice)).not.toThrow();
      }),
      { numRuns: 300 },
    );
  });

  it("a cut-off fixture is unknown or reads exactly as the whole: never partial rows", () => {
    const cases: Array<[keyof typeof PARSERS, string]> = [
      ["parseVersion", capture("version").stderr],
      ["parseDoctorDefaultDatabase", capture("doctor-kuzudb").stderr],
      ["parseDoctorDefaultDatabase", capture("doctor-default").stderr],
      ["parseQueryJson", capture("query-repositories").stdout],
      ["parseQueryJson", capture("query-counts").stdout],
    ];
    for (const [name, text] of cases) {
      const parse = PARSERS[name] as (input: string) => Parsed<unknown>;
      const whole = parse(text);
      expect(whole.kind, name).toBe("ok");
      fc.assert(
        fc.property(fc.nat(text.length), (cut) => {
          const part = parse(text.slice(0, cut));
          if (part.kind === "ok") expect(part).toEqual(whole);
        }),
        { numRuns: 200 },
      );
    }
  });

  it("truncated query JSON is unknown at every cut inside the array", () => {
    const stdout = capture("query-repositories").stdout;
    const start = stdout.indexOf("\n[") + 1;
    const end = stdout.lastIndexOf("]");
    for (let cut = start; cut <= end; cut++) {
      expect(parseQueryJson(stdout.slice(0, cut)).kind).toBe("unknown");
    }
  });
});

describe("named contexts (cgc context …)", () => {
  const DB = "<WORK>/contexts/home/.codegraphcontext/contexts";
  const NAME = "wt-feature-0123abcd";

  it("context list prints on stderr: mode, then the table or the empty line", () => {
    expect(capture("context-list").stdout).toBe("");
    expect(value(parseContextList(capture("context-list-empty").stderr))).toEqual({ mode: "global", contexts: [] });
    expect(value(parseContextList(capture("context-list").stderr))).toEqual({
      mode: "global",
      contexts: [
        { name: NAME, database: "kuzudb", dbPath: `${DB}/${NAME}/db/kuzudb`, reposLinked: 1, isDefault: false },
        // Without --database, create records cgc's configured default or falkordb, not the backend in use.
        { name: "other", database: "falkordb", dbPath: `${DB}/other/db/falkordb`, reposLinked: 0, isDefault: false },
      ],
    });
  });

  it("named mode names the default context and marks its row", () => {
    expect(value(parseContextList(capture("context-list-named").stderr))).toEqual({
      mode: "named",
      defaultContext: NAME,
      contexts: [
        { name: NAME, database: "kuzudb", dbPath: `${DB}/${NAME}/db/kuzudb`, reposLinked: 1, isDefault: true },
      ],
    });
  });

  it("a cut context list is unknown, never a shorter list", () => {
    const text = capture("context-list").stderr;
    const whole = parseContextList(text);
    for (let cut = 0; cut < text.length; cut += 7) {
      const part = parseContextList(text.slice(0, cut));
      if (part.kind === "ok") expect(part).toEqual(whole);
    }
  });

  it("context create: created, or already there — both exit 0", () => {
    expect(capture("context-create-exists").exitCode).toBe(0);
    expect(value(parseContextCreate(capture("context-create").stdout, NAME))).toBe("created");
    expect(value(parseContextCreate(capture("context-create-exists").stdout, NAME))).toBe("exists");
    expect(parseContextCreate(capture("context-create").stdout, "wt-other").kind).toBe("unknown");
  });

  it("--context on a query: a `Context:` line before the JSON; an unregistered name fails with exit 1", () => {
    expect(value(parseQueryJson(capture("context-query").stdout))).toEqual([{ path: "<WORK>/repos/tiny" }]);
    expect(value(parseQueryJson(capture("context-query-default").stdout))).toEqual([]);
    const unregistered = capture("context-query-unregistered");
    expect(unregistered.exitCode).toBe(1);
    expect(detectCgcFailure(unregistered.stdout)).toBe(
      "Error: Context 'wt-missing' is not registered. Create it with: cgc context create wt-missing",
    );
  });

  it("context delete asks on stdin, removes the registry entry and keeps the database files", () => {
    expect(capture("context-delete").stdout).toMatch(
      /\[y\/N\]: ✅ Deleted context 'other'\nNote: DB files were NOT deleted/,
    );
  });
});

describe("indexInPart", () => {
  // pi-cgc's own index (engine/pi_cgc_engine/indexer.py) on FalkorDB Lite, a tree with mypy's util.py.
  const lastLine =
    "pi-cgc index: 115 files written in 3.1 s (read and resolved in 1.7 s; 1 file only in part (falkordb cannot take a " +
    "NUL character in a docstring): util.py; written with bulk)";

  it("names the files pi-cgc's index wrote only in part, and why", () => {
    expect(indexInPart(`pi-cgc index: parsing 1/115 files · ~4s in all\n${lastLine}\n`)).toBe(
      "1 file only in part (falkordb cannot take a NUL character in a docstring): util.py",
    );
  });

  it("is undefined for an index that wrote every file whole, and for cgc's own", () => {
    expect(
      indexInPart("pi-cgc index: 6 files written in 0.4 s (read and resolved in 0.3 s; written with bulk)\n"),
    ).toBe(undefined);
    for (const name of ["index-first", "index-force"]) expect(indexInPart(capture(name).stdout), name).toBe(undefined);
  });
});
