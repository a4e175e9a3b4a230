#!/usr/bin/env node
// Bundles src/ into extensions/pi-cgc/ (pi's folder for a package's extensions; pi lists the extension by its folder's name), the extension pi loads (package.json "pi.extensions"). pi's loader (jiti)
// evaluates an extension's modules one by one at every start, a millisecond or two each whatever their
// size; one bundle, with the parts a session may never run in chunks it imports when first needed, loads in
// about half the time (bench/RESULTS.md, "pi start-up with and without pi-cgc"). pi's own packages and
// pi-cgc's dependencies stay outside the bundle: pi and npm provide them.
//
//   node scripts/build.mjs      (scripts/setup.mjs and `npm test`'s vitest set-up run it)
//
// extensions/ is committed: pi installs a package from git with `npm install --omit=dev`, which leaves esbuild out,
// so a clone must already hold the bundle (test/unit/bundle.test.ts checks that the committed bundle is the
// committed source built). A stamp of the inputs' contents (extensions/pi-cgc/.inputs) makes a run with nothing changed
// cost a few file reads; the new bundle is written beside the old one and swapped in, so a pi that is loading
// it never sees half a build.

import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const DIST = join(ROOT, "extensions", "pi-cgc");
const STAMP = join(DIST, ".inputs");

function sourceFiles(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith(".ts") ? [path] : [];
  });
}

/** What the bundle is made of: every source file, the manifest (externals, entry) and this script. */
function inputsDigest() {
  const hash = createHash("sha256");
  const files = [...sourceFiles(join(ROOT, "src")).sort(), join(ROOT, "package.json"), fileURLToPath(import.meta.url)];
  for (const file of files)
    hash
      .update(`${relative(ROOT, file)}\0`)
      .update(readFileSync(file))
      .update("\0");
  return hash.digest("hex");
}

const stampSays = (digest) => existsSync(STAMP) && readFileSync(STAMP, "utf8") === digest;

export function distCurrent() {
  return stampSays(inputsDigest());
}

/** Builds the bundle unless it is current; true when it built. */
export async function buildDist() {
  const digest = inputsDigest();
  if (stampSays(digest)) return false;
  const { build } = await import("esbuild");
  const manifest = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8"));
  const external = Object.keys({ ...manifest.dependencies, ...manifest.peerDependencies });
  const next = `${DIST}.next-${process.pid}`;
  rmSync(next, { recursive: true, force: true });
  await build({
    absWorkingDir: ROOT, // the paths in the bundle's comments are relative to it: the same on every machine
    entryPoints: { index: join(ROOT, "src", "index.ts") },
    outdir: next,
    bundle: true,
    splitting: true,
    chunkNames: "chunks/[name]-[hash]",
    format: "esm",
    platform: "node",
    target: "node20",
    external,
    logLevel: "warning",
  });
  writeFileSync(join(next, ".inputs"), digest);
  const old = `${DIST}.old-${process.pid}`;
  if (existsSync(DIST)) renameSync(DIST, old);
  renameSync(next, DIST);
  rmSync(old, { recursive: true, force: true });
  return true;
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  buildDist().then(
    (built) =>
      console.log(built ? `[build] ${relative(process.cwd(), DIST) || "."} built` : "[build] the bundle is current"),
    (error) => {
      console.error(`[build] FAILED: ${error?.message ?? error}`);
      process.exit(1);
    },
  );
}
