// Fixture repositories for tests and benchmarks, made from real code nobody here wrote (this
// machine's Python standard library, a plain-JavaScript npm package) plus one tiny synthetic
// repository whose call graph is known by construction. Each is a git repository with one commit
// by a fixed author at a fixed date, so its HEAD hash is stable for the same content.
import { execFileSync } from "node:child_process";
import {
  cpSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { basename, dirname, join, relative, sep } from "node:path";
import { cgcExec, PROJECT_ROOT } from "./cgc-env.ts";

/** Spaces, a Rich markup tag (`[id]`) and non-ASCII letters: what real users' paths contain. */
export const AWKWARD_SEGMENT = join("dir with spaces", "[id] ünïcødé (x)");

export interface RepoOptions {
  /** Create the repository at `<parent>/…` instead of inside a new temporary directory. */
  parent?: string;
  /** Put the repository under AWKWARD_SEGMENT. */
  awkwardPath?: boolean;
  /** Directory name of the repository (cgc names a Repository node after it). */
  name?: string;
  /** More files (relative path → text), committed with the rest — and so indexed with it by `indexedTinyRepo`. */
  extraFiles?: Record<string, string>;
}

export interface FixtureRepo {
  /** Absolute, symlink-free path of the repository root (what cgc stores). */
  path: string;
  name: string;
  /** HEAD commit hash. */
  head: string;
  /** Relative paths of the files committed, sorted, with `/` separators. */
  files: string[];
  /** Removes everything this helper created. */
  cleanup(): void;
}

const GIT_IDENTITY = {
  GIT_AUTHOR_NAME: "pi-cgc fixtures",
  GIT_AUTHOR_EMAIL: "fixtures@pi-cgc.invalid",
  GIT_AUTHOR_DATE: "2026-01-01T00:00:00Z",
  GIT_COMMITTER_NAME: "pi-cgc fixtures",
  GIT_COMMITTER_EMAIL: "fixtures@pi-cgc.invalid",
  GIT_COMMITTER_DATE: "2026-01-01T00:00:00Z",
};

/** The directory of this machine's Python standard library (from `python3`). */
export function stdlibDir(): string {
  const jsonDir = execFileSync("python3", ["-c", "import json,os;print(os.path.dirname(json.__file__))"], {
    encoding: "utf8",
  }).trim();
  return dirname(jsonDir);
}

/** A repository holding one standard-library package (`json`, `email`, …) as `<name>/…`, or one module file. */
export function stdlibRepo(pkg: string, options: RepoOptions = {}): FixtureRepo {
  const source = join(stdlibDir(), pkg);
  const isPackage = statOrUndefined(source)?.isDirectory() ?? false;
  const moduleFile = `${source}.py`;
  if (!isPackage && statOrUndefined(moduleFile) === undefined) {
    throw new Error(`${pkg} is neither a package nor a module in ${stdlibDir()}`);
  }
  return createRepo(options.name ?? pkg, options, (root) => {
    if (isPackage) copyTree(source, join(root, pkg));
    else cpSync(moduleFile, join(root, `${pkg}.py`));
  });
}

/**
 * About `fileCount` real .py files in a fixed order: the standard library's (some 1 800, keeping their
 * relative paths), then the packages of the project's own virtual environment (some 3 400 more, pinned by
 * scripts/setup.mjs) under `third_party/`. Only beyond both does the set repeat, under `copy-2/`, … —
 * repeated code makes every name ambiguous several times over, which is not what a real repository of
 * that size looks like (cgc 0.6.13 ran out of 24 GB on 5 000 files made of three copies of the library).
 */
export function scaledRepo(fileCount: number, options: RepoOptions = {}): FixtureRepo {
  const library = stdlibDir();
  const packages = join(PROJECT_ROOT, ".venv", "lib", basename(library), "site-packages");
  const pool = [
    ...pythonFilesOf(library).map((file) => ({ from: join(library, file), to: file })),
    ...pythonFilesOf(packages).map((file) => ({
      from: join(packages, file),
      to: join("third_party", file),
    })),
  ];
  return createRepo(options.name ?? `python-${fileCount}`, options, (root) => {
    for (let i = 0; i < fileCount; i++) {
      const { from, to } = pool[i % pool.length] as { from: string; to: string };
      const round = Math.floor(i / pool.length);
      const target = round === 0 ? join(root, to) : join(root, `copy-${round + 1}`, to);
      mkdirSync(dirname(target), { recursive: true });
      cpSync(from, target);
    }
  });
}

export interface NpmPackageRepo extends FixtureRepo {
  packageName: string;
  packageVersion: string;
}

/**
 * The JavaScript of `picomatch` from node_modules (plain CommonJS, 7 files, functions calling each
 * other across files), with its package.json and licence.
 */
export function npmPackageRepo(options: RepoOptions = {}): NpmPackageRepo {
  const packageName = "picomatch";
  const source = join(PROJECT_ROOT, "node_modules", packageName);
  const manifest = JSON.parse(readFileSync(join(source, "package.json"), "utf8")) as { version: string };
  const repo = createRepo(options.name ?? packageName, options, (root) => {
    for (const entry of ["index.js", "posix.js", "lib", "LICENSE", "package.json"]) {
      cpSync(join(source, entry), join(root, entry), { recursive: true });
    }
  });
  return { ...repo, packageName, packageVersion: manifest.version };
}

export interface TinyRepoFacts {
  /** Python files (relative paths). */
  pythonFiles: string[];
  /** Functions and methods written in the source (cgc adds one `<module>` Function per file on top). */
  functions: string[];
  classes: string[];
  /** Callee name → names of the functions calling it, sorted. */
  callers: Record<string, string[]>;
  /** [child, parent] class pairs. */
  inherits: Array<[string, string]>;
}

export interface TinyRepo extends FixtureRepo {
  facts: TinyRepoFacts;
}

const TINY_SOURCES: Record<string, string> = {
  "app.py": `from pkg.alpha import alpha
from pkg.beta import beta
from pkg.shapes import Circle, Square
from pkg.text import normalize


def main():
    parts = [alpha("A"), beta("B"), normalize(" C ")]
    shapes = [Square(2), Circle(1)]
    return parts, [describe(shape) for shape in shapes]


def describe(shape):
    return f"{shape.label()}: {shape.area()}"
`,
  "pkg/__init__.py": `"""Tiny fixture package with a known call graph."""
`,
  "pkg/text.py": `def normalize(value):
    return value.strip().lower()


def orphan(value):
    """Nobody calls this."""
    return value[::-1]
`,
  "pkg/alpha.py": `from pkg.text import normalize


def alpha(value):
    return "alpha:" + normalize(value)
`,
  "pkg/beta.py": `from pkg.text import normalize


def beta(value):
    return "beta:" + normalize(value)
`,
  "pkg/shapes.py": `class Shape:
    def label(self):
        return type(self).__name__.lower()

    def area(self):
        raise NotImplementedError


class Polygon(Shape):
    def __init__(self, sides):
        self.sides = sides


class Square(Polygon):
    def __init__(self, size):
        super().__init__(4)
        self.size = size

    def area(self):
        return self.size * self.size


class Circle(Shape):
    def __init__(self, radius):
        self.radius = radius

    def area(self):
        return 3 * self.radius * self.radius
`,
};

/** What tinyRepo() contains, by construction (checked against cgc by test/integration/cgc-fixtures.test.ts). */
export const TINY_FACTS: TinyRepoFacts = {
  pythonFiles: Object.keys(TINY_SOURCES).sort(),
  functions: ["main", "describe", "normalize", "orphan", "alpha", "beta"]
    .concat(["label", "area", "__init__", "__init__", "area", "__init__", "area"])
    .sort(),
  classes: ["Circle", "Polygon", "Shape", "Square"],
  callers: { normalize: ["alpha", "beta", "main"], orphan: [], alpha: ["main"], beta: ["main"], describe: ["main"] },
  inherits: [
    ["Circle", "Shape"],
    ["Polygon", "Shape"],
    ["Square", "Polygon"],
  ],
};

/** Six Python files with a known call graph: `normalize` has three callers in three files, `orphan` none. */
export function tinyRepo(options: RepoOptions = {}): TinyRepo {
  const repo = createRepo(options.name ?? "tiny", options, (root) => {
    for (const [file, text] of Object.entries(TINY_SOURCES)) {
      mkdirSync(dirname(join(root, file)), { recursive: true });
      writeFileSync(join(root, file), text);
    }
  });
  return { ...repo, facts: TINY_FACTS };
}

/**
 * A tiny repository (`options` as for `tinyRepo`) indexed by the real cgc into the graph `env` points at (its
 * HOME, a server's address), with `options.cgc` for another backend's cgc (test/helpers/backends.ts). The
 * suites' one indexed-repository fixture: it throws with cgc's words if the index fails.
 */
export async function indexedTinyRepo(
  env: Record<string, string>,
  options: RepoOptions & { cgc?: string; timeoutMs?: number } = {},
): Promise<TinyRepo> {
  const repo = tinyRepo(options);
  const result = await cgcExec(["index", repo.path], {
    cwd: repo.path,
    env,
    cgc: options.cgc,
    timeoutMs: options.timeoutMs,
  });
  if (result.code !== 0) {
    repo.cleanup();
    const output = `${result.stdout}\n${result.stderr}`.slice(-2000);
    throw new Error(`cgc index of the tiny repository failed (${result.code}): ${output}`);
  }
  return repo;
}

/**
 * Beside the tiny repository (`extraFiles`), for the possible callers' cases: `Store.fetch` calls `self.load()`,
 * which `Base` defines in another module (no graph edge: cgc 0.6.13's parser drops the generic base `Base[T]`);
 * `lonely` is called by nobody. `both` calls `obj.process()`, a method of Alpha and of Beta: cgc links it to
 * Alpha's by name (HEURISTIC_CALLS, AMBIGUOUS), and `top` calls `both`.
 */
export const POSSIBLE_CALLS_FILES: Record<string, string> = {
  "pkg/base.py": `from typing import Generic, TypeVar

T = TypeVar("T")


class Base(Generic[T]):
    def load(self, key):
        return key


def lonely():
    return 1
`,
  "pkg/store.py": `from pkg.base import Base, T


class Store(Base[T]):
    def fetch(self, key):
        return self.load(key)
`,
  "pkg/a.py": `class Alpha:
    def process(self):
        return 1

    def go(self):
        return self.process()
`,
  "pkg/b.py": `class Beta:
    def process(self):
        return 2
`,
  "pkg/use.py": `from pkg.a import Alpha


def both(obj):
    return obj.process()


def top():
    return both(Alpha())
`,
};

/**
 * The repositories a suite's cases make, removed together when each case ends (`repos.cleanup()` in its
 * afterEach). One that a `beforeAll` makes for several cases comes from `tinyRepo`/`indexedTinyRepo` instead.
 */
export function caseRepos() {
  const made: FixtureRepo[] = [];
  const keep = <T extends FixtureRepo>(repo: T): T => {
    made.push(repo);
    return repo;
  };
  return {
    tiny: (options: RepoOptions = {}) => keep(tinyRepo(options)),
    indexed: async (env: Record<string, string>, options: Parameters<typeof indexedTinyRepo>[1] = {}) =>
      keep(await indexedTinyRepo(env, options)),
    cleanup(): void {
      for (const repo of made.splice(0)) repo.cleanup();
    },
  };
}

/** Commits every change in `repoPath` with the fixed identity; returns the new HEAD. */
export function commitAll(repoPath: string, message: string): string {
  git(repoPath, ["add", "-A"]);
  git(repoPath, ["commit", "-q", "--allow-empty", "-m", message]);
  return git(repoPath, ["rev-parse", "HEAD"]).trim();
}

function createRepo(name: string, options: RepoOptions, fill: (root: string) => void): FixtureRepo {
  const top = options.parent === undefined ? mkdtempSync(join(tmpdir(), "pi-cgc-repo-")) : options.parent;
  const container = options.awkwardPath ? join(top, AWKWARD_SEGMENT) : top;
  const root = join(container, name);
  rmSync(root, { recursive: true, force: true });
  mkdirSync(root, { recursive: true });
  fill(root);
  for (const [file, text] of Object.entries(options.extraFiles ?? {})) {
    mkdirSync(dirname(join(root, file)), { recursive: true });
    writeFileSync(join(root, file), text);
  }
  git(root, ["init", "-q", "-b", "main"]);
  const head = commitAll(root, `fixture: ${name}`);
  const path = realpathSync(root);
  // What to remove: the temp dir we made, or the first directory we added under the caller's parent.
  const owned = options.parent === undefined ? top : join(top, relative(top, root).split(sep)[0] as string);
  return {
    path,
    name: basename(path),
    head,
    files: git(root, ["ls-files", "-z"]).split("\0").filter(Boolean).sort(),
    cleanup: () => rmSync(owned, { recursive: true, force: true }),
  };
}

function git(cwd: string, args: string[]): string {
  // No global or system git config: the repositories must not depend on the user's settings.
  return execFileSync("git", args, {
    cwd,
    encoding: "utf8",
    env: { PATH: process.env.PATH ?? "", GIT_CONFIG_NOSYSTEM: "1", GIT_CONFIG_GLOBAL: "/dev/null", ...GIT_IDENTITY },
  });
}

function copyTree(from: string, to: string): void {
  cpSync(from, to, { recursive: true, filter: (path) => basename(path) !== "__pycache__" });
}

// Files that are broken on purpose (bad syntax, bad encodings) or inside directories cgc ignores
// by default would make the count drift from what cgc indexes.
// The directory names of cgc's default .cgcignore are skipped too, so every file copied is one cgc reads.
const SKIPPED_DIRS = new Set([
  "__pycache__",
  "site-packages",
  "dist-packages",
  "data",
  ...["node_modules", "venv", ".venv", "env", ".env", "dist", "build", "target", "out", "obj", "coverage"],
  ...[".git", ".idea", ".vscode", ".tox", ".mypy_cache", ".pytest_cache", ".next"],
]);
const SKIPPED_FILE = /^(bad|badsyntax|bad_coding)/;

function pythonFilesOf(library: string): string[] {
  const files: string[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      if (entry.isDirectory()) {
        if (!SKIPPED_DIRS.has(entry.name)) walk(join(dir, entry.name));
      } else if (entry.isFile() && entry.name.endsWith(".py") && !SKIPPED_FILE.test(entry.name)) {
        files.push(relative(library, join(dir, entry.name)));
      }
    }
  };
  walk(library);
  return files;
}

function statOrUndefined(path: string) {
  return statSync(path, { throwIfNoEntry: false });
}
